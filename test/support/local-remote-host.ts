/**
 * A RemoteHost that runs on this machine with /bin/sh, for fast tests of code that
 * drives SSH worker hosts. It keeps the contract's promises the way the real host
 * does: the command sees exactly the environment it was given (on top of an
 * optional stand-in for the host's login environment; nothing of this test process
 * leaks in), a missing working directory is `bad_cwd` rather than a failed command,
 * timeouts and aborts kill the whole process group, and output is cut at
 * `maxOutputBytes`. `unreachable` makes every call fail as a host that is down.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type {
  RemoteExit,
  RemoteFailure,
  RemoteHost,
  RemoteLaunchParams,
  RemoteProcess,
  RemoteScriptParams,
  RemoteScriptResult,
} from '../../src/domain/remote.js';

export interface LocalRemoteHostOptions {
  /** The host's name as hooks and logs see it; 'local-test-host' unless given. */
  name?: string;
  /** The working directory when `cwd` is null (the login directory); the user's home unless given. */
  loginDir?: string;
  /** What the host's login would set for every command, under the command's own `env`; {} unless given. */
  loginEnv?: Record<string, string>;
}

/** How long output is still read after the shell is gone, before the pipe is abandoned. */
const PIPE_DRAIN_MS = 2_000;
/** Joins stderr onto stdout, then runs the script exactly as `sh -c` would. */
const MERGE_STDERR_THEN_RUN = 'exec 2>&1; exec /bin/sh -c "$1" sh';

export class LocalRemoteHost implements RemoteHost {
  readonly name: string;
  /** Non-null: the message every call fails with, as `unreachable`. */
  unreachable: string | null = null;
  /** Every `run` call, in order (to assert what was sent to the host). */
  readonly runs: RemoteScriptParams[] = [];
  readonly #loginDir: string;
  readonly #loginEnv: Record<string, string>;
  readonly #groups = new Set<number>();

  constructor(opts: LocalRemoteHostOptions = {}) {
    this.name = opts.name ?? 'local-test-host';
    this.#loginDir = opts.loginDir ?? os.homedir();
    this.#loginEnv = { ...(opts.loginEnv ?? {}) };
  }

  async probe(): Promise<{ ok: true } | RemoteFailure> {
    return this.unreachable === null ? { ok: true } : this.#down();
  }

  /** The "host" is this machine: its loopback port is the local one. */
  async forwardToLocal(localPort: number): Promise<{ ok: true; remotePort: number } | RemoteFailure> {
    return this.unreachable === null ? { ok: true, remotePort: localPort } : this.#down();
  }

