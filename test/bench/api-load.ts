/**
 * API under load: `orchestrator run` (the real CLI from the build, as a child process, with
 * its real HTTP server) runs 200 `mock` sessions at once (BENCH_LOAD_SESSIONS), each streaming
 * for about 60 s (BENCH_LOAD_SECONDS): one model request with usage and one tool call and
 * result every three lines, a line every 250 ms (BENCH_LOAD_LINE_DELAY_MS). While they run,
 * this process asks `GET /api/v1/state`, `/api/v1/issues/<id>` (a different issue each time),
 * `/metrics` and `/readyz` round-robin at 20 requests/s in all (BENCH_LOAD_RPS), all on
 * 127.0.0.1, and times each answer. The loaded phase is cut by send time into the ramp (until
 * every agent has started), the steady streaming and the tail (from the first exit). Two
 * comparisons follow: the idle service for 10 s (BENCH_LOAD_IDLE_SECONDS), and the idle service
 * for 20 s (BENCH_LOAD_CONTENDED_SECONDS) while another process starts the same 200 agent
 * processes, which tells what the agents' CPU alone does to the API from what the service does.
 *
 * It prints p50/p95/p99/max per route and window, the service's peak RSS (VmHWM), the longest
 * event-loop delay per /metrics scrape as the service's own monitor reports it, the CPU time
 * of the service, of its agent processes and of the machine, and the "nothing lost" checks:
 * every issue handed off, runs recorded = sessions dispatched, one turn per run, and the token
 * totals, budgets, run rows, metrics and the expected figure all equal. Targets: every route's
 * p99 under 100 ms while loaded; peak RSS under 200 MB.
 *
 * BENCH_DIST runs another build (a directory laid out like dist/, inside the repository so
 * it finds node_modules); BENCH_CPU_PROF=<dir> passes --cpu-prof to the service.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import {
  type CpuReading,
  MAX_IN_FLIGHT,
  metricSum,
  metricValue,
  Poller,
  readCpu,
  readMemory,
  summary,
  type Target,
} from './api-load-probe.js';
import { DIST, envInt, ROOT } from './orchestrator-harness.js';

const TARGET_P99_MS = 100;
const TARGET_RSS_MB = 200;
/** Token counts of every model request a session reports (input, output; no cache). */
const REQUEST_INPUT_TOKENS = 1_200;
const REQUEST_OUTPUT_TOKENS = 300;
/** Lines of one repetition of the session's pattern: a request, a tool call, its result. */
const LINES_PER_STEP = 3;
const SAMPLE_INTERVAL_MS = 250;
const ACTIVE = 'Todo';
/** Neither active nor terminal: the service starts with nothing to do. */
const WAITING = 'Backlog';
/** Requests per route sent before the load, so the first-request costs (lazy compilation) are not counted. */
const WARM_UP_REQUESTS = 5;
const HANDOFF = 'Review';
const ROUTES = ['/api/v1/state', '/api/v1/issues/:id', '/metrics', '/readyz'] as const;

interface Settings {
  sessions: number;
  seconds: number;
  lineDelayMs: number;
  rate: number;
  idleSeconds: number;
  contendedSeconds: number;
  dist: string;
  cpuProfDir: string | null;
}

function settings(): Settings {
  const dist = path.resolve(process.env.BENCH_DIST ?? DIST);
  const missing = ['cli/main.js', 'agent/mock/runtime.js'].filter((f) => !existsSync(path.join(dist, f)));
  if (missing.length > 0)
    throw new Error(
      `api-load runs the built CLI: run \`npm run build\` first (missing ${missing.join(', ')} in ${dist})`,
    );
  const prof = process.env.BENCH_CPU_PROF;
  return {
    sessions: envInt('BENCH_LOAD_SESSIONS', 200),
    seconds: envInt('BENCH_LOAD_SECONDS', 60),
    lineDelayMs: envInt('BENCH_LOAD_LINE_DELAY_MS', 250),
    rate: envInt('BENCH_LOAD_RPS', 20),
    idleSeconds: envInt('BENCH_LOAD_IDLE_SECONDS', 10),
    contendedSeconds: envInt('BENCH_LOAD_CONTENDED_SECONDS', 20),
    dist,
    cpuProfDir: prof === undefined || prof === '' ? null : path.resolve(prof),
  };
}

/** Repetitions of the pattern that make a session stream for about `seconds`. */
function stepsPerSession(s: Settings): number {
  return Math.max(1, Math.round((s.seconds * 1000) / (LINES_PER_STEP * s.lineDelayMs)));
}

