/**
 * What happens after a worker exits: hand off, ask, continue, retry or release.
 * Pure: it takes the exit, the issue's last known state and the config slice,
 * and returns the actions; the state owner carries them out in order.
 *
 * Attempts count runs: the first run of a claim is attempt 1 and whatever runs after
 * attempt N (a continuation, a retry after an error, the run after a usage-limit wait) is
 * attempt N+1. The error backoff is not read from that number, which continuations and
 * waits raise too, but from the failures in a row; and no retry is promised that the
 * issue's budget would refuse when it came due.
 */
import { type ErrorKind, retryDecision } from '../domain/errors.js';
import { CONTINUATION_DELAY_MS, failureDelayMs, usageLimitDelayMs } from './backoff.js';
import { REQUIRE_CHANGES_LIMIT } from './budget.js';

/** The agent's final message that turns a run into a question for a person. */
export const BLOCKED_PREFIX = 'BLOCKED:';

export type WorkerExit =
  /** The turn loop ended normally (issue left active states, or max_turns). */
  | {
      type: 'completed';
      finalMessage: string;
      sessionId: string | null;
      turns: number;
      /** A `BLOCKED:` exit whose question the agent already posted (`ask_human`): no second comment. */
      questionPosted?: boolean;
    }
  | {
      type: 'failed';
      kind: ErrorKind | undefined;
      message: string;
      resetAtMs: number | null;
      sessionId: string | null;
      turns: number;
    }
  /** Stopped by the orchestrator (reconciliation or shutdown). */
  | { type: 'cancelled'; reason: string; sessionId: string | null; turns: number }
  | { type: 'budget_exhausted'; limit: string; detail: string; sessionId: string | null; turns: number }
  /** `git.require_changes`: the run ended normally with no commit and no change to hand off. */
  | { type: 'no_changes'; sessionId: string | null; turns: number };

export interface ExitContext {
  /** The attempt that just ran (1-based; 1 for the first run of the claim). */
  attempt: number;
  /** Failed runs right before this one in the same claim (see `failuresInARow`); 0 when none. */
  failuresBefore: number;
  /** The budget limit the issue's next session would break, or null when another session may start. */
  budgetStop: { limit: string; detail: string } | null;
  /** Whether the issue's last known state is active (and not terminal). */
  issueActive: boolean;
  handoffState: string | null;
  blockedState: string | null;
  comments: { onCompletion: boolean; onFailure: boolean; onBlocked: boolean };
  maxRetryBackoffMs: number;
  nowMs: number;
}

export type ExitAction =
  | { type: 'transition'; state: string; purpose: 'handoff' | 'blocked' }
  | { type: 'comment'; body: string; lifecycle: 'completion' | 'failure' | 'blocked' }
  | {
      type: 'retry';
      attempt: number;
      delayMs: number;
      reason: 'continuation' | 'error' | 'stall' | 'usage_limit';
      error: string | null;
      sessionId: string | null;
    }
  | { type: 'release' }
  | { type: 'mark_exhausted'; limit: string; detail: string };

/** The run's outcome as stored and counted. */
export type ExitKind = 'succeeded' | 'blocked' | 'failed' | 'cancelled' | 'budget_exhausted' | 'no_changes';

export interface ExitPlan {
  kind: ExitKind;
  actions: ExitAction[];
}

