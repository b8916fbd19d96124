/**
 * The small `sh` program every remote command starts in. It exists for three reasons:
 * - Secrets travel as data: the environment arrives on standard input as
 *   `export NAME='value'` lines up to a per-launch random end line, so no value ever
 *   sits in a command line that `ps` on the host would show.
 * - The command must be killable as a whole. sshd starts a command without a pty as
 *   the leader of a new session and process group (verified on OpenSSH 9.2: `$$` of the
 *   `exec`ed shell equals its pgid and sid), so the wrapper reports `$$` and then
 *   `exec`s the command: that pid is the group id `kill -TERM -PGID` reaches.
 * - Without a pty, a dropped connection leaves the command running (orphaned). So a
 *   watcher, started first and detached from every channel stream, SIGKILLs the group
 *   once the command's parent (the sshd session) is gone, and quits when the command
 *   is. It only kills when it is sure: it compares the parent pid from /proc, or `ps`
 *   where /proc is missing, and stops watching when neither answers.
 * The wrapper reports how the start went in one line `<nonce> <status>` on stdout; any
 * output before it (a noisy shell startup file) is skipped.
 */
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { shellQuote } from './quote.js';

/** A fresh random tag for one launch's end line and status line. */
export function newNonce(): string {
  return `orch-${randomBytes(16).toString('hex')}`;
}

/** The line that ends the environment preamble. */
export function preambleEndLine(nonce: string): string {
  return `${nonce}:end`;
}

/** The shell's exit code when the environment preamble was cut short. */
export const EXIT_NO_PREAMBLE = 125;
/** The shell's exit code when the working directory cannot be entered. */
export const EXIT_BAD_CWD = 126;

export interface WrapperOptions {
  nonce: string;
  /** Directory to enter, null to stay in the login directory. */
  cwd: string | null;
  /** Join stderr onto stdout (after the status line), so output keeps its order. */
  mergeStderr: boolean;
  /** The shell text run by `exec` once everything is set up (already quoted as needed). */
  exec: string;
}

/** The command line sent to sshd: the wrapper as one quoted `sh -c` argument. */
export function wrapperCommand(options: WrapperOptions): string {
  return `exec /bin/sh -c ${shellQuote(wrapperScript(options))}`;
}

/** The wrapper's script text. */
export function wrapperScript(options: WrapperOptions): string {
  const { nonce } = options;
  const lines = [
    // Before the environment is read, so nothing of it can change PATH or the watcher's names.
    '__orch_pp=$PPID',
    '__orch_me=$$',
    `( ${WATCHER} ) </dev/null >/dev/null 2>&1`,
    '__orch_env=',
    'while :; do',
    `  IFS= read -r __orch_line || { printf '%s\\n' '${nonce} no_env'; exit ${EXIT_NO_PREAMBLE}; }`,
    `  [ "$__orch_line" = '${preambleEndLine(nonce)}' ] && break`,
    '  __orch_env="$__orch_env$__orch_line',
    '"',
    'done',
    `eval "$__orch_env" || { printf '%s\\n' '${nonce} no_env'; exit ${EXIT_NO_PREAMBLE}; }`,
  ];
  if (options.cwd !== null) {
    lines.push(
      `cd -- ${shellQuote(options.cwd)} || { printf '%s\\n' '${nonce} bad_cwd'; exit ${EXIT_BAD_CWD}; }`,
    );
  }
  lines.push(`printf '%s\\n' "${nonce} pid $$"`);
  if (options.mergeStderr) lines.push('exec 2>&1');
  lines.push(`exec ${options.exec}`);
  return lines.join('\n');
}

/**
 * Runs detached in the background (the subshell around it exits at once, so it is
 * nobody's child to wait for) but stays in the command's process group, so killing
 * the group takes it too. Polls once a second.
 */
const WATCHER = [
  '{',
  'set -f; IFS=" "',
  'if [ -r "/proc/$__orch_me/stat" ]; then',
  '  while IFS= read -r __orch_s < "/proc/$__orch_me/stat"; do',
  '    __orch_s=${__orch_s##*") "}',
  '    set -- $__orch_s',
  '    [ "$1" = Z ] && exit 0',
  '    [ "$2" = "$__orch_pp" ] || { kill -KILL "-$__orch_me"; exit 0; }',
  '    sleep 1 || exit 0',
  '  done',
  'else',
  '  while kill -0 "$__orch_me"; do',
  '    __orch_p=$(ps -o ppid= -p "$__orch_me") || exit 0',
  '    set -- $__orch_p',
  '    case ${1:-x} in *[!0-9]*) exit 0;; esac',
  '    [ "$1" = "$__orch_pp" ] || { kill -KILL "-$__orch_me"; exit 0; }',
  '    sleep 1 || exit 0',
  '  done',
  'fi',
  '} &',
].join('\n');

export type StartStatus =
  | { kind: 'started'; pid: number }
  | { kind: 'bad_cwd' }
  | { kind: 'no_env' }
  /** The stream ended (or the bound passed) before any status line. */
  | { kind: 'none'; why: string };

export interface StatusRead {
  status: StartStatus;
  /** Bytes that followed the status line in the same chunk. */
  rest: Buffer;
  /** Text seen before the status line (shell startup noise), capped. */
  skipped: string;
}

const MAX_SKIPPED_BYTES = 64 * 1024;

/**
 * Reads `stream` up to the wrapper's status line, then pauses it with its listeners
 * removed, so the caller takes over from `rest` onwards without losing a byte.
 */
export function readStartStatus(stream: Readable, nonce: string, timeoutMs: number): Promise<StatusRead> {
  return new Promise((resolve) => {
    let buffered = Buffer.alloc(0);
    let skipped = '';
    const prefix = `${nonce} `;
    const finish = (status: StartStatus, rest: Buffer) => {
      clearTimeout(timer);
      stream.pause();
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('close', onEnd);
      resolve({ status, rest, skipped });
    };
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        const newline = buffered.indexOf(0x0a);
        if (newline === -1) break;
        const line = buffered.subarray(0, newline).toString('utf8');
        buffered = buffered.subarray(newline + 1);
        if (line.startsWith(prefix)) {
          finish(parseStatus(line.slice(prefix.length)), buffered);
          return;
        }
        if (skipped.length < MAX_SKIPPED_BYTES) skipped += `${line}\n`;
      }
      if (buffered.length > MAX_SKIPPED_BYTES) {
        finish(
          { kind: 'none', why: 'the host printed a long line without the start status' },
          Buffer.alloc(0),
        );
      }
    };
    const onEnd = () =>
      finish({ kind: 'none', why: 'the command ended before reporting its start' }, Buffer.alloc(0));
    const timer = setTimeout(
      () => finish({ kind: 'none', why: `no start status within ${timeoutMs} ms` }, Buffer.alloc(0)),
      timeoutMs,
    );
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('close', onEnd);
  });
}

function parseStatus(text: string): StartStatus {
  const started = /^pid (\d+)$/.exec(text);
  if (started !== null) return { kind: 'started', pid: Number(started[1]) };
  if (text === 'bad_cwd') return { kind: 'bad_cwd' };
  if (text === 'no_env') return { kind: 'no_env' };
  return { kind: 'none', why: `unexpected start status "${text}"` };
}
