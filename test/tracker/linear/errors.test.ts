import { describe, expect, it } from 'vitest';
import {
  classifyGraphqlErrors,
  graphqlFailure,
  httpFailure,
  redactor,
} from '../../../src/tracker/linear/errors.js';
import { blockers, labelNames, priorityOf, readIssue } from '../../../src/tracker/linear/normalise.js';
import { askedWaitMs, rateLimitWaitMs, resetInMs } from '../../../src/tracker/linear/rate-limit.js';

const NOW = Date.parse('2026-03-01T12:00:00Z');

describe('GraphQL error classification', () => {
  it.each([
    [
      'AUTHENTICATION_ERROR',
      { message: 'Authentication required', extensions: { code: 'AUTHENTICATION_ERROR' } },
      'tracker_auth_error',
    ],
    [
      'type "authentication error" alone',
      { message: 'x', extensions: { type: 'authentication error' } },
      'tracker_auth_error',
    ],
    [
      'FORBIDDEN',
      { message: 'no access', extensions: { code: 'FORBIDDEN', type: 'forbidden' } },
      'tracker_auth_error',
    ],
    [
      'RATELIMITED (not waited out)',
      { message: 'Rate limit exceeded', extensions: { code: 'RATELIMITED' } },
      'tracker_api_error',
    ],
    [
      'Entity not found',
      { message: 'Entity not found: Issue', extensions: { code: 'INPUT_ERROR', type: 'invalid input' } },
      'tracker_not_found',
    ],
    [
      'only the user message says so',
      {
        message: 'Argument Validation Error',
        extensions: { userPresentableMessage: 'Could not find referenced Issue.' },
      },
      'tracker_not_found',
    ],
    [
      'a validation failure',
      {
        message: 'Cannot query field "foo" on type "Issue".',
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
      },
      'tracker_payload_error',
    ],
    ['an error without extensions', { message: 'Something odd' }, 'tracker_payload_error'],
  ] as const)('%s is %s', (_name, entry, kind) => {
    expect(graphqlFailure([entry], 'op', (t) => t).kind).toBe(kind);
  });

  it('auth wins over not-found when one answer carries both', () => {
    expect(
      classifyGraphqlErrors([
        { message: 'Entity not found: Issue' },
        { message: 'x', extensions: { code: 'AUTHENTICATION_ERROR' } },
      ]),
    ).toBe('auth');
  });

  it.each([
    [401, 'tracker_auth_error'],
    [403, 'tracker_auth_error'],
    [429, 'tracker_api_error'],
    [400, 'tracker_payload_error'],
    [404, 'tracker_api_error'],
    [502, 'tracker_transport_error'],
  ] as const)('HTTP %i without a GraphQL answer is %s', (status, kind) => {
    expect(httpFailure(status, 'op').kind).toBe(kind);
  });

  it('a server message that echoes the key is redacted in the error', () => {
    const key = 'lin_api_SECRET_1234567890';
    const error = graphqlFailure(
      [{ message: `Invalid key ${key}`, extensions: { code: 'AUTHENTICATION_ERROR' } }],
      'poll',
      redactor(key),
    );
    expect(error.message).not.toContain(key);
    expect(error.message).toContain('[redacted]');
  });
});

