/**
 * The pure parts of the server: the view builders, the `limit` rule, the loopback rules
 * and the per-model token counter, without a socket.
 */
import { describe, expect, it } from 'vitest';
import type { RetryEntry } from '../../src/persistence/index.js';
import { isLoopbackAddress } from '../../src/server/http.js';
import {
  COMMENT_BODY_CHARS,
  COMMENTS_PER_ISSUE,
  ISSUES_WITH_COMMENTS,
  IssueComments,
} from '../../src/server/issue-comments.js';
import { ModelTokens } from '../../src/server/model-tokens.js';
import { isLoopbackHost, runsLimit } from '../../src/server/routes.js';
import {
  activeCostMicroUsd,
  configView,
  MAX_WAITING_LISTED,
  readinessView,
  retryView,
  runningView,
  stateView,
  usd,
} from '../../src/server/views.js';
import { counts, harness, runningEntry, SECRETS, T0 } from './support.js';

function retry(over: Partial<RetryEntry> = {}): RetryEntry {
  return {
    issueId: 'i',
    identifier: 'I-1',
    attempt: 2,
    dueAtMs: T0,
    reason: 'error',
    lastError: null,
    previousHost: null,
    sessionId: 'sess-x',
    ...over,
  };
}

describe('configView', () => {
  it('names only limits, states and paths: no credential, command, hook, option or environment', () => {
    const h = harness();
    const config = h.sources.config();
    const view = configView(config, '/w/WORKFLOW.md');
    const text = JSON.stringify(view);
    for (const secret of Object.values(SECRETS)) expect(text).not.toContain(secret);
    expect(Object.keys(view).sort()).toEqual(
      [
        'agent',
        'db_path',
        'polling_interval_ms',
        'server',
        'tracker',
        'workflow_path',
        'workspace_root',
      ].sort(),
    );
    expect(Object.keys(view.tracker).sort()).toEqual(
      [
        'active_states',
        'blocked_state',
        'handoff_state',
        'in_progress_state',
        'kind',
        'terminal_states',
      ].sort(),
    );
    expect(view.server).toEqual({ host: config.server.host, port: config.server.port });
    expect(view.workflow_path).toBe('/w/WORKFLOW.md');
  });

  it('does not share arrays with the live config (a reload cannot change a built view)', () => {
    const config = harness().sources.config();
    const view = configView(config, 'x');
    view.tracker.active_states.push('Mutated');
    expect(config.tracker.activeStates).not.toContain('Mutated');
  });
});

describe('money and time', () => {
  it('turns micro-dollars into dollars and keeps unknown as null, never 0', () => {
    expect(usd(1_234_567)).toBe(1.234567);
    expect(usd(0)).toBe(0);
    expect(usd(null)).toBeNull();
  });

  it.each([
    [T0 + 42_500, 43],
    [T0 + 1, 1],
    [T0, 0],
    [T0 - 10_000, 0],
  ])('a retry due at %i is due in %i s (overdue is 0)', (dueAtMs, seconds) => {
    expect(retryView(retry({ dueAtMs }), T0).due_in_seconds).toBe(seconds);
  });

  it('counts whole elapsed seconds and never negative ones (a clock step backwards)', () => {
    expect(runningView(runningEntry({ startedAtMs: T0 - 1_999 }), T0).elapsed_seconds).toBe(1);
    expect(runningView(runningEntry({ startedAtMs: T0 + 5_000 }), T0).elapsed_seconds).toBe(0);
  });
});

describe('activeCostMicroUsd', () => {
  const price = (rate: number | null) => (usage: { totalTokens: number }) =>
    rate === null ? null : usage.totalTokens * rate;

  it('is 0 with nothing running', () => {
    expect(activeCostMicroUsd([], price(null))).toBe(0);
  });

  it('adds settled costs and prices sessions that have none yet', () => {
    const settled = runningEntry({ costMicroUsd: 1_000 });
    const fresh = runningEntry({ costMicroUsd: null, usage: counts(100, 10) });
    expect(activeCostMicroUsd([settled, fresh], price(2))).toBe(1_000 + 220);
  });

  it('is null when one session can be neither settled nor priced, not a partial sum', () => {
    const settled = runningEntry({ costMicroUsd: 1_000 });
    const fresh = runningEntry({ costMicroUsd: null });
    expect(activeCostMicroUsd([settled, fresh], price(null))).toBeNull();
  });
});

