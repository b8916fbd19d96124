/**
 * What the orchestrator reports as it works, for metrics, the event stream and
 * the dashboard. One union, emitted by the state owner only, after the store
 * has the change: an observer never sees a state the store does not have.
 * Label-like fields are bounded sets (no issue ids), so a metrics observer can
 * use them as label values directly.
 */
import type { AgentEvent, TokenCounts } from '../domain/agent.js';
import type { Issue } from '../domain/issue.js';
import type { ExitKind } from './exit-policy.js';
import type { RetryReason } from './ports.js';
import type { ReactionKind } from './reactions/types.js';
import type { SelfReviewStatus } from './self-review/loop.js';

export type ReconcileAction = 'stop_terminal' | 'stop_inactive' | 'stop_missing' | 'sweep_cleanup';
export type TrackerWriteResult = 'success' | 'error';
export type CommentLifecycle = 'dispatch' | 'completion' | 'failure' | 'blocked' | 'budget';

export type Observation =
  | { type: 'tick'; result: 'success' | 'error'; durationMs: number; candidates: number }
  /** `attempt` is 1-based: 1 for the first run of a claim. */
  | { type: 'dispatched'; issue: Issue; attempt: number; host: string }
  | {
      type: 'worker_exited';
      issue: Issue;
      exitKind: ExitKind;
      durationMs: number;
      host: string;
      costMicroUsd: number | null;
    }
  | { type: 'retry_scheduled'; issueId: string; trigger: RetryReason; dueAtMs: number }
  /** The claim on an issue was let go (handoff, question, non-retryable failure, no longer active). */
  | { type: 'released'; issueId: string }
  | { type: 'reconciled'; issueId: string; action: ReconcileAction }
  | { type: 'transition'; purpose: 'in_progress' | 'handoff' | 'blocked'; result: TrackerWriteResult }
  /** A lifecycle comment posted (or refused) on `issueId`, with the text it carried. */
  | {
      type: 'comment';
      issueId: string;
      lifecycle: CommentLifecycle;
      result: TrackerWriteResult;
      body: string;
    }
  | { type: 'budget_exhausted'; issueId: string; limit: string }
  /** Tokens a session used since its previous report, per model ("unknown" when the runtime names none). */
  | { type: 'tokens'; model: string; delta: TokenCounts }
  | { type: 'agent_event'; issue: Issue; event: AgentEvent }
  /** A turn finished and is recorded. */
  | { type: 'turn'; issueId: string; turn: number }
  /** A run's self-review loop ended. */
  | { type: 'self_review'; status: SelfReviewStatus; iterations: number }
  /** A run's work was pushed; `pullRequest` says what happened to its pull request. */
  | { type: 'published'; pullRequest: 'opened' | 'updated' | 'none' }
  /** An agent called a tool of the tool server; `outcome` is `ok` or the tool error code. */
  | { type: 'tool_call'; tool: string; outcome: string; durationMs: number }
  /** A pull-request reaction acted (`kind` also `poll` and `watch` for the watch itself). */
  | { type: 'reaction'; kind: ReactionKind | 'poll' | 'watch'; action: ReactionAction };

/** What a reaction did. */
export type ReactionAction = 'dispatched' | 'escalated' | 'merged' | 'closed' | 'expired' | 'error';

export type Observer = (observation: Observation) => void;
