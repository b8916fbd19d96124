/**
 * The metrics module on its own: observations in, prom-client's text exposition out,
 * parsed back into samples. Gauges come from a hand-made snapshot read at scrape time;
 * tracker calls go through instrumentTracker over a small fake tracker.
 */
import { register as globalRegistry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { AgentEvent, TokenCounts } from '../../src/domain/agent.js';
import { TrackerError } from '../../src/domain/errors.js';
import type { Issue } from '../../src/domain/issue.js';
import type { TrackerAdapter } from '../../src/domain/tracker.js';
import { instrumentTracker, TRACKER_OPERATIONS } from '../../src/observability/instrument-tracker.js';
import { createMetrics, MAX_MODEL_LABELS } from '../../src/observability/metrics.js';
import type { Observation } from '../../src/orchestrator/observations.js';
import type { OrchestratorSnapshot, RunningEntry } from '../../src/orchestrator/orchestrator.js';
import type { RetryEntry } from '../../src/orchestrator/ports.js';

// ---------------------------------------------------------------- the exposition, parsed

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Samples of the text format (0.0.4): `name{a="x",b="y"} value`; comments and blanks skipped. */
function parseExposition(body: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of body.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m === null) throw new Error(`unparsable exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    const raw = m[3]!;
    samples.push({ name: m[1]!, labels, value: raw === '+Inf' ? Number.POSITIVE_INFINITY : Number(raw) });
  }
  return samples;
}

/** The one sample of `name` whose labels include `labels`; undefined when none. */
function sampleValue(
  samples: Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const found = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${found.length} samples`);
  return found[0]?.value;
}

// ---------------------------------------------------------------- fixtures

const ZERO: TokenCounts = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  totalTokens: 0,
};

function issue(id: string, identifier: string): Issue {
  return {
    id,
    identifier,
    displayId: identifier,
    title: `title of ${identifier}`,
    description: '',
    priority: null,
    state: 'Todo',
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
  };
}

function running(id: string, host: string, startedAtMs: number): RunningEntry {
  return {
    issue: issue(id, `R-${id}`),
    attempt: 1,
    runId: 1,
    host,
    startedAtMs,
    lastEventAtMs: startedAtMs,
    lastEvent: 'dispatched',
    turn: 0,
    sessionId: null,
    workspace: null,
    usage: { ...ZERO },
    usageByModel: {},
    provenance: null,
    costMicroUsd: null,
    controller: new AbortController(),
    cancelReason: null,
    done: Promise.resolve(),
    toolToken: null,
    question: null,
    spendBefore: null,
  };
}

function retry(id: string): RetryEntry {
  return {
    issueId: id,
    identifier: `Q-${id}`,
    attempt: 1,
    dueAtMs: 0,
    reason: 'error',
    lastError: null,
    previousHost: null,
    sessionId: null,
  };
}

function snapshot(over: Partial<OrchestratorSnapshot> = {}): OrchestratorSnapshot {
  return {
    running: [],
    retries: [],
    held: [],
    hosts: [],
    store: { available: true, sinceMs: null, pendingWrites: 0, lastError: null },
    ticks: 0,
    draining: false,
    totals: { dispatches: 0, tokens: { ...ZERO }, costMicroUsd: 0 },
    maxConcurrentAgents: 10,
    rateLimits: [],
    waiting: [],
    ...over,
  };
}

const AT = '2026-01-01T00:00:00.000Z';
const toolResult = (
  toolKind: 'shell' | 'read' | 'edit' | 'skill' | null,
  toolError: boolean,
): AgentEvent => ({
  type: 'tool_result',
  at: AT,
  agentPid: '42',
  toolName: 'Bash',
  toolKind,
  toolArgument: 'ls',
  toolDurationMs: 5,
  toolError,
});
const tokens = (input: number, output: number, cacheRead = 0, cacheWrite = 0): TokenCounts => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: cacheRead,
  cacheWriteTokens: cacheWrite,
  totalTokens: input + output,
});

async function scrape(metrics: ReturnType<typeof createMetrics>): Promise<Sample[]> {
  return parseExposition((await metrics.exposition()).body);
}

const P = 'orchestrator_';

