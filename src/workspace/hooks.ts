/**
 * Runs workspace hooks: operator-written shell snippets that clone, install and
 * clean up. Three traps shape this module. Killing only `sh` leaves its children (a
 * `git clone`, a `sleep &`) alive and holding the output pipe, so waiting for EOF
 * can hang forever: each hook leads its own process group, a timeout or abort
 * SIGKILLs the whole group, and reading stops a short bound after the kill or the
 * shell's exit. A hook cannot leave processes running: once its shell exits, for
 * better or worse, whatever is still in its group is SIGKILLed, since a background
 * child re-parented to init would otherwise outlive the run unseen (a dev server
 * belongs to the agent or a service manager). And a hook is a shell script anyone
 * can edit: it gets a small allow-listed environment, never the orchestrator's own,
 * so a tracker token cannot leak into it; it does get the owner tag, so a restarted
 * service finds a hook an earlier one left running, and any process it detached.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { OWNER_ENV } from '../domain/owner.js';

/** What one hook run came to. */
export interface HookResult {
  /** True only for exit code 0 without timeout or abort. */
  ok: boolean;
  /** The shell's exit code; null when it was killed by a signal or never started. */
  exitCode: number | null;
  /** The signal that ended the shell (`SIGKILL` after a timeout); null otherwise. */
  signal: string | null;
  /** True when the hook ran past its timeout and its process group was killed. */
  timedOut: boolean;
  /** Stdout and stderr in the order written, capped at HOOK_OUTPUT_LIMIT_BYTES, plus notes in `[…]` lines. */
  output: string;
  durationMs: number;
}

/** Captured hook output is cut after this many bytes (the head is kept). */
export const HOOK_OUTPUT_LIMIT_BYTES = 256 * 1024;
/** Used when a non-positive or non-finite timeout is given. */
export const DEFAULT_HOOK_TIMEOUT_MS = 60_000;
/** How long output is still read after the shell exits or its group is killed, before the pipe is abandoned. */
export const HOOK_PIPE_DRAIN_MS = 2_000;

/** Environment variables a hook may inherit from the orchestrator; nothing else passes. */
export const HOOK_ENV_PASSTHROUGH = [
  'PATH',
  'HOME',
  'SHELL',
  'TMPDIR',
  'USER',
  'LOGNAME',
  'TERM',
  'LANG',
  'LC_ALL',
  'SSH_AUTH_SOCK',
] as const;

const SHELL_PATH = '/bin/sh';
/**
 * Joins stderr onto stdout, then replaces itself with `sh -c <script>`: both streams
 * share one pipe, so the output keeps the order the hook wrote it in, and the script
 * runs exactly as `sh -c` would run it.
 */
const MERGE_STDERR_THEN_RUN = 'exec 2>&1; exec /bin/sh -c "$1" sh';

/** Groups of hooks still running, SIGKILLed if the orchestrator exits normally meanwhile. */
const liveGroups = new Set<number>();
process.once('exit', () => {
  for (const pgid of liveGroups) killGroup(pgid);
});

/**
 * The restricted hook environment: the allow-listed variables of `base` that are set,
 * plus ORCHESTRATOR_ISSUE_ID, ORCHESTRATOR_ISSUE_IDENTIFIER, ORCHESTRATOR_WORKSPACE,
 * ORCHESTRATOR_ATTEMPT (1-based: '1' on the first run of a claim; '0' for before_remove, which
 * belongs to no run), and ORCHESTRATOR_SSH_HOST and
 * the owner tag when given (never an owner tag `base` holds: that one is an outer
 * service's). NUL cannot live in an environment string and is dropped from values.
 */
export function hookEnv(
  base: Record<string, string | undefined>,
  vars: {
    issueId: string;
    identifier: string;
    workspace: string;
    /** 1-based; null for a hook outside any run (before_remove). */
    attempt: number | null;
    sshHost?: string | null;
    /** The service's owner tag (not a secret: a hash of the database path). */
    ownerTag?: string | null;
  },
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of HOOK_ENV_PASSTHROUGH) {
    const value = base[name];
    if (value !== undefined) env[name] = withoutNul(value);
  }
  env.ORCHESTRATOR_ISSUE_ID = withoutNul(vars.issueId);
  env.ORCHESTRATOR_ISSUE_IDENTIFIER = withoutNul(vars.identifier);
  env.ORCHESTRATOR_WORKSPACE = withoutNul(vars.workspace);
  env.ORCHESTRATOR_ATTEMPT = String(vars.attempt ?? 0);
  if (vars.sshHost !== undefined && vars.sshHost !== null && vars.sshHost !== '') {
    env.ORCHESTRATOR_SSH_HOST = withoutNul(vars.sshHost);
  }
  if (vars.ownerTag !== undefined && vars.ownerTag !== null && vars.ownerTag !== '') {
    env[OWNER_ENV] = withoutNul(vars.ownerTag);
  }
  return env;
}

/**
 * Runs `script` as `sh -c <script>` in its own process group with exactly `env`
 * (nothing inherited) and stdin from /dev/null, and kills what is left in the group
 * when the shell exits. Never rejects: a failure to start, a non-zero exit, a timeout
 * and an abort all come back as a result that is not ok.
 */
