import { describe, expect, it } from 'vitest';
import { holdRelease, isRetryable } from '../../src/domain/errors.js';
import type { Issue } from '../../src/domain/issue.js';
import { CONTINUATION_DELAY_MS, failureDelayMs } from '../../src/orchestrator/backoff.js';
import { budgetVerdict } from '../../src/orchestrator/budget.js';
import { dispatchOrder, ineligibility } from '../../src/orchestrator/eligibility.js';
import {
  type ExitContext,
  failuresInARow,
  planExit,
  type WorkerExit,
} from '../../src/orchestrator/exit-policy.js';
import { planDispatch } from '../../src/orchestrator/plan.js';
import { SAMPLE_ISSUE } from '../../src/prompt/variables.js';

const issue = (over: Partial<Issue>): Issue => ({
  ...SAMPLE_ISSUE,
  state: 'Todo',
  comments: null,
  blockedBy: [],
  ...over,
});

describe('backoff', () => {
  it.each([
    [1, 10_000],
    [2, 20_000],
    [3, 40_000],
    [5, 160_000],
    [6, 300_000],
    [60, 300_000],
  ])('failure retry %i waits %i ms with the default cap', (retry, delay) => {
    expect(failureDelayMs(retry, 300_000)).toBe(delay);
  });
  it('a cap below the first delay wins', () => {
    expect(failureDelayMs(1, 5_000)).toBe(5_000);
  });
  it('a zero cap falls back to the default instead of retrying at once', () => {
    expect(failureDelayMs(9, 0)).toBe(300_000);
  });
});

describe('budgets', () => {
  const limits = { maxSessions: 2, maxTokens: 1_000, maxCostMicroUsd: 500_000 };
  it('nothing is exhausted under every limit', () => {
    expect(budgetVerdict({ sessions: 1, tokens: 10, costMicroUsd: 10 }, limits, true).exhausted).toBe(false);
  });
  it('a session that would exceed max_sessions is refused before it starts', () => {
    expect(budgetVerdict({ sessions: 2, tokens: 0, costMicroUsd: 0 }, limits, true)).toMatchObject({
      exhausted: true,
      limit: 'max_sessions',
    });
    expect(budgetVerdict({ sessions: 2, tokens: 0, costMicroUsd: 0 }, limits, false).exhausted).toBe(false);
  });
  it('tokens and dollars stop at their limit', () => {
    expect(budgetVerdict({ sessions: 0, tokens: 1_000, costMicroUsd: 0 }, limits, false)).toMatchObject({
      limit: 'max_tokens',
    });
    expect(budgetVerdict({ sessions: 0, tokens: 0, costMicroUsd: 500_000 }, limits, false)).toMatchObject({
      limit: 'max_cost_usd',
      detail: '$0.500000 of $0.500000 spent',
    });
  });
  it('an unpriced spend never trips the dollar limit, and 0 means unlimited', () => {
    expect(budgetVerdict({ sessions: 0, tokens: 0, costMicroUsd: null }, limits, false).exhausted).toBe(
      false,
    );
    expect(
      budgetVerdict(
        { sessions: 99, tokens: 9e9, costMicroUsd: 9e9 },
        { maxSessions: 0, maxTokens: 0, maxCostMicroUsd: 0 },
        true,
      ).exhausted,
    ).toBe(false);
  });
});