/** The mock's directives: `steps` × (one request with usage, one tool call and result), then success. */
function sessionDescription(steps: number): string {
  const step = `!usage ${REQUEST_INPUT_TOKENS} ${REQUEST_OUTPUT_TOKENS}\n!loop 1`;
  return `${Array.from({ length: steps }, () => step).join('\n')}\n!ok done`;
}

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

/** Writes the issues file (atomically: the service may read it at any moment), every issue in `state`. */
function writeIssues(dir: string, s: Settings, state: string): void {
  const steps = stepsPerSession(s);
  const issues = Array.from({ length: s.sessions }, (_, i) => ({
    id: String(i + 1),
    identifier: `LOAD-${i + 1}`,
    title: `Load issue ${i + 1}`,
    description: sessionDescription(steps),
    state,
    priority: 2,
    created_at: new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString(),
  }));
  const file = path.join(dir, 'issues.json');
  writeFileSync(`${file}.tmp`, `${JSON.stringify(issues, null, 2)}\n`);
  renameSync(`${file}.tmp`, file);
}

function writeProject(dir: string, s: Settings, port: number): void {
  writeIssues(dir, s, WAITING);
  mkdirSync(path.join(dir, 'workspaces'));
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
      'polling:',
      '  interval_ms: 1000',
      'workspace:',
      '  root: ./workspaces',
      'agent:',
      '  kind: mock',
      `  max_concurrent_agents: ${s.sessions}`,
      '  max_turns: 1',
      '  stall_timeout_ms: 60000',
      `  turn_timeout_ms: ${(s.seconds + 300) * 1000}`,
      'mock:',
      `  line_delay_ms: ${s.lineDelayMs}`,
      'server:',
      `  port: ${port}`,
      '---',
      'Work on {{ issue.identifier }}.',
      '',
      '{{ issue.description }}',
      '',
    ].join('\n'),
  );
}

