/**
 * End-to-end harness for `orchestrator run`: a throw-away project (WORKFLOW.md, an issues
 * file for the `file` tracker, a pid log for the `mock` runtime, the SQLite file and the
 * workspace root, all under one temporary directory), the service started as a real child
 * process from source (JSON logs to a file), and read-side views of everything it leaves
 * behind: log lines, the tracker file, the database and the agent processes.
 *
 * Which agent process belongs to which issue. The mock runtime cannot know its issue, but
 * every turn runs with the issue's workspace as its working directory, and a workspace
 * directory is named by the issue key. Two sources give a process's working directory:
 *  - `traceAgents: true` sets `agent.command` to a tiny `sh` wrapper that appends
 *    `exec <pid> <epoch ms> <cwd>` to a trace file and then `exec`s the very same mock
 *    runtime (`node --import tsx src/agent/mock/runtime.ts`), so the pid does not change.
 *    This is exact and loses nothing, even for a process killed before it wrote a line,
 *    and it stamps the spawn time (the pid log's `start` line comes only after tsx loaded).
 *  - otherwise (the kind's default command) the AgentMonitor reads `/proc/<pid>/cwd` while
 *    the process lives, from a /proc scan every `scanIntervalMs` that finds group leaders
 *    whose environment carries this project's pid-log path. tsx keeps every runtime alive
 *    for hundreds of ms before its first line, so a 100 ms scan sees practically all.
 * A process with a `start` but no `stop` line (SIGKILLed) counts as live until `/proc`
 * shows it gone (or a zombie), as sampled; the sampling also pins each pid to this project
 * (its environment must carry the pid-log path), so a reused pid is never confused.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  readSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach } from 'vitest';
import { stringify } from 'yaml';
import { REPO_ROOT, TSX_LOADER } from './cli.js';

const MAIN = path.join(REPO_ROOT, 'src', 'cli', 'main.ts');
const MOCK_RUNTIME = path.join(REPO_ROOT, 'src', 'agent', 'mock', 'runtime.ts');
const PID_LOG_ENV = 'ORCHESTRATOR_MOCK_PID_LOG';

// ---------------------------------------------------------------- small helpers

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Polls `probe` until it returns something other than undefined/null/false, or throws after
 * `timeoutMs` with `what` and whatever `explain()` adds (a log tail, the tracker file…).
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  options: { timeoutMs?: number; intervalMs?: number; explain?: () => string } = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) {
      const extra = options.explain ? `\n${options.explain()}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${extra}`);
    }
    await sleep(options.intervalMs ?? 50);
  }
}

/** Error kinds the README's table retries (everything else releases the claim): the e2e oracle, kept apart from src/. */
export const RETRYABLE_KINDS: ReadonlySet<string> = new Set([
  'response_timeout',
  'turn_timeout',
  'port_exit',
  'response_error',
  'turn_failed',
  'tracker_transport_error',
  'tracker_api_error',
  'usage_limit',
  'host_unreachable',
  'workspace_hook_failed',
  'workspace_io_failed',
  'workspace_busy',
]);

/** A small deterministic PRNG (mulberry32): the same seed gives the same sequence. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function writeAtomic(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Deep merge of front-matter maps: maps merge, anything else replaces, `null` deletes the key. */
export function mergeConfig(base: Plain, over: Plain): Plain {
  const out: Plain = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (value === undefined) continue;
    if (value === null) delete out[key];
    else if (isPlain(value) && isPlain(out[key])) out[key] = mergeConfig(out[key] as Plain, value);
    else out[key] = value;
  }
  return out;
}

// ---------------------------------------------------------------- the project

/** An issue as the issues file holds it (the file tracker's own field names). */
export interface IssueSpec {
  id: string;
  identifier: string;
  title: string;
  state: string;
  description?: string;
  priority?: number | null;
  created_at?: string;
  [field: string]: unknown;
}

export interface TrackerComment {
  id: string;
  author: string;
  body: string;
  created_at: string;
}