describe('worker exit policy', () => {
  const ctx: ExitContext = {
    attempt: 1,
    failuresBefore: 0,
    budgetStop: null,
    issueActive: true,
    handoffState: null,
    blockedState: null,
    comments: { onCompletion: true, onFailure: true, onBlocked: true },
    maxRetryBackoffMs: 300_000,
    nowMs: 1_000_000,
  };
  const done = (finalMessage: string): WorkerExit => ({
    type: 'completed',
    finalMessage,
    sessionId: 's1',
    turns: 2,
  });
  const failed = (
    kind: WorkerExit & { type: 'failed' } extends { kind: infer K } ? K : never,
    resetAtMs: number | null = null,
  ): WorkerExit => ({
    type: 'failed',
    kind,
    message: 'boom',
    resetAtMs,
    sessionId: 's1',
    turns: 1,
  });

  it('a BLOCKED: final message asks the question, moves to blocked_state and releases', () => {
    const plan = planExit(done('BLOCKED: which date?'), {
      ...ctx,
      blockedState: 'Blocked',
      handoffState: 'Review',
    });
    expect(plan.kind).toBe('blocked');
    expect(plan.actions).toEqual([
      {
        type: 'comment',
        body: 'The agent is blocked and needs an answer:\n\nwhich date?',
        lifecycle: 'blocked',
      },
      { type: 'transition', state: 'Blocked', purpose: 'blocked' },
      { type: 'release' },
    ]);
  });

  it('a clean exit on an active issue hands off when a handoff state is set', () => {
    const plan = planExit(done('all done'), { ...ctx, handoffState: 'Review' });
    expect(plan.actions.map((a) => a.type)).toEqual(['transition', 'comment', 'release']);
    expect(plan.actions[0]).toEqual({ type: 'transition', state: 'Review', purpose: 'handoff' });
  });

  it('a clean exit on a still-active issue without handoff continues after 1 s with the session, as the next attempt', () => {
    const plan = planExit(done('more to do'), { ...ctx, attempt: 3 });
    expect(plan.actions).toEqual([
      {
        type: 'retry',
        attempt: 4,
        delayMs: CONTINUATION_DELAY_MS,
        reason: 'continuation',
        error: null,
        sessionId: 's1',
      },
    ]);
  });

  it('a clean exit on an issue no longer active releases without a retry', () => {
    const plan = planExit(done('done'), { ...ctx, issueActive: false, handoffState: 'Review' });
    expect(plan.actions.map((a) => a.type)).toEqual(['comment', 'release']);
  });

  it('a stall (response_timeout) is retried like any error, under its own reason', () => {
    const plan = planExit(failed('response_timeout'), ctx);
    expect(plan.actions.at(-1)).toMatchObject({ type: 'retry', attempt: 2, reason: 'stall' });
  });

  it('a retryable failure backs off by the failures in a row (not the attempt number) and never resumes the failed session', () => {
    // Attempt 5 after two continuations and two failures: the third failure in a row waits 40 s.
    const plan = planExit(failed('port_exit'), { ...ctx, attempt: 5, failuresBefore: 2 });
    expect(plan.actions.at(-1)).toEqual({
      type: 'retry',
      attempt: 6,
      delayMs: 40_000,
      reason: 'error',
      error: 'port_exit: boom',
      sessionId: null,
    });
  });

  it('the failure comment names the attempt the retry runs as and when, the number the run and the API will show', () => {
    const plan = planExit(failed('port_exit'), { ...ctx, attempt: 2, failuresBefore: 1 });
    const comment = plan.actions.find((a) => a.type === 'comment');
    expect(comment).toMatchObject({ lifecycle: 'failure' });
    expect(comment?.type === 'comment' ? comment.body : '').toBe(
      'Orchestrator session failed.\nError: port_exit: boom\nRetry: yes, as attempt 3 in 20 s',
    );
    expect(plan.actions.at(-1)).toMatchObject({ type: 'retry', attempt: 3 });
  });

  it('a failure never promises a retry the budget would refuse: it says so, marks the budget spent and releases', () => {
    const budgetStop = { limit: 'max_sessions', detail: '2 of 2 sessions used' };
    const plan = planExit(failed('response_timeout'), { ...ctx, attempt: 2, budgetStop });
    expect(plan.kind).toBe('failed');
    expect(plan.actions).toEqual([
      {
        type: 'comment',
        body: 'Orchestrator session failed.\nError: response_timeout: boom\nRetry: no (budget exhausted, max_sessions: 2 of 2 sessions used)',
        lifecycle: 'failure',
      },
      { type: 'mark_exhausted', limit: 'max_sessions', detail: '2 of 2 sessions used' },
      { type: 'release' },
    ]);
    const waiting = planExit(failed('usage_limit', 1_000_000 + 42_000), { ...ctx, budgetStop });
    expect(waiting.actions.some((a) => a.type === 'retry')).toBe(false);
    expect(waiting.actions.find((a) => a.type === 'comment')).toMatchObject({
      body: expect.stringContaining('Retry: no (budget exhausted'),
    });
  });

  it('a continuation the budget would refuse is not queued either: the budget is marked spent and the issue released', () => {
    const budgetStop = { limit: 'max_tokens', detail: '60000 of 50000 tokens used' };
    const plan = planExit(done('more to do'), { ...ctx, budgetStop });
    expect(plan).toEqual({
      kind: 'succeeded',
      actions: [{ type: 'mark_exhausted', ...budgetStop }, { type: 'release' }],
    });
  });

  it.each([
    ['no earlier run', [], 0],
    ['two failures, then the first run succeeded', ['failed', 'failed', 'succeeded'], 2],
    ['a success right before ends the row', ['succeeded', 'failed'], 0],
    ['a usage-limit wait neither counts nor ends the row', ['failed', 'usage_limit', 'failed'], 2],
    ['a run whose end is not recorded ends the row', [null, 'failed'], 0],
    ['a cancelled run ends the row', ['cancelled', 'failed'], 0],
  ] as const)('failures in a row: %s → %s', (_name, earlier, count) => {
    const runs = earlier.map((kind) =>
      kind === 'usage_limit'
        ? { exitKind: 'failed', errorKind: 'usage_limit' }
        : { exitKind: kind, errorKind: kind === 'failed' ? 'port_exit' : null },
    );
    expect(failuresInARow(runs)).toBe(count);
  });

  it('a non-retryable failure releases the claim', () => {
    const plan = planExit(failed('agent_not_found'), ctx);
    expect(plan.actions.at(-1)).toEqual({ type: 'release' });
    expect(plan.actions.some((a) => a.type === 'retry')).toBe(false);
  });

  it('a usage limit waits for the reported reset', () => {
    const plan = planExit(failed('usage_limit', 1_000_000 + 42_000), ctx);
    expect(plan.actions.at(-1)).toMatchObject({ type: 'retry', reason: 'usage_limit', delayMs: 42_000 });
  });

  it('an exhausted budget is marked once and released, never retried', () => {
    const plan = planExit(
      { type: 'budget_exhausted', limit: 'max_tokens', detail: 'x', sessionId: null, turns: 1 },
      ctx,
    );
    expect(plan.actions).toEqual([
      { type: 'mark_exhausted', limit: 'max_tokens', detail: 'x' },
      { type: 'release' },
    ]);
  });
});

