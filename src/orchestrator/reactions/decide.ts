/**
 * What to do about a watched pull request after one poll of the forge. Pure: it takes the
 * watch, the reading, the configured reactions and the time, and returns one decision that the
 * caller carries out and stores.
 *
 * The trap is acting twice on one problem: the agent's fix turn runs while polls go on, and a
 * red CI stays red until its push lands. Each fix reaction therefore remembers the fingerprint
 * it dispatched for (a head SHA, or the set of review ids) and stays quiet until it changes;
 * it counts its fix turns since it last came right and asks a person, once, when they run out.
 * Kinds are decided in a fixed order: a conflicted branch cannot be tested, and a red CI is
 * fixed before review comments are.
 */

import {
  ciFailureVariables,
  mergeConflictVariables,
  reviewCommentsVariables,
} from '../../prompt/reaction-variables.js';
import { escalationComment } from './escalation.js';
import { headFingerprint, reviewFingerprint } from './fingerprint.js';
import { watchPollIntervalMs, watchTtlMs } from './poll.js';
import type {
  DispatchTarget,
  FixReactionKind,
  ForgeReading,
  PullWatch,
  ReactionDecision,
  ReactionMemory,
  ReactionSettings,
  ReactionsConfig,
  WatchMemory,
} from './types.js';

/** Decides what to do after reading the forge for `watch`; never mutates its arguments. */
export function decideReaction(
  watch: PullWatch,
  reading: ForgeReading,
  config: ReactionsConfig,
  nowMs: number,
): ReactionDecision {
  const { pull } = reading;
  if (pull.state === 'merged') return { type: 'stop', reason: 'merged' };
  if (pull.state === 'closed') return { type: 'stop', reason: 'closed' };
  const ttlMs = watchTtlMs(config);
  // With no reaction configured there is nothing to watch for.
  if (ttlMs === null) return { type: 'stop', reason: 'expired' };

  const poll: Poll = {
    watch,
    reading,
    nowMs,
    nextPollAtMs: nowMs + watchPollIntervalMs(config),
    memory: settledMemory(watch.memory, reading, config),
    // Someone pushed since the last poll; the caller moves the watch's head and push time.
    headMoved: pull.headSha !== watch.headSha,
  };
  const decided =
    mergeConflictStep(poll, config.merge_conflict) ??
    ciFailureStep(poll, config.ci_failure) ??
    reviewCommentsStep(poll, config.review_comments) ??
    autoMergeStep(poll, config.auto_merge);
  if (decided !== null) return decided;
  // A push is activity: the TTL counts from it, so a moved head never expires the watch.
  if (!poll.headMoved && nowMs - watch.pushedAtMs > ttlMs) return { type: 'stop', reason: 'expired' };
  return { type: 'wait', nextPollAtMs: poll.nextPollAtMs, memory: poll.memory };
}

/** One poll's facts, shared by the steps. */
interface Poll {
  watch: PullWatch;
  reading: ForgeReading;
  nowMs: number;
  /** The normal next poll. */
  nextPollAtMs: number;
  /** The watch's memory with the resets this reading earns. */
  memory: WatchMemory;
  headMoved: boolean;
}

/**
 * Memory after the reading: a fix reaction whose problem is gone (mergeable, green CI, no
 * requested changes) starts counting its fix turns again and may escalate again later. The
 * fingerprint stays, so a flaky re-run failing on a SHA already handed over is not handed twice.
 */
function settledMemory(memory: WatchMemory, reading: ForgeReading, config: ReactionsConfig): WatchMemory {
  const out: WatchMemory = { ...memory };
  const cameRight: Record<FixReactionKind, boolean> = {
    merge_conflict: reading.pull.mergeable === true,
    ci_failure: reading.ci?.state === 'passing',
    review_comments: reading.reviews !== null && reading.reviews.changesRequested.length === 0,
  };
  for (const kind of ['merge_conflict', 'ci_failure', 'review_comments'] as const) {
    const entry = out[kind];
    if (config[kind] !== undefined && entry !== undefined && cameRight[kind])
      out[kind] = { ...entry, attempts: 0, escalated: false };
  }
  return out;
}

