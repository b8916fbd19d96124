/**
 * The codex workload of issue #20: 200 issues (BENCH_ISSUES) at `max_concurrent_agents: 32`
 * through the `codex` kind, against a fake `codex app-server` (codex-workload-fake.ts) that
 * completes each turn in the same write that answers `turn/start`, beside a floor that
 * spawns the same fake as many times at the same concurrency, doing the same handshake
 * (`initialize`, `initialized`, `thread/start`, one `turn/start`) from this process, reading
 * to the turn's completion and closing stdin, and nothing else.
 *
 * The service is the real CLI from the build (`node dist/cli/main.js run`, run `npm run
 * build` first) as a child process on a temp project: the file tracker with every issue in
 * Todo, `agent.command: <node> <fake> app-server`, `max_turns: 1`, a handoff state
 * (Review), the default polling interval, the default tools (on: each working session gets
 * the tool server's table in its managed CODEX_HOME, and the fake reports it ready), a
 * `codex.credentials_home` holding an auth.json and a config.toml, a `codex.home_root`
 * inside the project, `--port` for /metrics and JSON logs at info to a file. The service
 * runs its start-up sandbox probe and one credential verification against the same fake.
 * It is stopped (SIGTERM) once its log shows every issue transitioned to Review.
 *
 * One run = the floor, the service run, the floor again (the floor is the mean of the two).
 * BENCH_RUNS runs (default 3); medians and ranges are printed beside the targets:
 * - wall ÷ floor: from spawning the CLI to the last handoff write (the log line `issue
 *   transitioned`), and from the first `dispatching` (CLI start-up, the sandbox probe and
 *   the first tick left out) — target ≤ 1.05×;
 * - service CPU per issue beyond the floor: the utime+stime of the service and of its direct
 *   children, the agent launcher (/proc/<pid>/stat, read once every issue is handed off,
 *   before it is stopped; the agents are the launcher's children, not counted) less N ×
 *   the floor pool's own CPU per spawn, ÷ N; whole life, from the HTTP server's first
 *   answer (start-up left out), and that less what the bench's own /metrics scrapes cost
 *   the service (each priced by 20 answers of the idle service after the run) — target
 *   ≤ 5 ms/issue;
 * - main-process peak RSS (VmHWM, read at the same moment) — target ≤ 90 MB; the launcher's
 *   is printed beside it;
 * - handoff lag per issue: `worker exited` → `issue transitioned` (to Review), p50/p99/max
 *   — target p99 ≤ 100 ms;
 * - event-loop delay p99: `orchestrator_nodejs_eventloop_lag_p99_seconds` from /metrics.
 *   prom-client resets its histogram at every scrape, so each scrape covers the window
 *   since the previous one (500 ms); the worst window's p99 is held to the target
 *   (≤ 50 ms) and the median window's is printed beside it;
 * - /metrics response time, asked every 500 ms (BENCH_SCRAPE_MS) from the HTTP server's
 *   first answer to the last handoff, p50/max;
 * - lost completions: issues not in Review at the end, and runs in the SQLite store not
 *   `succeeded`; duplicate dispatches: runs beyond one per issue. Target 0 and 0.
 *
 * Also printed per run: the median time of each stage of an issue's life as the log shows
 * it (dispatching → turn started → agent session started → turn ended → worker exited →
 * issue transitioned) and the warnings and errors logged.
 *
 * BENCH_DIST runs another build (a directory laid out like dist/ whose node_modules resolve,
 * e.g. a copy with timing probes). BENCH_CPU_PROF=<dir> passes `--cpu-prof --cpu-prof-dir <dir>` to the service (summarise a
 * profile with `node --import tsx test/bench/cpuprofile-top.ts <file.cpuprofile>`; the
 * profiler's own overhead inflates the CPU figures). BENCH_KEEP=1 keeps the temp projects.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { metricValue, percentile, readCpu, readMemory } from './api-load-probe.js';
import { writeFakeAppServer } from './codex-workload-fake.js';
import { DIST, envInt } from './orchestrator-harness.js';
import { median } from './stats.js';

const CONCURRENCY = 32;
const ACTIVE = 'Todo';
const HANDOFF = 'Review';
const TARGETS = {
  wallRatio: 1.05,
  cpuMsPerIssue: 5,
  peakRssMb: 90,
  handoffLagP99Ms: 100,
  loopP99Ms: 50,
} as const;
/** /metrics answers asked of the idle service after the run, to price the bench's own scrapes. */
const CALIBRATION_SCRAPES = 20;
const CLIENT_INFO = { name: 'workflow_orchestrator', title: 'workflow-orchestrator', version: '0.1.0' };