function startService(dir: string, s: Settings): ChildProcess {
  const log = openSync(path.join(dir, 'service.jsonl'), 'a');
  const prof = s.cpuProfDir === null ? [] : ['--cpu-prof', '--cpu-prof-dir', s.cpuProfDir];
  const child = spawn(
    process.execPath,
    [
      ...prof,
      path.join(s.dist, 'cli', 'main.js'),
      'run',
      'WORKFLOW.md',
      '--log-format',
      'json',
      '--log-level',
      'info',
    ],
    {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root' },
      stdio: ['ignore', log, 'pipe'],
    },
  );
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => process.stderr.write(`  service stderr: ${chunk}`));
  return child;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function waitUntil(
  what: string,
  timeoutMs: number,
  probe: () => boolean | Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

async function answers(port: number, pathname: string): Promise<string | null> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${pathname}`);
    return res.ok ? await res.text() : null;
  } catch {
    return null;
  }
}

/** What the bench follows of the service while it polls. */
interface Watch {
  running: number;
  maxRunning: number;
  /** When the state first showed every session running with its agent started (performance.now()). */
  rampEndMs: number | null;
  /** When the state first showed a finished run. */
  firstExitMs: number | null;
  runsFinished: number;
  dispatches: number;
  /**
   * The longest event-loop delay of each /metrics scrape window, seconds, as the service's own
   * monitor reports it (a window whose scrape timed out is lost: the monitor resets at every scrape).
   */
  lagMax: number[];
  /** The largest heap total, heap used and external memory /metrics reported, MB. */
  heapTotalMb: number;
  heapUsedMb: number;
  externalMb: number;
}

interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

export async function apiLoad(): Promise<void> {
  const s = settings();
  const steps = stepsPerSession(s);
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'orchestrator-api-load-')));
  const port = await freePort();
  writeProject(dir, s, port);
  console.log(
    `setup: ${s.sessions} mock sessions at once (max_concurrent_agents ${s.sessions}), each ${steps} × ` +
      `(request with usage + tool call + result), a line every ${s.lineDelayMs} ms ≈ ${((steps * LINES_PER_STEP * s.lineDelayMs) / 1000).toFixed(0)} s; ` +
      `API polled at ${s.rate} req/s round-robin over ${ROUTES.join(', ')}; service from ${path.relative(ROOT, s.dist) || '.'}`,
  );

  const watch: Watch = {
    running: 0,
    maxRunning: 0,
    rampEndMs: null,
    firstExitMs: null,
    runsFinished: 0,
    dispatches: 0,
    lagMax: [],
    heapTotalMb: 0,
    heapUsedMb: 0,
    externalMb: 0,
  };
  let issueCursor = 0;
  const ok = (status: number) => status === 200;
  let lastMetrics = '';
  const targets: Target[] = [
    {
      route: '/api/v1/state',
      path: () => '/api/v1/state',
      accepts: ok,
      onBody: (body) => {
        const state = JSON.parse(body) as {
          counts: { running: number };
          running: { session_id: string | null }[];
          totals: { runs_finished: number; dispatches_since_start: number };
        };
        const now = performance.now();
        if (
          watch.rampEndMs === null &&
          state.running.length === s.sessions &&
          state.running.every((r) => r.session_id !== null)
        )
          watch.rampEndMs = now;
        if (watch.firstExitMs === null && state.totals.runs_finished > 0) watch.firstExitMs = now;
        watch.running = state.counts.running;
        watch.maxRunning = Math.max(watch.maxRunning, state.counts.running);
        watch.runsFinished = state.totals.runs_finished;
        watch.dispatches = state.totals.dispatches_since_start;
      },
    },
    {
      route: '/api/v1/issues/:id',
      path: () => `/api/v1/issues/LOAD-${(issueCursor++ % s.sessions) + 1}`,
      // An issue has no record until it is dispatched, a moment after the issues become active.
      accepts: (status) => ok(status) || (status === 404 && watch.dispatches < s.sessions),
    },
    {
      route: '/metrics',
      path: () => '/metrics',
      accepts: ok,
      onBody: (body) => {
        lastMetrics = body;
        watch.lagMax.push(metricValue(body, 'orchestrator_nodejs_eventloop_lag_max_seconds'));
        const mb = (name: string) => metricValue(body, name) / 2 ** 20 || 0;
        watch.heapTotalMb = Math.max(watch.heapTotalMb, mb('orchestrator_nodejs_heap_size_total_bytes'));
        watch.heapUsedMb = Math.max(watch.heapUsedMb, mb('orchestrator_nodejs_heap_size_used_bytes'));
        watch.externalMb = Math.max(watch.externalMb, mb('orchestrator_nodejs_external_memory_bytes'));
      },
    },
    { route: '/readyz', path: () => '/readyz', accepts: ok },
  ];

  const child = startService(dir, s);
  const pid = child.pid as number;
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  let maxRssMb = 0;
  let hwmMb = 0;
  const sampler = setInterval(() => {
    const memory = readMemory(pid);
    if (memory === null) return;
    maxRssMb = Math.max(maxRssMb, memory.rssMb);
    hwmMb = Math.max(hwmMb, memory.hwmMb);
  }, SAMPLE_INTERVAL_MS);
  const poller = new Poller(port, targets, s.rate);
  const checks: Check[] = [];
  let loadMs = 0;
  let idleMs = 0;
  let cpuLoad: { self: number; children: number; busy: number; total: number } | null = null;
  let cpuIdle: { self: number; busy: number; total: number } | null = null;
  try {
    await waitUntil('the HTTP server', 30_000, async () => {
      if (exited) throw new Error('the service exited at start; see service.jsonl');
      return (await answers(port, '/livez')) !== null;
    });
    for (let i = 0; i < WARM_UP_REQUESTS; i++) {
      // Before any run the issue route answers 404, which warms it all the same.
      for (const target of targets) await answers(port, target.path());
    }

    // Every issue becomes active at once: the next tick dispatches them all.
    const loadStart = performance.now();
    const cpu0 = readCpu(pid) as CpuReading;
    writeIssues(dir, s, ACTIVE);
    poller.start('loaded');
    await waitUntil('every session to finish', (s.seconds + 120) * 1000, () => {
      if (exited) throw new Error('the service exited under load; see service.jsonl');
      return watch.runsFinished >= s.sessions && watch.running === 0;
    });
    poller.stop();
    await poller.drain();
    loadMs = performance.now() - loadStart;
    const cpu1 = readCpu(pid) as CpuReading;
    cpuLoad = {
      self: cpu1.selfMs - cpu0.selfMs,
      children: cpu1.childrenMs - cpu0.childrenMs,
      busy: cpu1.machineBusyMs - cpu0.machineBusyMs,
      total: cpu1.machineTotalMs - cpu0.machineTotalMs,
    };
    const loadedLag = watch.lagMax.splice(0);

    const idleStart = performance.now();
    poller.start('idle');
    await sleep(s.idleSeconds * 1000);
    poller.stop();
    await poller.drain();
    idleMs = performance.now() - idleStart;
    const cpu2 = readCpu(pid) as CpuReading;
    cpuIdle = {
      self: cpu2.selfMs - cpu1.selfMs,
      busy: cpu2.machineBusyMs - cpu1.machineBusyMs,
      total: cpu2.machineTotalMs - cpu1.machineTotalMs,
    };
    const idleLag = watch.lagMax.splice(0);

    // The same agent processes, started by another process: what they alone do to the idle service.
    const agents = startStandInAgents(dir, s, steps);
    poller.start('contended');
    await sleep(s.contendedSeconds * 1000);
    poller.stop();
    stopStandInAgents(agents);
    await poller.drain();

    report(poller, s, {
      loadStartMs: loadStart,
      loadMs,
      idleMs,
      watch,
      lags: { loaded: loadedLag, idle: idleLag, contended: watch.lagMax },
    });
    const memory = readMemory(pid);
    if (memory !== null) hwmMb = Math.max(hwmMb, memory.hwmMb);
    await waitUntil('every handoff', 30_000, () => handedOff(dir) >= s.sessions);
    const finalMetrics = (await answers(port, '/metrics')) ?? lastMetrics;
    checks.push(...nothingLost(dir, s, steps, watch, finalMetrics));
  } finally {
    clearInterval(sampler);
    poller.close();
    await stopService(child, () => exited);
  }
  checks.push(...serviceLogChecks(dir));

  if (cpuLoad !== null && cpuIdle !== null) {
    const cores = (ms: number, wall: number) => (ms / wall).toFixed(2);
    console.log(
      `CPU while loaded (${(loadMs / 1000).toFixed(1)} s): service ${cores(cpuLoad.self, loadMs)} cores, ` +
        `its agent processes ${cores(cpuLoad.children, loadMs)} cores, machine busy ` +
        `${((cpuLoad.busy / cpuLoad.total) * 100).toFixed(0)} % of ${cores(cpuLoad.total, loadMs)} cores ` +
        `(the service is ${((cpuLoad.self / cpuLoad.busy) * 100).toFixed(0)} % of the busy time)`,
    );
    console.log(
      `CPU while idle (${(idleMs / 1000).toFixed(1)} s): service ${cores(cpuIdle.self, idleMs)} cores, machine busy ` +
        `${((cpuIdle.busy / cpuIdle.total) * 100).toFixed(0)} %`,
    );
  }
  console.log(
    `memory: peak RSS (VmHWM) ${hwmMb.toFixed(1)} MB, largest sampled RSS ${maxRssMb.toFixed(1)} MB ` +
      `(target < ${TARGET_RSS_MB} MB) ${hwmMb < TARGET_RSS_MB ? 'MET' : 'MISSED'}; largest reported by /metrics: ` +
      `heap total ${watch.heapTotalMb.toFixed(1)} MB, heap used ${watch.heapUsedMb.toFixed(1)} MB, ` +
      `external ${watch.externalMb.toFixed(1)} MB`,
  );
  for (const check of checks) console.log(`  ${check.ok ? 'ok  ' : 'LOST'} ${check.name}: ${check.detail}`);
  const lost = checks.filter((c) => !c.ok).length;
  console.log(
    lost === 0 ? 'nothing lost: every check holds' : `${lost} check(s) FAILED (project kept in ${dir})`,
  );
  if (lost === 0 && s.cpuProfDir === null) rmSync(dir, { recursive: true, force: true });
}

/** A slice of the loaded phase by send time: the ramp, the steady streaming, the tail. */
interface Window {
  name: string;
  phase: 'loaded' | 'idle' | 'contended';
  fromMs: number;
  toMs: number;
}

function windows(watch: Watch): Window[] {
  const all = { fromMs: 0, toMs: Number.POSITIVE_INFINITY };
  const out: Window[] = [{ name: 'loaded', phase: 'loaded', ...all }];
  if (watch.rampEndMs !== null && watch.firstExitMs !== null && watch.firstExitMs > watch.rampEndMs) {
    out.push(
      { name: 'ramp', phase: 'loaded', fromMs: 0, toMs: watch.rampEndMs },
      { name: 'steady', phase: 'loaded', fromMs: watch.rampEndMs, toMs: watch.firstExitMs },
      { name: 'tail', phase: 'loaded', fromMs: watch.firstExitMs, toMs: Number.POSITIVE_INFINITY },
    );
  }
  out.push({ name: 'idle', phase: 'idle', ...all }, { name: 'contended', phase: 'contended', ...all });
  return out;
}

function report(
  poller: Poller,
  s: Settings,
  run: {
    loadStartMs: number;
    loadMs: number;
    idleMs: number;
    watch: Watch;
    lags: Record<'loaded' | 'idle' | 'contended', number[]>;
  },
): void {
  const ms = (v: number) => (Number.isNaN(v) ? '-' : v.toFixed(1));
  const seconds = (v: number | null) => (v === null ? '?' : ((v - run.loadStartMs) / 1000).toFixed(1));
  console.log(
    `loaded: ${(run.loadMs / 1000).toFixed(1)} s from the issues becoming active to the last exit, up to ` +
      `${run.watch.maxRunning} sessions running at once (ramp: every agent started by ${seconds(run.watch.rampEndMs)} s; ` +
      `steady until the first exit at ${seconds(run.watch.firstExitMs)} s; tail after); idle: ${(run.idleMs / 1000).toFixed(1)} s after`,
  );
  console.log('| window | route | n | errors | p50 ms | p95 ms | p99 ms | max ms |');
  console.log('|---|---|---|---|---|---|---|---|');
  const worst = new Map<string, number>();
  for (const w of windows(run.watch)) {
    for (const route of ROUTES) {
      const samples = poller.samples(w.phase, route);
      const kept = samples.latenciesMs.filter((_, i) => {
        const sent = samples.sentAtMs[i] as number;
        return sent >= w.fromMs && sent < w.toMs;
      });
      const sum = summary(kept);
      worst.set(w.name, Math.max(worst.get(w.name) ?? 0, Number.isNaN(sum.p99) ? 0 : sum.p99));
      // Errors are not timed; they belong to the whole phase.
      const errors = w.name === w.phase ? String(samples.errors) : '';
      console.log(
        `| ${w.name} | ${route} | ${sum.n} | ${errors} | ${ms(sum.p50)} | ${ms(sum.p95)} | ${ms(sum.p99)} | ${ms(sum.max)} |`,
      );
      if (w.name === w.phase && samples.firstErrors.length > 0)
        console.log(`  first errors: ${samples.firstErrors.join('; ')}`);
    }
  }
  const lag = (values: number[]) => {
    const known = values.filter((v) => Number.isFinite(v)).map((v) => v * 1000);
    return known.length === 0
      ? '-'
      : `median ${ms(summary(known).p50)} ms, worst ${ms(Math.max(...known))} ms`;
  };
  console.log(
    `event-loop delay, longest per /metrics scrape window (the service's own monitor): ${Object.entries(
      run.lags,
    )
      .map(([phase, l]) => `${phase} ${lag(l)}`)
      .join('; ')}`,
  );
  const verdict = (name: string) => {
    const p99 = worst.get(name);
    return p99 === undefined ? '' : `${name} ${ms(p99)} ms ${p99 < TARGET_P99_MS ? 'MET' : 'MISSED'}`;
  };
  console.log(
    `API p99 of the worst route (target < ${TARGET_P99_MS} ms): ${['loaded', 'steady', 'idle', 'contended']
      .map(verdict)
      .filter((v) => v !== '')
      .join(
        '; ',
      )}; ${poller.skipped} request(s) not sent at ${s.rate} req/s (${MAX_IN_FLIGHT} already waiting)`,
  );
}

/** Starts the stand-in agents in a process group of their own (see api-load-agents-child.ts). */
function startStandInAgents(dir: string, s: Settings, steps: number): ChildProcess {
  const cwd = path.join(dir, 'contended');
  mkdirSync(cwd);
  const promptFile = path.join(dir, 'contended-prompt.txt');
  writeFileSync(promptFile, `Work on LOAD-1.\n\n${sessionDescription(steps)}\n`);
  return spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(ROOT, 'test', 'bench', 'api-load-agents-child.ts'),
      path.join(s.dist, 'agent', 'mock', 'runtime.js'),
      String(s.sessions),
      promptFile,
      String(s.lineDelayMs),
      cwd,
    ],
    { cwd: ROOT, detached: true, stdio: 'ignore' },
  );
}

function stopStandInAgents(agents: ChildProcess): void {
  try {
    if (agents.pid !== undefined) process.kill(-agents.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

function handedOff(dir: string): number {
  try {
    const issues = JSON.parse(readFileSync(path.join(dir, 'issues.json'), 'utf8')) as { state: string }[];
    return issues.filter((i) => i.state === HANDOFF).length;
  } catch {
    return 0; // mid-replace: the next look reads it
  }
}

function nothingLost(dir: string, s: Settings, steps: number, watch: Watch, metrics: string): Check[] {
  const perSession = steps * (REQUEST_INPUT_TOKENS + REQUEST_OUTPUT_TOKENS);
  const expectedTokens = s.sessions * perSession;
  const db = new Database(path.join(dir, 'state.db'), { readonly: true, fileMustExist: true });
  try {
    const runs = db
      .prepare(
        "SELECT count(*) AS n, sum(ended_at IS NOT NULL) AS ended, sum(exit_kind = 'succeeded') AS succeeded, sum(total_tokens) AS tokens FROM runs",
      )
      .get() as { n: number; ended: number; succeeded: number; tokens: number };
    const turns = db.prepare('SELECT count(*) AS n, sum(total_tokens) AS tokens FROM turns').get() as {
      n: number;
      tokens: number;
    };
    const totals = db
      .prepare(
        'SELECT total_tokens AS tokens, runs_started AS started, runs_finished AS finished FROM totals',
      )
      .get() as { tokens: number; started: number; finished: number };
    const budgets = db
      .prepare('SELECT sum(tokens) AS tokens, sum(sessions) AS sessions FROM issue_budgets')
      .get() as {
      tokens: number;
      sessions: number;
    };
    const metricTokens =
      metricSum(metrics, 'orchestrator_tokens_total', 'type="input"') +
      metricSum(metrics, 'orchestrator_tokens_total', 'type="output"');
    const usageEvents = metricSum(metrics, 'orchestrator_agent_events_total', 'type="token_usage"');
    const toolResults = metricSum(metrics, 'orchestrator_agent_events_total', 'type="tool_result"');
    const handed = handedOff(dir);
    return [
      {
        name: 'every issue handed off',
        ok: handed === s.sessions,
        detail: `${handed}/${s.sessions} in ${HANDOFF}`,
      },
      {
        name: 'runs recorded = dispatched',
        ok: runs.n === s.sessions && watch.dispatches === runs.n && runs.ended === runs.n,
        detail: `${runs.n} run rows (${runs.ended} ended, ${runs.succeeded} succeeded), ${watch.dispatches} dispatches`,
      },
      {
        name: 'one turn recorded per run',
        ok: turns.n === runs.n && turns.tokens === runs.tokens,
        detail: `${turns.n} turn rows, ${turns.tokens} tokens`,
      },
      {
        name: 'totals = sum of runs',
        ok:
          runs.tokens === expectedTokens &&
          totals.tokens === runs.tokens &&
          budgets.tokens === runs.tokens &&
          totals.started === runs.n &&
          totals.finished === runs.n,
        detail:
          `expected ${expectedTokens} tokens; runs ${runs.tokens}, totals ${totals.tokens}, issue budgets ${budgets.tokens}; ` +
          `runs started/finished ${totals.started}/${totals.finished}`,
      },
      {
        name: 'metrics = the store',
        ok:
          metricTokens === expectedTokens &&
          usageEvents === s.sessions * steps &&
          toolResults === s.sessions * steps,
        detail: `tokens_total ${metricTokens}, token_usage events ${usageEvents}, tool results ${toolResults} (expected ${s.sessions * steps} each)`,
      },
    ];
  } finally {
    db.close();
  }
}

function serviceLogChecks(dir: string): Check[] {
  const problems: string[] = [];
  let count = 0;
  for (const line of readFileSync(path.join(dir, 'service.jsonl'), 'utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as { level: number; msg: string };
    if (entry.level < 40) continue;
    count += 1;
    if (problems.length < 3) problems.push(line.slice(0, 300));
  }
  return [
    {
      name: 'no warning or error logged',
      ok: count === 0,
      detail: count === 0 ? 'none' : `${count}, first: ${problems.join(' | ')}`,
    },
  ];
}

async function stopService(child: ChildProcess, exited: () => boolean): Promise<void> {
  if (exited()) return;
  child.kill('SIGTERM');
  const deadline = Date.now() + 45_000;
  while (!exited() && Date.now() < deadline) await sleep(100);
  if (!exited()) {
    console.log('  the service did not stop within 45 s of SIGTERM: killed');
    child.kill('SIGKILL');
  }
}
