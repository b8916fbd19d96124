/** The reconnect backoff policy, with the clock passed in. */
import { describe, expect, it } from 'vitest';
import { afterFailure, backoffDelayMs, blockedMessage, FRESH_BACKOFF } from '../../src/ssh/backoff.js';

describe('reconnect backoff', () => {
  const policy = { baseMs: 1_000, maxMs: 60_000 };

  it('doubles per consecutive failure up to the cap', () => {
    expect([1, 2, 3, 6, 7, 20].map((n) => backoffDelayMs(n, policy))).toEqual([
      1_000, 2_000, 4_000, 32_000, 60_000, 60_000,
    ]);
  });

  it('blocks until the window passed and says when the next attempt is allowed', () => {
    const failed = afterFailure(FRESH_BACKOFF, 'connect ECONNREFUSED', 10_000, policy);
    expect(blockedMessage(failed, 10_500)).toContain('ECONNREFUSED');
    expect(blockedMessage(failed, 10_500)).toContain('in 500 ms');
    expect(blockedMessage(failed, 11_000)).toBeNull();
    const twice = afterFailure(failed, 'again', 11_000, policy);
    expect(twice.nextAttemptAtMs).toBe(13_000);
  });
});
