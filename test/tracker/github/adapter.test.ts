import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectTrackerError } from '../../../internal-contracts/tracker/conformance.js';
import { type FakeGithub, startFakeGithub } from '../../support/fake-github/server.js';
import { seedLabels, trackerOver } from './helpers.js';

let fake: FakeGithub;

beforeEach(async () => {
  fake = await startFakeGithub();
  seedLabels(fake);
});

afterEach(async () => {
  await fake.close();
});

describe('reads', () => {
  it('an unlabelled open issue is in the first active state and a closed one in the first terminal state', async () => {
    const open = fake.addIssue({ title: 'open, no label' });
    const closed = fake.addIssue({ title: 'closed, no label', state: 'closed' });
    const labelled = fake.addIssue({ title: 'two state labels', labels: ['review', 'In Progress'] });
    const tracker = trackerOver(fake);
    const readings = await tracker.fetchIssueStatesByIds([String(open), String(closed), String(labelled)]);
    expect(readings.map((r) => r.state)).toEqual(['Todo', 'Done', 'In Progress']);
  });

  it('pull requests are never candidates and never fetched as issues', async () => {
    fake.addIssue({ title: 'issue', labels: ['Todo'] });
    const pr = fake.addIssue({ title: 'pr', labels: ['Todo'], pull: true });
    const tracker = trackerOver(fake);
    expect((await tracker.fetchCandidateIssues()).map((i) => i.title)).toEqual(['issue']);
    await expectTrackerError(tracker.fetchIssueById(String(pr)), 'tracker_not_found');
    expect(await tracker.fetchIssueStatesByIds([String(pr)])).toEqual([]);
  });

  it('an issue carries its display id, url, assignee, topic labels, blockers and parent', async () => {
    const parent = fake.addIssue({ title: 'epic' });
    const blocker = fake.addIssue({ title: 'blocker', labels: ['Done'], state: 'closed' });
    const n = fake.addIssue({
      title: 'child',
      labels: ['Todo', 'Bug'],
      assignees: ['octo'],
      blockedBy: [blocker],
      parent,
    });
    const tracker = trackerOver(fake);
    const issue = await tracker.fetchIssueById(String(n));
    expect(issue).toMatchObject({
      id: String(n),
      identifier: String(n),
      displayId: `acme/widgets#${n}`,
      state: 'Todo',
      labels: ['bug'],
      assignee: 'octo',
      blockedBy: [{ id: String(blocker), identifier: String(blocker), state: 'Done' }],
      parent: { id: String(parent), identifier: String(parent) },
      comments: [],
    });
    const candidate = (await tracker.fetchCandidateIssues()).find((i) => i.id === String(n));
    expect(candidate?.blockedBy).toEqual([
      { id: String(blocker), identifier: String(blocker), state: 'Done' },
    ]);
  });

  it('comments are read across pages, oldest first', async () => {
    const comments = Array.from({ length: 230 }, (_, i) => ({
      id: i + 1,
      user: 'u',
      body: `c${i + 1}`,
      created_at: '2026-01-01T00:00:00Z',
    }));
    const n = fake.addIssue({ title: 'chatty', comments });
    const got = await trackerOver(fake).fetchIssueComments(String(n));
    expect(got).toHaveLength(230);
    expect(got.at(-1)?.body).toBe('c230');
  });

  it('a query filter narrows the candidates through the search API', async () => {
    fake.addIssue({ title: 'ready', labels: ['Todo', 'agent-ready'] });
    fake.addIssue({ title: 'not ready', labels: ['Todo'] });
    const tracker = trackerOver(fake, {}, { queryFilter: 'label:agent-ready' });
    expect((await tracker.fetchCandidateIssues()).map((i) => i.title)).toEqual(['ready']);
    expect(fake.requests.some((r) => r.path.startsWith('/search/issues'))).toBe(true);
  });
});

describe('cost of polling', () => {
  it('a second poll of an unchanged repository is all 304s, none counted against the rate limit', async () => {
    for (let i = 0; i < 250; i++) fake.addIssue({ title: `issue ${i}`, labels: ['Todo'] });
    const tracker = trackerOver(fake);
    expect(await tracker.fetchCandidateIssues()).toHaveLength(250);
    const from = fake.requests.length;
    expect(await tracker.fetchCandidateIssues()).toHaveLength(250);
    const second = fake.requests.slice(from);
    expect(second).toHaveLength(3);
    expect(second.every((r) => r.status === 304)).toBe(true);
    expect(fake.countedSince(from)).toBe(0);
    expect(tracker.stats.notModified).toBe(3);
  });

  it('a change is seen on the next poll despite the cache', async () => {
    const n = fake.addIssue({ title: 'one', labels: ['Todo'] });
    const tracker = trackerOver(fake);
    expect(await tracker.fetchIssueStatesByIds([String(n)])).toEqual([
      { id: '1', identifier: '1', state: 'Todo' },
    ]);
    fake.issue(n).labels = ['Review'];
    fake.issue(n).updated_at = '2027-01-01T00:00:00Z';
    expect(await tracker.fetchIssueStatesByIds([String(n)])).toEqual([
      { id: '1', identifier: '1', state: 'Review' },
    ]);
  });

  it('with the cache disabled no request is conditional', async () => {
    fake.addIssue({ title: 'one', labels: ['Todo'] });
    const tracker = trackerOver(fake, { etag_cache_size: 0 });
    await tracker.fetchCandidateIssues();
    await tracker.fetchCandidateIssues();
    expect(fake.requests.every((r) => r.status === 200)).toBe(true);
  });

  it('listing stops at the page cap with a warning', async () => {
    for (let i = 0; i < 250; i++) fake.addIssue({ title: `issue ${i}`, labels: ['Todo'] });
    const warnings: string[] = [];
    const tracker = trackerOver(fake, { max_pages: 2 }, { warn: (m) => warnings.push(m) });
    expect(await tracker.fetchCandidateIssues()).toHaveLength(200);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('2 pages');
  });
});