describe('stateView', () => {
  it('lists retries soonest first and never shows negative free slots', () => {
    const h = harness();
    h.snapshot.maxConcurrentAgents = 1;
    h.snapshot.running = [runningEntry(), runningEntry()];
    h.snapshot.retries = [retry({ identifier: 'LATE', dueAtMs: T0 + 9_000 }), retry({ identifier: 'SOON' })];
    const view = stateView({
      nowMs: T0,
      version: 'v',
      startedAtMs: T0,
      workflowPath: 'w',
      snapshot: h.snapshot,
      totals: h.store.totals(),
      unpricedRuns: 0,
      config: h.sources.config(),
      adapters: [],
      tokensByModel: {},
      ready: false,
      priceTokens: () => null,
    });
    expect(view.slots).toEqual({ max: 1, available: 0 });
    expect(view.retrying.map((r) => r.issue_identifier)).toEqual(['SOON', 'LATE']);
    expect(view.totals.active_tokens.total_tokens).toBe(2 * runningEntry().usage.totalTokens);
  });

  it('shows the latest rate limit per agent kind in snake_case, times as ISO-8601, unknown figures as null', () => {
    const h = harness();
    h.snapshot.rateLimits = [
      {
        kind: 'mock',
        limitId: 'account',
        observedAtMs: T0,
        windows: [
          { window: 'primary', usedPercent: 42.5, windowMinutes: 300, resetsAtMs: T0 + 3_600_000 },
          { window: 'secondary', usedPercent: null, windowMinutes: null, resetsAtMs: null },
        ],
      },
    ];
    const view = stateView({
      nowMs: T0,
      version: 'v',
      startedAtMs: T0,
      workflowPath: 'w',
      snapshot: h.snapshot,
      totals: h.store.totals(),
      unpricedRuns: 0,
      config: h.sources.config(),
      adapters: [],
      tokensByModel: {},
      ready: true,
      priceTokens: () => null,
    });
    expect(view.rate_limits).toEqual([
      {
        agent_kind: 'mock',
        limit_id: 'account',
        observed_at: new Date(T0).toISOString(),
        windows: [
          {
            window: 'primary',
            used_percent: 42.5,
            window_minutes: 300,
            resets_at: new Date(T0 + 3_600_000).toISOString(),
          },
          { window: 'secondary', used_percent: null, window_minutes: null, resets_at: null },
        ],
      },
    ]);
  });
});

describe('stateView: costs and waiting issues', () => {
  const inputs = (h: ReturnType<typeof harness>, unpricedRuns: number) => ({
    nowMs: T0,
    version: 'v',
    startedAtMs: T0,
    workflowPath: 'w',
    snapshot: h.snapshot,
    totals: h.store.totals(),
    unpricedRuns,
    config: h.sources.config(),
    adapters: [],
    tokensByModel: {},
    ready: true,
    priceTokens: () => null,
  });

  it('a total over runs that could not be priced is null (unknown), never the known part read as the whole', () => {
    const h = harness();
    const view = stateView(inputs(h, 2));
    expect(view.totals.cost_usd).toBeNull();
    expect(view.totals.known_cost_usd).toBeCloseTo(1.234567, 9);
    expect(view.totals.unpriced_runs).toBe(2);
    expect(stateView(inputs(h, 0)).totals.cost_usd).toBeCloseTo(1.234567, 9);
  });

  it('lists the waiting issues in order with their reason, counts all of them and lists at most the cap', () => {
    const h = harness();
    const entry = (n: number) => ({
      issueId: `id-${n}`,
      identifier: `W-${n}`,
      title: `waits ${n}`,
      state: 'Todo',
      reason: 'no_slot',
      detail: 'all 3 agent slots in use',
      blockedBy: [],
      seenAtMs: T0,
    });
    h.snapshot.waiting = [
      { ...entry(0), reason: 'blocked', detail: 'waiting on DEMO-1', blockedBy: ['DEMO-1'] },
      ...Array.from({ length: MAX_WAITING_LISTED + 5 }, (_, i) => entry(i + 1)),
    ];
    const view = stateView(inputs(h, 0));
    expect(view.counts.waiting).toBe(MAX_WAITING_LISTED + 6);
    expect(view.waiting).toHaveLength(MAX_WAITING_LISTED);
    expect(view.waiting[0]).toEqual({
      issue_id: 'id-0',
      issue_identifier: 'W-0',
      title: 'waits 0',
      state: 'Todo',
      reason: 'blocked',
      detail: 'waiting on DEMO-1',
      blocked_by: ['DEMO-1'],
      seen_at: new Date(T0).toISOString(),
    });
  });
});

