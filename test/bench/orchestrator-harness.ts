/**
 * Shared set-up of the orchestrator benchmarks: a temp directory holding a
 * WORKFLOW.md for the `echo` kind (`delay_ms: 0`), a file-tracker issues file,
 * the SQLite store and the workspace root; the real parts wired into the real
 * `Orchestrator` the way `src/cli/service.ts` wires them; and the baseline, a
 * plain pool that spawns the echo runtime the way the adapter does.
 *
 * Everything the orchestrator runs is loaded from the compiled `dist/` (as is the
 * echo runtime it spawns), so neither side pays tsx's start-up or transforms.
 * `dist/` is imported by computed path: `tsc --noEmit` must not need it to exist.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import type { Orchestrator } from '../../src/orchestrator/orchestrator.js';
import type { Store } from '../../src/persistence/index.js';
import type { Workflow } from '../../src/workflow/load.js';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const DIST = path.join(ROOT, 'dist');
/** The compiled echo runtime: what the echo adapter spawns when `dist/` exists. */
export const ECHO_RUNTIME = path.join(DIST, 'agent', 'echo', 'runtime.js');

export const ACTIVE_STATE = 'Todo';
export const TERMINAL_STATE = 'Done';
export const HANDOFF_STATE = 'Review';
export const CONCURRENCY = 32;

/** A positive integer from the environment, or the default. */
export function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0)
    throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

/** Throws with a clear message unless `npm run build` has produced the modules the benches load. */
export function requireBuild(): void {
  const needed = [
    ECHO_RUNTIME,
    path.join(DIST, 'orchestrator', 'orchestrator.js'),
    path.join(DIST, 'cli', 'service.js'),
  ];
  const missing = needed.filter((file) => !existsSync(file));
  if (missing.length > 0) {
    throw new Error(
      `the orchestrator benchmarks run the compiled code: run \`npm run build\` first (missing ${missing
        .map((f) => path.relative(ROOT, f))
        .join(', ')})`,
    );
  }
}

async function fromDist<T>(relative: string): Promise<T> {
  return (await import(pathToFileURL(path.join(DIST, relative)).href)) as T;
}

type Modules = {
  orchestrator: typeof import('../../src/orchestrator/orchestrator.js');
  orphans: typeof import('../../src/orchestrator/orphans.js');
  ports: typeof import('../../src/orchestrator/ports.js');
  agentRegistry: typeof import('../../src/agent/registry.js');
  trackerRegistry: typeof import('../../src/tracker/registry.js');
  usage: typeof import('../../src/agent/usage/index.js');
  logger: typeof import('../../src/observability/logger.js');
  persistence: typeof import('../../src/persistence/index.js');
  load: typeof import('../../src/workflow/load.js');
  watcher: typeof import('../../src/workflow/watcher.js');
  workspace: typeof import('../../src/workspace/manager.js');
  catalog: typeof import('../../src/cli/catalog.js');
};

/** The compiled modules `src/cli/service.ts` uses (kinds registered on import of the catalog). */
export async function loadDist(): Promise<Modules> {
  requireBuild();
  return {
    catalog: await fromDist('cli/catalog.js'),
    orchestrator: await fromDist('orchestrator/orchestrator.js'),
    orphans: await fromDist('orchestrator/orphans.js'),
    ports: await fromDist('orchestrator/ports.js'),
    agentRegistry: await fromDist('agent/registry.js'),
    trackerRegistry: await fromDist('tracker/registry.js'),
    usage: await fromDist('agent/usage/index.js'),
    logger: await fromDist('observability/logger.js'),
    persistence: await fromDist('persistence/index.js'),
    load: await fromDist('workflow/load.js'),
    watcher: await fromDist('workflow/watcher.js'),
    workspace: await fromDist('workspace/manager.js'),
  };
}

export interface BenchDir {
  dir: string;
  workflowPath: string;
  issuesPath: string;
  workspaceRoot: string;
  remove(): void;
}

/** The issues file: `count` issues, all in the active state, in a stable dispatch order. */
export function issuesText(count: number): string {
  const issues = Array.from({ length: count }, (_, i) => ({
    id: String(i + 1),
    identifier: `BENCH-${i + 1}`,
    title: `Benchmark issue ${i + 1}`,
    description: 'Nothing to do: the echo runtime answers at once.',
    state: ACTIVE_STATE,
    priority: 2,
    labels: ['bench'],
    created_at: new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString(),
  }));
  return `${JSON.stringify(issues, null, 2)}\n`;
}

/** Replaces the issues file atomically (a tick may read it at any moment). */
export function writeIssues(issuesPath: string, count: number): void {
  const temp = `${issuesPath}.bench.tmp`;
  writeFileSync(temp, issuesText(count));
  renameSync(temp, issuesPath);
}