describe('eligibility and order', () => {
  const input = {
    activeStates: ['Todo'],
    terminalStates: ['Done'],
    busyIds: new Set<string>(),
    exhaustedIds: new Set<string>(),
  };
  it('an open blocker holds an issue back; a terminal blocker does not', () => {
    expect(
      ineligibility(issue({ blockedBy: [{ id: 'b', identifier: 'B-1', state: 'Todo' }] }), input)?.reason,
    ).toBe('blocked');
    expect(
      ineligibility(issue({ blockedBy: [{ id: 'b', identifier: 'B-1', state: 'done' }] }), input),
    ).toBeNull();
    expect(
      ineligibility(issue({ blockedBy: [{ id: 'b', identifier: 'B-1', state: '' }] }), input)?.reason,
    ).toBe('blocked');
  });
  it('busy and exhausted issues are not dispatched again', () => {
    expect(ineligibility(issue({ id: 'x' }), { ...input, busyIds: new Set(['x']) })?.reason).toBe('busy');
    expect(ineligibility(issue({ id: 'x' }), { ...input, exhaustedIds: new Set(['x']) })?.reason).toBe(
      'budget_exhausted',
    );
  });
  it('orders by priority (none last), then oldest, then identifier', () => {
    const order = dispatchOrder([
      issue({ identifier: 'C', priority: null, createdAt: '2026-01-01' }),
      issue({ identifier: 'B', priority: 1, createdAt: '2026-02-01' }),
      issue({ identifier: 'A', priority: 1, createdAt: '2026-02-01' }),
      issue({ identifier: 'D', priority: 1, createdAt: '2026-01-15' }),
    ]).map((i) => i.identifier);
    expect(order).toEqual(['D', 'A', 'B', 'C']);
  });
  it('priority 0 and unknown values do not jump ahead of 1–4: they rank with no priority, by age', () => {
    const order = dispatchOrder([
      issue({ identifier: 'Z0', priority: 0, createdAt: '2026-03-01' }),
      issue({ identifier: 'P4', priority: 4, createdAt: '2026-04-01' }),
      issue({ identifier: 'N', priority: null, createdAt: '2026-02-01' }),
      issue({ identifier: 'P7', priority: 7, createdAt: '2026-01-01' }),
      issue({ identifier: 'P1', priority: 1, createdAt: '2026-05-01' }),
      issue({ identifier: 'P2', priority: 2, createdAt: '2026-05-01' }),
      issue({ identifier: 'Q0', priority: 0, createdAt: '2026-03-01' }),
    ]).map((i) => i.identifier);
    expect(order).toEqual(['P1', 'P2', 'P4', 'P7', 'N', 'Q0', 'Z0']);
  });
  it('an empty active list makes nothing dispatchable: a handoff or blocked state is never active by omission', () => {
    const none = { ...input, activeStates: [] };
    for (const state of ['Review', 'Blocked', 'Backlog', 'Todo']) {
      expect(ineligibility(issue({ state }), none)?.reason).toBe('not_active');
    }
    expect(ineligibility(issue({ state: 'Review' }), input)?.reason).toBe('not_active');
    expect(ineligibility(issue({ state: 'done' }), none)?.reason).toBe('terminal');
  });
  it('a per-state limit caps dispatches in that state', () => {
    const rows = planDispatch(
      [
        issue({ id: '1', identifier: 'A' }),
        issue({ id: '2', identifier: 'B' }),
        issue({ id: '3', identifier: 'C' }),
      ],
      input,
      { maxConcurrentAgents: 5, maxConcurrentAgentsByState: { todo: 2 } },
    );
    expect(rows.map((r) => r.dispatch)).toEqual([true, true, false]);
  });
});

describe('holds', () => {
  it.each([
    ['agent_not_found', 'issue_or_workflow_change'],
    ['prompt_render_failed', 'issue_or_workflow_change'],
    ['credential_unverified', 'issue_or_workflow_change'],
    ['turn_cancelled', 'issue_change'],
    [null, 'issue_change'],
  ] as const)('a hold after %s ends on %s', (kind, release) => {
    expect(holdRelease(kind)).toBe(release);
  });
  it('a workspace in use by another issue is retried, not held', () => {
    expect(isRetryable('workspace_busy')).toBe(true);
  });
});
