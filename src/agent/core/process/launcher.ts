/**
 * Starts local agent processes from a launcher process (launcher-child.ts) instead of from the
 * service itself, so the fork of a large process never blocks the service's event loop. The
 * launcher is started on first use and again after it died; the agent's stdin, stdout and stderr
 * come back over the IPC channel as the pipes themselves. When the launcher cannot be started,
 * agents are started directly, paced (spawn-pacing.ts), as before.
 *
 * Messages, service → launcher: `start` {id, command, args, cwd, env, stdin, niceness}.
 * Launcher → service: `ready`; `started` {id, pid}; `stdio` {id, fd} with the pipe as handle
 * (fd 0 only for a piped stdin); `failed` {id, code, message}; `exit` {id, exitCode, signal}.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import { getPriority, setPriority } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import type { ProcessExit } from './exit.js';
import { LAUNCHER_SCRIPT } from './launcher-child.js';
import { signalExists } from './proc-table.js';
import { SpawnPacer } from './spawn-pacing.js';

/** What to start: the fields of a spawn that the launcher needs. */
export interface LaunchRequest {
  command: string;
  args: readonly string[];
  cwd: string;
  env: Readonly<Record<string, string>>;
  stdin: 'ignore' | 'pipe';
  niceness: number;
}

/** A started process: its pid, its pipes and its exit. */
export interface LaunchedProcess {
  pid: number;
  stdin: Writable | null;
  stdout: Readable;
  stderr: Readable;
  /** Resolves when the process exits. Never rejects. */
  exited: Promise<ProcessExit>;
}

/** A start that failed, with the errno code (`ENOENT`, …) when there is one. */
export interface LaunchFailure {
  code: string | null;
  message: string;
}

export type LaunchResult = { ok: true; process: LaunchedProcess } | { ok: false; failure: LaunchFailure };

/** How often a process whose launcher died is checked for its end (its exit status is lost). */
const ORPHAN_POLL_MS = 100;

interface Pending {
  resolve: (result: LaunchResult) => void;
  pid?: number;
  stdio: (Socket | undefined)[];
  wantsStdin: boolean;
  exit?: (exit: ProcessExit) => void;
}

type LauncherMessage =
  | { type: 'ready' }
  | { type: 'started'; id: number; pid: number }
  | { type: 'stdio'; id: number; fd: 0 | 1 | 2 }
  | { type: 'failed'; id: number; code: string | null; message: string }
  | { type: 'exit'; id: number; exitCode: number | null; signal: string | null };

/** One launcher process and the starts and exits in flight through it. */
class Launcher {
  private readonly child: ChildProcess;
  private nextId = 1;
  /** Starts not yet answered, and started processes not yet exited, by request id. */
  private readonly inFlight = new Map<number, Pending>();
  private dead = false;

  constructor(private readonly onDeath: (launcher: Launcher) => void) {
    // `-e` with no flags and an empty environment: none of the service's loaders, options or secrets.
    this.child = spawn(process.execPath, ['-e', LAUNCHER_SCRIPT], {
      env: {},
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'json',
    });
    this.child.on('message', (message, handle) => this.receive(message as LauncherMessage, handle as Socket));
    this.child.on('error', () => this.die());
    this.child.on('exit', () => this.die());
    this.child.on('disconnect', () => this.die());
    // Only the channel, and only while a start or an exit is awaited, keeps the service running.
    this.child.unref();
    this.idle();
  }

  get alive(): boolean {
    return !this.dead;
  }

  /** Asks the launcher to start `request`; resolves once it has started or failed. */
  launch(request: LaunchRequest): Promise<LaunchResult> {
    const id = this.nextId++;
    return new Promise<LaunchResult>((resolve) => {
      this.inFlight.set(id, { resolve, stdio: [], wantsStdin: request.stdin === 'pipe' });
      this.busy();
      try {
        this.child.send({ type: 'start', id, ...request, args: [...request.args] });
      } catch (error) {
        this.inFlight.delete(id);
        resolve({ ok: false, failure: { code: null, message: `the launcher is gone: ${String(error)}` } });
        this.die();
      }
    });
  }

  private receive(message: LauncherMessage, handle: Socket | undefined): void {
    if (message.type === 'ready') return;
    const pending = this.inFlight.get(message.id);
    if (!pending) {
      handle?.destroy();
      return;
    }
    switch (message.type) {
      case 'started':
        pending.pid = message.pid;
        break;
      case 'stdio':
        if (handle) pending.stdio[message.fd] = handle;
        this.complete(pending);
        break;
      case 'failed':
        this.inFlight.delete(message.id);
        pending.resolve({ ok: false, failure: { code: message.code, message: message.message } });
        this.idle();
        break;
      case 'exit':
        this.inFlight.delete(message.id);
        pending.exit?.({ exitCode: message.exitCode, signal: message.signal });
        this.idle();
        break;
    }
  }