interface Settings {
  dist: string;
  issues: number;
  runs: number;
  scrapeMs: number;
  cpuProfDir: string | null;
  /** BENCH_HEAP_SNAPSHOT=<dir>: one heap snapshot of the service when half the issues are handed off. */
  heapSnapshotDir: string | null;
  keep: boolean;
}

function settings(): Settings {
  const dist = path.resolve(process.env.BENCH_DIST ?? DIST);
  const missing = ['cli/main.js', 'agent/codex/adapter.js'].filter((f) => !existsSync(path.join(dist, f)));
  if (missing.length > 0) {
    throw new Error(
      `codex-workload runs the built CLI: run \`npm run build\` first (missing ${missing.join(', ')} in ${dist})`,
    );
  }
  const prof = process.env.BENCH_CPU_PROF;
  return {
    dist,
    issues: envInt('BENCH_ISSUES', 200),
    runs: envInt('BENCH_RUNS', 3),
    scrapeMs: envInt('BENCH_SCRAPE_MS', 500),
    cpuProfDir: prof === undefined || prof === '' ? null : path.resolve(prof),
    heapSnapshotDir: process.env.BENCH_HEAP_SNAPSHOT ? path.resolve(process.env.BENCH_HEAP_SNAPSHOT) : null,
    keep: process.env.BENCH_KEEP === '1',
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

// ---------------------------------------------------------------- the project

interface Project {
  dir: string;
  fake: string;
  /** The folder credentials are copied from (also the floor's CODEX_HOME). */
  codexSource: string;
  home: string;
  floorCwd: string;
}

function makeProject(issues: number): Project {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'orchestrator-codex-workload-')));
  const fake = writeFakeAppServer(dir);
  const codexSource = path.join(dir, 'codex-source');
  const home = path.join(dir, 'home');
  const floorCwd = path.join(dir, 'floor');
  for (const d of [codexSource, home, floorCwd, path.join(dir, 'workspaces')]) mkdirSync(d);
  writeFileSync(path.join(codexSource, 'auth.json'), `${JSON.stringify({ OPENAI_API_KEY: 'sk-bench' })}\n`);
  writeFileSync(path.join(codexSource, 'config.toml'), 'model = "bench-model"\n');
  const list = Array.from({ length: issues }, (_, i) => ({
    id: String(i + 1),
    identifier: `CODEX-${i + 1}`,
    title: `Benchmark issue ${i + 1}`,
    description: 'Nothing to do: the fake app-server completes the turn at once.',
    state: ACTIVE,
    priority: 2,
    created_at: new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString(),
  }));
  writeFileSync(path.join(dir, 'issues.json'), `${JSON.stringify(list, null, 2)}\n`);
  const command = `${process.execPath} ${fake} app-server`;
  writeFileSync(
    path.join(dir, 'WORKFLOW.md'),
    [
      '---',
      'tracker:',
      '  kind: file',
      `  active_states: [${ACTIVE}]`,
      '  terminal_states: [Done]',
      `  handoff_state: ${HANDOFF}`,
      'file:',
      '  path: issues.json',
      'db_path: state.db',
      'workspace:',
      '  root: ./workspaces',
      'agent:',
      '  kind: codex',
      `  command: ${JSON.stringify(command)}`,
      `  max_concurrent_agents: ${CONCURRENCY}`,
      '  max_turns: 1',
      'codex:',
      `  credentials_home: ${JSON.stringify(codexSource)}`,
      `  home_root: ${JSON.stringify(path.join(dir, 'codex-homes'))}`,
      'logging:',
      '  level: info',
      '  format: json',
      '---',
      'Work on {{ issue.identifier }}: {{ issue.title }}.',
      '',
    ].join('\n'),
  );
  return { dir, fake, codexSource, home, floorCwd };
}

// ---------------------------------------------------------------- the floor