// ---------------------------------------------------------------- tests

describe('createMetrics: gauges read the snapshot at scrape time', () => {
  it('sessions, retries, free slots and elapsed time follow the snapshot (not a value cached at an earlier scrape)', async () => {
    const now = 1_000_000;
    let current = snapshot({
      running: [running('1', 'local', now - 10_000), running('2', 'local', now - 2_500)],
      retries: [retry('3')],
      maxConcurrentAgents: 5,
    });
    const metrics = createMetrics({ version: '9.9.9', snapshot: () => current, nowMs: () => now });
    let samples = await scrape(metrics);
    expect(sampleValue(samples, `${P}sessions_running`)).toBe(2);
    expect(sampleValue(samples, `${P}sessions_retrying`)).toBe(1);
    expect(sampleValue(samples, `${P}slots_available`)).toBe(3);
    expect(sampleValue(samples, `${P}active_sessions_elapsed_seconds`)).toBe(12.5);

    current = snapshot({ running: [running('4', 'local', now)], maxConcurrentAgents: 5 });
    samples = await scrape(metrics);
    expect(sampleValue(samples, `${P}sessions_running`)).toBe(1);
    expect(sampleValue(samples, `${P}sessions_retrying`)).toBe(0);
    expect(sampleValue(samples, `${P}slots_available`)).toBe(4);
    expect(sampleValue(samples, `${P}active_sessions_elapsed_seconds`)).toBe(0);
  });

  it('free slots never go negative when more sessions run than the (lowered) limit', async () => {
    const metrics = createMetrics({
      version: '1',
      snapshot: () =>
        snapshot({ running: [running('1', 'local', 0), running('2', 'local', 0)], maxConcurrentAgents: 1 }),
    });
    expect(sampleValue(await scrape(metrics), `${P}slots_available`)).toBe(0);
  });

  it('host usage counts running sessions per host, and a host that went idle reads 0 instead of vanishing', async () => {
    let current = snapshot({
      running: [running('1', 'local', 0), running('2', 'worker-a', 0), running('3', 'worker-a', 0)],
    });
    const metrics = createMetrics({ version: '1', snapshot: () => current });
    let samples = await scrape(metrics);
    expect(sampleValue(samples, `${P}ssh_host_usage`, { host: 'local' })).toBe(1);
    expect(sampleValue(samples, `${P}ssh_host_usage`, { host: 'worker-a' })).toBe(2);
    current = snapshot({ running: [running('4', 'local', 0)] });
    samples = await scrape(metrics);
    expect(sampleValue(samples, `${P}ssh_host_usage`, { host: 'local' })).toBe(1);
    expect(sampleValue(samples, `${P}ssh_host_usage`, { host: 'worker-a' })).toBe(0);
  });

  it('a configured SSH host that has run nothing yet reads 0', async () => {
    const metrics = createMetrics({
      version: '1',
      snapshot: () =>
        snapshot({ hosts: [{ host: 'ci@worker-b:2222', running: 0, cap: 1, down: null, configured: true }] }),
    });
    const samples = await scrape(metrics);
    expect(sampleValue(samples, `${P}ssh_host_usage`, { host: 'ci@worker-b:2222' })).toBe(0);
  });

  it('rate-limit gauges follow the latest report per kind, limit and window; a window no longer reported vanishes', async () => {
    const resetsAtMs = Date.parse('2026-03-01T17:00:00.000Z');
    let current = snapshot({
      rateLimits: [
        {
          kind: 'mock',
          limitId: 'account',
          observedAtMs: 0,
          windows: [
            { window: 'primary', usedPercent: 42.5, windowMinutes: 300, resetsAtMs },
            { window: 'secondary', usedPercent: null, windowMinutes: 10_080, resetsAtMs: null },
          ],
        },
      ],
    });
    const metrics = createMetrics({ version: '1', snapshot: () => current });
    let samples = await scrape(metrics);
    const labels = { kind: 'mock', limit: 'account', window: 'primary' };
    expect(sampleValue(samples, `${P}agent_rate_limit_used_percent`, labels)).toBe(42.5);
    expect(sampleValue(samples, `${P}agent_rate_limit_reset_timestamp_seconds`, labels)).toBe(
      resetsAtMs / 1000,
    );
    // An unknown figure is no sample, never a 0 that reads as "nothing used".
    const secondary = { ...labels, window: 'secondary' };
    expect(sampleValue(samples, `${P}agent_rate_limit_used_percent`, secondary)).toBeUndefined();
    expect(sampleValue(samples, `${P}agent_rate_limit_reset_timestamp_seconds`, secondary)).toBeUndefined();

    current = snapshot({
      rateLimits: [
        {
          kind: 'mock',
          limitId: 'account',
          observedAtMs: 1,
          windows: [{ window: 'secondary', usedPercent: 100, windowMinutes: 10_080, resetsAtMs: null }],
        },
      ],
    });
    samples = await scrape(metrics);
    expect(sampleValue(samples, `${P}agent_rate_limit_used_percent`, secondary)).toBe(100);
    expect(sampleValue(samples, `${P}agent_rate_limit_used_percent`, labels)).toBeUndefined();
  });

  it('a snapshot that throws (orchestrator not built yet) does not break the scrape', async () => {
    const metrics = createMetrics({
      version: '1',
      snapshot: () => {
        throw new Error('not yet');
      },
    });
    const samples = await scrape(metrics);
    expect(sampleValue(samples, `${P}sessions_running`)).toBe(0);
    expect(sampleValue(samples, `${P}build_info`, { version: '1' })).toBe(1);
  });
});