describe('IssueComments', () => {
  const comment = (issueId: string, body: string) =>
    ({ type: 'comment', issueId, lifecycle: 'failure', result: 'success', body }) as const;

  it('keeps the newest comments of the issues commented on most recently, each body clipped, and nothing else', () => {
    const book = new IssueComments(() => T0);
    book.observe({ type: 'turn', issueId: 'a', turn: 1 });
    for (let i = 0; i < COMMENTS_PER_ISSUE + 3; i += 1) book.observe(comment('a', `c${i}`));
    const a = book.for('a');
    expect(a).toHaveLength(COMMENTS_PER_ISSUE);
    expect(a[0]?.body).toBe('c3');
    expect(a.at(-1)).toEqual({
      atMs: T0,
      lifecycle: 'failure',
      result: 'success',
      body: `c${COMMENTS_PER_ISSUE + 2}`,
    });
    for (let i = 0; i < ISSUES_WITH_COMMENTS; i += 1) book.observe(comment(`other-${i}`, 'x'));
    expect(book.for('a')).toEqual([]);
    book.observe(comment('long', 'y'.repeat(COMMENT_BODY_CHARS * 2)));
    expect(book.for('long')[0]?.body).toHaveLength(COMMENT_BODY_CHARS);
    expect(book.for('nobody')).toEqual([]);
  });
});

describe('readinessView', () => {
  it('passes only when every check passes', () => {
    const all = {
      database: 'pass',
      store_writes: 'pass',
      first_tick: 'pass',
      workflow: 'pass',
      draining: 'pass',
    } as const;
    expect(readinessView({ version: 'v', uptimeMs: 61_500, checks: all })).toEqual({
      status: 'pass',
      version: 'v',
      uptime_seconds: 61,
      checks: all,
    });
    for (const key of Object.keys(all) as (keyof typeof all)[]) {
      const view = readinessView({ version: 'v', uptimeMs: 0, checks: { ...all, [key]: 'fail' } });
      expect(view.status, key).toBe('fail');
    }
  });
});

describe('runsLimit', () => {
  it.each([
    [[], 25],
    [['1'], 1],
    [['500'], 500],
    [['007'], 7],
  ])('accepts %j as %i', (values, limit) => {
    expect(runsLimit(values)).toBe(limit);
  });

  it.each([[['0']], [['501']], [['-1']], [['1.5']], [['x']], [['']], [['10000']], [['1', '2']], [[' 5']]])(
    'refuses %j',
    (values) => {
      expect(() => runsLimit(values)).toThrow('limit must be one whole number from 1 to 500');
    },
  );
});

describe('loopback rules', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['localhost', true],
    ['::1', true],
    ['[::1]', true],
    ['0.0.0.0', false],
    ['::', false],
    ['192.168.1.10', false],
  ])('bind address %s is loopback: %s', (host, loopback) => {
    expect(isLoopbackAddress(host)).toBe(loopback);
  });

  it.each([
    [undefined, true],
    ['127.0.0.1:7678', true],
    ['localhost:7678', true],
    ['LOCALHOST', true],
    ['localhost.:7678', true],
    ['[::1]:7678', true],
    ['127.0.0.1.evil.example', false],
    ['localhost.evil.example:7678', false],
    ['evil.example:7678', false],
    ['[::ffff:7f00:1]:7678', false],
  ])('Host header %s is accepted on a loopback server: %s', (header, accepted) => {
    expect(isLoopbackHost(header)).toBe(accepted);
  });
});

describe('ModelTokens', () => {
  it('sums deltas per model, ignores other observations and hands out copies', () => {
    const tokens = new ModelTokens();
    tokens.observe({ type: 'tokens', model: 'a', delta: counts(10, 1) });
    tokens.observe({ type: 'tokens', model: 'a', delta: counts(5, 2, 3) });
    tokens.observe({ type: 'tokens', model: '__proto__', delta: counts(1, 1) });
    tokens.observe({ type: 'tick', result: 'success', durationMs: 1, candidates: 0 });
    const seen = tokens.snapshot();
    expect(seen.a).toEqual(counts(15, 3, 3));
    expect(Object.keys(seen).sort()).toEqual(['__proto__', 'a']);
    seen.a = counts(0, 0);
    expect(tokens.snapshot().a).toEqual(counts(15, 3, 3));
  });
});
