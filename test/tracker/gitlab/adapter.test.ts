import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectTrackerError } from '../../../internal-contracts/tracker/conformance.js';
import { TrackerError } from '../../../src/domain/errors.js';
import type { TrackerSettings } from '../../../src/domain/tracker.js';
import { GitlabTracker } from '../../../src/tracker/gitlab/adapter.js';
import { parseGitlabConfig } from '../../../src/tracker/gitlab/config.js';
import { type FakeGitlab, startFakeGitlab } from '../../support/fake-gitlab/server.js';
import { gitlabSettings, seedStateLabels } from './harness.js';

const STATES = {
  activeStates: ['Todo', 'In Progress'],
  terminalStates: ['Done', 'Cancelled'],
  handoffState: 'Review',
  inProgressState: 'In Progress',
  blockedState: 'Blocked',
};

let fake: FakeGitlab;
let warnings: string[];

beforeEach(async () => {
  fake = await startFakeGitlab();
  seedStateLabels(fake, STATES);
  fake.addLabel('bug');
  warnings = [];
});

afterEach(async () => {
  await fake.close();
});

function trackerOver(
  block: Record<string, unknown> = {},
  over: Partial<TrackerSettings> = {},
): GitlabTracker {
  const settings = gitlabSettings(fake, STATES, block, over);
  const { config, issues } = parseGitlabConfig(settings);
  if (config === null) throw new Error(`bad config: ${JSON.stringify(issues)}`);
  return new GitlabTracker(config, settings, { warn: (m) => warnings.push(m) });
}

const globalId = (iid: number) => String(fake.issue(iid).id);
const since = (from: number) => fake.requests.slice(from);

/** The TrackerError `promise` rejects with (the test fails if it resolves). */
async function failure(promise: Promise<unknown>): Promise<TrackerError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TrackerError);
  return error as TrackerError;
}

