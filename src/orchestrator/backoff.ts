/**
 * Retry timing. A failed attempt waits longer each time, up to a cap; a clean
 * exit on an issue that is still active continues after a short fixed pause.
 */

/** Pause before continuing an issue whose session ended cleanly while it stays active. */
export const CONTINUATION_DELAY_MS = 1_000;
/** First failure retry delay; doubles per retry. */
export const FAILURE_BASE_DELAY_MS = 10_000;
const DEFAULT_MAX_BACKOFF_MS = 300_000;

/** Delay before failure retry number `retry` (1-based): min(10 s · 2^(retry−1), cap). */
export function failureDelayMs(retry: number, maxBackoffMs: number): number {
  const n = Math.max(1, Math.floor(retry));
  const cap = maxBackoffMs > 0 ? maxBackoffMs : DEFAULT_MAX_BACKOFF_MS;
  // 2^30 · 10 s is already far past any cap; stop the exponent growing without bound.
  return Math.min(FAILURE_BASE_DELAY_MS * 2 ** Math.min(n - 1, 30), cap);
}
