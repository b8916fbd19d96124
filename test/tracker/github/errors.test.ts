import { describe, expect, it } from 'vitest';
import { TrackerError } from '../../../src/domain/errors.js';
import { classifyFailure } from '../../../src/tracker/github/errors.js';
import { stateOf } from '../../../src/tracker/github/normalise.js';
import { LruCache } from '../../../src/tracker/http/lru-cache.js';

function failure(status: number, message: string, headers: Record<string, string> = {}) {
  return { status, message, response: { headers, data: { message } } };
}

describe('error classification', () => {
  it.each([
    ['401', failure(401, 'Bad credentials'), 'tracker_auth_error'],
    [
      '403 without a rate limit',
      failure(403, 'Resource not accessible by integration'),
      'tracker_auth_error',
    ],
    [
      '403 with remaining 0 (primary)',
      failure(403, 'API rate limit exceeded', {
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': '1900000000',
      }),
      'tracker_api_error',
    ],
    [
      '403 naming a secondary rate limit',
      failure(403, 'You have exceeded a secondary rate limit.', { 'retry-after': '60' }),
      'tracker_api_error',
    ],
    ['429', failure(429, 'Too many requests', { 'retry-after': '5' }), 'tracker_api_error'],
    ['404', failure(404, 'Not Found'), 'tracker_not_found'],
    ['410', failure(410, 'Gone'), 'tracker_not_found'],
    ['400', failure(400, 'Problems parsing JSON'), 'tracker_payload_error'],
    ['422', failure(422, 'Validation Failed'), 'tracker_payload_error'],
    ['502', failure(502, 'Bad Gateway'), 'tracker_transport_error'],
    [
      'a request that never got an answer',
      { status: 500, message: 'fetch failed' },
      'tracker_transport_error',
    ],
    ['a plain error', new Error('socket hang up'), 'tracker_transport_error'],
    ['301', failure(301, 'Moved'), 'tracker_api_error'],
  ] as const)('%s is %s', (_name, error, kind) => {
    const classified = classifyFailure(error, 'op');
    expect(classified).toBeInstanceOf(TrackerError);
    expect(classified.kind).toBe(kind);
  });

  it('a rate-limit message says which limit and when it resets or may be retried', () => {
    expect(
      classifyFailure(
        failure(403, 'x', { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1900000000' }),
        'poll',
      ).message,
    ).toContain('primary');
    expect(
      classifyFailure(
        failure(403, 'You have exceeded a secondary rate limit', { 'retry-after': '60' }),
        'poll',
      ).message,
    ).toContain('retry after 60 s');
  });
});

describe('state from labels', () => {
  const states = {
    activeStates: ['Todo', 'In Progress'],
    terminalStates: ['Done', 'Wontfix'],
    handoffState: 'Review',
    inProgressState: 'In Progress',
    blockedState: 'Blocked',
  };
  it.each([
    [['bug'], 'open', 'Todo'],
    [['bug'], 'closed', 'Done'],
    [['in progress', 'todo'], 'open', 'Todo'],
    [['WONTFIX'], 'closed', 'Wontfix'],
    [['done'], 'open', 'Done'],
    [['review'], 'open', 'Review'],
    [['blocked', 'review'], 'open', 'Review'],
    [['blocked'], 'open', 'Blocked'],
    [['todo'], 'closed', 'Todo'],
  ] as const)('labels %j on an %s issue read as %s', (labels, state, expected) => {
    expect(stateOf({ labels: [...labels], state }, states)).toBe(expected);
  });
});

describe('LRU cache', () => {
  it('evicts the least recently used entry past its capacity and stores nothing at capacity 0', () => {
    const cache = new LruCache<number>(2);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.get('a');
    cache.set('c', 3);
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([1, undefined, 3]);
    const none = new LruCache<number>(0);
    none.set('a', 1);
    expect(none.size).toBe(0);
  });
});