/** One fake app-server driven through the handshake and one turn, then closed. */
function floorSession(project: Project, env: Record<string, string>, i: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [project.fake, 'app-server'], {
      cwd: project.floorCwd,
      env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let nextId = 1;
    let step = 0;
    let threadId = '';
    let buffered = '';
    let stdoutEnded = false;
    let exitCode: number | null | undefined;
    const send = (message: Record<string, unknown>) => child.stdin.write(`${JSON.stringify(message)}\n`);
    const request = (method: string, params: unknown) => send({ id: nextId++, method, params });
    const onMessage = (m: { id?: number; method?: string; result?: { thread?: { id?: string } } }) => {
      if (step === 0 && m.id === 1) {
        send({ method: 'initialized' });
        request('thread/start', {
          cwd: project.floorCwd,
          approvalPolicy: 'never',
          sandbox: 'workspace-write',
        });
        step = 1;
      } else if (step === 1 && m.id === 2) {
        threadId = m.result?.thread?.id ?? '';
        request('turn/start', {
          threadId,
          input: [
            { type: 'text', text: `Work on CODEX-${i + 1}: Benchmark issue ${i + 1}.`, text_elements: [] },
          ],
        });
        step = 2;
      } else if (step === 2 && m.method === 'turn/completed') {
        step = 3;
        child.stdin.end();
      }
    };
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      buffered += chunk;
      let nl = buffered.indexOf('\n');
      while (nl >= 0) {
        const text = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        if (text.trim() !== '') onMessage(JSON.parse(text));
        nl = buffered.indexOf('\n');
      }
    });
    child.stderr.resume();
    child.stdin.on('error', () => undefined);
    const finish = () => {
      if (!stdoutEnded || exitCode === undefined) return;
      if (exitCode !== 0 || step !== 3)
        reject(new Error(`floor session ${i} ended at step ${step}, exit ${exitCode}`));
      else resolve();
    };
    child.stdout.on('end', () => {
      stdoutEnded = true;
      finish();
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      exitCode = code;
      finish();
    });
    request('initialize', { clientInfo: CLIENT_INFO, capabilities: null });
  });
}

/** The floor pool: `count` sessions at CONCURRENCY; wall ms and this process's CPU ms. */
async function floor(project: Project, count: number): Promise<{ wallMs: number; cpuMs: number }> {
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: project.home,
    CODEX_HOME: project.codexSource,
  };
  let next = 0;
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, count) }, async () => {
      while (next < count) await floorSession(project, env, next++);
    }),
  );
  const wallMs = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  return { wallMs, cpuMs: (cpu.user + cpu.system) / 1000 };
}

// ---------------------------------------------------------------- the service

interface LogLine {
  level: number;
  time: string;
  msg: string;
  issue_id?: string;
  state?: string;
  [field: string]: unknown;
}

/** Complete JSON lines appended to a file since the last call. */
class LogTail {
  private offset = 0;
  private partial = '';
  constructor(private readonly file: string) {}

  next(): LogLine[] {
    let size: number;
    try {
      size = statSync(this.file).size;
    } catch {
      return [];
    }
    if (size <= this.offset) return [];
    const buffer = Buffer.alloc(size - this.offset);
    const fd = openSync(this.file, 'r');
    try {
      readSync(fd, buffer, 0, buffer.length, this.offset);
    } finally {
      closeSync(fd);
    }
    this.offset = size;
    const lines = (this.partial + buffer.toString('utf8')).split('\n');
    this.partial = lines.pop() ?? '';
    const out: LogLine[] = [];
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      try {
        out.push(JSON.parse(line) as LogLine);
      } catch {
        // not ours
      }
    }
    return out;
  }
}

interface Scrape {
  latencyMs: number;
  loopP99Ms: number;
  loopMaxMs: number;
  heapUsedMb: number;
  heapTotalMb: number;
  externalMb: number;
}

/** Asks /metrics every `intervalMs` (one request at a time) until stopped. */
function startScraper(port: number, intervalMs: number): { stop(): Promise<Scrape[]> } {
  const scrapes: Scrape[] = [];
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const started = performance.now();
      try {
        const res = await fetch(`http://127.0.0.1:${port}/metrics`);
        const body = await res.text();
        const latencyMs = performance.now() - started;
        if (res.ok) {
          const mb = (name: string) => metricValue(body, name) / 2 ** 20;
          scrapes.push({
            latencyMs,
            loopP99Ms: metricValue(body, 'orchestrator_nodejs_eventloop_lag_p99_seconds') * 1000,
            loopMaxMs: metricValue(body, 'orchestrator_nodejs_eventloop_lag_max_seconds') * 1000,
            heapUsedMb: mb('orchestrator_nodejs_heap_size_used_bytes'),
            heapTotalMb: mb('orchestrator_nodejs_heap_size_total_bytes'),
            externalMb: mb('orchestrator_nodejs_external_memory_bytes'),
          });
        }
      } catch {
        // the service is going away
      }
      const wait = intervalMs - (performance.now() - started);
      if (wait > 0 && !stopped) await sleep(wait);
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return scrapes;
    },
  };
}