describe('reads', () => {
  it('an issue carries its global id, iid identifier, display id, url, assignee, priority label and blockers', async () => {
    const blocker = fake.addIssue({ title: 'blocker', labels: ['workflow::done'], state: 'closed' });
    const iid = fake.addIssue({
      title: 'child',
      description: 'body text',
      labels: ['workflow::todo', 'Bug', 'priority::2'],
      assignees: ['jane'],
      weight: 8,
      blockedBy: [blocker],
    });
    const issue = await trackerOver().fetchIssueById(globalId(iid));
    expect(issue).toMatchObject({
      id: globalId(iid),
      identifier: String(iid),
      displayId: `${fake.project}#${iid}`,
      title: 'child',
      description: 'body text',
      url: `https://gitlab.example/${fake.project}/-/issues/${iid}`,
      state: 'Todo',
      priority: 2,
      labels: ['bug'],
      assignee: 'jane',
      issueType: 'issue',
      parent: null,
      blockedBy: [{ id: globalId(blocker), identifier: String(blocker), state: 'Done' }],
      comments: [],
    });
  });

  it('only is_blocked_by links are blockers: an issue this one blocks is not', async () => {
    const first = fake.addIssue({ title: 'first', labels: ['workflow::todo'] });
    const second = fake.addIssue({ title: 'second', labels: ['workflow::todo'], blockedBy: [first] });
    const candidates = await trackerOver().fetchCandidateIssues();
    expect(candidates.find((i) => i.identifier === String(first))?.blockedBy).toEqual([]);
    expect(candidates.find((i) => i.identifier === String(second))?.blockedBy).toEqual([
      { id: globalId(first), identifier: String(first), state: 'Todo' },
    ]);
  });

  it('candidates are read across pages with per_page and each issue once', async () => {
    for (let n = 0; n < 12; n++) fake.addIssue({ title: `i${n}`, labels: ['workflow::todo'] });
    const from = fake.requests.length;
    const candidates = await trackerOver({ page_size: 5 }).fetchCandidateIssues();
    expect(candidates).toHaveLength(12);
    expect(new Set(candidates.map((c) => c.id)).size).toBe(12);
    const listings = since(from).filter((r) => /\/issues\?/.test(r.path));
    expect(listings).toHaveLength(3);
    expect(listings.every((r) => r.path.includes('per_page=5') && r.path.includes('state=opened'))).toBe(
      true,
    );
  });

  it('the page cap stops a listing with a warning naming gitlab.max_pages', async () => {
    for (let n = 0; n < 12; n++) fake.addIssue({ title: `i${n}`, labels: ['workflow::todo'] });
    const candidates = await trackerOver({ page_size: 5, max_pages: 2 }).fetchCandidateIssues();
    expect(candidates).toHaveLength(10);
    expect(warnings.join('\n')).toContain('gitlab.max_pages');
  });

  it('a second, unchanged poll is served by 304s and sees a change made between polls', async () => {
    for (let n = 0; n < 3; n++) fake.addIssue({ title: `i${n}`, labels: ['workflow::todo'] });
    const tracker = trackerOver();
    await tracker.fetchCandidateIssues();
    const from = fake.requests.length;
    expect(await tracker.fetchCandidateIssues()).toHaveLength(3);
    const second = since(from);
    expect(second.length).toBeGreaterThan(0);
    expect(second.every((r) => r.status === 304)).toBe(true);
    expect(second.every((r) => r.headers['if-none-match'] !== undefined)).toBe(true);
    expect(tracker.stats.notModified).toBe(second.length);
    fake.issue(2).labels = ['workflow::done'];
    fake.issue(2).state = 'closed';
    expect((await tracker.fetchCandidateIssues()).map((i) => i.identifier)).toEqual(['1', '3']);
  });

  it('etag_cache_size 0 sends no conditional requests', async () => {
    fake.addIssue({ title: 'a', labels: ['workflow::todo'] });
    const tracker = trackerOver({ etag_cache_size: 0 });
    await tracker.fetchCandidateIssues();
    await tracker.fetchCandidateIssues();
    expect(fake.requests.some((r) => r.headers['if-none-match'] !== undefined)).toBe(false);
    expect(fake.notModifiedCount).toBe(0);
  });

  it('query_filter adds its parameters to the candidate listing and narrows it', async () => {
    fake.addIssue({ title: 'ready', labels: ['workflow::todo', 'agent-ready'] });
    fake.addIssue({ title: 'not ready', labels: ['workflow::todo'] });
    const from = fake.requests.length;
    const candidates = await trackerOver({}, { queryFilter: 'labels=agent-ready' }).fetchCandidateIssues();
    expect(candidates.map((c) => c.title)).toEqual(['ready']);
    expect(since(from)[0]?.path).toContain('labels=agent-ready');
  });

  it('assignee "me" asks GET /user once and lists only that user\'s issues', async () => {
    fake.addIssue({ title: 'mine', labels: ['workflow::todo'], assignees: [fake.username] });
    fake.addIssue({ title: 'theirs', labels: ['workflow::todo'], assignees: ['jane'] });
    const tracker = trackerOver({}, { assignee: 'me' });
    expect((await tracker.fetchCandidateIssues()).map((c) => c.title)).toEqual(['mine']);
    await tracker.fetchCandidateIssues();
    expect(fake.requests.filter((r) => r.path === '/api/v4/user')).toHaveLength(1);
    expect(fake.requests.some((r) => r.path.includes(`assignee_username=${fake.username}`))).toBe(true);
  });

  it('an assignee username is passed as assignee_username', async () => {
    fake.addIssue({ title: 'theirs', labels: ['workflow::todo'], assignees: ['jane'] });
    fake.addIssue({ title: 'mine', labels: ['workflow::todo'], assignees: ['bob'] });
    expect((await trackerOver({}, { assignee: 'jane' }).fetchCandidateIssues()).map((c) => c.title)).toEqual([
      'theirs',
    ]);
  });

  it('an id never seen is found by one scan of the project; an unknown one is tracker_not_found', async () => {
    const iid = fake.addIssue({ title: 'old', labels: ['workflow::review'] });
    const tracker = trackerOver();
    expect(await tracker.fetchIssueStatesByIds([globalId(iid), '999999'])).toEqual([
      { id: globalId(iid), identifier: String(iid), state: 'Review' },
    ]);
    await expectTrackerError(tracker.fetchIssueById('999999'), 'tracker_not_found');
  });

  it('states of running issues are one iids[] listing, not one request each', async () => {
    const iids = [1, 2, 3].map((n) => fake.addIssue({ title: `i${n}`, labels: ['workflow::todo'] }));
    const tracker = trackerOver();
    await tracker.fetchCandidateIssues();
    const from = fake.requests.length;
    expect(await tracker.fetchIssueStatesByIds(iids.map(globalId))).toHaveLength(3);
    expect(since(from)).toHaveLength(1);
    expect(decodeURIComponent(since(from)[0]?.path ?? '')).toContain('iids[]=1&iids[]=2&iids[]=3');
  });
});

