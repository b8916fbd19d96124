/**
 * A run refused by the provider's usage limit waits for the limit's reset and is
 * not counted as a failed attempt. The timing rule is a table; the whole path
 * (adapter error → worker → exit policy → persisted retry → timer → next run) runs
 * through the real Orchestrator and a real SQLite store (test/orchestrator/harness.ts),
 * so hours of waiting take no time. Also the book of reported rate limits the
 * snapshot, API and gauges read.
 */
import { describe, expect, it } from 'vitest';
import type { RateLimitWindow } from '../../src/domain/agent.js';
import {
  failureDelayMs,
  USAGE_LIMIT_FALLBACK_DELAY_MS,
  USAGE_LIMIT_MAX_DELAY_MS,
  USAGE_LIMIT_MIN_DELAY_MS,
  usageLimitDelayMs,
} from '../../src/orchestrator/backoff.js';
import { type ExitContext, planExit } from '../../src/orchestrator/exit-policy.js';
import { MAX_LIMITS_PER_KIND, RateLimitBook } from '../../src/orchestrator/rate-limits.js';
import { harness, type Script, T0 } from './harness.js';

const HOUR_MS = 3_600_000;

describe('usage-limit timing', () => {
  it.each([
    ['a reset ahead is waited for exactly', T0 + 2 * HOUR_MS, 2 * HOUR_MS],
    ['a reset a moment ahead still waits the minimum', T0 + 10, USAGE_LIMIT_MIN_DELAY_MS],
    ['an unknown reset waits the fallback', null, USAGE_LIMIT_FALLBACK_DELAY_MS],
    [
      'a reset already past (yet refused) waits the fallback, not zero',
      T0 - 5_000,
      USAGE_LIMIT_FALLBACK_DELAY_MS,
    ],
    ['a reset beyond a week is capped', T0 + 400 * 24 * HOUR_MS, USAGE_LIMIT_MAX_DELAY_MS],
  ])('%s', (_name, resetAtMs, delayMs) => {
    expect(usageLimitDelayMs(resetAtMs, T0)).toBe(delayMs);
  });

  const ctx: ExitContext = {
    attempt: 1,
    failuresBefore: 0,
    budgetStop: null,
    issueActive: true,
    handoffState: null,
    blockedState: null,
    comments: { onCompletion: false, onFailure: true, onBlocked: false },
    maxRetryBackoffMs: 300_000,
    nowMs: T0,
  };
  const limited = (resetAtMs: number | null) =>
    ({
      type: 'failed',
      kind: 'usage_limit',
      message: 'limit',
      resetAtMs,
      sessionId: null,
      turns: 1,
    }) as const;

  it.each([
    [1, 0, 2],
    [2, 1, 3],
    [4, 3, 5],
  ])(
    'a usage limit on attempt %s (after %s failures) runs again as attempt %s when the limit resets, whatever the failures before',
    (attempt, failuresBefore, next) => {
      const plan = planExit(limited(T0 + HOUR_MS), { ...ctx, attempt, failuresBefore });
      expect(plan.actions.at(-1)).toEqual({
        type: 'retry',
        attempt: next,
        delayMs: HOUR_MS,
        reason: 'usage_limit',
        error: 'usage_limit: limit',
        sessionId: null,
      });
    },
  );

  it('the failure comment says when the retry comes and as which attempt', () => {
    const comment = planExit(limited(null), ctx).actions.find((a) => a.type === 'comment');
    expect(comment).toMatchObject({
      body: expect.stringContaining(
        `Retry: as attempt 2 at ${new Date(T0 + USAGE_LIMIT_FALLBACK_DELAY_MS).toISOString()}, after the usage limit resets`,
      ),
    });
  });
});

