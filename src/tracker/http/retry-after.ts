/**
 * Waiting out a rate limit that says how long to wait. Every HTTP tracker honours a
 * `Retry-After` (seconds or an HTTP date) within its own bound: a short wait keeps the poll
 * whole, a long one surfaces at once as a retryable error so a tick is skipped rather than
 * held for minutes.
 */

/** Milliseconds a `Retry-After` value asks for, or null when it is absent or unreadable. */
export function retryAfterMs(value: string | null | undefined, nowMs = Date.now()): number | null {
  if (value === null || value === undefined || value.trim() === '') return null;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.ceil(Number(text) * 1000);
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/** When to try again after a 429: the asked wait if it is within `maxWaitMs` and retries are left, else null. */
export function rateLimitRetryMs(
  response: { status: number; retryAfter: string | null | undefined },
  attempt: number,
  limits: { maxRetries: number; maxWaitMs: number },
  nowMs = Date.now(),
): number | null {
  if (response.status !== 429 || attempt >= limits.maxRetries) return null;
  const waitMs = retryAfterMs(response.retryAfter, nowMs);
  return waitMs !== null && waitMs <= limits.maxWaitMs ? waitMs : null;
}