/** Decides the actions for a worker exit. */
export function planExit(exit: WorkerExit, ctx: ExitContext): ExitPlan {
  switch (exit.type) {
    case 'completed': {
      const message = exit.finalMessage.trim();
      if (message.startsWith(BLOCKED_PREFIX)) {
        const question = message.slice(BLOCKED_PREFIX.length).trim();
        const actions: ExitAction[] = [];
        if (ctx.comments.onBlocked && exit.questionPosted !== true)
          actions.push({
            type: 'comment',
            body: `The agent is blocked and needs an answer:\n\n${question}`,
            lifecycle: 'blocked',
          });
        if (ctx.blockedState !== null)
          actions.push({ type: 'transition', state: ctx.blockedState, purpose: 'blocked' });
        actions.push({ type: 'release' });
        return { kind: 'blocked', actions };
      }
      if (ctx.issueActive && ctx.handoffState !== null) {
        const actions: ExitAction[] = [{ type: 'transition', state: ctx.handoffState, purpose: 'handoff' }];
        if (ctx.comments.onCompletion)
          actions.push({ type: 'comment', body: completionComment(exit), lifecycle: 'completion' });
        actions.push({ type: 'release' });
        return { kind: 'succeeded', actions };
      }
      if (ctx.issueActive) {
        if (ctx.budgetStop !== null) return { kind: 'succeeded', actions: budgetStopActions(ctx.budgetStop) };
        return {
          kind: 'succeeded',
          actions: [
            {
              type: 'retry',
              attempt: ctx.attempt + 1,
              delayMs: CONTINUATION_DELAY_MS,
              reason: 'continuation',
              error: null,
              sessionId: exit.sessionId,
            },
          ],
        };
      }
      const actions: ExitAction[] = [];
      if (ctx.comments.onCompletion)
        actions.push({ type: 'comment', body: completionComment(exit), lifecycle: 'completion' });
      actions.push({ type: 'release' });
      return { kind: 'succeeded', actions };
    }
    case 'failed': {
      const decision = retryDecision(exit.kind);
      const error = `${exit.kind ?? 'error'}: ${exit.message}`;
      const actions: ExitAction[] = [];
      if (decision === 'release') {
        if (ctx.comments.onFailure)
          actions.push({
            type: 'comment',
            body: failureComment(exit, { type: 'none' }),
            lifecycle: 'failure',
          });
        actions.push({ type: 'release' });
        return { kind: 'failed', actions };
      }
      if (ctx.budgetStop !== null) {
        if (ctx.comments.onFailure)
          actions.push({
            type: 'comment',
            body: failureComment(exit, { type: 'budget', ...ctx.budgetStop }),
            lifecycle: 'failure',
          });
        actions.push(...budgetStopActions(ctx.budgetStop));
        return { kind: 'failed', actions };
      }
      // Waiting for a usage limit's reset is not a failure: the backoff of a later error
      // does not grow from it, however often the limit refuses.
      const waits = decision === 'wait_for_reset';
      const next = ctx.attempt + 1;
      const delayMs = waits
        ? usageLimitDelayMs(exit.resetAtMs, ctx.nowMs)
        : failureDelayMs(ctx.failuresBefore + 1, ctx.maxRetryBackoffMs);
      if (ctx.comments.onFailure) {
        const retry: RetryPromise = waits
          ? { type: 'at_reset', attempt: next, dueAtMs: ctx.nowMs + delayMs }
          : { type: 'after', attempt: next, delayMs };
        actions.push({ type: 'comment', body: failureComment(exit, retry), lifecycle: 'failure' });
      }
      actions.push({
        type: 'retry',
        attempt: next,
        delayMs,
        reason: waits ? 'usage_limit' : exit.kind === 'response_timeout' ? 'stall' : 'error',
        error,
        sessionId: null,
      });
      return { kind: 'failed', actions };
    }
    case 'cancelled':
      return { kind: 'cancelled', actions: [{ type: 'release' }] };
    case 'no_changes':
      // Parked like a budget stop: one comment, no handoff, until a person changes the issue.
      return {
        kind: 'no_changes',
        actions: [
          {
            type: 'mark_exhausted',
            limit: REQUIRE_CHANGES_LIMIT,
            detail:
              'the run left no commit beyond the base branch and no change in the workspace, so it was not handed off',
          },
          { type: 'release' },
        ],
      };
    case 'budget_exhausted':
      return {
        kind: 'budget_exhausted',
        actions: [{ type: 'mark_exhausted', limit: exit.limit, detail: exit.detail }, { type: 'release' }],
      };
  }
}

function completionComment(exit: Extract<WorkerExit, { type: 'completed' }>): string {
  const lines = ['Orchestrator session completed.', `Turns: ${exit.turns}`];
  if (exit.sessionId) lines.push(`Session: ${exit.sessionId}`);
  if (exit.finalMessage.trim() !== '') lines.push('', exit.finalMessage.trim().slice(0, 2_000));
  return lines.join('\n');
}

/** What a failure comment says about the next run. */
type RetryPromise =
  | { type: 'none' }
  | { type: 'after'; attempt: number; delayMs: number }
  | { type: 'at_reset'; attempt: number; dueAtMs: number }
  | { type: 'budget'; limit: string; detail: string };

function failureComment(exit: Extract<WorkerExit, { type: 'failed' }>, retry: RetryPromise): string {
  const error = `${exit.kind ?? 'error'}: ${exit.message}`;
  return [
    'Orchestrator session failed.',
    `Error: ${error.length > 200 ? `${error.slice(0, 200)}...` : error}`,
    retryLine(retry),
  ].join('\n');
}

function retryLine(retry: RetryPromise): string {
  switch (retry.type) {
    case 'none':
      return 'Retry: no (not retryable)';
    case 'after':
      return `Retry: yes, as attempt ${retry.attempt} in ${Math.round(retry.delayMs / 1000)} s`;
    case 'at_reset':
      return `Retry: as attempt ${retry.attempt} at ${new Date(retry.dueAtMs).toISOString()}, after the usage limit resets`;
    case 'budget':
      return `Retry: no (budget exhausted, ${retry.limit}: ${retry.detail})`;
  }
}

/** The issue's budget refuses another session: marked exhausted (one comment says so) and released. */
function budgetStopActions(stop: { limit: string; detail: string }): ExitAction[] {
  return [{ type: 'mark_exhausted', limit: stop.limit, detail: stop.detail }, { type: 'release' }];
}

/** What `failuresInARow` reads of an earlier run of the claim. */
export interface EarlierRun {
  /** null while the run's end is not recorded. */
  exitKind: string | null;
  errorKind: string | null;
}

/**
 * The failed runs at the head of `earlier` (newest first, this claim's runs only): a
 * usage-limit refusal neither counts nor ends the row, any other outcome ends it.
 */
export function failuresInARow(earlier: readonly EarlierRun[]): number {
  let failures = 0;
  for (const run of earlier) {
    if (run.exitKind !== 'failed') break;
    if (run.errorKind !== 'usage_limit') failures += 1;
  }
  return failures;
}
