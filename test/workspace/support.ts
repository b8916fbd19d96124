/** Shared helpers for the workspace tests: real temp dirs, real processes. */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { HooksConfig } from '../../src/workflow/config.js';

const created: string[] = [];

/** A fresh, symlink-resolved temp directory, deleted by `removeTempDirs`. */
export async function tempDir(prefix = 'ws-test-'): Promise<string> {
  const dir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), prefix)));
  created.push(dir);
  return dir;
}

/** Deletes every temp directory made so far (call from `afterAll`). */
export async function removeTempDirs(): Promise<void> {
  await Promise.all(created.splice(0).map((dir) => fsp.rm(dir, { recursive: true, force: true })));
}

export function noHooks(over: Partial<HooksConfig> = {}): HooksConfig {
  return {
    afterCreate: null,
    beforeRun: null,
    afterRun: null,
    beforeRemove: null,
    timeoutMs: 10_000,
    ...over,
  };
}

/** A plausible orchestrator environment, including secrets that must never reach a hook. */
export function baseEnvWithSecrets(): Record<string, string | undefined> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: os.homedir(),
    LANG: 'C.UTF-8',
    ORCHESTRATOR_TRACKER_API_KEY: 'secret-tracker-key',
    GITHUB_TOKEN: 'ghp_secret',
    AWS_SECRET_ACCESS_KEY: 'aws-secret',
    UNSET_VAR: undefined,
  };
}

/** True while `pid` is a live process; a zombie (killed, not yet reaped) counts as gone. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    // No /proc here: the signal probe above is all there is to go on.
    return !fs.existsSync('/proc/self');
  }
}

/** Reads a pid the hook wrote, waiting for the write to land. */
export async function readPid(file: string): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const text = await fsp.readFile(file, 'utf8').catch(() => '');
    const pid = Number.parseInt(text.trim(), 10);
    if (Number.isInteger(pid) && pid > 0) return pid;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no pid in ${file}`);
}

/** Best-effort cleanup of a process a test left behind. */
export function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** Every path under `dir`, relative, sorted (symlinks listed, not followed). */
export async function listTree(dir: string): Promise<string[]> {
  const entries = await fsp.readdir(dir, { recursive: true });
  return entries.map(String).sort();
}