/** An issue as read back from the issues file. */
export interface TrackerIssue extends IssueSpec {
  comments?: TrackerComment[];
}

/** `E-<n>` in state Todo, with the description carrying the mock's directives. */
export function makeIssue(n: number, description: string, over: Partial<IssueSpec> = {}): IssueSpec {
  return {
    id: String(n),
    identifier: `E-${n}`,
    title: `issue ${n}`,
    state: 'Todo',
    description,
    priority: 1,
    created_at: `2026-01-01T00:00:${String(n % 60).padStart(2, '0')}Z`,
    ...over,
  };
}

/** The prompt every e2e workflow uses unless told otherwise: the description carries the directives. */
export const DEFAULT_PROMPT =
  'Work on {{ issue.identifier }}: {{ issue.title }}.\n\n{{ issue.description }}\n';

export interface ProjectOptions {
  issues: IssueSpec[];
  /** Front-matter overrides, deep-merged over the base (null deletes a key). */
  config?: Plain;
  prompt?: string;
  /** Run the mock runtime through the tracing wrapper (see the file comment). */
  traceAgents?: boolean;
}

export interface Project {
  readonly dir: string;
  readonly workflowPath: string;
  readonly issuesPath: string;
  readonly dbPath: string;
  readonly pidLogPath: string;
  /** Written by the tracing wrapper (only with `traceAgents`). */
  readonly tracePath: string;
  readonly workspaceRoot: string;
  /** The front matter last written. */
  config: Plain;
  /** Rewrites WORKFLOW.md (atomically) with these overrides merged over the current front matter. */
  writeWorkflow(overrides?: Plain, prompt?: string): void;
  writeIssues(issues: readonly IssueSpec[]): void;
  readIssues(): TrackerIssue[];
  issue(identifier: string): TrackerIssue;
  /** Read-modify-write of one issue, written atomically (do it while the service is quiet). */
  editIssue(identifier: string, patch: Partial<IssueSpec>): void;
  /** Where the workspace of `identifier` lives (identifiers used here are already valid keys). */
  workspacePath(identifier: string): string;
}

const projects: string[] = [];

/** Creates the temporary project; it is removed after the test (keep it with E2E_KEEP=1). */
export function createProject(options: ProjectOptions): Project {
  // realpath: the runtime reports its cwd symlink-resolved; keep every path comparable.
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'orch-e2e-')));
  projects.push(dir);
  const workflowPath = path.join(dir, 'WORKFLOW.md');
  const issuesPath = path.join(dir, 'issues.json');
  const dbPath = path.join(dir, 'state.db');
  const pidLogPath = path.join(dir, 'agents.pid.log');
  const tracePath = path.join(dir, 'agents.trace.log');
  const workspaceRoot = path.join(dir, 'workspaces');
  let prompt = options.prompt ?? DEFAULT_PROMPT;

  const base: Plain = {
    tracker: {
      kind: 'file',
      active_states: ['Todo', 'In Progress'],
      terminal_states: ['Done', 'Cancelled'],
      handoff_state: 'Review',
      blocked_state: 'Blocked',
    },
    file: { path: 'issues.json' },
    db_path: 'state.db',
    polling: { interval_ms: 200 },
    workspace: { root: './workspaces' },
    agent: {
      kind: 'mock',
      max_turns: 1,
      max_concurrent_agents: 10,
      stall_timeout_ms: 20_000,
      turn_timeout_ms: 120_000,
      max_retry_backoff_ms: 2_000,
    },
    mock: { pid_log: pidLogPath },
    server: { port: 0 },
  };
  if (options.traceAgents === true) {
    const wrapper = path.join(dir, 'mock-agent.sh');
    const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
    writeFileSync(
      wrapper,
      [
        '#!/bin/sh',
        `printf 'exec %s %s %s\\n' "$$" "$(date +%s%3N)" "$(pwd -P)" >> ${q(tracePath)}`,
        `exec ${q(process.execPath)} --import ${q(TSX_LOADER)} ${q(MOCK_RUNTIME)}`,
        '',
      ].join('\n'),
    );
    chmodSync(wrapper, 0o755);
    (base.agent as Plain).command = wrapper;
  }

  const project: Project = {
    dir,
    workflowPath,
    issuesPath,
    dbPath,
    pidLogPath,
    tracePath,
    workspaceRoot,
    config: mergeConfig(base, options.config ?? {}),
    writeWorkflow(overrides = {}, newPrompt) {
      project.config = mergeConfig(project.config, overrides);
      if (newPrompt !== undefined) prompt = newPrompt;
      writeAtomic(workflowPath, `---\n${stringify(project.config)}---\n${prompt}`);
    },
    writeIssues(issues) {
      writeAtomic(issuesPath, `${JSON.stringify(issues, null, 2)}\n`);
    },
    readIssues() {
      return JSON.parse(readFileSync(issuesPath, 'utf8')) as TrackerIssue[];
    },
    issue(identifier) {
      const found = project.readIssues().find((i) => i.identifier === identifier);
      if (found === undefined) throw new Error(`no issue ${identifier} in ${issuesPath}`);
      return found;
    },
    editIssue(identifier, patch) {
      const issues = project.readIssues();
      const index = issues.findIndex((i) => i.identifier === identifier);
      if (index < 0) throw new Error(`no issue ${identifier} in ${issuesPath}`);
      issues[index] = { ...(issues[index] as TrackerIssue), ...patch };
      project.writeIssues(issues);
    },
    workspacePath(identifier) {
      return path.join(workspaceRoot, identifier);
    },
  };
  project.writeWorkflow();
  project.writeIssues(options.issues);
  return project;
}