/**
 * A fresh temp directory with WORKFLOW.md and the issues file. One session per issue:
 * `max_turns: 1`, so a session ends after its turn and the issue (still active) is handed off.
 */
export function makeBenchDir(issueCount: number, pollMs: number): BenchDir {
  const dir = mkdtempSync(path.join(tmpdir(), 'orchestrator-bench-'));
  const workflowPath = path.join(dir, 'WORKFLOW.md');
  const issuesPath = path.join(dir, 'issues.json');
  const workspaceRoot = path.join(dir, 'workspaces');
  mkdirSync(workspaceRoot);
  writeIssues(issuesPath, issueCount);
  writeFileSync(
    workflowPath,
    [
      '---',
      'tracker:',
      '  kind: file',
      `  active_states: [${ACTIVE_STATE}]`,
      `  terminal_states: [${TERMINAL_STATE}]`,
      `  handoff_state: ${HANDOFF_STATE}`,
      'file:',
      '  path: issues.json',
      'db_path: state.db',
      'polling:',
      `  interval_ms: ${pollMs}`,
      'workspace:',
      '  root: ./workspaces',
      'agent:',
      '  kind: echo',
      `  max_concurrent_agents: ${CONCURRENCY}`,
      '  max_turns: 1',
      'echo:',
      '  delay_ms: 0',
      'server:',
      '  port: 0',
      'logging:',
      '  level: info',
      '  format: json',
      '---',
      'Work on {{ issue.identifier }}: {{ issue.title }}.',
      '',
    ].join('\n'),
  );
  return {
    dir,
    workflowPath,
    issuesPath,
    workspaceRoot,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** Counts log lines and throws them away (the service writes them to stdout; a pipe would do the same). */
class NullLog extends Writable {
  lines = 0;
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    for (const byte of chunk) if (byte === 10) this.lines += 1;
    callback();
  }
}

export interface Service {
  orchestrator: Orchestrator;
  store: Store;
  /** Handoff transitions completed so far (transitions to the handoff state that resolved). */
  handedOff(): number;
  /** Resolves when `handedOff()` reaches `count`. */
  whenHandedOff(count: number): Promise<void>;
  /** Credential proofs written (one per verification that succeeded). */
  verifications(): number;
  /** How many warnings and errors were logged (a clean run has none), and the first few. */
  problems(): { count: number; first: string[] };
  logLines(): number;
  shutdown(): Promise<void>;
}

/** Variables an agent never inherits (a copy of `agentEnvironment` in src/cli/service.ts). */
export function agentEnvironment(
  env: NodeJS.ProcessEnv,
  ownerEnv: string,
  tag: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || name.startsWith('ORCHESTRATOR_')) continue;
    out[name] = value;
  }
  out[ownerEnv] = tag;
  return out;
}

/**
 * The real parts wired as `runService` wires them: workflow loaded and watched,
 * SQLite store, orphan sweep, file tracker, workspace manager, pino logger (JSON,
 * to a discarding stream), the kind's adapter. The tracker is wrapped only to
 * count handoffs; the proof store only to count verifications.
 */