  /** Resolves the start once every pipe it waits for has arrived. */
  private complete(pending: Pending): void {
    const [stdin, stdout, stderr] = pending.stdio;
    if (pending.pid === undefined || !stdout || !stderr || (pending.wantsStdin && !stdin)) return;
    const exited = new Promise<ProcessExit>((resolve) => {
      pending.exit = resolve;
    });
    pending.resolve({
      ok: true,
      process: { pid: pending.pid, stdin: stdin ?? null, stdout, stderr, exited },
    });
  }

  /** The channel keeps the service alive only while a start or an exit is awaited. */
  private busy(): void {
    this.child.channel?.ref();
  }

  private idle(): void {
    if (this.inFlight.size === 0) this.child.channel?.unref();
  }

  private die(): void {
    if (this.dead) return;
    this.dead = true;
    this.onDeath(this);
    for (const [id, pending] of this.inFlight) {
      this.inFlight.delete(id);
      if (pending.exit && pending.pid !== undefined) {
        // Its exit status went with the launcher: report the end, without a code, once it is gone.
        void waitForEnd(pending.pid).then(() => pending.exit?.({ exitCode: null, signal: null }));
      } else {
        for (const pipe of pending.stdio) pipe?.destroy();
        pending.resolve({
          ok: false,
          failure: { code: null, message: 'the launcher process ended during the start' },
        });
      }
    }
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  /** Ends the launcher (tests). */
  stop(): void {
    this.die();
  }
}

/** Polls until `pid` no longer exists. */
async function waitForEnd(pid: number): Promise<void> {
  while (signalExists(pid)) await new Promise((resolve) => setTimeout(resolve, ORPHAN_POLL_MS));
}

let current: Launcher | null = null;
/** Direct starts share one pacer: the event loop they block is the one every session and request shares. */
const directStarts = new SpawnPacer();
let mode: 'launcher' | 'direct' = 'launcher';

/** Starts a process through the launcher, or directly when the launcher cannot be used. */
export async function launchProcess(request: LaunchRequest): Promise<LaunchResult> {
  if (mode === 'launcher') {
    if (current === null || !current.alive) current = startLauncher();
    if (current !== null) return current.launch(request);
  }
  return launchDirectly(request);
}

function startLauncher(): Launcher | null {
  try {
    return new Launcher((dead) => {
      if (current === dead) current = null;
    });
  } catch {
    mode = 'direct';
    return null;
  }
}

/** Chooses how agents start from now on; `direct` also ends a running launcher (benchmarks and tests). */
export function setLaunchMode(next: 'launcher' | 'direct'): void {
  mode = next;
  if (next === 'direct') {
    current?.stop();
    current = null;
  }
}

/** Starts `request` from this process, paced. */
async function launchDirectly(request: LaunchRequest): Promise<LaunchResult> {
  let child: ChildProcess;
  try {
    child = await directStarts.run(() => {
      const started = spawn(request.command, [...request.args], {
        cwd: request.cwd,
        env: { ...request.env },
        detached: true,
        stdio: [request.stdin, 'pipe', 'pipe'],
        windowsHide: true,
      });
      lowerPriority(started.pid, request.niceness);
      return started;
    });
  } catch (error) {
    return { ok: false, failure: { code: null, message: errorMessage(error) } };
  }
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once('exit', (exitCode, signal) => resolve({ exitCode, signal }));
  });
  const startError = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
    child.once('spawn', () => resolve(null));
    child.once('error', (error) => resolve(error));
  });
  // Later errors (a failed kill) must not crash the process; they surface through `exited`.
  child.on('error', () => {});
  if (startError !== null || child.pid === undefined || !child.stdout || !child.stderr) {
    return {
      ok: false,
      failure: {
        code: startError?.code ?? null,
        message: startError ? startError.message : 'no pid was assigned',
      },
    };
  }
  return {
    ok: true,
    process: { pid: child.pid, stdin: child.stdin, stdout: child.stdout, stderr: child.stderr, exited },
  };
}

/**
 * Runs the agent below the service's CPU priority: while hundreds of agents boot, the service
 * must still answer its API and timers promptly (docs/performance.md, api-load). Raising one's
 * own child's niceness needs no privilege; a failure (the child already gone) changes nothing.
 */
function lowerPriority(pid: number | undefined, niceness: number): void {
  if (pid === undefined || niceness <= 0) return;
  try {
    setPriority(pid, Math.min(19, getPriority(0) + niceness));
  } catch {
    // Gone already: its exit is reported as usual.
  }
}

/** An error's message, or the thrown value as text. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