/**
 * The service's own helper processes: its direct children. Agents are children of the launcher,
 * not of the service, so in this workload that is the launcher alone.
 */
function helpers(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** The CPU ms the service's helper processes have used so far. */
function helperCpuMs(pid: number): number {
  return helpers(pid).reduce((sum, child) => sum + (readCpu(child)?.selfMs ?? 0), 0);
}

interface ServiceRun {
  /** Spawn → last handoff write, ms. */
  wallMs: number;
  /** First `dispatching` → last handoff write, ms. */
  wallFromDispatchMs: number;
  /** Spawn → the HTTP server's first answer. */
  readyMs: number;
  /** The main process's CPU plus its helpers' (the agent launcher). */
  cpuTotalMs: number;
  cpuAfterReadyMs: number;
  /** Of which the helpers' (the launcher's) CPU over the whole life. */
  helperCpuMs: number;
  /** The service's CPU per /metrics answer, measured on the idle service after the run. */
  cpuPerScrapeMs: number;
  hwmMb: number;
  /** The helpers' peak RSS, summed (the launcher's). */
  helperHwmMb: number;
  lagsMs: number[];
  scrapes: Scrape[];
  notInReview: number;
  notSucceeded: number;
  runs: number;
  duplicates: number;
  dispatchLines: number;
  problems: { count: number; first: string[] };
  stages: Record<string, number>;
  exit: string;
}

function startService(project: Project, port: number, s: Settings): ChildProcess {
  const log = openSync(path.join(project.dir, 'service.jsonl'), 'a');
  const prof = s.cpuProfDir === null ? [] : ['--cpu-prof', '--cpu-prof-dir', s.cpuProfDir];
  const heap =
    s.heapSnapshotDir === null
      ? []
      : ['--heapsnapshot-signal=SIGUSR2', '--diagnostic-dir', s.heapSnapshotDir];
  const child = spawn(
    process.execPath,
    [
      ...prof,
      ...heap,
      path.join(s.dist, 'cli', 'main.js'),
      'run',
      'WORKFLOW.md',
      '--log-format',
      'json',
      '--log-level',
      'info',
      '--port',
      String(port),
    ],
    {
      cwd: project.dir,
      env: { PATH: process.env.PATH ?? '', HOME: project.home },
      stdio: ['ignore', log, 'pipe'],
    },
  );
  closeSync(log);
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => process.stderr.write(`  service stderr: ${chunk}`));
  return child;
}

