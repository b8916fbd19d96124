/**
 * Starts one agent process as the leader of its own process group, so the whole
 * tree it starts (shells, tools, test runners) can be signalled at once: killing
 * only the direct child leaves grandchildren holding stdout open, and a reader
 * waiting for EOF then hangs. Failures to start (no such binary, not executable,
 * bad working directory) come back as values. Node's own `child_process` is used
 * rather than execa because the skeleton needs exactly its `spawn`/`error`/`exit`
 * events and raw streams, and nothing of execa's buffering or rejection.
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import type { ProcessExit } from './exit.js';
import { errorMessage, type LaunchedProcess, type LaunchFailure, launchProcess } from './launcher.js';
import { DEFAULT_MAX_LINE_BYTES, type LineResult, splitLines } from './lines.js';
import { HAS_PROC_TABLE, listLiveProcesses, sendSignal, signalExists } from './proc-table.js';
import { trackLocalLeftovers } from './reap.js';
import { BoundedStderr, type BoundedStderrOptions } from './stderr.js';

export interface SpawnAgentProcessParams {
  /** Executable: a path, or a name looked up on `env.PATH`. */
  command: string;
  args: readonly string[];
  /** Working directory; must be an existing, searchable directory. */
  cwd: string;
  /** The complete environment; nothing of the orchestrator's own environment is inherited. */
  env: Readonly<Record<string, string>>;
  /**
   * `ignore`: stdin is /dev/null (a read gets EOF at once); `{ text }`: the text is written, then
   * stdin closed; `pipe`: stdin stays open for a protocol spoken over it (`AgentProcess.input`).
   */
  stdin: 'ignore' | { text: string } | 'pipe';
  /** Cap on one stdout line in bytes; default 10 MiB. */
  maxLineBytes?: number;
  /** Bounds of the kept stderr. */
  stderr?: BoundedStderrOptions;
  /**
   * Added to the agent's CPU niceness (0–19; 0 or absent = the service's own priority). Set
   * right after the exec, before the agent starts anything, so its whole tree inherits it.
   */
  niceness?: number;
}

export type SpawnFailureCode = 'not_found' | 'not_executable' | 'bad_cwd' | 'spawn_failed' | 'unreachable';

export interface SpawnFailure {
  ok: false;
  code: SpawnFailureCode;
  message: string;
}

export type SpawnResult = { ok: true; process: AgentProcess } | SpawnFailure;

/**
 * What an agent may leave running after it ends, tracked while it runs and killed
 * at the end of a turn or session. Locally that is the group plus recorded
 * descendants that escaped it; on a remote host, the remote group.
 */
export interface Leftovers {
  /** Records descendants now: for the moment before a signal. */
  sample(): void;
  /** Records descendants from a recent walk: cheap enough for every output line. */
  sampleRecent(): void;
  /** Stops any periodic sampling; idempotent. */
  stop(): void;
  /** Stops sampling and kills the group and every recorded descendant still alive. */
  reap(): Promise<void>;
}

/** A running agent process and its process group. */
export interface AgentProcess {
  readonly pid: number;
  /** Process group id; equal to `pid`, as the agent leads its own group. */
  readonly pgid: number;
  /**
   * Stdout as lines, for one consumer. It ends at stdout EOF, which a surviving
   * descendant can postpone indefinitely: race it with `exited` and the timers.
   * Stdout is only read while this is iterated.
   */
  readonly lines: AsyncIterable<LineResult>;
  /** Stderr, read from the start within fixed bounds. */
  readonly stderr: BoundedStderr;
  /** Stdin when spawned with `stdin: 'pipe'`, else null. Write errors (a closed pipe) are swallowed. */
  readonly input: Writable | null;
  /** Resolves when the agent process itself exits (descendants may live on). Never rejects. */
  readonly exited: Promise<ProcessExit>;
  /**
   * SIGTERM (and SIGCONT) to the whole group, then SIGKILL to the group if any of
   * it is still alive after `graceMs`. Resolves once the group is gone, or after a
   * short settling bound past the SIGKILL.
   */
  terminateGroup(graceMs: number): Promise<void>;
  /** SIGKILL to the whole group; a group already gone is not an error. */
  killGroup(): void;
  /** True while any process of the group is alive (zombies do not count where `/proc` exists). */
  groupAlive(): boolean;
  /** Starts tracking what the process may leave behind; call once, right after the start. */
  trackLeftovers(): Leftovers;
}

/**
 * Groups started here and not yet known dead: SIGKILLed if the orchestrator exits
 * normally while they run, since a detached group would otherwise outlive it.
 */
const liveGroups = new Set<number>();
process.once('exit', () => {
  for (const pgid of liveGroups) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
});