// ---------------------------------------------------------------- the service process

export interface LogLine {
  level: number;
  time: string;
  msg: string;
  [field: string]: unknown;
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServiceHandle {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly logPath: string;
  readonly startedAtMs: number;
  /** Resolves when the process has exited. */
  readonly exit: Promise<ExitStatus>;
  exitStatus(): ExitStatus | null;
  /** The exit status once it exits, or null when it is still running after `timeoutMs`. */
  waitExit(timeoutMs: number): Promise<ExitStatus | null>;
  stderr(): string;
  /** Every complete JSON line logged so far (non-JSON lines are skipped). */
  logs(): LogLine[];
  logsWith(msg: string): LogLine[];
  waitForLog(
    what: string,
    match: (line: LogLine) => boolean,
    options?: { timeoutMs?: number; after?: number },
  ): Promise<LogLine>;
  /** The last lines of the log and stderr, for failure messages. */
  tail(lines?: number): string;
  kill(signal: NodeJS.Signals): void;
  /** SIGTERM, then waits for the exit (SIGKILL after `timeoutMs`, and that is reported). */
  stop(timeoutMs?: number): Promise<ExitStatus & { killed: boolean }>;
}

export interface StartOptions {
  /** Arguments after `run WORKFLOW.md`, e.g. ['--once']. */
  args?: string[];
  /** Defaults to service-<n>.jsonl in the project. */
  logName?: string;
  env?: Record<string, string>;
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
}

const services: ServiceHandle[] = [];
let serviceCount = 0;

/** Starts `orchestrator run <WORKFLOW.md> --log-format json …` from source in the project directory. */
export function startService(project: Project, options: StartOptions = {}): ServiceHandle {
  serviceCount += 1;
  const logPath = path.join(project.dir, options.logName ?? `service-${serviceCount}.jsonl`);
  const fd = openSync(logPath, 'a');
  const args = [
    '--import',
    TSX_LOADER,
    MAIN,
    'run',
    project.workflowPath,
    '--log-format',
    'json',
    '--log-level',
    // Debug: tests wait on `tick completed`, which is logged at debug.
    options.logLevel ?? 'debug',
    ...(options.args ?? []),
  ];
  const child = spawn(process.execPath, args, {
    cwd: project.dir,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...options.env },
    stdio: ['ignore', fd, 'pipe'],
  });
  closeSync(fd);
  if (child.pid === undefined) throw new Error('orchestrator did not start');
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr += chunk;
  });
  let status: ExitStatus | null = null;
  const exit = new Promise<ExitStatus>((resolve) => {
    child.once('exit', (code, signal) => {
      status = { code, signal };
      resolve(status);
    });
  });
  const logs = (): LogLine[] => {
    let text: string;
    try {
      text = readFileSync(logPath, 'utf8');
    } catch {
      return [];
    }
    const out: LogLine[] = [];
    for (const line of text.split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        out.push(JSON.parse(line) as LogLine);
      } catch {
        // A line still being written.
      }
    }
    return out;
  };
  const handle: ServiceHandle = {
    child,
    pid: child.pid,
    logPath,
    startedAtMs: Date.now(),
    exit,
    exitStatus: () => status,
    waitExit: (timeoutMs) => Promise.race([exit, sleep(timeoutMs).then(() => null)]),
    stderr: () => stderr,
    logs,
    logsWith: (msg) => logs().filter((l) => l.msg === msg),
    async waitForLog(what, match, opts = {}) {
      return waitFor(
        what,
        () => {
          const found = logs()
            .slice(opts.after ?? 0)
            .find(match);
          if (found !== undefined) return found;
          if (status !== null)
            throw new Error(
              `orchestrator exited (${JSON.stringify(status)}) before ${what}\n${handle.tail()}`,
            );
          return undefined;
        },
        { timeoutMs: opts.timeoutMs ?? 60_000, explain: () => handle.tail() },
      );
    },
    tail(n = 30) {
      let text = '';
      try {
        text = readFileSync(logPath, 'utf8');
      } catch {
        // no log yet
      }
      const lines = text.trimEnd().split('\n').slice(-n).join('\n');
      return `--- log tail (${logPath}) ---\n${lines}\n--- stderr ---\n${stderr.slice(-3000)}`;
    },
    kill(signal) {
      if (status === null) child.kill(signal);
    },
    async stop(timeoutMs = 20_000) {
      if (status !== null) return { ...(status as ExitStatus), killed: false };
      child.kill('SIGTERM');
      const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), timeoutMs));
      const first = await Promise.race([exit, timer]);
      if (first !== 'timeout') return { ...first, killed: false };
      child.kill('SIGKILL');
      return { ...(await exit), killed: true };
    },
  };
  services.push(handle);
  return handle;
}