async function serviceRun(project: Project, s: Settings): Promise<ServiceRun> {
  const port = await freePort();
  const spawnedAt = Date.now();
  const child = startService(project, port, s);
  const pid = child.pid as number;
  let exited: string | null = null;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exited = signal ?? String(code);
      resolve();
    }),
  );
  const logPath = path.join(project.dir, 'service.jsonl');
  const tail = new LogTail(logPath);
  const handedOff = new Set<string>();
  const timeoutMs = 120_000 + s.issues * 500;
  const deadline = Date.now() + timeoutMs;
  const failed = (what: string) =>
    new Error(`${what} (project ${project.dir}; service exit ${exited ?? 'none'}; see service.jsonl)`);

  // Up: the HTTP server answers.
  for (;;) {
    if (exited !== null) throw failed('the service exited at start');
    if (Date.now() > deadline) throw failed('the HTTP server never answered');
    try {
      if ((await fetch(`http://127.0.0.1:${port}/livez`)).ok) break;
    } catch {
      // not listening yet
    }
    await sleep(20);
  }
  const readyMs = Date.now() - spawnedAt;
  const cpuReady = readCpu(pid);
  const helperCpuReadyMs = helperCpuMs(pid);
  const scraper = startScraper(port, s.scrapeMs);
  let cpuEnd: ReturnType<typeof readCpu> = null;
  let helperCpuEndMs = 0;
  let helperHwmMb = 0;
  let memory: ReturnType<typeof readMemory> = null;
  let scrapes: Scrape[] = [];
  let cpuPerScrapeMs = Number.NaN;
  let snapshotTaken = false;
  try {
    while (handedOff.size < s.issues) {
      if (exited !== null) throw failed('the service exited before every handoff');
      // Midway, with every slot busy: the snapshot is written by the service, blocking it meanwhile.
      if (s.heapSnapshotDir !== null && !snapshotTaken && handedOff.size >= s.issues / 2) {
        snapshotTaken = true;
        child.kill('SIGUSR2');
      }
      if (Date.now() > deadline)
        throw failed(`${handedOff.size}/${s.issues} handed off after ${timeoutMs} ms`);
      for (const line of tail.next()) {
        if (line.msg === 'issue transitioned' && line.state === HANDOFF && line.issue_id !== undefined)
          handedOff.add(line.issue_id);
      }
      if (handedOff.size < s.issues) await sleep(100);
    }
    // Every issue is handed off: the service's own figures before it is stopped.
    cpuEnd = readCpu(pid);
    helperCpuEndMs = helperCpuMs(pid);
    memory = readMemory(pid);
    helperHwmMb = helpers(pid).reduce((sum, child) => sum + (readMemory(child)?.hwmMb ?? 0), 0);
    scrapes = await scraper.stop();
    // What the bench's own scrapes cost the service: timed on the idle service.
    const before = readCpu(pid);
    for (let i = 0; i < CALIBRATION_SCRAPES; i++)
      await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
    const after = readCpu(pid);
    if (before !== null && after !== null)
      cpuPerScrapeMs = (after.selfMs - before.selfMs) / CALIBRATION_SCRAPES;
  } finally {
    if (scrapes.length === 0) scrapes = await scraper.stop();
    if (exited === null) {
      child.kill('SIGTERM');
      const stopped = await Promise.race([exit.then(() => true), sleep(45_000).then(() => false)]);
      if (!stopped) {
        console.log('  the service did not stop within 45 s of SIGTERM: killed');
        child.kill('SIGKILL');
        await exit;
      }
    }
  }
  if (cpuEnd === null || memory === null || cpuReady === null)
    throw failed('could not read /proc of the service');

  const logs = new LogTail(logPath).next();
  const analysis = analyseLog(logs, spawnedAt);
  const store = readStore(path.join(project.dir, 'state.db'), s.issues);
  const issues = JSON.parse(readFileSync(path.join(project.dir, 'issues.json'), 'utf8')) as {
    state: string;
  }[];
  return {
    wallMs: analysis.lastHandoffMs - spawnedAt,
    wallFromDispatchMs: analysis.lastHandoffMs - analysis.firstDispatchMs,
    readyMs,
    cpuTotalMs: cpuEnd.selfMs + helperCpuEndMs,
    cpuAfterReadyMs: cpuEnd.selfMs + helperCpuEndMs - cpuReady.selfMs - helperCpuReadyMs,
    helperCpuMs: helperCpuEndMs,
    cpuPerScrapeMs,
    hwmMb: memory.hwmMb,
    helperHwmMb,
    lagsMs: analysis.lagsMs,
    scrapes,
    notInReview: issues.filter((i) => i.state !== HANDOFF).length,
    notSucceeded: store.notSucceeded,
    runs: store.runs,
    duplicates: store.duplicates,
    dispatchLines: analysis.dispatchLines,
    problems: analysis.problems,
    stages: analysis.stages,
    exit: exited ?? 'unknown',
  };
}

const STAGES = [
  'dispatching',
  'turn started',
  'agent session started',
  'turn ended',
  'worker exited',
  'issue transitioned',
] as const;

