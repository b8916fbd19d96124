import { describe, expect, it } from 'vitest';
import { iidOfIdentifier } from '../../../src/tracker/gitlab/adapter.js';
import { encodeQuery } from '../../../src/tracker/gitlab/client.js';
import { statusKind } from '../../../src/tracker/gitlab/errors.js';
import {
  type LabelScheme,
  priorityOf,
  readNotes,
  stateOf,
  toIssue,
} from '../../../src/tracker/gitlab/normalise.js';
import { retryAfterOf } from '../../../src/tracker/gitlab/transport.js';

const scheme: LabelScheme = {
  states: {
    activeStates: ['Todo', 'In Progress'],
    terminalStates: ['Done', 'Cancelled'],
    handoffState: 'Review',
    inProgressState: 'In Progress',
    blockedState: 'Blocked',
  },
  stateLabelPrefix: 'workflow::',
  priorityLabelPrefix: 'priority::',
};

describe('scoped-label states', () => {
  it.each([
    ['an open issue without a state label', [], 'opened', 'Todo'],
    ['a closed issue without a state label', [], 'closed', 'Done'],
    ['an open issue with a state label in another case', ['Workflow::IN PROGRESS'], 'opened', 'In Progress'],
    ['an open issue in the handoff state', ['workflow::review'], 'opened', 'Review'],
    ['a closed issue still labelled active (closed in the UI)', ['workflow::in progress'], 'closed', 'Done'],
    ['a closed issue labelled with a terminal state', ['workflow::cancelled'], 'closed', 'Cancelled'],
    ['a bare label that only looks like a state', ['todo', 'done'], 'opened', 'Todo'],
  ] as const)('%s is %s', (_name, labels, state, expected) => {
    expect(stateOf({ labels: [...labels], state }, scheme)).toBe(expected);
  });

  it('with an empty prefix the state label is the state name itself', () => {
    expect(stateOf({ labels: ['Review'], state: 'opened' }, { ...scheme, stateLabelPrefix: '' })).toBe(
      'Review',
    );
  });
});

describe('priority', () => {
  it.each([
    [['priority::2'], 2],
    [['Priority::0', 'priority::3'], 0],
    [['priority::high'], null],
    [['priority::1.5'], null],
    [['bug'], null],
  ] as const)('%j is %s', (labels, expected) => {
    expect(priorityOf(labels, 'priority::')).toBe(expected);
  });

  it('weight never becomes the priority', () => {
    const issue = toIssue(
      {
        id: 1,
        iid: 1,
        title: 't',
        description: '',
        state: 'opened',
        webUrl: '',
        labels: ['workflow::todo', 'priority::4', 'Backend'],
        assignee: '',
        issueType: 'issue',
        createdAt: '',
        updatedAt: '',
      },
      'acme/w',
      scheme,
    );
    expect(issue.priority).toBe(4);
    expect(issue.labels).toEqual(['backend']);
    expect(issue.displayId).toBe('acme/w#1');
  });
});

describe('notes', () => {
  it('system notes are left out and authors are usernames', () => {
    const notes = readNotes(
      [
        {
          id: 1,
          body: 'hi',
          system: false,
          author: { username: 'jane' },
          created_at: '2026-01-01T00:00:00Z',
        },
        { id: 2, body: 'changed labels', system: true, author: { username: 'jane' } },
      ],
      'op',
    );
    expect(notes).toEqual([{ id: '1', author: 'jane', body: 'hi', createdAt: '2026-01-01T00:00:00Z' }]);
  });
});

describe('identifiers, queries and statuses', () => {
  it.each([
    ['12', 12],
    ['#12', 12],
    ['acme/w#12', 12],
    ['other/project#12', null],
    ['KEY-1', null],
  ] as const)('identifier %s is iid %s', (identifier, iid) => {
    expect(iidOfIdentifier(identifier, 'acme/w')).toBe(iid);
  });

  it('list parameters are snake_case, arrays as key[] and nested objects as key[sub]', () => {
    expect(
      decodeURIComponent(
        encodeQuery({ perPage: 5, iids: [1, 2], not: { labels: 'wip' }, assignee_username: 'me' }),
      ),
    ).toBe('per_page=5&iids[]=1&iids[]=2&not[labels]=wip&assignee_username=me');
  });

  it.each([
    [401, 'tracker_auth_error'],
    [403, 'tracker_auth_error'],
    [404, 'tracker_not_found'],
    [400, 'tracker_payload_error'],
    [422, 'tracker_payload_error'],
    [429, 'tracker_api_error'],
    [503, 'tracker_transport_error'],
    [409, 'tracker_api_error'],
  ] as const)('status %s is %s', (status, kind) => {
    expect(statusKind(status)).toBe(kind);
  });

  it('a 429 without Retry-After waits until RateLimit-Reset', () => {
    expect(retryAfterOf({ 'ratelimit-reset': '1005' }, 1_000_000)).toBe('5');
    expect(retryAfterOf({ 'retry-after': '3', 'ratelimit-reset': '1005' }, 1_000_000)).toBe('3');
    expect(retryAfterOf({}, 1_000_000)).toBeNull();
  });
});
