/**
 * The shapes of pull-request reactions: what is configured, what a watch remembers between
 * polls, what one poll read from the forge, and what the decision asks the caller to do. The
 * decision is pure; the watch is stored and the forge is read by the caller, so every rule is
 * tested without a forge or a database.
 */
import type { CiStatus, MergeMethod, PullRequestRef, ReviewState } from '../../domain/forge.js';
import type {
  CiFailureVariables,
  MergeConflictVariables,
  ReviewCommentsVariables,
} from '../../prompt/reaction-variables.js';
import type { REACTION_KINDS } from '../../workflow/config.js';

/** The reactions a workflow can configure (WORKFLOW.md `reactions.<kind>`). */
export type ReactionKind = (typeof REACTION_KINDS)[number];

/** The reactions that dispatch a fix turn (and escalate when fixing does not help). */
export type FixReactionKind = Exclude<ReactionKind, 'auto_merge'>;

/** One configured reaction; a kind reads only the fields it needs. */
export interface ReactionSettings {
  /** Fix turns of this kind since it last came right, before a person is asked (ci_failure, merge_conflict). */
  maxRetries: number;
  /** Fix turns before a person is asked, for review_comments. */
  maxContinuationTurns: number;
  /** How a person is asked: a label on the issue, or a comment. */
  escalation: 'label' | 'comment';
  /** The label added when `escalation` is `label`. */
  escalationLabel: string;
  /** At most this many lines of the failing job's log reach the prompt (ci_failure). */
  maxLogLines: number;
  /** Time between two polls of the pull request. */
  pollIntervalMs: number;
  /** review_comments: feedback is acted on only this long after its newest item. */
  debounceMs: number;
  /** The watch lapses this long after the last push when there is nothing to do. */
  ttlMs: number;
  /** How the pull request is merged (auto_merge only). */
  mergeMethod: MergeMethod;
}

/** The configured reactions; an absent kind is off. */
export type ReactionsConfig = Partial<Record<ReactionKind, ReactionSettings>>;

/** What a watch remembers of one fix reaction between polls. */
export interface ReactionMemory {
  /** What the last dispatch or escalation was about (a head SHA, or a hash of review ids). */
  fingerprint: string;
  /** Fix turns dispatched since the reaction last came right (green CI, mergeable, no feedback). */
  attempts: number;
  /** Whether a fix turn was dispatched for `fingerprint`. */
  dispatched: boolean;
  /** Whether a person was asked; nothing more is dispatched for the kind until it comes right. */
  escalated: boolean;
}

/** Memory of every fix reaction of one watch. */
export type WatchMemory = Partial<Record<FixReactionKind, ReactionMemory>>;

/** An open pull request the orchestrator pushed and now watches (stored by the caller). */
export interface PullWatch {
  issueId: string;
  identifier: string;
  /** The pushed branch (head). */
  branch: string;
  /** The branch the pull request merges into. */
  base: string;
  /** The head SHA the watch last saw. */
  headSha: string;
  prNumber: number;
  prUrl: string;
  /** When the head last moved (epoch ms); the TTL counts from here. */
  pushedAtMs: number;
  memory: WatchMemory;
  /** Forge reads that failed in a row; 0 after a read succeeds. */
  pollErrors: number;
  /** When the next poll is due (epoch ms). */
  nextPollAtMs: number;
}

/** One poll of the forge; `ci` and `reviews` are null when not read. */
export interface ForgeReading {
  pull: PullRequestRef;
  /** CI of `pull.headSha` (not of the watch's older head). */
  ci: CiStatus | null;
  reviews: ReviewState | null;
}

/** The variables a fix turn of each kind is rendered with. */
export type DispatchTarget =
  | { kind: 'ci_failure'; context: CiFailureVariables }
  | { kind: 'review_comments'; context: ReviewCommentsVariables }
  | { kind: 'merge_conflict'; context: MergeConflictVariables };

/** The template context of a dispatched fix turn, whichever its kind. */
export type ReactionContext = DispatchTarget['context'];

/** What the caller does after a poll; `memory` replaces the watch's memory where given. */
export type ReactionDecision =
  | { type: 'wait'; nextPollAtMs: number; memory: WatchMemory }
  | ({ type: 'dispatch'; fingerprint: string; attempt: number; memory: WatchMemory } & DispatchTarget)
  | {
      type: 'escalate';
      kind: FixReactionKind;
      how: 'label' | 'comment';
      label: string;
      comment: string;
      memory: WatchMemory;
    }
  | { type: 'merge'; method: MergeMethod; sha: string }
  | { type: 'stop'; reason: 'merged' | 'closed' | 'expired' };
