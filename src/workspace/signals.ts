/**
 * The `.orchestrator/` folder of a workspace: files an agent writes for the orchestrator
 * (`status`, `review_verdict.json`) and files the orchestrator writes for hooks and agents
 * (`scm.json`). An agent controls the workspace, so every read here is defensive: a symlink
 * (the folder or the file) is refused rather than followed out of the workspace, reads are
 * capped, and anything unreadable is reported as ignored, never thrown. The agent's files are
 * deleted before each run so a stale one is never taken for a new signal.
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  type Stats,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';

import { SIGNAL_DIR } from '../domain/signal-dir.js';

export { SIGNAL_DIR };
/** A status signal is one word; anything longer is not one. */
export const STATUS_MAX_BYTES = 1024;
export const VERDICT_MAX_BYTES = 64 * 1024;

/** The words an agent may write to `.orchestrator/status`, each a soft stop after the turn. */
export const STATUS_SIGNALS = ['blocked', 'needs-human-review'] as const;
export type StatusSignal = (typeof STATUS_SIGNALS)[number];

export type SignalRead<T> =
  | { kind: 'absent' }
  | { kind: 'read'; value: T }
  /** There, but refused (a symlink, too large, unreadable, not one of the known values). */
  | { kind: 'ignored'; reason: string };

/** The files an agent writes; removed before each run. */
const AGENT_FILES = ['status', 'review_verdict.json'];

/**
 * Prepares the folder before a run: makes it (git-ignored, so nothing of ours is committed),
 * and removes the agent's files left by an earlier run. A symlink where the folder should be is
 * removed (the link, never its target) and replaced by a folder.
 */
export function prepareSignalDir(workspace: string): void {
  const dir = path.join(workspace, SIGNAL_DIR);
  const found = lstatOrNull(dir);
  if (found !== null && !found.isDirectory()) rmSync(dir, { force: true });
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  writeFileSync(path.join(dir, '.gitignore'), '*\n');
  for (const name of AGENT_FILES) rmSync(path.join(dir, name), { force: true, recursive: true });
}

/** Reads `.orchestrator/status`: its first line, trimmed and lowercased, when it is a known signal. */
export function readStatusSignal(workspace: string): SignalRead<StatusSignal> {
  const read = readCapped(workspace, 'status', STATUS_MAX_BYTES);
  if (read.kind !== 'read') return read;
  const word = (read.value.split(/\r?\n/, 1)[0] ?? '').trim().toLowerCase();
  if ((STATUS_SIGNALS as readonly string[]).includes(word))
    return { kind: 'read', value: word as StatusSignal };
  return {
    kind: 'ignored',
    reason: `status "${word.slice(0, 40)}" is not one of ${STATUS_SIGNALS.join(', ')}`,
  };
}

/** Reads a JSON file of the folder within `maxBytes`; a parse failure is `ignored` with the parser's reason. */
export function readJsonSignal(workspace: string, name: string, maxBytes: number): SignalRead<unknown> {
  const read = readCapped(workspace, name, maxBytes);
  if (read.kind !== 'read') return read;
  try {
    return { kind: 'read', value: JSON.parse(read.value) as unknown };
  } catch (error) {
    return { kind: 'ignored', reason: `${name} is not JSON: ${(error as Error).message}` };
  }
}

/** Removes one file of the folder (never following a symlink); a missing one is fine. */
export function removeSignalFile(workspace: string, name: string): void {
  const dir = path.join(workspace, SIGNAL_DIR);
  const folder = lstatOrNull(dir);
  if (folder === null || !folder.isDirectory()) return;
  rmSync(path.join(dir, name), { force: true, recursive: true });
}

/** Writes a file of ours into the folder whole or not at all (a temporary file renamed over it). */
export function writeSignalFile(workspace: string, name: string, text: string): void {
  const dir = path.join(workspace, SIGNAL_DIR);
  const found = lstatOrNull(dir);
  if (found === null || !found.isDirectory()) prepareSignalDir(workspace);
  const target = path.join(dir, name);
  const temporary = `${target}.${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode: 0o644 });
  renameSync(temporary, target);
}

function readCapped(workspace: string, name: string, maxBytes: number): SignalRead<string> {
  const dir = path.join(workspace, SIGNAL_DIR);
  const folder = lstatOrNull(dir);
  if (folder === null) return { kind: 'absent' };
  if (!folder.isDirectory())
    return { kind: 'ignored', reason: `${SIGNAL_DIR} is not a folder (a symlink is never followed)` };
  const file = path.join(dir, name);
  let fd: number;
  try {
    // O_NOFOLLOW: a symlink swapped in after any check fails the open instead of being followed.
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'absent' };
    if (code === 'ELOOP') return { kind: 'ignored', reason: `${SIGNAL_DIR}/${name} is a symlink` };
    return { kind: 'ignored', reason: `${SIGNAL_DIR}/${name} cannot be read (${code ?? 'error'})` };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { kind: 'ignored', reason: `${SIGNAL_DIR}/${name} is not a regular file` };
    if (stat.size > maxBytes)
      return {
        kind: 'ignored',
        reason: `${SIGNAL_DIR}/${name} is ${stat.size} bytes, more than ${maxBytes}`,
      };
    const buffer = Buffer.alloc(maxBytes + 1);
    const length = readSync(fd, buffer, 0, buffer.length, 0);
    if (length > maxBytes)
      return { kind: 'ignored', reason: `${SIGNAL_DIR}/${name} is more than ${maxBytes} bytes` };
    return { kind: 'read', value: buffer.subarray(0, length).toString('utf8') };
  } finally {
    closeSync(fd);
  }
}

function lstatOrNull(p: string): Stats | null {
  try {
    return lstatSync(p, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}
