/**
 * Retry timing. A failed attempt waits longer each time, up to a cap; a clean
 * exit on an issue that is still active continues after a short fixed pause; a
 * run refused by the provider's usage limit waits for the limit's reset, which
 * no amount of backing off would bring sooner.
 */

/** Pause before continuing an issue whose session ended cleanly while it stays active. */
export const CONTINUATION_DELAY_MS = 1_000;
/** First failure retry delay; doubles per failure in a row. */
export const FAILURE_BASE_DELAY_MS = 10_000;
const DEFAULT_MAX_BACKOFF_MS = 300_000;

/**
 * Delay before the retry after `failures` failed runs in a row (1 for the first failure):
 * min(10 s · 2^(failures−1), cap). Not the attempt number, which continuations raise too.
 */
export function failureDelayMs(failures: number, maxBackoffMs: number): number {
  const n = Math.max(1, Math.floor(failures));
  const cap = maxBackoffMs > 0 ? maxBackoffMs : DEFAULT_MAX_BACKOFF_MS;
  // 2^30 · 10 s is already far past any cap; stop the exponent growing without bound.
  return Math.min(FAILURE_BASE_DELAY_MS * 2 ** Math.min(n - 1, 30), cap);
}

/** Wait after a usage limit whose reset time is unknown (or already past, yet still refused). */
export const USAGE_LIMIT_FALLBACK_DELAY_MS = 15 * 60_000;
/** Shortest wait for a reported reset: a reset a moment away must not turn into a tight loop. */
export const USAGE_LIMIT_MIN_DELAY_MS = 1_000;
/** Longest wait for a reported reset (a weekly window); a later time is taken for a misreading. */
export const USAGE_LIMIT_MAX_DELAY_MS = 7 * 24 * 3_600_000;

/** Delay until a usage limit's reset (epoch ms, null when unknown), bounded; the fallback when unknown or past. */
export function usageLimitDelayMs(resetAtMs: number | null, nowMs: number): number {
  if (resetAtMs === null || !Number.isFinite(resetAtMs) || resetAtMs <= nowMs) {
    return USAGE_LIMIT_FALLBACK_DELAY_MS;
  }
  return Math.min(Math.max(resetAtMs - nowMs, USAGE_LIMIT_MIN_DELAY_MS), USAGE_LIMIT_MAX_DELAY_MS);
}
