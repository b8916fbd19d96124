import { describe, expect, it } from 'vitest';
import {
  configuredReactions,
  DEFAULT_POLL_INTERVAL_MS,
  POLL_BACKOFF_CAP_MS,
  pollFailed,
  watchPollIntervalMs,
  watchTtlMs,
} from '../../../src/orchestrator/reactions/poll.js';
import { settings } from './fixtures.js';

const NOW_MS = 1_000_000;
const config = { ci_failure: settings({ pollIntervalMs: 30_000 }) };

describe('poll timing', () => {
  it.each([
    [0, 30_000],
    [1, 60_000],
    [2, 120_000],
    [3, 240_000],
    [4, 300_000],
    [50, 300_000],
  ])('after %i failed reads in a row the next poll is %i ms away', (pollErrors, delayMs) => {
    expect(pollFailed({ pollErrors }, config, NOW_MS)).toEqual({
      pollErrors: pollErrors + 1,
      nextPollAtMs: NOW_MS + delayMs,
    });
  });

  it('the backoff is never shorter than the poll interval, even above the cap', () => {
    const slow = { review_comments: settings({ pollIntervalMs: 10 * 60_000 }) };
    expect(POLL_BACKOFF_CAP_MS).toBe(300_000);
    expect(pollFailed({ pollErrors: 3 }, slow, NOW_MS)).toEqual({
      pollErrors: 4,
      nextPollAtMs: NOW_MS + 600_000,
    });
  });

  it('one watch polls as often as its most eager reaction and lapses with its most patient one', () => {
    const mixed = {
      auto_merge: settings({ pollIntervalMs: 120_000, ttlMs: 7 * 24 * 3_600_000 }),
      ci_failure: settings({ pollIntervalMs: 45_000, ttlMs: 30 * 60_000 }),
    };
    expect(watchPollIntervalMs(mixed)).toBe(45_000);
    expect(watchTtlMs(mixed)).toBe(7 * 24 * 3_600_000);
    expect(configuredReactions(mixed).map(([kind]) => kind)).toEqual(['ci_failure', 'auto_merge']);
  });

  it('with nothing configured there is no TTL and the default poll interval', () => {
    expect(watchTtlMs({})).toBe(null);
    expect(watchPollIntervalMs({})).toBe(DEFAULT_POLL_INTERVAL_MS);
  });

  it('a zero poll interval never turns into a tight loop', () => {
    expect(watchPollIntervalMs({ ci_failure: settings({ pollIntervalMs: 0 }) })).toBe(1_000);
  });
});
