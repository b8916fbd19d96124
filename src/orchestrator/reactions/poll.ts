/**
 * Timing of a pull-request watch. One watch serves every configured reaction, so it polls as
 * often as the most eager one asks and lapses only when the most patient one would: a short
 * CI TTL must not stop the watch that waits days for a reviewer's approval. A forge that fails
 * to answer is asked again later and later, never more often than the normal poll.
 */
import type { PullWatch, ReactionKind, ReactionSettings, ReactionsConfig } from './types.js';

/** Longest wait between polls after forge reads fail in a row. */
export const POLL_BACKOFF_CAP_MS = 5 * 60_000;
/** Poll interval when no reaction is configured (the schema's default). */
export const DEFAULT_POLL_INTERVAL_MS = 120_000;
/** A poll interval below this is raised to it, so a bad value never spins on the forge. */
export const MIN_POLL_INTERVAL_MS = 1_000;

const KINDS: readonly ReactionKind[] = ['merge_conflict', 'ci_failure', 'review_comments', 'auto_merge'];

/** The configured reactions, in the order they are decided. */
export function configuredReactions(config: ReactionsConfig): [ReactionKind, ReactionSettings][] {
  const out: [ReactionKind, ReactionSettings][] = [];
  for (const kind of KINDS) {
    const settings = config[kind];
    if (settings !== undefined) out.push([kind, settings]);
  }
  return out;
}

/** The smallest poll interval of the configured reactions (at least 1 s). */
export function watchPollIntervalMs(config: ReactionsConfig): number {
  const intervals = configuredReactions(config).map(([, s]) => s.pollIntervalMs);
  if (intervals.length === 0) return DEFAULT_POLL_INTERVAL_MS;
  return Math.max(MIN_POLL_INTERVAL_MS, Math.min(...intervals));
}

/** The largest TTL of the configured reactions; null when none is configured. */
export function watchTtlMs(config: ReactionsConfig): number | null {
  const ttls = configuredReactions(config).map(([, s]) => s.ttlMs);
  return ttls.length === 0 ? null : Math.max(...ttls);
}

/**
 * The watch's new timing after a forge read failed: min(poll · 2^pollErrors, 5 min), never
 * below the poll interval. The caller sets `pollErrors` back to 0 after a read succeeds.
 */
export function pollFailed(
  watch: Pick<PullWatch, 'pollErrors'>,
  config: ReactionsConfig,
  nowMs: number,
): { pollErrors: number; nextPollAtMs: number } {
  const pollMs = watchPollIntervalMs(config);
  // 2^30 polls is already past any cap; stop the exponent growing without bound.
  const errors = Math.max(0, Math.floor(watch.pollErrors));
  const delayMs = Math.max(pollMs, Math.min(pollMs * 2 ** Math.min(errors, 30), POLL_BACKOFF_CAP_MS));
  return { pollErrors: errors + 1, nextPollAtMs: nowMs + delayMs };
}