describe('rate-limit book', () => {
  const window = (over: Partial<RateLimitWindow> = {}): RateLimitWindow => ({
    window: 'primary',
    usedPercent: 10,
    windowMinutes: 300,
    resetsAtMs: T0 + HOUR_MS,
    ...over,
  });

  it('keeps the latest report per kind and limit; another limit or kind is kept beside it', () => {
    const book = new RateLimitBook();
    book.record('k1', 'a', [window({ usedPercent: 10 })], T0);
    book.record('k1', 'a', [window({ usedPercent: 55 })], T0 + 1);
    book.record('k1', 'b', [], T0 + 2);
    book.record('k2', 'a', [window({ usedPercent: 1 })], T0 + 3);
    expect(book.list()).toEqual([
      { kind: 'k1', limitId: 'a', windows: [window({ usedPercent: 55 })], observedAtMs: T0 + 1 },
      { kind: 'k1', limitId: 'b', windows: [], observedAtMs: T0 + 2 },
      { kind: 'k2', limitId: 'a', windows: [window({ usedPercent: 1 })], observedAtMs: T0 + 3 },
    ]);
  });

  it(`keeps at most ${MAX_LIMITS_PER_KIND} limits per kind, dropping the least recently reported`, () => {
    const book = new RateLimitBook();
    for (let i = 0; i <= MAX_LIMITS_PER_KIND; i++) book.record('k', `limit-${i}`, [], T0 + i);
    book.record('k', 'limit-1', [], T0 + 100);
    book.record('k', 'new', [], T0 + 101);
    const ids = book.list().map((l) => l.limitId);
    expect(ids).toHaveLength(MAX_LIMITS_PER_KIND);
    expect(ids).not.toContain('limit-0');
    expect(ids).not.toContain('limit-2');
    expect(ids).toEqual(expect.arrayContaining(['limit-1', 'new', `limit-${MAX_LIMITS_PER_KIND}`]));
  });

  it("a used-up window's reset times the wait: the latest one ahead, of this kind only", () => {
    const book = new RateLimitBook();
    book.record(
      'k',
      'a',
      [
        window({ window: 'short', usedPercent: 100, resetsAtMs: T0 + HOUR_MS }),
        window({ window: 'long', usedPercent: 99.9, resetsAtMs: T0 + 50 * HOUR_MS }),
      ],
      T0,
    );
    book.record('k', 'b', [window({ usedPercent: 104, resetsAtMs: T0 + 3 * HOUR_MS })], T0);
    book.record('k', 'c', [window({ usedPercent: 100, resetsAtMs: T0 - 1 })], T0);
    book.record('other', 'a', [window({ usedPercent: 100, resetsAtMs: T0 + 9 * HOUR_MS })], T0);
    expect(book.exhaustedResetAtMs('k', T0)).toBe(T0 + 3 * HOUR_MS);
    expect(book.exhaustedResetAtMs('nobody', T0)).toBeNull();
  });
});

// ---------------------------------------------------------------- through the orchestrator

const service = (scripts: Script[]) => harness({ scripts });

describe('a usage limit through the orchestrator', () => {
  it('waits for the reported reset and never counts as a failed attempt: a later error backs off as if the limits had not happened', async () => {
    const s = service([
      { error: { kind: 'usage_limit', resetAtMs: T0 + 2 * HOUR_MS } },
      { error: { kind: 'usage_limit', resetAtMs: T0 + 2 * HOUR_MS + 30 * 60_000 } },
      { error: { kind: 'port_exit' } },
    ]);
    await s.firstRun();
    expect(s.retry()).toMatchObject({ attempt: 2, reason: 'usage_limit', dueAtMs: T0 + 2 * HOUR_MS });
    expect(s.comments.at(-1)).toContain('after the usage limit resets');

    await s.fireRetry();
    expect(s.clock.now).toBe(T0 + 2 * HOUR_MS);
    expect(s.retry()).toMatchObject({ attempt: 3, reason: 'usage_limit', dueAtMs: T0 + 2.5 * HOUR_MS });

    await s.fireRetry();
    // Two limits and then the first real failure: attempt 4 waits the first backoff (10 s), not a third's (40 s).
    expect(s.retry()).toMatchObject({
      attempt: 4,
      reason: 'error',
      dueAtMs: T0 + 2.5 * HOUR_MS + failureDelayMs(1, 300_000),
    });
    expect(s.store.runsForIssue('issue-1', 10).map((r) => r.attempt)).toEqual([3, 2, 1]);
  });

  it('a refusal that names no reset waits for the used-up window the session reported, which the snapshot shows', async () => {
    const s = service([
      {
        rateLimits: {
          limitId: 'account',
          windows: [
            { window: 'short', usedPercent: 100, windowMinutes: 300, resetsAtMs: T0 + 90 * 60_000 },
            { window: 'long', usedPercent: 40, windowMinutes: 10_080, resetsAtMs: T0 + 72 * HOUR_MS },
          ],
        },
        error: { kind: 'usage_limit', resetAtMs: null },
      },
    ]);
    await s.firstRun();
    expect(s.retry()).toMatchObject({ attempt: 2, reason: 'usage_limit', dueAtMs: T0 + 90 * 60_000 });
    expect(s.orchestrator.snapshot().rateLimits).toEqual([
      {
        kind: 'mock',
        limitId: 'account',
        observedAtMs: T0,
        windows: [
          { window: 'short', usedPercent: 100, windowMinutes: 300, resetsAtMs: T0 + 90 * 60_000 },
          { window: 'long', usedPercent: 40, windowMinutes: 10_080, resetsAtMs: T0 + 72 * HOUR_MS },
        ],
      },
    ]);
  });

  it('a refusal with no reset anywhere waits the fallback, not the 10 s error backoff', async () => {
    const s = service([{ error: { kind: 'usage_limit', resetAtMs: null } }]);
    await s.firstRun();
    expect(s.retry()).toMatchObject({
      attempt: 2,
      reason: 'usage_limit',
      dueAtMs: T0 + USAGE_LIMIT_FALLBACK_DELAY_MS,
    });
  });
});