function analyseLog(
  logs: LogLine[],
  spawnedAt: number,
): {
  lagsMs: number[];
  firstDispatchMs: number;
  lastHandoffMs: number;
  dispatchLines: number;
  problems: { count: number; first: string[] };
  stages: Record<string, number>;
} {
  // Per issue, the first time of each stage (the verification session has no issue fields of its own).
  const at = new Map<string, Map<string, number>>();
  let firstDispatchMs = Number.POSITIVE_INFINITY;
  let lastHandoffMs = spawnedAt;
  let dispatchLines = 0;
  const problems = { count: 0, first: [] as string[] };
  for (const line of logs) {
    const t = Date.parse(line.time);
    if (line.level >= 40) {
      problems.count += 1;
      if (problems.first.length < 3) problems.first.push(JSON.stringify(line).slice(0, 300));
    }
    if (line.issue_id === undefined) continue;
    if (line.msg === 'dispatching') {
      dispatchLines += 1;
      firstDispatchMs = Math.min(firstDispatchMs, t);
    }
    if (line.msg === 'issue transitioned') {
      if (line.state !== HANDOFF) continue;
      lastHandoffMs = Math.max(lastHandoffMs, t);
    }
    if (!(STAGES as readonly string[]).includes(line.msg)) continue;
    let stages = at.get(line.issue_id);
    if (stages === undefined) {
      stages = new Map();
      at.set(line.issue_id, stages);
    }
    if (!stages.has(line.msg)) stages.set(line.msg, t);
  }
  const lagsMs: number[] = [];
  const steps: Record<string, number[]> = {};
  for (const stages of at.values()) {
    const exited = stages.get('worker exited');
    const moved = stages.get('issue transitioned');
    if (exited !== undefined && moved !== undefined) lagsMs.push(moved - exited);
    for (let i = 1; i < STAGES.length; i++) {
      const from = stages.get(STAGES[i - 1] as string);
      const to = stages.get(STAGES[i] as string);
      if (from === undefined || to === undefined) continue;
      const key = `${STAGES[i - 1]} → ${STAGES[i]}`;
      steps[key] ??= [];
      steps[key].push(to - from);
    }
  }
  const stages = Object.fromEntries(Object.entries(steps).map(([k, v]) => [k, median(v)]));
  return { lagsMs, firstDispatchMs, lastHandoffMs, dispatchLines, problems, stages };
}

function readStore(
  dbPath: string,
  issues: number,
): { runs: number; notSucceeded: number; duplicates: number } {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const perIssue = db.prepare('SELECT issue_id, count(*) AS n FROM runs GROUP BY issue_id').all() as {
      issue_id: string;
      n: number;
    }[];
    const succeeded = db
      .prepare("SELECT count(DISTINCT issue_id) AS n FROM runs WHERE exit_kind = 'succeeded'")
      .get() as { n: number };
    return {
      runs: perIssue.reduce((sum, r) => sum + r.n, 0),
      notSucceeded: issues - succeeded.n,
      duplicates: perIssue.reduce((sum, r) => sum + Math.max(0, r.n - 1), 0),
    };
  } finally {
    db.close();
  }
}

// ---------------------------------------------------------------- figures

interface RunFigures {
  floorMs: number;
  floorCpuPerSpawnMs: number;
  service: ServiceRun;
  wallRatio: number;
  wallRatioFromDispatch: number;
  cpuPerIssueMs: number;
  cpuPerIssueAfterReadyMs: number;
  /** After ready, less what the bench's /metrics scrapes cost the service. */
  cpuPerIssueNoScrapesMs: number;
  heapUsedMaxMb: number;
  lagP50: number;
  lagP99: number;
  lagMax: number;
  loopP99Worst: number;
  loopP99Median: number;
  loopMaxWorst: number;
  scrapeP50: number;
  scrapeMax: number;
  lost: number;
}

function figures(
  issues: number,
  before: { wallMs: number; cpuMs: number },
  after: typeof before,
  service: ServiceRun,
) {
  const floorMs = (before.wallMs + after.wallMs) / 2;
  const floorCpuPerSpawnMs = (before.cpuMs + after.cpuMs) / 2 / issues;
  const lags = [...service.lagsMs].sort((a, b) => a - b);
  const loopP99 = service.scrapes.map((x) => x.loopP99Ms).filter(Number.isFinite);
  const loopMax = service.scrapes.map((x) => x.loopMaxMs).filter(Number.isFinite);
  const scrape = service.scrapes.map((x) => x.latencyMs).sort((a, b) => a - b);
  return {
    floorMs,
    floorCpuPerSpawnMs,
    service,
    wallRatio: service.wallMs / floorMs,
    wallRatioFromDispatch: service.wallFromDispatchMs / floorMs,
    cpuPerIssueMs: (service.cpuTotalMs - floorCpuPerSpawnMs * issues) / issues,
    cpuPerIssueAfterReadyMs: (service.cpuAfterReadyMs - floorCpuPerSpawnMs * issues) / issues,
    cpuPerIssueNoScrapesMs:
      (service.cpuAfterReadyMs -
        service.scrapes.length * service.cpuPerScrapeMs -
        floorCpuPerSpawnMs * issues) /
      issues,
    heapUsedMaxMb: Math.max(...service.scrapes.map((x) => x.heapUsedMb).filter(Number.isFinite)),
    lagP50: percentile(lags, 50),
    lagP99: percentile(lags, 99),
    lagMax: lags.at(-1) ?? Number.NaN,
    loopP99Worst: loopP99.length === 0 ? Number.NaN : Math.max(...loopP99),
    loopP99Median: loopP99.length === 0 ? Number.NaN : median(loopP99),
    loopMaxWorst: loopMax.length === 0 ? Number.NaN : Math.max(...loopMax),
    scrapeP50: percentile(scrape, 50),
    scrapeMax: scrape.at(-1) ?? Number.NaN,
    lost: Math.max(service.notInReview, service.notSucceeded),
  } satisfies RunFigures;
}