function mergeConflictStep(poll: Poll, settings: ReactionSettings | undefined): ReactionDecision | null {
  if (settings === undefined || poll.reading.pull.mergeable !== false) return null;
  const sha = poll.reading.pull.headSha;
  const fingerprint = headFingerprint(sha);
  if (nothingNew(poll.memory.merge_conflict, fingerprint)) return null;
  return fixOrEscalate(poll, 'merge_conflict', fingerprint, settings.maxRetries, settings, (attempt) => ({
    kind: 'merge_conflict',
    context: mergeConflictVariables(poll.watch.base, sha, attempt, settings),
  }));
}

function ciFailureStep(poll: Poll, settings: ReactionSettings | undefined): ReactionDecision | null {
  const ci = poll.reading.ci;
  if (settings === undefined || ci === null || ci.state !== 'failing') return null;
  const sha = poll.reading.pull.headSha;
  const fingerprint = headFingerprint(sha);
  if (nothingNew(poll.memory.ci_failure, fingerprint)) return null;
  return fixOrEscalate(poll, 'ci_failure', fingerprint, settings.maxRetries, settings, (attempt) => ({
    kind: 'ci_failure',
    context: ciFailureVariables(ci, sha, attempt, settings),
  }));
}

function reviewCommentsStep(poll: Poll, settings: ReactionSettings | undefined): ReactionDecision | null {
  const feedback = poll.reading.reviews?.changesRequested ?? [];
  if (settings === undefined || feedback.length === 0) return null;
  const fingerprint = reviewFingerprint(feedback);
  if (nothingNew(poll.memory.review_comments, fingerprint)) return null;
  // A reviewer often leaves several comments in a row: act once they have settled.
  const newestMs = newestCreatedAtMs(feedback);
  if (newestMs !== null && newestMs + settings.debounceMs > poll.nowMs)
    return {
      type: 'wait',
      nextPollAtMs: Math.min(newestMs + settings.debounceMs, poll.nextPollAtMs),
      memory: poll.memory,
    };
  return fixOrEscalate(
    poll,
    'review_comments',
    fingerprint,
    settings.maxContinuationTurns,
    settings,
    (attempt) => ({ kind: 'review_comments', context: reviewCommentsVariables(feedback, attempt, settings) }),
  );
}

/**
 * Merges an approved, green, mergeable pull request. Not on the poll that first sees a new head:
 * the caller has not yet recorded it, and the next poll reads its CI afresh.
 */
function autoMergeStep(poll: Poll, settings: ReactionSettings | undefined): ReactionDecision | null {
  const { pull, ci, reviews } = poll.reading;
  if (settings === undefined || poll.headMoved) return null;
  if (reviews === null || !reviews.approved || reviews.changesRequested.length > 0) return null;
  if (ci !== null && ci.state !== 'passing') return null;
  if (pull.mergeable !== true) return null;
  return { type: 'merge', method: settings.mergeMethod, sha: pull.headSha };
}

/** Whether a kind has nothing new: this fingerprint was handed over, or a person was asked. */
function nothingNew(entry: ReactionMemory | undefined, fingerprint: string): boolean {
  if (entry === undefined) return false;
  return entry.escalated || (entry.dispatched && entry.fingerprint === fingerprint);
}

/** Dispatches fix turn attempts+1, or escalates once the kind's fix turns are used up. */
function fixOrEscalate(
  poll: Poll,
  kind: FixReactionKind,
  fingerprint: string,
  maxAttempts: number,
  settings: ReactionSettings,
  target: (attempt: number) => DispatchTarget,
): ReactionDecision {
  const attempts = poll.memory[kind]?.attempts ?? 0;
  if (attempts >= maxAttempts)
    return {
      type: 'escalate',
      kind,
      how: settings.escalation,
      label: settings.escalationLabel,
      comment: escalationComment(kind, poll.watch, poll.reading, attempts),
      memory: { ...poll.memory, [kind]: { fingerprint, attempts, dispatched: false, escalated: true } },
    };
  const attempt = attempts + 1;
  return {
    type: 'dispatch',
    fingerprint,
    attempt,
    memory: {
      ...poll.memory,
      [kind]: { fingerprint, attempts: attempt, dispatched: true, escalated: false },
    },
    ...target(attempt),
  };
}

/** The newest `createdAt` (epoch ms) among the feedback; null when none parses. */
function newestCreatedAtMs(feedback: readonly { createdAt: string }[]): number | null {
  let newest: number | null = null;
  for (const f of feedback) {
    const ms = Date.parse(f.createdAt);
    if (Number.isFinite(ms) && (newest === null || ms > newest)) newest = ms;
  }
  return newest;
}