describe('writes', () => {
  it('a transition to a terminal state swaps the state label and closes the issue; back to active reopens it', async () => {
    const n = fake.addIssue({ title: 'one', labels: ['Todo', 'bug'] });
    const tracker = trackerOver(fake);
    await tracker.transitionIssue(String(n), 'done');
    expect(fake.issue(n)).toMatchObject({
      state: 'closed',
      state_reason: 'completed',
      labels: ['bug', 'Done'],
    });
    await tracker.transitionIssue(String(n), 'In Progress');
    expect(fake.issue(n)).toMatchObject({ state: 'open', labels: ['bug', 'In Progress'] });
    await tracker.transitionIssue(String(n), 'Review');
    expect(fake.issue(n)).toMatchObject({ state: 'open', labels: ['bug', 'Review'] });
  });

  it('a target label missing from the repository is a payload error and nothing is created or changed', async () => {
    fake.labels.delete('review');
    const n = fake.addIssue({ title: 'one', labels: ['Todo'] });
    const tracker = trackerOver(fake);
    await expectTrackerError(tracker.transitionIssue(String(n), 'Review'), 'tracker_payload_error');
    await expectTrackerError(tracker.addLabel(String(n), 'never-made'), 'tracker_payload_error');
    expect(fake.labels.has('review')).toBe(false);
    expect(fake.labels.has('never-made')).toBe(false);
    expect(fake.issue(n).labels).toEqual(['Todo']);
  });

  it('a target outside the configured states is a payload error before any request', async () => {
    const n = fake.addIssue({ title: 'one', labels: ['Todo'] });
    const tracker = trackerOver(fake);
    await expectTrackerError(tracker.transitionIssue(String(n), 'bug'), 'tracker_payload_error');
    expect(fake.requests).toEqual([]);
  });

  it('a comment is posted as given', async () => {
    const n = fake.addIssue({ title: 'one' });
    await trackerOver(fake).commentIssue(String(n), 'hello **world**');
    expect(fake.issue(n).comments.map((c) => c.body)).toEqual(['hello **world**']);
  });
});

describe('failures', () => {
  const list = (method: string, path: string) => method === 'GET' && path.endsWith('/issues');

  it.each([
    [401, 'tracker_auth_error'],
    [403, 'tracker_auth_error'],
    [404, 'tracker_not_found'],
    [410, 'tracker_not_found'],
    [422, 'tracker_payload_error'],
    [400, 'tracker_payload_error'],
    [503, 'tracker_transport_error'],
  ] as const)('HTTP %i is %s', async (status, kind) => {
    fake.failNext(10, status, list);
    await expectTrackerError(trackerOver(fake).fetchCandidateIssues(), kind);
  });

  it('a 5xx is retried by the client before it surfaces', async () => {
    fake.addIssue({ title: 'one', labels: ['Todo'] });
    fake.failNext(2, 502, list);
    expect(await trackerOver(fake).fetchCandidateIssues()).toHaveLength(1);
    expect(fake.requests.map((r) => r.status)).toEqual([502, 502, 200]);
  });

  it('bad credentials are an auth error', async () => {
    const tracker = trackerOver(fake);
    (fake as unknown as { token: string }).token = 'a-token-the-tracker-does-not-have';
    await expectTrackerError(tracker.fetchCandidateIssues(), 'tracker_auth_error');
  });

  it('an unreachable server is a transport error', async () => {
    const tracker = trackerOver(fake, {}, { retryBaseMs: 1 });
    await fake.close();
    await expectTrackerError(tracker.fetchCandidateIssues(), 'tracker_transport_error');
  });

  it('a secondary rate limit mid-poll is waited out (Retry-After) and the poll completes', async () => {
    for (let i = 0; i < 150; i++) fake.addIssue({ title: `issue ${i}`, labels: ['Todo'] });
    let lists = 0;
    fake.secondaryLimit(1, 1, (method, path) => list(method, path) && ++lists === 2);
    const started = Date.now();
    expect(await trackerOver(fake).fetchCandidateIssues()).toHaveLength(150);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(fake.requests.map((r) => r.status)).toEqual([200, 403, 200]);
  });

  it('a secondary limit asking for longer than the bound surfaces at once as a retryable api error', async () => {
    fake.secondaryLimit(5, 120, list);
    const started = Date.now();
    await expectTrackerError(trackerOver(fake).fetchCandidateIssues(), 'tracker_api_error');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(fake.requests).toHaveLength(1);
  });

  it('a primary limit with a reset 2 s away is waited out, never spun on', async () => {
    fake.addIssue({ title: 'one', labels: ['Todo'] });
    fake.exhaustPrimary(2_000);
    const started = Date.now();
    expect(await trackerOver(fake).fetchCandidateIssues()).toHaveLength(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    const refused = fake.requests.filter((r) => r.status === 403);
    expect(refused).toHaveLength(1);
    expect(fake.requests.at(-1)?.status).toBe(200);
  });

  it('a primary limit resetting beyond the bound surfaces at once as a retryable api error', async () => {
    fake.exhaustPrimary(3_600_000);
    const started = Date.now();
    await expectTrackerError(trackerOver(fake).fetchCandidateIssues(), 'tracker_api_error');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(fake.requests).toHaveLength(1);
  });
});