const largest = (scrapes: readonly Scrape[], key: 'heapTotalMb' | 'externalMb') =>
  Math.max(...scrapes.map((x) => x[key]).filter(Number.isFinite));
const f0 = (v: number) => (Number.isFinite(v) ? v.toFixed(0) : '-');
const f1 = (v: number) => (Number.isFinite(v) ? v.toFixed(1) : '-');
const f2 = (v: number) => (Number.isFinite(v) ? v.toFixed(2) : '-');

function printRun(n: number, r: RunFigures): void {
  const sv = r.service;
  console.log(
    `run ${n}: floor ${f0(r.floorMs)} ms (CPU ${f2(r.floorCpuPerSpawnMs)} ms/spawn here); service: ready ${f0(sv.readyMs)} ms, ` +
      `last handoff at ${f0(sv.wallMs)} ms (${f0(sv.wallFromDispatchMs)} ms from the first dispatch), ` +
      `CPU ${f0(sv.cpuTotalMs)} ms (${f0(sv.cpuAfterReadyMs)} after ready; ${f1(sv.cpuPerScrapeMs)} ms per /metrics answer), ` +
      `launcher CPU ${f0(sv.helperCpuMs)} ms, VmHWM ${f1(sv.hwmMb)} MB + launcher ${f1(sv.helperHwmMb)} MB (largest scraped: heap used ${f1(r.heapUsedMaxMb)} MB, heap total ${f1(largest(sv.scrapes, 'heapTotalMb'))} MB, external ${f1(largest(sv.scrapes, 'externalMb'))} MB), ` +
      `${sv.runs} runs, ${sv.dispatchLines} dispatches, ${sv.scrapes.length} scrapes, exit ${sv.exit}`,
  );
  console.log(
    `  handoff lag p50/p99/max ${f0(r.lagP50)}/${f0(r.lagP99)}/${f0(r.lagMax)} ms over ${sv.lagsMs.length} issues; ` +
      `event loop p99 per window: worst ${f1(r.loopP99Worst)} ms, median ${f1(r.loopP99Median)} ms (max ${f1(r.loopMaxWorst)} ms); ` +
      `/metrics p50/max ${f0(r.scrapeP50)}/${f0(r.scrapeMax)} ms`,
  );
  console.log(
    `  stage medians: ${Object.entries(sv.stages)
      .map(([k, v]) => `${k} ${f0(v)} ms`)
      .join('; ')}`,
  );
  if (sv.problems.count > 0)
    console.log(`  ${sv.problems.count} warning/error line(s), first: ${sv.problems.first.join(' | ')}`);
}

function summaryRow(
  name: string,
  values: number[],
  format: (v: number) => string,
  target: string,
  met: ((v: number) => boolean) | null,
): string {
  const mid = median(values);
  const range = `${format(Math.min(...values))}–${format(Math.max(...values))}`;
  const verdict = met === null ? '' : met(mid) ? 'MET' : 'MISSED';
  return `| ${name} | ${format(mid)} | ${range} | ${target} | ${verdict} |`;
}

