/**
 * The HTTP server's test harness: a real store on a temporary file holding runs, turns and a
 * retry written through its own API, a real config loaded from WORKFLOW.md text (with a
 * tracker token, an agent command and a hook carrying secrets), a snapshot the test edits,
 * observations the test emits, and a raw node:http client (fetch hides HEAD bodies and will
 * not send a foreign Host header), plus an event-stream reader.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect } from 'vitest';
import type { Issue } from '../../src/domain/issue.js';
import type { Observation } from '../../src/orchestrator/observations.js';
import type { OrchestratorSnapshot, RunningEntry } from '../../src/orchestrator/orchestrator.js';
import type { Logger } from '../../src/orchestrator/ports.js';
import {
  type FinishRunInput,
  openStore,
  type RetryEntry,
  type Store,
  type TurnInput,
} from '../../src/persistence/index.js';
import { type RunningServer, type StartOptions, startServer } from '../../src/server/http.js';
import type { AdapterHealth, ServerSources } from '../../src/server/ports.js';
import { loadWorkflow } from '../../src/workflow/load.js';
import { turnInput as baseTurnInput, counts } from '../persistence/support.js';
import { freePort } from '../support/ports.js';

export { counts };

/** Secret values put into the config; none may appear in any response. */
export const SECRETS = {
  trackerToken: 'tracker-token-5f1c2d9e8a7b',
  agentCommandToken: 'agent-cmd-token-77aa01bc',
  hookToken: 'hook-token-3e4f5a6b',
  optionToken: 'option-token-9c8d7e6f',
};
/** A value the harness's mask replaces, to prove every body goes through it. */
export const MASKED = 'masked-value-d41d8cd9';

export const T0 = Date.parse('2025-03-01T12:00:00.000Z');

export function issue(id: string, identifier: string, over: Partial<Issue> = {}): Issue {
  return {
    id,
    identifier,
    displayId: identifier,
    title: `Title of ${identifier}`,
    description: '',
    priority: null,
    state: 'In Progress',
    branchName: '',
    url: '',
    labels: [],
    assignee: '',
    issueType: '',
    parent: null,
    comments: null,
    blockedBy: [],
    createdAt: '',
    updatedAt: '',
    ...over,
  };
}

export function runningEntry(over: Partial<RunningEntry> = {}): RunningEntry {
  return {
    issue: issue('issue-2', 'ENG-2'),
    attempt: 1,
    runId: 0,
    host: 'local',
    startedAtMs: T0 - 90_000,
    lastEventAtMs: T0 - 5_000,
    lastEvent: 'token_usage',
    turn: 2,
    sessionId: 'sess-running',
    workspace: '/tmp/ws/ENG-2',
    usage: counts(3_000, 400, 1_000, 100),
    usageByModel: { 'model-a': counts(2_000, 300, 1_000, 100), 'model-b': counts(1_000, 100) },
    provenance: 'reported',
    costMicroUsd: 120_000,
    controller: new AbortController(),
    cancelReason: null,
    done: Promise.resolve(),
    toolToken: null,
    question: null,
    spendBefore: null,
    ...over,
  };
}

/** A recorded turn of the shared persistence fixture, ended within this harness's day. */
export function turnInput(over: Partial<TurnInput> = {}): TurnInput {
  return baseTurnInput({ endedAt: '2025-03-01T11:01:00.000Z', ...over });
}

export function finishInput(over: Partial<FinishRunInput> = {}): FinishRunInput {
  return {
    endedAt: '2025-03-01T11:05:00.000Z',
    exitKind: 'succeeded',
    errorKind: null,
    error: null,
    turns: 1,
    usage: counts(1_000, 200, 300, 50),
    usageByModel: { 'model-a': counts(1_000, 200, 300, 50) },
    costMicroUsd: 12_345,
    provenance: 'reported',
    unaccountedTurns: 0,
    sessionId: 'sess-1',
    ...over,
  };
}

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  message: string;
}

