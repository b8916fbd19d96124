/**
 * How long a rate-limited Linear request asks to wait. Linear signals a limit two ways: an
 * HTTP 429 (with `Retry-After`), or a GraphQL error coded `RATELIMITED` whose answer carries
 * only its budget headers: `X-RateLimit-Requests-*` and `X-RateLimit-Complexity-*`, each
 * with `-Remaining` and a `-Reset` instant. The trap is the reset's unit: Linear sends epoch
 * milliseconds, and a client reading seconds would wait fifty years or not at all, so both
 * are accepted by magnitude. A budget that is not spent says nothing about the wait.
 */
import { rateLimitRetryMs, retryAfterMs } from '../http/retry-after.js';

/** The headers of a rate-limited answer, by lower-case name. */
export type HeaderReader = (name: string) => string | null;

/** Limits on waiting out one request's rate limits. */
export interface WaitLimits {
  maxRetries: number;
  maxWaitMs: number;
}

const BUDGETS = ['requests', 'complexity'] as const;
/** Epoch values below this are seconds, above it milliseconds (year 2286 in seconds). */
const EPOCH_MS_THRESHOLD = 10_000_000_000;

/** Milliseconds until an epoch reset value (seconds or milliseconds), or null when unreadable. */
export function resetInMs(value: string | null, nowMs = Date.now()): number | null {
  if (value === null || !/^\d+(\.\d+)?$/.test(value.trim())) return null;
  const n = Number(value.trim());
  const atMs = n >= EPOCH_MS_THRESHOLD ? n : n * 1000;
  return Math.max(0, Math.ceil(atMs - nowMs));
}

/** The wait a rate-limited answer asks for: its Retry-After, else the latest reset of a spent budget; null when it says nothing. */
export function askedWaitMs(header: HeaderReader, nowMs = Date.now()): number | null {
  const retryAfter = retryAfterMs(header('retry-after'), nowMs);
  if (retryAfter !== null) return retryAfter;
  let wait: number | null = null;
  for (const budget of BUDGETS) {
    if (header(`x-ratelimit-${budget}-remaining`)?.trim() !== '0') continue;
    const reset = resetInMs(header(`x-ratelimit-${budget}-reset`), nowMs);
    if (reset !== null) wait = Math.max(wait ?? 0, reset);
  }
  return wait;
}

/**
 * When to try a rate-limited request again (`attempt` counts the waits already made), or null
 * when it must fail now: no retries left, no wait given, or a wait beyond the bound.
 */
export function rateLimitWaitMs(
  status: number,
  header: HeaderReader,
  attempt: number,
  limits: WaitLimits,
  nowMs = Date.now(),
): number | null {
  const retryAfter = header('retry-after');
  // A 429 that names its wait is the shared rule every HTTP tracker follows.
  if (status === 429 && retryAfterMs(retryAfter, nowMs) !== null) {
    return rateLimitRetryMs({ status, retryAfter }, attempt, limits, nowMs);
  }
  if (attempt >= limits.maxRetries) return null;
  const waitMs = askedWaitMs(header, nowMs);
  return waitMs !== null && waitMs <= limits.maxWaitMs ? waitMs : null;
}
