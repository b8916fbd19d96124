/**
 * Per-issue budgets: sessions, tokens and dollars an issue may spend before the
 * orchestrator stops dispatching it. Checked before claiming and between turns,
 * from figures the usage core settled, never from guesses.
 *
 * Beside them, the no-progress cap: an issue nothing moves out of its active state (no
 * handoff state, an agent that never moves it) would be continued for ever, so sessions in
 * a row that leave its state as they found it are counted, and enough of them stop it like a
 * spent budget. A session's exit code says nothing about progress; the tracker's state does.
 */
import { formatDollars } from '../agent/usage/index.js';
import type { WorkerExit } from './exit-policy.js';

export interface BudgetLimits {
  /** 0 = unlimited. */
  maxSessions: number;
  maxTokens: number;
  maxCostMicroUsd: number;
}

export interface IssueSpend {
  sessions: number;
  tokens: number;
  /** null = no figure could be priced. */
  costMicroUsd: number | null;
}

export type BudgetVerdict =
  | { exhausted: false }
  | { exhausted: true; limit: 'max_sessions' | 'max_tokens' | 'max_cost_usd'; detail: string };

/** Whether `spend` has reached a limit; `startingSession` counts the session about to start. */
export function budgetVerdict(
  spend: IssueSpend,
  limits: BudgetLimits,
  startingSession: boolean,
): BudgetVerdict {
  const sessions = spend.sessions + (startingSession ? 1 : 0);
  if (limits.maxSessions > 0 && sessions > limits.maxSessions) {
    return {
      exhausted: true,
      limit: 'max_sessions',
      detail: `${spend.sessions} of ${limits.maxSessions} sessions used`,
    };
  }
  if (limits.maxTokens > 0 && spend.tokens >= limits.maxTokens) {
    return {
      exhausted: true,
      limit: 'max_tokens',
      detail: `${spend.tokens} of ${limits.maxTokens} tokens used`,
    };
  }
  if (
    limits.maxCostMicroUsd > 0 &&
    spend.costMicroUsd !== null &&
    spend.costMicroUsd >= limits.maxCostMicroUsd
  ) {
    return {
      exhausted: true,
      limit: 'max_cost_usd',
      detail: `${formatDollars(spend.costMicroUsd)} of ${formatDollars(limits.maxCostMicroUsd)} spent`,
    };
  }
  return { exhausted: false };
}

/** The limit name of the no-progress cap, as its budget stop and the record of it say. */
export const UNCHANGED_LIMIT = 'max_unchanged_sessions';

/** Sessions in a row that ended with the issue in `state`, the state their first turn found it in. */
export interface UnchangedRun {
  sessions: number;
  /** null while no session is counted. */
  state: string | null;
}

/** What a finished session says about the issue: its state moved, it did not, or nothing is known. */
export type SessionChange = 'changed' | 'unchanged' | 'unknown';

export interface SessionEnd {
  exit: WorkerExit['type'];
  /** Why the orchestrator cancelled the session; null when it did not. */
  cancelReason: 'terminal' | 'inactive' | 'missing' | 'unlabelled' | 'shutdown' | null;
  /** The tracker state when the first turn started; null when no turn ran. */
  startState: string | null;
  /** The state read after the last turn; '' when the tracker no longer has the issue. */
  endState: string;
  /** True when the orchestrator moves the issue now (to the handoff or blocked state). */
  moved: boolean;
}

/**
 * Unchanged: the agent finished (or ran out of turns) and the issue is in the state, compared
 * case-insensitively, that its first turn found it in, and the orchestrator does not move it.
 * A failure or a shutdown tells nothing (their retries have their own backoff and holds) and
 * leaves the count as it is; any move, by anyone, ends the run of unchanged sessions.
 */
export function sessionChange(end: SessionEnd): SessionChange {
  if (end.moved) return 'changed';
  // A lost required label stops the session without moving the issue: that tells nothing either.
  if (end.exit === 'cancelled')
    return end.cancelReason === null || end.cancelReason === 'shutdown' || end.cancelReason === 'unlabelled'
      ? 'unknown'
      : 'changed';
  if (end.startState === null) return 'unknown';
  if (end.endState === '' || end.endState.toLowerCase() !== end.startState.toLowerCase()) return 'changed';
  return end.exit === 'completed' ? 'unchanged' : 'unknown';
}

/** The run after a session: one longer, started again at 1 (it ended in another state), cleared, or as it was. */
export function nextUnchangedRun(run: UnchangedRun, change: SessionChange, endState: string): UnchangedRun {
  switch (change) {
    case 'changed':
      return { sessions: 0, state: null };
    case 'unknown':
      return run;
    case 'unchanged':
      return sameState(run.state, endState)
        ? { sessions: run.sessions + 1, state: run.state }
        : { sessions: 1, state: endState };
  }
}

export type UnchangedVerdict =
  | { exhausted: false }
  | { exhausted: true; limit: typeof UNCHANGED_LIMIT; detail: string };

/**
 * Whether the no-progress cap stops an issue now in `state`: `maxUnchangedSessions` (0 = no
 * cap) sessions in a row ended with it in that very state. An issue seen in another state has
 * moved since, so its count no longer applies.
 */
export function unchangedVerdict(
  run: UnchangedRun,
  maxUnchangedSessions: number,
  state: string,
): UnchangedVerdict {
  if (maxUnchangedSessions <= 0 || run.state === null || !sameState(run.state, state))
    return { exhausted: false };
  if (run.sessions < maxUnchangedSessions) return { exhausted: false };
  return {
    exhausted: true,
    limit: UNCHANGED_LIMIT,
    detail: `${run.sessions} of ${maxUnchangedSessions} sessions in a row ended with the issue still in "${run.state}"`,
  };
}

/** The stop of a run that left nothing to hand off (`git.require_changes`). */
export const REQUIRE_CHANGES_LIMIT = 'require_changes';

/** The comment posted once when a budget stops an issue: why, and how to go on. */
export function budgetStopComment(limit: string, detail: string): string {
  if (limit === REQUIRE_CHANGES_LIMIT) {
    return [
      `Orchestrator did not hand this issue off (${limit}): ${detail}.`,
      'It will not be dispatched again until a person changes it (its state, title or description). To hand off runs without changes, set git.require_changes: false in WORKFLOW.md.',
    ].join('\n');
  }
  if (limit !== UNCHANGED_LIMIT) {
    return `Orchestrator budget exhausted (${limit}): ${detail}. The issue will not be dispatched again until the budget is raised.`;
  }
  return [
    `Orchestrator stopped dispatching this issue (${limit}): ${detail}.`,
    'Nothing moved it out of that state, so the agent would otherwise be started on it again and again.',
    'To run it again: move the issue to another state (or out of the active states until the next poll, then back), or raise agent.max_unchanged_sessions in WORKFLOW.md (0 = no cap).',
    'So that finished work leaves the active states, set tracker.handoff_state in WORKFLOW.md.',
  ].join('\n');
}

function sameState(a: string | null, b: string): boolean {
  return a !== null && a.toLowerCase() === b.toLowerCase();
}