export function captureLog(): { log: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const at =
    (level: LogLine['level']) =>
    (fields: Record<string, unknown>, message: string): void => {
      lines.push({ level, fields, message });
    };
  return { lines, log: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
}

const WORKFLOW = `---
tracker:
  kind: file
  api_key: $TRACKER_TOKEN
  active_states: [Todo, In Progress]
  terminal_states: [Done]
  in_progress_state: In Progress
  handoff_state: Review
file:
  path: issues.json
agent:
  kind: mock
  command: mock-agent --token ${SECRETS.agentCommandToken}
  max_concurrent_agents: 3
  max_concurrent_agents_by_state:
    Todo: 2
  max_turns: 5
  max_cost_usd: 2.5
mock:
  api_key: ${SECRETS.optionToken}
hooks:
  before_run: 'curl -H "Authorization: ${SECRETS.hookToken}" https://example.invalid'
server:
  port: 7699
---
Work on {{ issue.identifier }}.
`;

/** What one test's server reads, and the handles to change it. */
export interface Harness {
  dir: string;
  store: Store;
  snapshot: OrchestratorSnapshot;
  sources: ServerSources;
  log: Logger;
  lines: LogLine[];
  /** Observers subscribed now (the server's own token counter is one). */
  listeners: Set<(observation: Observation) => void>;
  emit(observation: Observation): void;
  /** What `refresh()` does: the fake coalesces like the orchestrator. */
  refreshCalls: number;
  /** Run ids written by `seed`. */
  runs: { eng1First: number; eng1Second: number; eng2Open: number; eng3: number };
  now: { ms: number };
}

export interface Started extends Harness {
  server: RunningServer;
  url: string;
}

const temps: string[] = [];
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Runs `fn` after the current test, last registered first. */
export function after(fn: () => Promise<void> | void): void {
  cleanups.push(fn);
}

/** A harness with a seeded store: ENG-1 has two finished runs, ENG-2 runs now, ENG-3 waits for a retry. */
export function harness(): Harness {
  const dir = mkdtempSync(path.join(tmpdir(), 'orch-server-'));
  temps.push(dir);
  const now = { ms: T0 };
  const store = openStore(path.join(dir, 'state.db'), { nowMs: () => now.ms });
  after(() => store.close());

  const eng1First = store.startRun({
    issueId: 'issue-1',
    identifier: 'ENG-1',
    attempt: 1,
    host: 'local',
    agentKind: 'mock',
    workspace: '/tmp/ws/ENG-1',
    startedAt: '2025-03-01T11:00:00.000Z',
  });
  store.recordTurn(eng1First, 1, '2025-03-01T11:00:00.000Z', turnInput({ sessionId: 'sess-a' }));
  // The agent of the first run called the tool server three times, once refused.
  store.toolCalls.add(eng1First, 'tracker_comment', 'ok');
  store.toolCalls.add(eng1First, 'tracker_transition', 'tool_state_not_configured');
  store.toolCalls.add(eng1First, 'tracker_comment', 'ok');
  store.recordTurn(
    eng1First,
    2,
    '2025-03-01T11:01:00.000Z',
    turnInput({
      sessionId: 'sess-a',
      exitReason: 'turn_failed',
      errorKind: 'port_exit',
      error: `agent exited 3 (${MASKED})`,
      spendUnaccounted: true,
      usageProvenance: 'unmeasured',
      reportedAmounts: [],
      finalMessage: '',
    }),
  );
  store.finishRun(
    eng1First,
    finishInput({
      exitKind: 'failed',
      errorKind: 'port_exit',
      error: `agent exited 3 (${MASKED})`,
      turns: 2,
      costMicroUsd: null,
      provenance: 'unmeasured',
      unaccountedTurns: 1,
      sessionId: 'sess-a',
    }),
  );
  const eng1Second = store.startRun({
    issueId: 'issue-1',
    identifier: 'ENG-1',
    attempt: 2,
    host: 'local',
    agentKind: 'mock',
    sessionId: 'sess-a',
    workspace: '/tmp/ws/ENG-1',
    startedAt: '2025-03-01T11:10:00.000Z',
  });
  store.recordTurn(eng1Second, 1, '2025-03-01T11:10:00.000Z', turnInput({ sessionId: 'sess-a' }));
  store.finishRun(eng1Second, finishInput({ endedAt: '2025-03-01T11:12:00.000Z', sessionId: 'sess-a' }));

  const eng3 = store.startRun({
    issueId: 'issue-3',
    identifier: 'ENG-3',
    attempt: 1,
    host: 'local',
    agentKind: 'mock',
    workspace: '/tmp/ws/ENG-3',
    startedAt: '2025-03-01T11:20:00.000Z',
  });
  store.finishRun(
    eng3,
    finishInput({
      endedAt: '2025-03-01T11:21:00.000Z',
      exitKind: 'failed',
      errorKind: 'response_timeout',
      error: 'stalled',
      turns: 0,
    }),
  );
  const retry: RetryEntry = {
    issueId: 'issue-3',
    identifier: 'ENG-3',
    attempt: 2,
    dueAtMs: T0 + 42_500,
    reason: 'stall',
    lastError: 'stalled',
    previousHost: 'local',
    sessionId: null,
  };
  store.saveRetry(retry);

  const eng2Open = store.startRun({
    issueId: 'issue-2',
    identifier: 'ENG-2',
    attempt: 1,
    host: 'local',
    agentKind: 'mock',
    workspace: '/tmp/ws/ENG-2',
    startedAt: new Date(T0 - 90_000).toISOString(),
  });
  store.recordTurn(
    eng2Open,
    1,
    new Date(T0 - 90_000).toISOString(),
    turnInput({ sessionId: 'sess-running' }),
  );
  store.addTotals({
    tokens: counts(10_000, 2_000, 500, 20),
    costMicroUsd: 1_234_567,
    secondsRunning: 321,
    runsStarted: 4,
    runsFinished: 3,
  });

  const loaded = loadWorkflow(path.join(dir, 'WORKFLOW.md'), {
    env: { TRACKER_TOKEN: SECRETS.trackerToken },
    text: WORKFLOW,
  });
  if (!loaded.ok) throw new Error(`test workflow does not load: ${JSON.stringify(loaded.diagnostics)}`);
  const config = loaded.workflow.config;

  const snapshot: OrchestratorSnapshot = {
    running: [runningEntry({ runId: eng2Open })],
    retries: [retry],
    ticks: 0,
    draining: false,
    totals: { dispatches: 2, tokens: counts(4_000, 600), costMicroUsd: 130_000 },
    maxConcurrentAgents: 3,
    held: [],
    hosts: [],
    store: { available: true, sinceMs: null, pendingWrites: 0, lastError: null },
    rateLimits: [],
    waiting: [],
  };
  const listeners = new Set<(observation: Observation) => void>();
  const adapters: AdapterHealth[] = [
    { kind: 'mock', runnable: true, version: '1.0.0', health: 'builtin', detail: 'built in' },
  ];
  let refreshRequested = false;
  const h: Harness = {
    dir,
    store,
    snapshot,
    ...captureLog(),
    listeners,
    emit: (observation) => {
      for (const listener of [...listeners]) listener(observation);
    },
    refreshCalls: 0,
    runs: { eng1First, eng1Second, eng2Open, eng3 },
    now,
    sources: undefined as unknown as ServerSources,
  };
  h.sources = {
    version: '9.8.7',
    startedAtMs: T0 - 3_600_000,
    nowMs: () => now.ms,
    workflowPath: config.workflowPath,
    snapshot: () => h.snapshot,
    store,
    config: () => config,
    priceTokens: (usage) => usage.totalTokens * 10,
    adapters: () => adapters,
    refresh: () => {
      h.refreshCalls += 1;
      if (h.snapshot.draining) return 'draining';
      if (refreshRequested) return 'coalesced';
      refreshRequested = true;
      return 'queued';
    },
    metrics: async () => ({
      contentType: 'text/plain; version=0.0.4; charset=utf-8',
      body: `# HELP orchestrator_up 1\norchestrator_up{v="${MASKED}"} 1\n`,
    }),
    mask: (text) => text.split(MASKED).join('***'),
    subscribe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return h;
}

/** A fake dashboard page whose script carries the nonce. */
export function fakeDashboard(nonce: string): string {
  return `<!doctype html><html><body><script nonce="${nonce}">/* page */</script></body></html>`;
}

/** Starts the real server on a free loopback port over a fresh harness (closed after the test). */
export async function started(
  edit: (h: Harness) => void = () => undefined,
  options: Partial<StartOptions> = {},
): Promise<Started> {
  const h = harness();
  edit(h);
  const port = await freePort();
  const result = await startServer(h.sources, {
    host: '127.0.0.1',
    port,
    portExplicit: true,
    log: h.log,
    dashboard: fakeDashboard,
    ...options,
  });
  if (!result.ok || result.server === null)
    throw new Error(`server did not start: ${JSON.stringify(result)}`);
  const server = result.server;
  after(() => server.close());
  return Object.assign(h, { server, url: server.url });
}

export interface Response {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request over a fresh connection; resolves with the whole body. */
export function request(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: options.method ?? 'GET', headers: options.headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** GETs JSON and checks the headers every JSON response must carry. */
export async function getJson(
  url: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<{
  status: number;
  headers: http.IncomingHttpHeaders;
  json: Record<string, unknown>;
  body: string;
}> {
  const res = await request(url, options);
  expectJsonHeaders(res.headers);
  return { ...res, json: JSON.parse(res.body) as Record<string, unknown> };
}

export function expectJsonHeaders(headers: http.IncomingHttpHeaders): void {
  expect(headers['content-type']).toBe('application/json; charset=utf-8');
  expect(headers['cache-control']).toBe('no-store');
  expect(headers['x-content-type-options']).toBe('nosniff');
}

export interface StreamEvent {
  /** `state`, `runs`, or `comment` for a `:` line, or `retry` for a `retry:` field. */
  event: string;
  data: string;
}

/** An open event stream: every event so far, and a way to wait for more. */
export interface EventReader {
  status: number;
  headers: http.IncomingHttpHeaders;
  events: StreamEvent[];
  ended: boolean;
  next(
    predicate: (event: StreamEvent) => boolean,
    fromIndex?: number,
    timeoutMs?: number,
  ): Promise<StreamEvent>;
  close(): void;
}

export function openEvents(url: string): Promise<EventReader> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false }, (res) => {
      let buffer = '';
      const reader: EventReader = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        events: [],
        ended: false,
        next: (predicate, fromIndex = 0, timeoutMs = 5_000) =>
          waitFor('an event', () => reader.events.slice(fromIndex).find(predicate), timeoutMs),
        close: () => req.destroy(),
      };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          reader.events.push(parseBlock(buffer.slice(0, end)));
          buffer = buffer.slice(end + 2);
        }
      });
      res.on('end', () => {
        reader.ended = true;
      });
      res.on('error', () => {
        reader.ended = true;
      });
      resolve(reader);
    });
    req.on('error', reject);
  });
}

function parseBlock(block: string): StreamEvent {
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) return { event: 'comment', data: line.slice(1).trim() };
    if (line.startsWith('retry:')) return { event: 'retry', data: line.slice(6).trim() };
    if (line.startsWith('event:')) event = line.slice(6).trim();
    if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
  }
  return { event, data: data.join('\n') };
}

/** Polls `probe` until it gives a value, failing after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | null | false,
  timeoutMs = 5_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