describe('rate-limit waits', () => {
  const headers =
    (h: Record<string, string>) =>
    (name: string): string | null =>
      h[name] ?? null;
  const limits = { maxRetries: 2, maxWaitMs: 30_000 };

  it('a reset in epoch milliseconds and one in epoch seconds both mean the same instant', () => {
    expect(resetInMs(String(NOW + 5_000), NOW)).toBe(5_000);
    expect(resetInMs(String((NOW + 5_000) / 1000), NOW)).toBe(5_000);
    expect(resetInMs(String(NOW - 10_000), NOW)).toBe(0);
    expect(resetInMs('soon', NOW)).toBeNull();
  });

  it('Retry-After wins; otherwise the latest reset of a spent budget; an unspent budget says nothing', () => {
    expect(askedWaitMs(headers({ 'retry-after': '2', 'x-ratelimit-requests-remaining': '0' }), NOW)).toBe(
      2_000,
    );
    expect(
      askedWaitMs(
        headers({
          'x-ratelimit-requests-remaining': '0',
          'x-ratelimit-requests-reset': String(NOW + 3_000),
          'x-ratelimit-complexity-remaining': '0',
          'x-ratelimit-complexity-reset': String(NOW + 7_000),
        }),
        NOW,
      ),
    ).toBe(7_000);
    expect(
      askedWaitMs(
        headers({
          'x-ratelimit-requests-remaining': '12',
          'x-ratelimit-requests-reset': String(NOW + 3_000),
        }),
        NOW,
      ),
    ).toBeNull();
  });

  it('waits within the bound, at most twice; beyond the bound or with no wait named, not at all', () => {
    const spent = headers({
      'x-ratelimit-requests-remaining': '0',
      'x-ratelimit-requests-reset': String(NOW + 4_000),
    });
    expect(rateLimitWaitMs(400, spent, 0, limits, NOW)).toBe(4_000);
    expect(rateLimitWaitMs(400, spent, 1, limits, NOW)).toBe(4_000);
    expect(rateLimitWaitMs(400, spent, 2, limits, NOW)).toBeNull();
    expect(rateLimitWaitMs(429, headers({ 'retry-after': '1' }), 0, limits, NOW)).toBe(1_000);
    expect(rateLimitWaitMs(429, headers({ 'retry-after': '120' }), 0, limits, NOW)).toBeNull();
    expect(rateLimitWaitMs(429, headers({}), 0, limits, NOW)).toBeNull();
  });
});

describe('normalising an issue node', () => {
  const node = {
    id: 'uuid-1',
    identifier: 'ENG-7',
    title: 'Fix it',
    description: null,
    priority: 0,
    branchName: 'eng-7-fix-it',
    url: 'https://linear.app/x/issue/ENG-7',
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-02T00:00:00.000Z',
    state: { name: 'In Progress' },
    assignee: { id: 'user-1' },
    parent: { id: 'uuid-0', identifier: 'ENG-1' },
    labels: {
      nodes: [{ name: ' Bug ' }, { name: 'bug' }, { name: '' }, { name: 'Backend' }],
      pageInfo: { hasNextPage: false },
    },
    inverseRelations: {
      nodes: [
        { type: 'blocks', issue: { id: 'uuid-2', identifier: 'ENG-2', state: { name: 'Todo' } } },
        { type: 'related', issue: { id: 'uuid-3', identifier: 'ENG-3', state: { name: 'Todo' } } },
        { type: 'blocks', issue: { id: 'uuid-2', identifier: 'ENG-2', state: { name: 'Todo' } } },
      ],
      pageInfo: { hasNextPage: true },
    },
  };

  it('keeps Linear values, maps priority 0 to null, lowercases labels and reads blockers from "blocks" only', () => {
    const { issue, truncated } = readIssue(node, 'op');
    expect(issue).toEqual({
      id: 'uuid-1',
      identifier: 'ENG-7',
      displayId: 'ENG-7',
      title: 'Fix it',
      description: '',
      priority: null,
      state: 'In Progress',
      branchName: 'eng-7-fix-it',
      url: 'https://linear.app/x/issue/ENG-7',
      labels: ['bug', 'backend'],
      assignee: 'user-1',
      issueType: '',
      parent: { id: 'uuid-0', identifier: 'ENG-1' },
      comments: null,
      blockedBy: [{ id: 'uuid-2', identifier: 'ENG-2', state: 'Todo' }],
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-02T00:00:00.000Z',
    });
    expect(truncated).toBe(true);
  });

  it.each([
    [0, null],
    [1, 1],
    [4, 4],
    [5, null],
    [2.5, null],
    ['2', null],
  ] as const)('priority %j is %j', (value, expected) => {
    expect(priorityOf(value)).toBe(expected);
  });

  it.each([
    ['no title', { ...node, title: null }],
    ['no state', { ...node, state: null }],
    ['no identifier', { ...node, identifier: '' }],
    ['not an object', 'ENG-7'],
  ])('a node with %s is a payload error', (_name, bad) => {
    expect(() => readIssue(bad, 'op')).toThrow(/tracker_payload_error/);
  });

  it('a blocker whose state is unreadable keeps blocking (state "")', () => {
    expect(blockers([{ type: 'blocks', issue: { id: 'b', identifier: 'ENG-9', state: null } }])).toEqual([
      { id: 'b', identifier: 'ENG-9', state: '' },
    ]);
    expect(labelNames([{ name: 'A' }, { nope: 1 }])).toEqual(['a']);
  });
});
