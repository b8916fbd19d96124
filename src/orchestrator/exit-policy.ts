/**
 * What happens after a worker exits: hand off, ask, continue, retry or release.
 * Pure: it takes the exit, the issue's last known state and the config slice,
 * and returns the actions; the state owner carries them out in order.
 */
import { type ErrorKind, retryDecision } from '../domain/errors.js';
import { CONTINUATION_DELAY_MS, failureDelayMs, usageLimitDelayMs } from './backoff.js';

/** The agent's final message that turns a run into a question for a person. */
export const BLOCKED_PREFIX = 'BLOCKED:';

export type WorkerExit =
  /** The turn loop ended normally (issue left active states, or max_turns). */
  | { type: 'completed'; finalMessage: string; sessionId: string | null; turns: number }
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
  | { type: 'budget_exhausted'; limit: string; detail: string; sessionId: string | null; turns: number };

export interface ExitContext {
  /** The attempt that just ran: null for a first run, else its retry number. */
  attempt: number | null;
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
export type ExitKind = 'succeeded' | 'blocked' | 'failed' | 'cancelled' | 'budget_exhausted';

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
        if (ctx.comments.onBlocked)
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
        return {
          kind: 'succeeded',
          actions: [
            {
              type: 'retry',
              attempt: 1,
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
          actions.push({ type: 'comment', body: failureComment(exit, null, null), lifecycle: 'failure' });
        actions.push({ type: 'release' });
        return { kind: 'failed', actions };
      }
      // Waiting for a usage limit's reset is not a failed attempt: the retry keeps the run's
      // attempt number (a first run's wait runs as retry 1, as a continuation does), so however
      // often the limit refuses, the error backoff never grows from it.
      const waits = decision === 'wait_for_reset';
      const next = waits ? (ctx.attempt ?? 1) : (ctx.attempt ?? 0) + 1;
      const delayMs = waits
        ? usageLimitDelayMs(exit.resetAtMs, ctx.nowMs)
        : failureDelayMs(next, ctx.maxRetryBackoffMs);
      if (ctx.comments.onFailure) {
        const dueAtMs = waits ? ctx.nowMs + delayMs : null;
        actions.push({ type: 'comment', body: failureComment(exit, next, dueAtMs), lifecycle: 'failure' });
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

function failureComment(
  exit: Extract<WorkerExit, { type: 'failed' }>,
  retry: number | null,
  usageLimitDueAtMs: number | null,
): string {
  const error = `${exit.kind ?? 'error'}: ${exit.message}`;
  const retryLine =
    retry === null
      ? 'Retry: no (not retryable)'
      : usageLimitDueAtMs !== null
        ? `Retry: at ${new Date(usageLimitDueAtMs).toISOString()}, after the usage limit resets`
        : `Retry: yes (attempt ${retry})`;
  return [
    'Orchestrator session failed.',
    `Error: ${error.length > 200 ? `${error.slice(0, 200)}...` : error}`,
    retryLine,
  ].join('\n');
}