const POLL_INTERVAL_MS = 10;
/** How long `terminateGroup` waits for the group to vanish after SIGKILL. */
const KILL_SETTLE_MS = 2_000;

/** Starts an agent process in a new process group; never throws for a failure to start. */
export async function spawnAgentProcess(params: SpawnAgentProcessParams): Promise<SpawnResult> {
  const cwdProblem = await checkCwd(params.cwd);
  if (cwdProblem !== null) return { ok: false, code: 'bad_cwd', message: cwdProblem };

  const launched = await launchProcess({
    command: params.command,
    args: params.args,
    cwd: params.cwd,
    env: params.env,
    stdin: params.stdin === 'ignore' ? 'ignore' : 'pipe',
    niceness: params.niceness ?? 0,
  });
  if (!launched.ok) return classifySpawnError(params, launched.failure);
  return { ok: true, process: new ChildAgentProcess(launched.process, params) };
}

class ChildAgentProcess implements AgentProcess {
  readonly pgid: number;
  readonly lines: AsyncIterable<LineResult>;
  readonly stderr: BoundedStderr;
  readonly input: Writable | null;

  readonly pid: number;
  readonly exited: Promise<ProcessExit>;

  constructor(child: LaunchedProcess, params: SpawnAgentProcessParams) {
    this.pid = child.pid;
    this.exited = child.exited;
    this.pgid = child.pid;
    liveGroups.add(this.pgid);
    const { stdin, stdout, stderr } = child;
    this.input = null;
    if (stdin && params.stdin !== 'ignore') {
      // A child that exits without reading its prompt makes the write fail with EPIPE: not our error to raise.
      stdin.on('error', () => {});
      if (params.stdin === 'pipe') this.input = stdin;
      else stdin.end(params.stdin.text);
    }
    stdout.on('error', () => {});
    this.stderr = new BoundedStderr(params.stderr).attach(stderr);
    this.lines = splitLines(stdout, { maxLineBytes: params.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES });
    void this.exited.then(() => {
      if (!this.groupAlive()) liveGroups.delete(this.pgid);
    });
  }

  groupAlive(): boolean {
    if (!signalExists(-this.pgid)) return false;
    if (!HAS_PROC_TABLE) return true;
    return listLiveProcesses().some((stat) => stat.pgid === this.pgid);
  }

  killGroup(): void {
    sendSignal(-this.pgid, 'SIGKILL');
  }

  trackLeftovers(): Leftovers {
    return trackLocalLeftovers(this.pid);
  }

  async terminateGroup(graceMs: number): Promise<void> {
    if (this.groupAlive()) {
      sendSignal(-this.pgid, 'SIGTERM');
      // A stopped process only acts on SIGTERM once continued.
      sendSignal(-this.pgid, 'SIGCONT');
      if (!(await waitUntil(() => !this.groupAlive(), graceMs))) {
        this.killGroup();
        await waitUntil(() => !this.groupAlive(), KILL_SETTLE_MS);
      }
    }
    if (!this.groupAlive()) liveGroups.delete(this.pgid);
  }
}

/** Polls `done` until it holds or `timeoutMs` passes; true when it held. */
async function waitUntil(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + Math.max(0, timeoutMs);
  while (!done()) {
    const remainingMs = deadline - Date.now();
    if (remainingMs <= 0) return false;
    await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_INTERVAL_MS, remainingMs)));
  }
  return true;
}

/** Why `cwd` cannot be a working directory, or null when it can. */
async function checkCwd(cwd: string): Promise<string | null> {
  try {
    const info = await stat(cwd);
    if (!info.isDirectory()) return `working directory ${cwd} is not a directory`;
    await access(cwd, constants.X_OK);
    return null;
  } catch (error) {
    return `working directory ${cwd} is not usable: ${errorMessage(error)}`;
  }
}

async function classifySpawnError(
  params: SpawnAgentProcessParams,
  failure: LaunchFailure,
): Promise<SpawnFailure> {
  const message = `cannot start ${params.command}: ${failure.message}`;
  switch (failure.code) {
    case 'ENOENT':
    case 'ENOTDIR': {
      // Node reports a working directory that vanished after the check as ENOENT too.
      const cwdProblem = await checkCwd(params.cwd);
      if (cwdProblem !== null) return { ok: false, code: 'bad_cwd', message: cwdProblem };
      return { ok: false, code: 'not_found', message };
    }
    case 'EACCES':
    case 'EISDIR':
    case 'ENOEXEC': {
      const cwdProblem = await checkCwd(params.cwd);
      if (cwdProblem !== null) return { ok: false, code: 'bad_cwd', message: cwdProblem };
      return { ok: false, code: 'not_executable', message };
    }
    default:
      return { ok: false, code: 'spawn_failed', message };
  }
}