export async function codexWorkload(): Promise<void> {
  const s = settings();
  console.log(
    `setup: ${s.issues} issues, codex kind against a fake app-server that completes each turn at once, ` +
      `max_concurrent_agents ${CONCURRENCY}, max_turns 1, default polling interval and tools; ` +
      `floor: ${s.issues} spawns of the same fake at ${CONCURRENCY}, same handshake; ${s.runs} run(s)` +
      (s.cpuProfDir === null ? '' : `; --cpu-prof into ${s.cpuProfDir} (figures inflated by the profiler)`),
  );
  const runs: RunFigures[] = [];
  for (let i = 1; i <= s.runs; i++) {
    const project = makeProject(s.issues);
    let ok = false;
    try {
      const before = await floor(project, s.issues);
      const service = await serviceRun(project, s);
      const after = await floor(project, s.issues);
      const run = figures(s.issues, before, after, service);
      printRun(i, run);
      runs.push(run);
      ok = run.lost === 0 && service.duplicates === 0;
    } finally {
      if (ok && !s.keep) rmSync(project.dir, { recursive: true, force: true });
      else console.log(`  project kept in ${project.dir}`);
    }
  }
  const col = <K extends keyof RunFigures>(key: K) => runs.map((r) => r[key] as number);
  console.log(`\nmedian of ${runs.length} run(s), N = ${s.issues}:`);
  console.log('| figure | median | range | target | |');
  console.log('|---|---|---|---|---|');
  const rows = [
    summaryRow(
      'wall ÷ floor (CLI spawn → last handoff)',
      col('wallRatio'),
      f2,
      `≤ ${TARGETS.wallRatio}×`,
      (v) => v <= TARGETS.wallRatio,
    ),
    summaryRow(
      'wall ÷ floor (first dispatch → last handoff)',
      col('wallRatioFromDispatch'),
      f2,
      `≤ ${TARGETS.wallRatio}×`,
      (v) => v <= TARGETS.wallRatio,
    ),
    summaryRow('floor wall ms', col('floorMs'), f0, '', null),
    summaryRow(
      'service wall ms (spawn → last handoff)',
      runs.map((r) => r.service.wallMs),
      f0,
      '',
      null,
    ),
    summaryRow(
      'service CPU ms/issue beyond floor (whole life)',
      col('cpuPerIssueMs'),
      f2,
      `≤ ${TARGETS.cpuMsPerIssue}`,
      (v) => v <= TARGETS.cpuMsPerIssue,
    ),
    summaryRow(
      'service CPU ms/issue beyond floor (after ready, scrapes excluded)',
      col('cpuPerIssueNoScrapesMs'),
      f2,
      `≤ ${TARGETS.cpuMsPerIssue}`,
      (v) => v <= TARGETS.cpuMsPerIssue,
    ),
    summaryRow(
      'service CPU ms/issue beyond floor (after ready)',
      col('cpuPerIssueAfterReadyMs'),
      f2,
      `≤ ${TARGETS.cpuMsPerIssue}`,
      (v) => v <= TARGETS.cpuMsPerIssue,
    ),
    summaryRow(
      'of which the launcher, ms/issue',
      runs.map((r) => r.service.helperCpuMs / s.issues),
      f2,
      '',
      null,
    ),
    summaryRow('floor CPU ms/spawn (bench process)', col('floorCpuPerSpawnMs'), f2, '', null),
    summaryRow('heap used MB, largest scraped', col('heapUsedMaxMb'), f1, '', null),
    summaryRow(
      'peak RSS MB (VmHWM), main process',
      runs.map((r) => r.service.hwmMb),
      f1,
      `≤ ${TARGETS.peakRssMb}`,
      (v) => v <= TARGETS.peakRssMb,
    ),
    summaryRow(
      'peak RSS MB (VmHWM), launcher',
      runs.map((r) => r.service.helperHwmMb),
      f1,
      '',
      null,
    ),
    summaryRow('handoff lag p50 ms', col('lagP50'), f0, '', null),
    summaryRow(
      'handoff lag p99 ms',
      col('lagP99'),
      f0,
      `≤ ${TARGETS.handoffLagP99Ms}`,
      (v) => v <= TARGETS.handoffLagP99Ms,
    ),
    summaryRow('handoff lag max ms', col('lagMax'), f0, '', null),
    summaryRow(
      'event-loop p99 ms (worst 500 ms window)',
      col('loopP99Worst'),
      f1,
      `≤ ${TARGETS.loopP99Ms}`,
      (v) => v <= TARGETS.loopP99Ms,
    ),
    summaryRow(
      'event-loop p99 ms (median window)',
      col('loopP99Median'),
      f1,
      `≤ ${TARGETS.loopP99Ms}`,
      (v) => v <= TARGETS.loopP99Ms,
    ),
    summaryRow('/metrics response p50 ms', col('scrapeP50'), f0, '', null),
    summaryRow('/metrics response max ms', col('scrapeMax'), f0, '', null),
    summaryRow('lost completions', col('lost'), f0, '0', (v) => v === 0),
    summaryRow(
      'duplicate dispatches',
      runs.map((r) => r.service.duplicates),
      f0,
      '0',
      (v) => v === 0,
    ),
  ];
  for (const row of rows) console.log(row);
}