/**
 * Waits for `ticks` ticks with nothing running and nothing queued, logged after this call: by
 * then the last exit's tracker writes are done, so a SIGTERM does not race them.
 */
export async function waitIdle(service: ServiceHandle, ticks = 2, timeoutMs = 30_000): Promise<void> {
  const from = service.logs().length;
  await waitFor(
    `${ticks} idle ticks`,
    () =>
      service
        .logs()
        .slice(from)
        .filter((l) => l.msg === 'tick completed' && l.running === 0 && l.retrying === 0).length >= ticks,
    { timeoutMs, explain: () => service.tail() },
  );
}

/**
 * Registers the clean-up every e2e test file needs: services still running are killed,
 * mock processes this project's services left behind are killed (by pid, found through
 * the pid-log path in their environment), and the temporary projects are removed.
 */
export function useServiceCleanup(): void {
  afterEach(async () => {
    for (const service of services.splice(0)) {
      if (service.exitStatus() === null) {
        service.kill('SIGKILL');
        await Promise.race([service.exit, sleep(5_000)]);
      }
    }
    for (const dir of projects.splice(0)) {
      for (const pid of agentPidsCarrying(`${PID_LOG_ENV}=${path.join(dir, 'agents.pid.log')}`)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone already
        }
      }
      if (process.env.E2E_KEEP === '1') {
        process.stderr.write(`e2e: kept ${dir}\n`);
        continue;
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

// ---------------------------------------------------------------- /proc

interface ProcInfo {
  pid: number;
  pgid: number;
  state: string;
}

function readStat(pid: number): ProcInfo | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const close = text.lastIndexOf(')');
  if (close < 0) return null;
  const fields = text.slice(close + 2).split(' ');
  return { pid, state: fields[0] ?? '?', pgid: Number(fields[2]) };
}

function readEnviron(pid: number): Buffer | null {
  try {
    return readFileSync(`/proc/${pid}/environ`);
  } catch {
    return null;
  }
}

function environHas(env: Buffer | null, needle: Buffer): boolean {
  if (env === null) return false;
  return env.indexOf(needle) === 0 || env.indexOf(Buffer.concat([Buffer.from([0]), needle])) >= 0;
}

/**
 * True while `pid` is a live (non-zombie) process whose environment holds `tag` (`NAME=value`).
 * An environment that reads empty or fails to read while the process exists (it happens for
 * an instant around execve) counts as still ours; only a readable environment without the tag
 * (a reused pid) or a missing/zombie process counts as gone.
 */
export function isLiveAgent(pid: number, tag: string): boolean {
  const stat = readStat(pid);
  if (stat === null || stat.state === 'Z' || stat.state === 'X') return false;
  const env = readEnviron(pid);
  if (env === null || env.length === 0) {
    const again = readStat(pid);
    return again !== null && again.state !== 'Z' && again.state !== 'X';
  }
  return environHas(env, Buffer.from(`${tag}\0`));
}

/** Live process-group leaders whose environment holds `tag`: the agent processes (not their helpers). */
export function agentPidsCarrying(tag: string): number[] {
  const needle = Buffer.from(`${tag}\0`);
  const out: number[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const name of names) {
    const code = name.charCodeAt(0);
    if (code < 0x30 || code > 0x39) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    const stat = readStat(pid);
    if (stat === null || stat.pgid !== pid || stat.state === 'Z' || stat.state === 'X') continue;
    if (environHas(readEnviron(pid), needle)) out.push(pid);
  }
  return out;
}

function cwdOf(pid: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------- agent processes

/** One mock runtime process, as the pid log, the trace and the /proc sampling saw it. */
export interface AgentProcess {
  pid: number;
  /** When the tracing wrapper exec'd it (spawn time). */
  execMs: number | null;
  /** Its `start` line in the pid log. */
  startMs: number | null;
  /** Its `stop` line; null when it never wrote one (SIGKILL). */
  stopMs: number | null;
  firstSeenMs: number | null;
  lastSeenAliveMs: number | null;
  /** First sample that found it gone (or a zombie). */
  firstSeenDeadMs: number | null;
  /** When a restarted orchestrator reported killing it (see noteKilled). */
  killedAtMs: number | null;
  aliveNow: boolean;
  cwd: string | null;
  /** The workspace directory name (= issue key), null when the cwd is not a workspace. */
  issueKey: string | null;
}

export interface LiveInterval {
  proc: AgentProcess;
  from: number;
  /** Infinity while it still runs. */
  to: number;
}

/**
 * Follows the mock runtime processes of one project: tails the pid log (and the trace),
 * samples `/proc` for liveness and working directory, and answers how many were live at
 * once, overall and per issue.
 */
export class AgentMonitor {
  private readonly records: AgentProcess[] = [];
  private readonly current = new Map<number, AgentProcess>();
  private readonly tag: string;
  private readonly offsets = new Map<string, number>();
  private readonly partial = new Map<string, string>();
  private timer: NodeJS.Timeout | null = null;
  private lastScanMs = 0;
  private readonly realRoot: string;

  constructor(
    private readonly project: Project,
    private readonly options: { intervalMs?: number; scanIntervalMs?: number } = {},
  ) {
    this.tag = `${PID_LOG_ENV}=${project.pidLogPath}`;
    mkdirSync(project.workspaceRoot, { recursive: true });
    this.realRoot = realpathSync(project.workspaceRoot);
  }

  start(): this {
    if (this.timer === null) {
      this.timer = setInterval(() => this.sample(), this.options.intervalMs ?? 50);
      this.sample();
    }
    return this;
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** Records that these pids were SIGKILLed at `atMs` (a restarted orchestrator's report). */
  noteKilled(pids: readonly number[], atMs: number): void {
    for (const pid of pids) {
      const rec = this.current.get(pid);
      if (rec !== undefined && rec.stopMs === null && rec.killedAtMs === null) rec.killedAtMs = atMs;
    }
  }

  /** One sampling round: new pid-log/trace lines, then liveness of every process not known ended. */
  sample(): void {
    const now = Date.now();
    for (const line of this.newLines(this.project.tracePath)) {
      const m = /^exec (\d+) (\S+) (.*)$/.exec(line);
      if (m === null) continue;
      const rec = this.recordFor(Number(m[1]), 'execMs');
      // A `date` without %N support prints no usable stamp: the cwd is still exact.
      const stamp = Number(m[2]);
      rec.execMs = Number.isFinite(stamp) ? stamp : null;
      rec.cwd = m[3] ?? null;
    }
    for (const line of this.newLines(this.project.pidLogPath)) {
      const m = /^(start|stop) (\d+) (\d+)$/.exec(line);
      if (m === null) continue;
      const pid = Number(m[2]);
      const at = Number(m[3]);
      if (m[1] === 'start') this.recordFor(pid, 'startMs').startMs = at;
      else this.recordFor(pid, 'stopMs').stopMs = at;
    }
    if (now - this.lastScanMs >= (this.options.scanIntervalMs ?? 100)) {
      this.lastScanMs = now;
      for (const pid of agentPidsCarrying(this.tag)) {
        const rec = this.recordFor(pid, 'firstSeenMs');
        rec.firstSeenMs ??= now;
      }
    }
    for (const rec of this.records) {
      if (rec.firstSeenDeadMs !== null) continue;
      if (isLiveAgent(rec.pid, this.tag)) {
        rec.aliveNow = true;
        rec.firstSeenMs ??= now;
        rec.lastSeenAliveMs = now;
        rec.cwd ??= cwdOf(rec.pid);
      } else {
        rec.aliveNow = false;
        rec.firstSeenDeadMs = now;
      }
    }
    for (const rec of this.records) {
      if (rec.issueKey === null && rec.cwd !== null && path.dirname(rec.cwd) === this.realRoot) {
        rec.issueKey = path.basename(rec.cwd);
      }
    }
  }

  /** Every process seen, after a fresh sample. */
  processes(): AgentProcess[] {
    this.sample();
    return this.records.map((r) => ({ ...r }));
  }

  /**
   * Live intervals: from the earliest sign of the process (spawn, first sighting, start
   * line) to its stop line; without one, to when it was killed or last seen alive
   * (whichever is later), or Infinity while it still runs.
   */
  intervals(): LiveInterval[] {
    return this.processes().map((proc) => {
      const from = Math.min(
        ...[proc.execMs, proc.firstSeenMs, proc.startMs].filter((t): t is number => t !== null),
      );
      let to: number;
      if (proc.stopMs !== null) to = proc.stopMs;
      else if (proc.aliveNow) to = Number.POSITIVE_INFINITY;
      else {
        const dead = Math.min(
          proc.killedAtMs ?? Number.POSITIVE_INFINITY,
          proc.firstSeenDeadMs ?? Date.now(),
        );
        to = Math.max(proc.lastSeenAliveMs ?? from, dead);
      }
      return { proc, from, to: Math.max(from, to) };
    });
  }

  /** The most processes live at one instant among those `filter` keeps. */
  maxLive(filter: (p: AgentProcess) => boolean = () => true): { max: number; at: number; pids: number[] } {
    return maxOverlap(this.intervals().filter((i) => filter(i.proc)));
  }

  /** Per issue key, the most processes live at one instant (processes without a key under ''). */
  maxLivePerIssue(): Map<string, { max: number; at: number; pids: number[] }> {
    const byIssue = new Map<string, LiveInterval[]>();
    for (const interval of this.intervals()) {
      const key = interval.proc.issueKey ?? '';
      byIssue.set(key, [...(byIssue.get(key) ?? []), interval]);
    }
    return new Map([...byIssue].map(([key, list]) => [key, maxOverlap(list)]));
  }

  /** Processes alive right now. */
  liveNow(): AgentProcess[] {
    return this.processes().filter((p) => p.aliveNow);
  }

  /** A readable table of every process, for failure messages. */
  describe(): string {
    return this.intervals()
      .map(
        ({ proc, from, to }) =>
          `${proc.pid} ${proc.issueKey ?? '?'} ${from}..${to === Number.POSITIVE_INFINITY ? 'live' : to} ` +
          `exec=${proc.execMs} start=${proc.startMs} stop=${proc.stopMs} seen=${proc.firstSeenMs}..${proc.lastSeenAliveMs} dead=${proc.firstSeenDeadMs} killed=${proc.killedAtMs}`,
      )
      .join('\n');
  }

  /**
   * The record a new observation of `pid` belongs to. Lines of one process come in the order
   * exec, start, stop, but may be read after it died; a new record (a reused pid) starts only
   * when the current one already has that observation, or, for a /proc sighting, is known dead.
   */
  private recordFor(pid: number, field: 'execMs' | 'startMs' | 'stopMs' | 'firstSeenMs'): AgentProcess {
    const rec = this.current.get(pid);
    if (rec !== undefined) {
      const attach =
        field === 'execMs'
          ? rec.execMs === null && rec.startMs === null && rec.stopMs === null
          : field === 'startMs'
            ? rec.startMs === null && rec.stopMs === null
            : field === 'stopMs'
              ? rec.stopMs === null
              : rec.firstSeenDeadMs === null;
      if (attach) return rec;
    }
    const fresh: AgentProcess = {
      pid,
      execMs: null,
      startMs: null,
      stopMs: null,
      firstSeenMs: null,
      lastSeenAliveMs: null,
      firstSeenDeadMs: null,
      killedAtMs: null,
      aliveNow: false,
      cwd: null,
      issueKey: null,
    };
    this.records.push(fresh);
    this.current.set(pid, fresh);
    return fresh;
  }

  /** Complete lines appended to `file` since the last call. */
  private newLines(file: string): string[] {
    let size: number;
    try {
      size = statSync(file).size;
    } catch {
      return [];
    }
    const offset = this.offsets.get(file) ?? 0;
    if (size <= offset) return [];
    const buffer = Buffer.alloc(size - offset);
    const fd = openSync(file, 'r');
    try {
      readSync(fd, buffer, 0, buffer.length, offset);
    } finally {
      closeSync(fd);
    }
    this.offsets.set(file, size);
    const text = (this.partial.get(file) ?? '') + buffer.toString('utf8');
    const lines = text.split('\n');
    this.partial.set(file, lines.pop() ?? '');
    return lines.filter((l) => l !== '');
  }
}

function maxOverlap(intervals: readonly LiveInterval[]): { max: number; at: number; pids: number[] } {
  // Ends sort before starts at the same instant: touching intervals do not overlap.
  const events = intervals
    .flatMap((i) => [
      { t: i.from, d: 1, pid: i.proc.pid },
      { t: i.to, d: -1, pid: i.proc.pid },
    ])
    .sort((a, b) => a.t - b.t || a.d - b.d);
  let live = 0;
  let best = { max: 0, at: 0, pids: [] as number[] };
  const open = new Set<number>();
  for (const e of events) {
    live += e.d;
    if (e.d > 0) open.add(e.pid);
    else open.delete(e.pid);
    if (live > best.max) best = { max: live, at: e.t, pids: [...open] };
  }
  return best;
}

// ---------------------------------------------------------------- the database

export interface RunRow {
  id: number;
  issue_id: string;
  identifier: string;
  attempt: number;
  session_id: string | null;
  workspace: string;
  started_at: string;
  ended_at: string | null;
  exit_kind: string | null;
  error_kind: string | null;
  error: string | null;
  turns: number;
  total_tokens: number;
  input_tokens: number;
  output_tokens: number;
}

export interface TurnRow {
  run_id: number;
  turn: number;
  started_at: string;
  ended_at: string;
  session_id: string;
  exit_reason: string;
  error_kind: string | null;
  total_tokens: number;
  final_message: string;
}

export interface RetryRow {
  issue_id: string;
  identifier: string;
  attempt: number;
  due_at_ms: number;
  reason: string;
  last_error: string | null;
  session_id: string | null;
  updated_at: string;
}

export interface BudgetRow {
  issue_id: string;
  sessions: number;
  tokens: number;
  exhausted_at: string | null;
  exhausted_reason: string | null;
  exhaustion_reported: number;
}

/**
 * Runs `fn` on a fresh read-only connection (never held across a service's life, so a
 * SIGKILLed service or a restart never meets a stale reader); null while the file does not
 * exist or has no schema yet.
 */
export function readDb<T>(dbPath: string, fn: (db: Database.Database) => T): T | null {
  if (!existsSync(dbPath)) return null;
  let db: Database.Database;
  try {
    db = new Database(dbPath, { readonly: true, fileMustExist: true, timeout: 5_000 });
  } catch {
    return null;
  }
  try {
    const ready = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'runs'").get();
    return ready === undefined ? null : fn(db);
  } finally {
    db.close();
  }
}

export const dbRuns = (dbPath: string, identifier?: string): RunRow[] =>
  readDb(dbPath, (db) =>
    identifier === undefined
      ? (db.prepare('SELECT * FROM runs ORDER BY id').all() as RunRow[])
      : (db.prepare('SELECT * FROM runs WHERE identifier = ? ORDER BY id').all(identifier) as RunRow[]),
  ) ?? [];

export const dbTurns = (dbPath: string, runId: number): TurnRow[] =>
  readDb(
    dbPath,
    (db) => db.prepare('SELECT * FROM turns WHERE run_id = ? ORDER BY turn').all(runId) as TurnRow[],
  ) ?? [];

export const dbRetries = (dbPath: string): RetryRow[] =>
  readDb(dbPath, (db) => db.prepare('SELECT * FROM retry_queue ORDER BY due_at_ms').all() as RetryRow[]) ??
  [];

export const dbBudget = (dbPath: string, issueId: string): BudgetRow | null =>
  readDb(
    dbPath,
    (db) =>
      (db.prepare('SELECT * FROM issue_budgets WHERE issue_id = ?').get(issueId) as BudgetRow | undefined) ??
      null,
  );

/** Every distinct retry row that appeared while it polled (rows are deleted when they fire). */
export class RetryWatcher {
  private readonly seen = new Map<string, RetryRow & { firstSeenMs: number }>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly dbPath: string,
    private readonly intervalMs = 40,
  ) {}

  start(): this {
    this.timer ??= setInterval(() => this.sample(), this.intervalMs);
    return this;
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  sample(): void {
    let rows: RetryRow[];
    try {
      rows = dbRetries(this.dbPath);
    } catch {
      return; // busy or mid-migration: the next round reads it
    }
    for (const row of rows) {
      const key = `${row.issue_id}|${row.attempt}|${row.due_at_ms}|${row.reason}`;
      if (!this.seen.has(key)) this.seen.set(key, { ...row, firstSeenMs: Date.now() });
    }
  }

  rows(issueId?: string): (RetryRow & { firstSeenMs: number })[] {
    this.sample();
    return [...this.seen.values()].filter((r) => issueId === undefined || r.issue_id === issueId);
  }
}

/** Epoch ms of an ISO timestamp stored by the service. */
export const ms = (iso: string | null): number => (iso === null ? Number.NaN : Date.parse(iso));