describe('writes', () => {
  it('a transition swaps the state label and closes the issue in one PUT', async () => {
    const iid = fake.addIssue({ title: 't', labels: ['workflow::in progress', 'bug'] });
    const tracker = trackerOver();
    const from = fake.requests.length;
    await tracker.transitionIssue(globalId(iid), 'done');
    const puts = since(from).filter((r) => r.method === 'PUT');
    expect(puts).toHaveLength(1);
    expect(fake.issue(iid).labels.sort()).toEqual(['bug', 'workflow::done']);
    expect(fake.issue(iid).state).toBe('closed');
  });

  it('a transition to an active state reopens a closed issue', async () => {
    const iid = fake.addIssue({ title: 't', labels: ['workflow::done'], state: 'closed' });
    await trackerOver().transitionIssue(globalId(iid), 'Todo');
    expect(fake.issue(iid)).toMatchObject({ state: 'opened', labels: ['workflow::todo'] });
  });

  it('a transition to a state the issue is in sends no write', async () => {
    const iid = fake.addIssue({ title: 't', labels: ['workflow::review'] });
    const tracker = trackerOver();
    const from = fake.requests.length;
    await tracker.transitionIssue(globalId(iid), 'review');
    expect(since(from).filter((r) => r.method === 'PUT')).toEqual([]);
  });

  it('a target outside the configured states fails before any request', async () => {
    const iid = fake.addIssue({ title: 't', labels: ['workflow::todo'] });
    const tracker = trackerOver();
    const from = fake.requests.length;
    await expectTrackerError(tracker.transitionIssue(globalId(iid), 'Shipped'), 'tracker_payload_error');
    expect(fake.requests.length).toBe(from);
  });

  it('a state label the project lacks is a payload error and is never created', async () => {
    fake.labels.delete('workflow::review');
    const iid = fake.addIssue({ title: 't', labels: ['workflow::todo'] });
    const error = await failure(trackerOver().transitionIssue(globalId(iid), 'Review'));
    expect(error.kind).toBe('tracker_payload_error');
    expect(error.message).toContain('"workflow::review" does not exist');
    expect(fake.labels.has('workflow::review')).toBe(false);
  });

  it('a comment is a user note and is read back oldest first without system notes', async () => {
    const iid = fake.addIssue({ title: 't', labels: ['workflow::todo'] });
    const tracker = trackerOver();
    await tracker.commentIssue(globalId(iid), 'first');
    await tracker.transitionIssue(globalId(iid), 'In Progress');
    await tracker.commentIssue(globalId(iid), 'second');
    expect(fake.issue(iid).notes.some((n) => n.system)).toBe(true);
    expect((await tracker.fetchIssueComments(globalId(iid))).map((c) => c.body)).toEqual(['first', 'second']);
    expect(fake.requests.some((r) => r.path.includes('/notes?') && r.path.includes('sort=asc'))).toBe(true);
  });
});