  async run(params: RemoteScriptParams): Promise<{ ok: true; result: RemoteScriptResult } | RemoteFailure> {
    this.runs.push(params);
    if (this.unreachable !== null) return this.#down();
    const cwd = await this.#enter(params.cwd);
    if (typeof cwd !== 'string') return cwd;
    if (params.signal?.aborted) return { ok: false, reason: 'failed', message: 'aborted before it started' };

    const startedAt = performance.now();
    let child: ChildProcess;
    try {
      child = spawn('/bin/sh', ['-c', MERGE_STDERR_THEN_RUN, 'sh', params.script], {
        cwd,
        env: { ...this.#loginEnv, ...params.env },
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (error) {
      return { ok: false, reason: 'failed', message: errorMessage(error) };
    }
    const pgid = child.pid;
    if (pgid === undefined) {
      const message = await new Promise<string>((resolve) => child.once('error', (e) => resolve(e.message)));
      return { ok: false, reason: 'failed', message };
    }
    this.#groups.add(pgid);

    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let keptBytes = 0;
      const limitBytes = params.maxOutputBytes ?? Number.POSITIVE_INFINITY;
      let timedOut = false;
      let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
      let drainTimer: NodeJS.Timeout | undefined;
      let settled = false;

      const kill = () => {
        killGroupQuietly(pgid, 'SIGKILL');
        if (drainTimer === undefined) drainTimer = setTimeout(finish, PIPE_DRAIN_MS);
      };
      const onAbort = () => kill();
      const timer =
        params.timeoutMs > 0
          ? setTimeout(() => {
              timedOut = true;
              kill();
            }, params.timeoutMs)
          : undefined;
      params.signal?.addEventListener('abort', onAbort, { once: true });

      function finish(): void {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearTimeout(drainTimer);
        params.signal?.removeEventListener('abort', onAbort);
        child.stdout?.destroy();
        child.stderr?.destroy();
        resolve({
          ok: true,
          result: {
            exitCode: exit?.code ?? null,
            signal: exit?.signal ?? null,
            timedOut,
            output: Buffer.concat(chunks).toString('utf8'),
            durationMs: Math.round(performance.now() - startedAt),
            connectionLost: false,
          },
        });
      }

      for (const stream of [child.stdout, child.stderr]) {
        stream?.on('data', (chunk: Buffer) => {
          const roomBytes = limitBytes - keptBytes;
          if (roomBytes <= 0) return;
          const kept = chunk.length <= roomBytes ? chunk : chunk.subarray(0, roomBytes);
          chunks.push(kept);
          keptBytes += kept.length;
        });
        stream?.on('error', () => {});
      }
      child.on('exit', (code, signal) => {
        exit = { code, signal };
        clearTimeout(timer);
        params.signal?.removeEventListener('abort', onAbort);
        this.#groups.delete(pgid);
        if (drainTimer === undefined) drainTimer = setTimeout(finish, PIPE_DRAIN_MS);
      });
      child.on('close', (code, signal) => {
        exit ??= { code, signal };
        finish();
      });
    });
  }

  async launch(params: RemoteLaunchParams): Promise<{ ok: true; process: RemoteProcess } | RemoteFailure> {
    if (this.unreachable !== null) return this.#down();
    const cwd = await this.#enter(params.cwd);
    if (typeof cwd !== 'string') return cwd;
    let child: ChildProcess;
    try {
      child = spawn('/bin/sh', ['-c', `exec ${params.command} "$@"`, 'sh', ...params.args], {
        cwd,
        env: { ...this.#loginEnv, ...params.env },
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
    } catch (error) {
      return { ok: false, reason: 'failed', message: errorMessage(error) };
    }
    const pid = child.pid;
    if (pid === undefined || child.stdin === null || child.stdout === null || child.stderr === null) {
      return { ok: false, reason: 'failed', message: `could not start ${params.command}` };
    }
    this.#groups.add(pid);
    child.stdin.on('error', () => {});
    const exited = new Promise<RemoteExit>((resolve) => {
      child.on('exit', (code, signal) => {
        this.#groups.delete(pid);
        resolve({ exitCode: code, signal, connectionLost: false });
      });
    });
    return {
      ok: true,
      process: {
        pid,
        stdin: child.stdin,
        stdout: child.stdout,
        stderr: child.stderr,
        exited,
        terminateGroup: async (graceMs) => {
          killGroupQuietly(pid, 'SIGTERM');
          killGroupQuietly(pid, 'SIGCONT');
          const deadline = performance.now() + graceMs;
          while (groupAlive(pid) && performance.now() < deadline) {
            await new Promise((resolve) => setTimeout(resolve, 20));
          }
          if (groupAlive(pid)) killGroupQuietly(pid, 'SIGKILL');
        },
        killGroup: async () => killGroupQuietly(pid, 'SIGKILL'),
      },
    };
  }

  /** SIGKILLs every process group this host started that is still running (for `afterEach`). */
  killAll(): void {
    for (const pgid of this.#groups) killGroupQuietly(pgid, 'SIGKILL');
    this.#groups.clear();
  }

  /** The directory a command starts in, or `bad_cwd` when it cannot be entered. */
  async #enter(cwd: string | null): Promise<string | RemoteFailure> {
    const dir = cwd ?? this.#loginDir;
    const bad = (why: string): RemoteFailure => ({
      ok: false,
      reason: 'bad_cwd',
      message: `cannot enter ${dir} on ${this.name}: ${why}`,
    });
    if (!path.isAbsolute(dir)) return bad('not an absolute path');
    try {
      const info = await fsp.stat(dir);
      if (!info.isDirectory()) return bad('not a directory');
      await fsp.access(dir, fsp.constants.X_OK);
    } catch (error) {
      return bad(errorMessage(error));
    }
    return dir;
  }

  #down(): RemoteFailure {
    return { ok: false, reason: 'unreachable', message: `${this.name}: ${this.unreachable}` };
  }
}

function killGroupQuietly(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // Already gone.
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