export async function startService(m: Modules, bench: BenchDir): Promise<Service> {
  const load = (text?: Uint8Array) =>
    m.load.loadWorkflow(bench.workflowPath, {
      env: process.env,
      kinds: m.catalog.kindCatalog(),
      ...(text !== undefined ? { text } : {}),
    });
  const initial = load();
  if (!initial.ok) throw new Error(`bench workflow does not load: ${JSON.stringify(initial.diagnostics)}`);
  const { config } = initial.workflow;
  const sink = new NullLog();
  // The first few warnings and errors are kept (and all counted), so the harness itself does not grow.
  const problems: string[] = [];
  let problemCount = 0;
  const noteProblem = (level: string, message: string, fields: Record<string, unknown>) => {
    problemCount += 1;
    if (problems.length < 5) problems.push(`${level}: ${message} ${JSON.stringify(fields)}`);
  };
  const appLog = m.logger.createLogger({ level: config.logging.level, format: 'json', destination: sink });
  const log = {
    ...appLog,
    warn: (fields: Record<string, unknown>, message: string) => {
      noteProblem('warn', message, fields);
      appLog.warn(fields, message);
    },
    error: (fields: Record<string, unknown>, message: string) => {
      noteProblem('error', message, fields);
      appLog.error(fields, message);
    },
  };
  const kind = m.agentRegistry.agentKind(config.agent.kind);
  const createTracker = m.trackerRegistry.trackerKind(config.tracker.kind)?.create;
  if (kind?.runtime === undefined || createTracker === undefined)
    throw new Error('echo or file kind not built');
  const credentialValues = kind.runtime.credentialEnv.map((name) => process.env[name] ?? '');
  const store = m.persistence.openStore(config.dbPath);
  const tag = m.orphans.ownerTag(config.dbPath);
  await m.orphans.killOrphans(tag);
  const tracker = await createTracker(config.tracker);

  let handedOff = 0;
  const waiters: { count: number; resolve: () => void }[] = [];
  const counted = {
    fetchCandidateIssues: () => tracker.fetchCandidateIssues(),
    fetchIssueById: (id: string) => tracker.fetchIssueById(id),
    fetchIssuesByStates: (states: readonly string[]) => tracker.fetchIssuesByStates(states),
    fetchIssueStatesByIds: (ids: readonly string[]) => tracker.fetchIssueStatesByIds(ids),
    fetchIssueStatesByIdentifiers: (ids: readonly string[]) => tracker.fetchIssueStatesByIdentifiers(ids),
    fetchIssueComments: (id: string) => tracker.fetchIssueComments(id),
    commentIssue: (id: string, body: string) => tracker.commentIssue(id, body),
    addLabel: (id: string, label: string) => tracker.addLabel(id, label),
    transitionIssue: async (id: string, state: string) => {
      await tracker.transitionIssue(id, state);
      if (state !== HANDOFF_STATE) return;
      handedOff += 1;
      for (const w of waiters.filter((w) => w.count <= handedOff)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    },
  };

  let verifications = 0;
  const proofs = {
    get: (key: string) => store.proofs.get(key),
    put: (key: string, at: number) => {
      verifications += 1;
      store.proofs.put(key, at);
    },
  };

  const workspaces = new m.workspace.WorkspaceManager({
    root: config.workspaceRoot,
    hooks: config.hooks,
    baseEnv: process.env,
  });
  const watcher = m.watcher.watchWorkflow(bench.workflowPath, {
    initial: initial.workflow,
    load,
    onChange: () => log.info({}, 'workflow reloaded'),
    onError: () => log.error({}, 'workflow reload failed'),
  });
  const rates = (w: Workflow) => w.config.tokenRates[w.config.agent.kind] ?? null;
  const orchestrator = new m.orchestrator.Orchestrator({
    workflow: { current: () => watcher.current(), reload: () => void watcher.reload() },
    tracker: counted,
    agent: { adapter: kind.runtime.factory(), kind },
    workspaces,
    store,
    proofs,
    agentEnv: agentEnvironment(process.env, m.orphans.OWNER_ENV, tag),
    credentialValues,
    pricing: (usage, amounts) => m.usage.spendMicroUsd(amounts, usage, rates(watcher.current())),
    log,
    clock: m.ports.SYSTEM_CLOCK,
  });
  return {
    orchestrator,
    store,
    handedOff: () => handedOff,
    whenHandedOff: (count) =>
      count <= handedOff ? Promise.resolve() : new Promise((resolve) => waiters.push({ count, resolve })),
    verifications: () => verifications,
    problems: () => ({ count: problemCount, first: problems }),
    logLines: () => sink.lines,
    async shutdown() {
      await orchestrator.stop();
      await watcher.close();
      store.close();
    },
  };
}

/** Resolves once nothing runs, no retry is queued and no tick is in flight. */
export async function settled(orchestrator: Orchestrator): Promise<void> {
  while (!orchestrator.settled()) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** Milliseconds since `start` (from `process.hrtime.bigint()`). */
export function msSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/**
 * The baseline: `count` runs of the echo runtime at `concurrency`, spawned as the
 * echo adapter spawns it (node + dist runtime.js, detached group, stdin ignored,
 * stdout and stderr piped, the turn's environment with ORCHESTRATOR_ECHO_*), each
 * run's stdout read to the end and its exit awaited. Returns wall ms.
 */
export async function baselineSpawns(
  count: number,
  concurrency: number,
  cwd: string,
  env: Record<string, string>,
): Promise<number> {
  const runOne = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, [ECHO_RUNTIME], {
        cwd,
        env: {
          ...env,
          ORCHESTRATOR_ECHO_DELAY_MS: '0',
          ORCHESTRATOR_ECHO_FAIL_RATE: '0',
          ORCHESTRATOR_ECHO_IDENTIFIER: `BENCH-${i + 1}`,
          ORCHESTRATOR_ECHO_TITLE: `Benchmark issue ${i + 1}`,
        },
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        windowsHide: true,
      });
      let out = '';
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        out += chunk;
      });
      child.stderr.resume();
      let stdoutEnded = false;
      let exitCode: number | null | undefined;
      const finish = () => {
        if (!stdoutEnded || exitCode === undefined) return;
        if (exitCode !== 0 || !out.includes('"status":"success"'))
          reject(new Error(`echo runtime run ${i} failed (exit ${exitCode}): ${out.slice(-200)}`));
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
    });
  let next = 0;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await runOne(next++);
    }),
  );
  return msSince(start);
}