describe('failures', () => {
  it('a 429 is waited out by Retry-After; one asking longer than max_rate_limit_wait_ms fails at once as retryable', async () => {
    fake.addIssue({ title: 'a', labels: ['workflow::todo'] });
    fake.failNext(1, 429, () => true, 1);
    const started = Date.now();
    expect(await trackerOver().fetchCandidateIssues()).toHaveLength(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);

    fake.failNext(1, 429, () => true, 60);
    const quick = Date.now();
    await expectTrackerError(
      trackerOver({ max_rate_limit_wait_ms: 10_000 }).fetchCandidateIssues(),
      'tracker_api_error',
    );
    // Well under the bound it could have waited, so it did not wait at all.
    expect(Date.now() - quick).toBeLessThan(5_000);
  });

  it('a 429 is waited out at most twice', async () => {
    fake.failNext(3, 429, () => true, 0);
    const from = fake.requests.length;
    await expectTrackerError(trackerOver().fetchCandidateIssues(), 'tracker_api_error');
    expect(since(from)).toHaveLength(3);
  });

  it('a 5xx is retried twice with backoff, then is tracker_transport_error', async () => {
    fake.failNext(3, 502);
    const from = fake.requests.length;
    await expectTrackerError(trackerOver().fetchCandidateIssues(), 'tracker_transport_error');
    expect(since(from)).toHaveLength(3);
    fake.failNext(2, 503);
    expect(await trackerOver().fetchCandidateIssues()).toEqual([]);
  });

  it('a refused connection is tracker_transport_error', async () => {
    const tracker = trackerOver();
    await fake.close();
    await expectTrackerError(tracker.fetchCandidateIssues(), 'tracker_transport_error');
  });

  it.each([
    [401, 'tracker_auth_error'],
    [403, 'tracker_auth_error'],
    [404, 'tracker_not_found'],
    [400, 'tracker_payload_error'],
    [422, 'tracker_payload_error'],
  ] as const)('a %s is %s without a retry', async (status, kind) => {
    fake.failNext(1, status);
    const from = fake.requests.length;
    await expectTrackerError(trackerOver().fetchCandidateIssues(), kind);
    expect(since(from)).toHaveLength(1);
  });

  it('the token travels only in PRIVATE-TOKEN and never appears in an error message', async () => {
    const secret = 'glpat-WRONG-secret-value';
    const settings = gitlabSettings(fake, STATES, {}, { apiKey: secret });
    const { config } = parseGitlabConfig(settings);
    if (config === null) throw new Error('bad config');
    const error = await failure(new GitlabTracker(config, settings).fetchCandidateIssues());
    expect(error.kind).toBe('tracker_auth_error');
    expect(`${error.message} ${String(error.stack)}`).not.toContain(secret);
    expect(fake.requests[0]?.headers['private-token']).toBe(secret);
    expect(fake.requests[0]?.path).not.toContain('glpat');
  });

  it('a token the server echoes back in an error body is redacted from the message', async () => {
    const settings = gitlabSettings(fake, STATES);
    const { config } = parseGitlabConfig(settings);
    if (config === null) throw new Error('bad config');
    const echo = new GitlabTracker(config, settings, {
      fetch: async () =>
        new Response(JSON.stringify({ message: `token ${fake.token} lacks the api scope` }), {
          status: 403,
          headers: { 'content-type': 'application/json' },
        }),
    });
    const error = await failure(echo.fetchCandidateIssues());
    expect(error.kind).toBe('tracker_auth_error');
    expect(error.message).not.toContain(fake.token);
    expect(error.message).toContain('[redacted]');
  });

  it('a malformed record is left out of a listing with a warning but fails a read by id', async () => {
    const bad = fake.addIssue({ title: 'bad', labels: ['workflow::todo'] });
    fake.addIssue({ title: 'good', labels: ['workflow::todo'] });
    fake.issue(bad).malformed = true;
    const tracker = trackerOver();
    expect((await tracker.fetchCandidateIssues()).map((i) => i.title)).toEqual(['good']);
    expect(warnings.join('\n')).toMatch(/no title; that issue is left out/);
    await expectTrackerError(tracker.fetchIssueById(globalId(bad)), 'tracker_payload_error');
  });
});
