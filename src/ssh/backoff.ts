/**
 * When a host may be tried again after a failed connect. Pure: the caller passes the
 * clock. Without it, every agent launch and hook aimed at a dead host would each wait
 * out a full connect timeout; with it, calls inside the window fail at once and say
 * when the next attempt is allowed.
 */

export interface BackoffPolicy {
  /** Wait after the first failure. */
  baseMs: number;
  /** Cap on the wait; it doubles per consecutive failure up to this. */
  maxMs: number;
}

export const DEFAULT_RECONNECT_BACKOFF: BackoffPolicy = { baseMs: 1_000, maxMs: 60_000 };

export interface BackoffState {
  /** Consecutive failed connects since the last success. */
  failures: number;
  /** Epoch ms before which no new attempt is made; 0 when free to try. */
  nextAttemptAtMs: number;
  /** Message of the last failure, null after a success. */
  lastError: string | null;
}

export const FRESH_BACKOFF: BackoffState = { failures: 0, nextAttemptAtMs: 0, lastError: null };

/** The wait after the `failures`-th consecutive failure (1-based): base, 2×base, 4×base, … up to max. */
export function backoffDelayMs(failures: number, policy: BackoffPolicy): number {
  if (failures <= 0) return 0;
  const exponent = Math.min(failures - 1, 30);
  return Math.min(policy.maxMs, policy.baseMs * 2 ** exponent);
}

/** The state after a failed connect at `nowMs`. */
export function afterFailure(
  state: BackoffState,
  error: string,
  nowMs: number,
  policy: BackoffPolicy,
): BackoffState {
  const failures = state.failures + 1;
  return { failures, nextAttemptAtMs: nowMs + backoffDelayMs(failures, policy), lastError: error };
}

/** Null when an attempt may be made at `nowMs`, else the message a fast failure carries. */
export function blockedMessage(state: BackoffState, nowMs: number): string | null {
  if (state.nextAttemptAtMs <= nowMs) return null;
  const waitMs = state.nextAttemptAtMs - nowMs;
  const at = new Date(state.nextAttemptAtMs).toISOString();
  return `last connect failed (${state.lastError ?? 'unknown error'}); next attempt allowed at ${at} (in ${waitMs} ms)`;
}