export function runHook(
  script: string,
  opts: { cwd: string; env: Record<string, string>; timeoutMs: number; signal?: AbortSignal },
): Promise<HookResult> {
  const startedAt = performance.now();
  const elapsedMs = () => Math.round(performance.now() - startedAt);
  const timeoutMs =
    Number.isFinite(opts.timeoutMs) && opts.timeoutMs > 0 ? opts.timeoutMs : DEFAULT_HOOK_TIMEOUT_MS;
  if (opts.signal?.aborted) return Promise.resolve(notStarted('aborted before it started', 0));

  let child: ChildProcess;
  try {
    child = spawn(SHELL_PATH, ['-c', MERGE_STDERR_THEN_RUN, 'sh', script], {
      cwd: opts.cwd,
      env: { ...opts.env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    });
  } catch (error) {
    return Promise.resolve(notStarted(errorMessage(error), elapsedMs()));
  }

  return new Promise<HookResult>((resolve) => {
    const output = new CappedOutput(HOOK_OUTPUT_LIMIT_BYTES);
    const pgid = child.pid;
    if (pgid !== undefined) liveGroups.add(pgid);
    let settled = false;
    let timedOut = false;
    let aborted = false;
    let abandonedPipe = false;
    let startError: Error | null = null;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    let drainTimer: NodeJS.Timeout | undefined;

    const kill = () => {
      if (pgid !== undefined) killGroup(pgid);
      child.kill('SIGKILL');
    };
    const startDrain = () => {
      if (drainTimer !== undefined || settled) return;
      drainTimer = setTimeout(() => {
        abandonedPipe = true;
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish();
      }, HOOK_PIPE_DRAIN_MS);
    };
    const onAbort = () => {
      aborted = true;
      kill();
      startDrain();
    };
    const timeoutTimer = setTimeout(() => {
      timedOut = true;
      kill();
      startDrain();
    }, timeoutMs);
    opts.signal?.addEventListener('abort', onAbort, { once: true });

    const finish = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timeoutTimer);
      clearTimeout(drainTimer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (pgid !== undefined) liveGroups.delete(pgid);
      const notes: string[] = [];
      if (startError !== null) notes.push(`[hook could not start: ${startError.message}]`);
      if (timedOut) notes.push(`[hook timed out after ${timeoutMs} ms; its process group was killed]`);
      if (aborted) notes.push('[hook aborted; its process group was killed]');
      if (abandonedPipe) notes.push('[a background process kept the output open; stopped reading]');
      const exitCode = exit?.code ?? null;
      resolve({
        ok: startError === null && !timedOut && !aborted && exitCode === 0,
        exitCode,
        signal: exit?.signal ?? null,
        timedOut,
        output: [output.text(), ...notes].filter((part) => part !== '').join('\n'),
        durationMs: elapsedMs(),
      });
    };

    for (const stream of [child.stdout, child.stderr]) {
      stream?.on('data', (chunk: Buffer) => output.push(chunk));
      stream?.on('error', () => {});
    }
    child.on('error', (error) => {
      startError ??= error;
      // Without a pid the shell never started, and no exit or close is coming.
      if (child.pid === undefined) finish();
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // The hook is over: a timeout or abort from here on must not relabel its result.
      clearTimeout(timeoutTimer);
      opts.signal?.removeEventListener('abort', onAbort);
      // Background children die with it, which also frees the pipe they held. The group id
      // cannot name another group yet: it stays taken while a member lives, and the shell
      // was reaped within this same callback.
      if (pgid !== undefined) killGroup(pgid);
      startDrain();
    });
    child.on('close', (code, signal) => {
      exit ??= { code, signal };
      finish();
    });
  });
}

/** Keeps the first `limitBytes` of everything pushed and counts the rest. */
class CappedOutput {
  readonly #chunks: Buffer[] = [];
  #keptBytes = 0;
  #droppedBytes = 0;

  constructor(readonly limitBytes: number) {}

  push(chunk: Buffer): void {
    const roomBytes = this.limitBytes - this.#keptBytes;
    if (chunk.length <= roomBytes) {
      this.#chunks.push(chunk);
      this.#keptBytes += chunk.length;
      return;
    }
    if (roomBytes > 0) this.#chunks.push(chunk.subarray(0, roomBytes));
    this.#keptBytes += Math.max(0, roomBytes);
    this.#droppedBytes += chunk.length - Math.max(0, roomBytes);
  }

  text(): string {
    const kept = Buffer.concat(this.#chunks).toString('utf8');
    if (this.#droppedBytes === 0) return kept;
    return `${kept}\n[output truncated at ${this.limitBytes} bytes: ${this.#droppedBytes} bytes dropped]`;
  }
}

function notStarted(reason: string, durationMs: number): HookResult {
  return {
    ok: false,
    exitCode: null,
    signal: null,
    timedOut: false,
    output: `[hook could not start: ${reason}]`,
    durationMs,
  };
}

/** SIGKILL to a whole process group; a group already gone is not an error. */
function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

function withoutNul(value: string): string {
  return value.replaceAll('\0', '');
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