describe('createMetrics: counters and histograms follow the observations', () => {
  it('series of the closed label sets exist at 0 before anything happened (rate() works from the first scrape)', async () => {
    const samples = await scrape(createMetrics({ version: '1', snapshot: () => snapshot() }));
    expect(sampleValue(samples, `${P}dispatches_total`, { attempt: 'first' })).toBe(0);
    expect(sampleValue(samples, `${P}dispatches_total`, { attempt: 'retry' })).toBe(0);
    for (const exit_kind of ['succeeded', 'blocked', 'failed', 'cancelled', 'budget_exhausted']) {
      expect(sampleValue(samples, `${P}worker_exits_total`, { exit_kind }), exit_kind).toBe(0);
      expect(sampleValue(samples, `${P}worker_duration_seconds_count`, { exit_kind }), exit_kind).toBe(0);
    }
    for (const trigger of ['continuation', 'error', 'stall', 'usage_limit', 'timer'])
      expect(sampleValue(samples, `${P}retries_total`, { trigger }), trigger).toBe(0);
    for (const action of ['stop_terminal', 'stop_inactive', 'stop_missing', 'sweep_cleanup'])
      expect(sampleValue(samples, `${P}reconciliation_actions_total`, { action }), action).toBe(0);
    for (const operation of Object.values(TRACKER_OPERATIONS))
      for (const result of ['success', 'error'])
        expect(sampleValue(samples, `${P}tracker_requests_total`, { operation, result })).toBe(0);
    for (const tool_kind of ['shell', 'read', 'edit', 'skill', 'other'])
      expect(sampleValue(samples, `${P}tool_calls_total`, { tool_kind, result: 'error' })).toBe(0);
    for (const name of ['dispatch', 'handoff', 'blocked'])
      expect(sampleValue(samples, `${P}${name}_transitions_total`, { result: 'success' })).toBe(0);
    expect(sampleValue(samples, `${P}tracker_comments_total`, { lifecycle: 'budget', result: 'error' })).toBe(
      0,
    );
    expect(sampleValue(samples, `${P}budget_exhausted_total`, { limit: 'max_tokens' })).toBe(0);
    expect(sampleValue(samples, `${P}agent_events_total`, { type: 'turn_input_required' })).toBe(0);
    expect(sampleValue(samples, `${P}turns_total`)).toBe(0);
    expect(sampleValue(samples, `${P}cost_usd_total`)).toBe(0);
    expect(sampleValue(samples, `${P}poll_cycles_total`, { result: 'error' })).toBe(0);
    expect(sampleValue(samples, `${P}poll_duration_seconds_count`)).toBe(0);
  });

  it('every observation kind moves its own counter and no other', async () => {
    const metrics = createMetrics({ version: '1', snapshot: () => snapshot() });
    const a = issue('101', 'A-1');
    const observations: Observation[] = [
      { type: 'tick', result: 'success', durationMs: 30, candidates: 4 },
      { type: 'tick', result: 'success', durationMs: 5_000, candidates: 4 },
      { type: 'tick', result: 'error', durationMs: 7, candidates: 0 },
      { type: 'dispatched', issue: a, attempt: 1, host: 'local' },
      { type: 'dispatched', issue: a, attempt: 2, host: 'local' },
      { type: 'dispatched', issue: a, attempt: 3, host: 'local' },
      {
        type: 'worker_exited',
        issue: a,
        exitKind: 'succeeded',
        durationMs: 3_000,
        host: 'local',
        costMicroUsd: 1_250_000,
      },
      {
        type: 'worker_exited',
        issue: a,
        exitKind: 'failed',
        durationMs: 500,
        host: 'local',
        costMicroUsd: null,
      },
      { type: 'retry_scheduled', issueId: a.id, trigger: 'continuation', dueAtMs: 1 },
      { type: 'retry_scheduled', issueId: a.id, trigger: 'stall', dueAtMs: 1 },
      { type: 'released', issueId: a.id },
      { type: 'reconciled', issueId: a.id, action: 'stop_terminal' },
      { type: 'reconciled', issueId: a.id, action: 'sweep_cleanup' },
      { type: 'transition', purpose: 'in_progress', result: 'success' },
      { type: 'transition', purpose: 'handoff', result: 'error' },
      { type: 'transition', purpose: 'blocked', result: 'success' },
      { type: 'comment', issueId: a.id, lifecycle: 'dispatch', result: 'success', body: 'started' },
      { type: 'comment', issueId: a.id, lifecycle: 'budget', result: 'error', body: 'spent' },
      { type: 'budget_exhausted', issueId: a.id, limit: 'max_cost_usd' },
      { type: 'turn', issueId: a.id, turn: 1 },
      { type: 'turn', issueId: a.id, turn: 2 },
      { type: 'agent_event', issue: a, event: toolResult('shell', false) },
      { type: 'agent_event', issue: a, event: toolResult('shell', false) },
      { type: 'agent_event', issue: a, event: toolResult('edit', true) },
      { type: 'agent_event', issue: a, event: toolResult(null, false) },
      { type: 'agent_event', issue: a, event: { type: 'notification', at: AT, agentPid: '', message: 'hi' } },
    ];
    for (const o of observations) metrics.observe(o);
    const s = await scrape(metrics);
    expect(sampleValue(s, `${P}poll_cycles_total`, { result: 'success' })).toBe(2);
    expect(sampleValue(s, `${P}poll_cycles_total`, { result: 'error' })).toBe(1);
    expect(sampleValue(s, `${P}poll_duration_seconds_count`)).toBe(3);
    expect(sampleValue(s, `${P}poll_duration_seconds_sum`)).toBeCloseTo(5.037, 9);
    expect(sampleValue(s, `${P}poll_duration_seconds_bucket`, { le: '0.01' })).toBe(1);
    expect(sampleValue(s, `${P}poll_duration_seconds_bucket`, { le: '0.04' })).toBe(2);
    expect(sampleValue(s, `${P}poll_duration_seconds_bucket`, { le: '5.12' })).toBe(3);
    expect(sampleValue(s, `${P}dispatches_total`, { attempt: 'first' })).toBe(1);
    expect(sampleValue(s, `${P}dispatches_total`, { attempt: 'retry' })).toBe(2);
    expect(sampleValue(s, `${P}worker_exits_total`, { exit_kind: 'succeeded' })).toBe(1);
    expect(sampleValue(s, `${P}worker_exits_total`, { exit_kind: 'failed' })).toBe(1);
    expect(sampleValue(s, `${P}worker_exits_total`, { exit_kind: 'cancelled' })).toBe(0);
    expect(sampleValue(s, `${P}worker_duration_seconds_count`, { exit_kind: 'succeeded' })).toBe(1);
    expect(sampleValue(s, `${P}worker_duration_seconds_sum`, { exit_kind: 'succeeded' })).toBe(3);
    expect(sampleValue(s, `${P}worker_duration_seconds_bucket`, { exit_kind: 'succeeded', le: '2' })).toBe(0);
    expect(sampleValue(s, `${P}worker_duration_seconds_bucket`, { exit_kind: 'succeeded', le: '4' })).toBe(1);
    expect(sampleValue(s, `${P}worker_duration_seconds_bucket`, { exit_kind: 'failed', le: '1' })).toBe(1);
    expect(sampleValue(s, `${P}cost_usd_total`)).toBe(1.25);
    expect(sampleValue(s, `${P}retries_total`, { trigger: 'continuation' })).toBe(1);
    expect(sampleValue(s, `${P}retries_total`, { trigger: 'stall' })).toBe(1);
    expect(sampleValue(s, `${P}retries_total`, { trigger: 'error' })).toBe(0);
    expect(sampleValue(s, `${P}reconciliation_actions_total`, { action: 'stop_terminal' })).toBe(1);
    expect(sampleValue(s, `${P}reconciliation_actions_total`, { action: 'sweep_cleanup' })).toBe(1);
    expect(sampleValue(s, `${P}dispatch_transitions_total`, { result: 'success' })).toBe(1);
    expect(sampleValue(s, `${P}handoff_transitions_total`, { result: 'error' })).toBe(1);
    expect(sampleValue(s, `${P}handoff_transitions_total`, { result: 'success' })).toBe(0);
    expect(sampleValue(s, `${P}blocked_transitions_total`, { result: 'success' })).toBe(1);
    expect(sampleValue(s, `${P}tracker_comments_total`, { lifecycle: 'dispatch', result: 'success' })).toBe(
      1,
    );
    expect(sampleValue(s, `${P}tracker_comments_total`, { lifecycle: 'budget', result: 'error' })).toBe(1);
    expect(sampleValue(s, `${P}budget_exhausted_total`, { limit: 'max_cost_usd' })).toBe(1);
    expect(sampleValue(s, `${P}turns_total`)).toBe(2);
    expect(sampleValue(s, `${P}tool_calls_total`, { tool_kind: 'shell', result: 'success' })).toBe(2);
    expect(sampleValue(s, `${P}tool_calls_total`, { tool_kind: 'edit', result: 'error' })).toBe(1);
    expect(sampleValue(s, `${P}tool_calls_total`, { tool_kind: 'other', result: 'success' })).toBe(1);
    expect(sampleValue(s, `${P}agent_events_total`, { type: 'tool_result' })).toBe(4);
    expect(sampleValue(s, `${P}agent_events_total`, { type: 'notification' })).toBe(1);
    expect(sampleValue(s, `${P}agent_events_total`, { type: 'token_usage' })).toBe(0);
  });

  it('tokens are counted per type and model from the deltas; a zero class adds no series', async () => {
    const metrics = createMetrics({ version: '1', snapshot: () => snapshot() });
    metrics.observe({ type: 'tokens', model: 'model-a', delta: tokens(100, 20, 60, 0) });
    metrics.observe({ type: 'tokens', model: 'model-a', delta: tokens(10, 5, 0, 4) });
    metrics.observe({ type: 'tokens', model: 'unknown', delta: tokens(7, 0) });
    const s = await scrape(metrics);
    expect(sampleValue(s, `${P}tokens_total`, { type: 'input', model: 'model-a' })).toBe(110);
    expect(sampleValue(s, `${P}tokens_total`, { type: 'output', model: 'model-a' })).toBe(25);
    expect(sampleValue(s, `${P}tokens_total`, { type: 'cache_read', model: 'model-a' })).toBe(60);
    expect(sampleValue(s, `${P}tokens_total`, { type: 'cache_write', model: 'model-a' })).toBe(4);
    expect(sampleValue(s, `${P}tokens_total`, { type: 'input', model: 'unknown' })).toBe(7);
    expect(sampleValue(s, `${P}tokens_total`, { type: 'output', model: 'unknown' })).toBeUndefined();
  });

  it(`model labels are capped at ${MAX_MODEL_LABELS}: later models are counted under "other", known ones keep their own`, async () => {
    const metrics = createMetrics({ version: '1', snapshot: () => snapshot() });
    for (let i = 0; i < MAX_MODEL_LABELS + 5; i += 1)
      metrics.observe({ type: 'tokens', model: `m-${i}`, delta: tokens(1, 0) });
    metrics.observe({ type: 'tokens', model: 'm-0', delta: tokens(1, 0) });
    const s = await scrape(metrics);
    const models = new Set(s.filter((x) => x.name === `${P}tokens_total`).map((x) => x.labels.model));
    expect(models.size).toBe(MAX_MODEL_LABELS + 1);
    expect(sampleValue(s, `${P}tokens_total`, { type: 'input', model: 'other' })).toBe(5);
    expect(sampleValue(s, `${P}tokens_total`, { type: 'input', model: 'm-0' })).toBe(2);
    expect(
      sampleValue(s, `${P}tokens_total`, { type: 'input', model: `m-${MAX_MODEL_LABELS}` }),
    ).toBeUndefined();
  });

  it('tool calls are labelled by the catalog’s names and the tracker’s query tool; any other name is "other"', async () => {
    let queryTool: string | null = null;
    const metrics = createMetrics({
      version: '1',
      snapshot: () => snapshot(),
      queryToolName: () => queryTool,
    });
    const call = (tool: string) => metrics.observe({ type: 'tool_call', tool, outcome: 'ok', durationMs: 1 });
    call('acme_query');
    queryTool = 'acme_query';
    call('acme_query');
    call('run_status');
    call('made_up');
    const s = await scrape(metrics);
    const calls = `${P}tool_server_calls_total`;
    expect(sampleValue(s, calls, { tool: 'acme_query', outcome: 'ok' })).toBe(1);
    expect(sampleValue(s, calls, { tool: 'run_status', outcome: 'ok' })).toBe(1);
    // Before the tracker was made, and a name nobody offers.
    expect(sampleValue(s, calls, { tool: 'other', outcome: 'ok' })).toBe(2);
  });

  it('odd figures (negative or NaN durations, negative cost, an unknown budget limit) neither throw nor corrupt counters', async () => {
    const metrics = createMetrics({ version: '1', snapshot: () => snapshot() });
    const a = issue('1', 'A-1');
    expect(() => {
      metrics.observe({ type: 'tick', result: 'success', durationMs: -5, candidates: 0 });
      metrics.observe({ type: 'tick', result: 'success', durationMs: Number.NaN, candidates: 0 });
      metrics.observe({
        type: 'worker_exited',
        issue: a,
        exitKind: 'cancelled',
        durationMs: -1,
        host: 'local',
        costMicroUsd: -3,
      });
      metrics.observe({ type: 'tokens', model: 'm', delta: tokens(-4, Number.NaN) });
      metrics.observe({ type: 'budget_exhausted', issueId: a.id, limit: 'some new limit' });
    }).not.toThrow();
    const s = await scrape(metrics);
    expect(sampleValue(s, `${P}poll_duration_seconds_sum`)).toBe(0);
    expect(sampleValue(s, `${P}worker_duration_seconds_sum`, { exit_kind: 'cancelled' })).toBe(0);
    expect(sampleValue(s, `${P}cost_usd_total`)).toBe(0);
    expect(s.filter((x) => x.name === `${P}tokens_total`)).toEqual([]);
    expect(sampleValue(s, `${P}budget_exhausted_total`, { limit: 'other' })).toBe(1);
  });

  it('no label value carries an issue id, identifier or title, whatever the observations held', async () => {
    const secretIssue = issue('id-7f3a9c', 'SECRET-4242');
    const metrics = createMetrics({
      version: '1',
      snapshot: () =>
        snapshot({
          running: [{ ...running('id-7f3a9c', 'local', 0), issue: secretIssue }],
          retries: [retry('id-7f3a9c')],
        }),
    });
    const observations: Observation[] = [
      { type: 'dispatched', issue: secretIssue, attempt: 1, host: 'local' },
      { type: 'agent_event', issue: secretIssue, event: toolResult('read', false) },
      { type: 'retry_scheduled', issueId: secretIssue.id, trigger: 'error', dueAtMs: 0 },
      { type: 'reconciled', issueId: secretIssue.id, action: 'stop_missing' },
      { type: 'budget_exhausted', issueId: secretIssue.id, limit: 'max_sessions' },
      { type: 'turn', issueId: secretIssue.id, turn: 1 },
      { type: 'released', issueId: secretIssue.id },
      {
        type: 'worker_exited',
        issue: secretIssue,
        exitKind: 'blocked',
        durationMs: 1,
        host: 'local',
        costMicroUsd: 0,
      },
    ];
    for (const o of observations) metrics.observe(o);
    metrics.trackerRequest('fetch_issue_by_id', 'success');
    const { body } = await metrics.exposition();
    for (const needle of ['7f3a9c', 'SECRET', '4242', 'title of']) expect(body).not.toContain(needle);
    const labelValues = parseExposition(body).flatMap((s) => Object.values(s.labels));
    expect(labelValues.some((v) => v.includes('7f3a9c') || v.includes('SECRET'))).toBe(false);
  });

  it('build_info carries the version and the Node.js version, at 1', async () => {
    const s = await scrape(createMetrics({ version: '3.1.4', snapshot: () => snapshot() }));
    expect(sampleValue(s, `${P}build_info`, { version: '3.1.4', node_version: process.version })).toBe(1);
  });

  it('process metrics are included with the prefix, and none of them is a gauge named like a counter', async () => {
    const metrics = createMetrics({ version: '1', snapshot: () => snapshot() });
    const { body, contentType } = await metrics.exposition();
    expect(contentType).toMatch(/^text\/plain/);
    expect(body).toMatch(/^# TYPE orchestrator_process_cpu_seconds_total counter$/m);
    expect(body).toMatch(/^# TYPE orchestrator_process_resident_memory_bytes gauge$/m);
    expect(body).toMatch(/^# TYPE orchestrator_nodejs_eventloop_lag_seconds gauge$/m);
    const types = [...body.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => ({ name: m[1]!, type: m[2]! }));
    expect(types.length).toBeGreaterThan(30);
    for (const { name, type } of types) {
      expect(name.startsWith(P), name).toBe(true);
      if (type !== 'counter') expect(name.endsWith('_total'), name).toBe(false);
    }
  });

  it('each instance has its own registry: nothing lands in the global one and two instances do not share counts', async () => {
    const first = createMetrics({ version: '1', snapshot: () => snapshot() });
    const second = createMetrics({ version: '1', snapshot: () => snapshot() });
    first.observe({ type: 'turn', issueId: '1', turn: 1 });
    expect(sampleValue(await scrape(first), `${P}turns_total`)).toBe(1);
    expect(sampleValue(await scrape(second), `${P}turns_total`)).toBe(0);
    expect(first.registry).not.toBe(globalRegistry);
    expect(globalRegistry.getSingleMetric(`${P}turns_total`)).toBeUndefined();
  });
});

// ---------------------------------------------------------------- instrumentTracker

function fakeTracker(
  fail: ReadonlySet<keyof TrackerAdapter>,
  error: Error,
): {
  tracker: TrackerAdapter;
  calls: { method: string; args: unknown[] }[];
} {
  const calls: { method: string; args: unknown[] }[] = [];
  const reply =
    <T>(method: keyof TrackerAdapter, value: T) =>
    async (...args: unknown[]): Promise<T> => {
      calls.push({ method, args });
      if (fail.has(method)) throw error;
      return value;
    };
  const one = issue('9', 'T-9');
  const reading = { id: '9', identifier: 'T-9', state: 'Todo' };
  const tracker: TrackerAdapter = {
    fetchCandidateIssues: reply('fetchCandidateIssues', [one]),
    fetchIssueById: reply('fetchIssueById', one),
    fetchIssuesByStates: reply('fetchIssuesByStates', [one]),
    fetchIssueStatesByIds: reply('fetchIssueStatesByIds', [reading]),
    fetchIssueStatesByIdentifiers: reply('fetchIssueStatesByIdentifiers', [reading]),
    fetchIssueComments: reply('fetchIssueComments', []),
    transitionIssue: reply('transitionIssue', undefined),
    commentIssue: reply('commentIssue', undefined),
    addLabel: reply('addLabel', undefined),
  };
  return { tracker, calls };
}

/** Calls every contract method once with recognisable arguments. */
function callAll(tracker: TrackerAdapter): Promise<PromiseSettledResult<unknown>[]> {
  return Promise.allSettled([
    tracker.fetchCandidateIssues(),
    tracker.fetchIssueById('id-1'),
    tracker.fetchIssuesByStates(['Done']),
    tracker.fetchIssueStatesByIds(['id-2']),
    tracker.fetchIssueStatesByIdentifiers(['T-3']),
    tracker.fetchIssueComments('id-4'),
    tracker.transitionIssue('id-5', 'Review'),
    tracker.commentIssue('id-6', 'hello'),
    tracker.addLabel('id-7', 'needs-human'),
  ]);
}

describe('instrumentTracker', () => {
  it('counts each contract method once under its snake_case operation, and passes arguments and results through unchanged', async () => {
    const { tracker, calls } = fakeTracker(new Set(), new Error('unused'));
    const recorded: string[] = [];
    const wrapped = instrumentTracker(tracker, (operation, result) =>
      recorded.push(`${operation}:${result}`),
    );
    const direct = await callAll(tracker);
    calls.length = 0;
    const through = await callAll(wrapped);
    expect(through).toEqual(direct);
    expect(calls).toEqual([
      { method: 'fetchCandidateIssues', args: [] },
      { method: 'fetchIssueById', args: ['id-1'] },
      { method: 'fetchIssuesByStates', args: [['Done']] },
      { method: 'fetchIssueStatesByIds', args: [['id-2']] },
      { method: 'fetchIssueStatesByIdentifiers', args: [['T-3']] },
      { method: 'fetchIssueComments', args: ['id-4'] },
      { method: 'transitionIssue', args: ['id-5', 'Review'] },
      { method: 'commentIssue', args: ['id-6', 'hello'] },
      { method: 'addLabel', args: ['id-7', 'needs-human'] },
    ]);
    expect(recorded.sort()).toEqual(
      [
        'fetch_candidate_issues',
        'fetch_issue_by_id',
        'fetch_issues_by_states',
        'fetch_issue_states_by_ids',
        'fetch_issue_states_by_identifiers',
        'fetch_issue_comments',
        'transition_issue',
        'comment_issue',
        'add_label',
      ]
        .map((op) => `${op}:success`)
        .sort(),
    );
  });

  it('a failing call is counted as an error and rejects with the very same error object (its kind still drives retries)', async () => {
    const error = new TrackerError('tracker_not_found', 'no such issue');
    const { tracker } = fakeTracker(new Set(['fetchIssueById', 'transitionIssue']), error);
    const recorded: string[] = [];
    const wrapped = instrumentTracker(tracker, (operation, result) =>
      recorded.push(`${operation}:${result}`),
    );
    const caught = await wrapped.fetchIssueById('x').catch((e: unknown) => e);
    expect(caught).toBe(error);
    await expect(wrapped.transitionIssue('x', 'Done')).rejects.toBe(error);
    await expect(wrapped.fetchIssueComments('x')).resolves.toEqual([]);
    expect(recorded).toEqual([
      'fetch_issue_by_id:error',
      'transition_issue:error',
      'fetch_issue_comments:success',
    ]);
  });

  it('wired to the metrics, tracker calls show up in tracker_requests_total by operation and result', async () => {
    const metrics = createMetrics({ version: '1', snapshot: () => snapshot() });
    const { tracker } = fakeTracker(new Set(['commentIssue']), new Error('boom'));
    const wrapped = instrumentTracker(tracker, metrics.trackerRequest);
    await wrapped.fetchCandidateIssues();
    await wrapped.fetchCandidateIssues();
    await wrapped.commentIssue('1', 'x').catch(() => undefined);
    const s = await scrape(metrics);
    const count = (operation: string, result: string) =>
      sampleValue(s, `${P}tracker_requests_total`, { operation, result });
    expect(count('fetch_candidate_issues', 'success')).toBe(2);
    expect(count('fetch_candidate_issues', 'error')).toBe(0);
    expect(count('comment_issue', 'error')).toBe(1);
    expect(count('comment_issue', 'success')).toBe(0);
  });
});
