import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectTrackerError } from '../../../internal-contracts/tracker/conformance.js';
import { TrackerError } from '../../../src/domain/errors.js';
import { reachHttp } from '../../../src/tracker/http/reach.js';
import type { JiraTrackerOptions } from '../../../src/tracker/jira/adapter.js';
import { trackerKind } from '../../../src/tracker/registry.js';
import { type FakeJira, startFakeJira } from '../../support/fake-jira/server.js';
import { jiraSettings, trackerOver } from './harness.js';
import '../../../src/tracker/kinds.js';

const STATES = {
  activeStates: ['Todo', 'In Progress'],
  terminalStates: ['Done', 'Cancelled'],
  handoffState: 'Review',
  inProgressState: 'In Progress',
  blockedState: 'Blocked',
};

let fake: FakeJira;
beforeEach(async () => {
  fake = await startFakeJira({ token: 'tok_SECRET_value_42' });
});
afterEach(async () => {
  await fake.close();
});

const over = (block: Record<string, unknown> = {}, options: JiraTrackerOptions = {}, settings = {}) =>
  trackerOver(fake, STATES, block, options, settings);
const searches = () => fake.requests.filter((r) => r.path === '/rest/api/3/search/jql');

describe('jira tracker: reads', () => {
  it('candidates are asked for by project and active status, most urgent first, then oldest', async () => {
    fake.addIssue({ summary: 'low', status: 'Todo', priority: 4 });
    fake.addIssue({ summary: 'none', status: 'Todo', priority: null });
    fake.addIssue({ summary: 'highest', status: 'In Progress', priority: 1 });
    fake.addIssue({ summary: 'done', status: 'Done', priority: 1 });
    fake.addIssue({ summary: 'older low', status: 'Todo', priority: 4, created: '2020-01-01T00:00:00Z' });
    const issues = await over().fetchCandidateIssues();
    expect(issues.map((i) => i.title)).toEqual(['highest', 'older low', 'low', 'none']);
    expect(issues.map((i) => i.priority)).toEqual([1, 4, 4, null]);
    expect(searches()[0]?.query.jql).toBe(
      'project = "PROJ" AND status in ("Todo", "In Progress") ORDER BY priority DESC, created ASC',
    );
  });

  it('an issue carries its key, url, flattened description, labels, assignee, parent and blockers', async () => {
    const epic = fake.addIssue({ summary: 'epic', status: 'Todo', issuetype: 'Epic' });
    const blocker = fake.addIssue({ summary: 'blocker', status: 'In Progress' });
    const issue = fake.addIssue({
      summary: 'the work',
      status: 'Todo',
      description: {
        type: 'doc',
        version: 1,
        content: [
          { type: 'paragraph', content: [{ type: 'text', text: 'Do it.' }] },
          {
            type: 'bulletList',
            content: [
              {
                type: 'listItem',
                content: [{ type: 'paragraph', content: [{ type: 'text', text: 'carefully' }] }],
              },
            ],
          },
        ],
      },
      labels: ['Backend', 'needs-Review'],
      assignee: 'Dana Scully',
      parent: epic.key,
      priority: 2,
    });
    fake.link(blocker.key, issue.key);
    const other = fake.addIssue({ summary: 'blocked by the work', status: 'Todo' });
    fake.link(issue.key, other.key);
    const read = await over().fetchIssueById(issue.id);
    expect(read).toMatchObject({
      id: issue.id,
      identifier: 'PROJ-3',
      displayId: 'PROJ-3',
      title: 'the work',
      description: 'Do it.\n- carefully',
      state: 'Todo',
      priority: 2,
      url: `${fake.url}/browse/PROJ-3`,
      labels: ['backend', 'needs-review'],
      assignee: 'Dana Scully',
      issueType: 'Task',
      parent: { id: epic.id, identifier: epic.key },
      comments: [],
    });
    // Only the inward "is blocked by" side is a blocker; the issue it blocks is not.
    expect(read.blockedBy).toEqual([{ id: blocker.id, identifier: blocker.key, state: 'In Progress' }]);
    expect(read.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('candidates are read page by page through nextPageToken, each issue once', async () => {
    for (let i = 0; i < 23; i++) fake.addIssue({ summary: `i${i}`, status: 'Todo' });
    const issues = await over({ page_size: 10 }).fetchCandidateIssues();
    expect(new Set(issues.map((i) => i.id)).size).toBe(23);
    const pages = searches();
    expect(pages).toHaveLength(3);
    expect(pages.map((r) => r.query.maxResults)).toEqual(['10', '10', '10']);
    expect(pages[0]?.query.nextPageToken).toBeUndefined();
    expect(pages[1]?.query.nextPageToken).toBeTruthy();
  });

  it('the page cap stops a listing with a warning naming jira.max_pages', async () => {
    for (let i = 0; i < 25; i++) fake.addIssue({ summary: `i${i}`, status: 'Todo' });
    const warnings: string[] = [];
    const issues = await over(
      { page_size: 10, max_pages: 2 },
      { warn: (m) => warnings.push(m) },
    ).fetchCandidateIssues();
    expect(issues).toHaveLength(20);
    expect(warnings).toEqual([expect.stringContaining('jira.max_pages')]);
  });

  it('tracker.query_filter is ANDed in parentheses, so its OR cannot widen the project or states', async () => {
    fake.addIssue({ summary: 'agent', status: 'Todo', labels: ['agent'] });
    fake.addIssue({ summary: 'human', status: 'Todo' });
    fake.addIssue({ summary: 'finished agent', status: 'Done', labels: ['agent'] });
    const tracker = over({}, {}, { queryFilter: 'labels = agent OR labels = bot' });
    expect((await tracker.fetchCandidateIssues()).map((i) => i.title)).toEqual(['agent']);
    expect(searches()[0]?.query.jql).toContain('AND (labels = agent OR labels = bot) ORDER BY');
  });

  it('a query_filter Jira refuses is a payload error carrying what Jira said', async () => {
    const error = await over({}, {}, { queryFilter: 'sprint in openSprints()' })
      .fetchCandidateIssues()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TrackerError);
    expect((error as TrackerError).kind).toBe('tracker_payload_error');
    expect((error as TrackerError).message).toContain("Field 'sprint' does not exist");
  });

  it('an active state the site does not have is refused by Jira, not read as "no candidates"', async () => {
    await expectTrackerError(
      trackerOver(fake, {
        ...STATES,
        activeStates: ['Todo', 'Selected for Development'],
      }).fetchCandidateIssues(),
      'tracker_payload_error',
    );
  });

  it('tracker.assignee "me" asks for currentUser(); an account id is quoted', async () => {
    fake.addIssue({ summary: 'mine', status: 'Todo', assignee: 'Orchestrator Bot' });
    fake.addIssue({ summary: 'theirs', status: 'Todo', assignee: 'Alice' });
    fake.addIssue({ summary: 'nobody', status: 'Todo' });
    expect((await over({}, {}, { assignee: 'me' }).fetchCandidateIssues()).map((i) => i.title)).toEqual([
      'mine',
    ]);
    expect(searches()[0]?.query.jql).toContain('AND assignee = currentUser()');
    expect(
      (await over({}, {}, { assignee: 'acc-alice' }).fetchCandidateIssues()).map((i) => i.title),
    ).toEqual(['theirs']);
    expect(searches()[1]?.query.jql).toContain('AND assignee = "acc-alice"');
  });

  it('states by ids go in batches of 40 ids, asking for the status field only', async () => {
    const ids = Array.from({ length: 45 }, (_, i) => fake.addIssue({ summary: `i${i}`, status: 'Todo' }).id);
    const readings = await over().fetchIssueStatesByIds([...ids, ...ids]);
    expect(readings).toHaveLength(45);
    expect(searches().map((r) => [r.query.jql?.split(',').length, r.query.fields])).toEqual([
      [40, 'status'],
      [5, 'status'],
    ]);
  });

  it('a batch naming an issue that is gone is read one by one and the gone one omitted', async () => {
    const a = fake.addIssue({ summary: 'a', status: 'Todo' });
    const b = fake.addIssue({ summary: 'b', status: 'Done' });
    const readings = await over().fetchIssueStatesByIds([a.id, '99999', b.id]);
    expect(readings).toEqual([
      { id: a.id, identifier: a.key, state: 'Todo' },
      { id: b.id, identifier: b.key, state: 'Done' },
    ]);
    expect(fake.requests.filter((r) => r.path.startsWith('/rest/api/3/issue/')).map((r) => r.status)).toEqual(
      [200, 404, 200],
    );
  });

  it('a malformed record is left out of a state reading with a warning through the context', async () => {
    const a = fake.addIssue({ summary: 'a', status: 'Todo' });
    const b = fake.addIssue({ summary: 'b', status: 'Todo' });
    fake.issue(a.key).malformed = true;
    const warnings: string[] = [];
    const readings = await over({}, { warn: (m) => warnings.push(m) }).fetchIssueStatesByIdentifiers([
      a.key,
      b.key,
    ]);
    expect(readings.map((r) => r.identifier)).toEqual([b.key]);
    expect(warnings).toEqual([
      expect.stringContaining(`issue ${a.key} has no status; that issue is left out`),
    ]);
  });

  it('comments are read across pages, bodies flattened from ADF, oldest first', async () => {
    const issue = fake.addIssue({ summary: 'chatty', status: 'Todo' });
    for (let i = 0; i < 105; i++)
      fake.addComment(issue.key, {
        author: 'Alice',
        body: `c${i}\nline 2`,
        created: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
      });
    const comments = await over().fetchIssueComments(issue.id);
    expect(comments).toHaveLength(105);
    expect(comments[0]).toEqual({
      id: expect.any(String),
      author: 'Alice',
      body: 'c0\nline 2',
      createdAt: '2026-01-01T00:00:00.000Z',
    });
    expect(comments.at(-1)?.body).toBe('c104\nline 2');
    expect(fake.requests.filter((r) => r.path.endsWith('/comment')).map((r) => r.query.startAt)).toEqual([
      '0',
      '100',
    ]);
  });
});

describe('jira tracker: writes', () => {
  it('a transition is chosen by its target status, case-insensitively, not by its name', async () => {
    const issue = fake.addIssue({ summary: 'x', status: 'Todo' });
    await over().transitionIssue(issue.id, 'in progress');
    expect(fake.issue(issue.key).status).toBe('In Progress');
    const post = fake.requests.find((r) => r.method === 'POST' && r.path.endsWith('/transitions'));
    expect(post?.body).toEqual({ transition: { id: '21' } });
  });

  it('no transition to the target is a payload error naming the state and the available targets', async () => {
    const issue = fake.addIssue({ summary: 'x', status: 'Todo' });
    fake.workflow = { Todo: ['In Progress', 'Cancelled'] };
    const error = await over()
      .transitionIssue(issue.id, 'Review')
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'tracker_payload_error' });
    expect((error as Error).message).toContain(
      'no transition to "Review" is available from "Todo" (available: In Progress, Cancelled)',
    );
    expect(fake.issue(issue.key).status).toBe('Todo');
    expect(fake.requests.filter((r) => r.method === 'POST')).toEqual([]);
  });

  it('a transition to the status the issue already has is done without a move', async () => {
    const issue = fake.addIssue({ summary: 'x', status: 'Review' });
    fake.workflow = { Review: ['Done'] };
    await over().transitionIssue(issue.id, 'Review');
    expect(fake.requests.filter((r) => r.method === 'POST')).toEqual([]);
  });

  it('a target outside the configured states is refused before any request', async () => {
    const issue = fake.addIssue({ summary: 'x', status: 'Todo' });
    await expectTrackerError(over().transitionIssue(issue.id, 'Elsewhere'), 'tracker_payload_error');
    expect(fake.requests).toEqual([]);
  });

  it('a comment is written as an ADF document, one paragraph per line', async () => {
    const issue = fake.addIssue({ summary: 'x', status: 'Todo' });
    await over().commentIssue(issue.id, 'Done:\n\n- tests pass');
    const post = fake.requests.find((r) => r.method === 'POST' && r.path.endsWith('/comment'));
    expect(post?.body).toEqual({
      body: {
        type: 'doc',
        version: 1,
        content: [
          { type: 'paragraph', content: [{ type: 'text', text: 'Done:' }] },
          { type: 'paragraph' },
          { type: 'paragraph', content: [{ type: 'text', text: '- tests pass' }] },
        ],
      },
    });
    const [comment] = await over().fetchIssueComments(issue.id);
    expect(comment).toMatchObject({ author: 'Orchestrator Bot', body: 'Done:\n\n- tests pass' });
  });

  it('a label is added lowercased through update.labels, and not again when present in any case', async () => {
    const issue = fake.addIssue({ summary: 'x', status: 'Todo', labels: ['Bug'] });
    const tracker = over();
    await tracker.addLabel(issue.id, 'Needs-Human');
    await tracker.addLabel(issue.id, 'BUG');
    expect(fake.issue(issue.key).labels).toEqual(['Bug', 'needs-human']);
    const puts = fake.requests.filter((r) => r.method === 'PUT');
    expect(puts.map((r) => r.body)).toEqual([{ update: { labels: [{ add: 'needs-human' }] } }]);
  });

  it('a label with a space is refused before any request (Jira labels cannot hold spaces)', async () => {
    const issue = fake.addIssue({ summary: 'x', status: 'Todo' });
    await expectTrackerError(over().addLabel(issue.id, 'needs human'), 'tracker_payload_error');
    expect(fake.requests).toEqual([]);
  });
});

describe('jira tracker: auth and failures', () => {
  it('Cloud sends Basic email:token; bearer sends the token as a personal access token', async () => {
    fake.addIssue({ summary: 'x', status: 'Todo' });
    await over().fetchCandidateIssues();
    await over({ auth: 'bearer', email: null }).fetchCandidateIssues();
    expect(fake.requests.map((r) => [r.auth, r.status])).toEqual([
      ['basic', 200],
      ['bearer', 200],
    ]);
  });

  it('a wrong token is tracker_auth_error, and neither it nor its Basic form is in the message', async () => {
    const tracker = trackerOver(fake, STATES, {}, {}, { apiKey: 'wrong_SECRET_token' });
    const error = (await tracker.fetchCandidateIssues().catch((e: unknown) => e)) as TrackerError;
    expect(error.kind).toBe('tracker_auth_error');
    expect(error.message).not.toContain('wrong_SECRET_token');
    expect(error.message).not.toContain(Buffer.from(`${fake.email}:wrong_SECRET_token`).toString('base64'));
  });

  it.each([
    [401, 'tracker_auth_error'],
    [403, 'tracker_auth_error'],
    [404, 'tracker_not_found'],
    [400, 'tracker_payload_error'],
    [409, 'tracker_api_error'],
  ] as const)('%i is %s, without a retry', async (status, kind) => {
    fake.failNext(5, status);
    await expectTrackerError(over().fetchCandidateIssues(), kind);
    expect(fake.requests).toHaveLength(1);
  });

  it('a 5xx is retried with a bounded backoff, then is tracker_transport_error', async () => {
    const waits: number[] = [];
    fake.failNext(10, 503);
    await expectTrackerError(
      over({}, { retryBaseMs: 100, sleep: async (ms) => void waits.push(ms) }).fetchCandidateIssues(),
      'tracker_transport_error',
    );
    expect(fake.requests).toHaveLength(3);
    expect(waits).toEqual([100, 200]);
  });

  it('a 5xx that clears within the attempts is not an error', async () => {
    fake.addIssue({ summary: 'x', status: 'Todo' });
    fake.failNext(2, 502);
    expect(await over().fetchCandidateIssues()).toHaveLength(1);
  });

  it('a site that refuses connections is tracker_transport_error', async () => {
    const url = fake.url;
    await fake.close();
    const tracker = trackerOver(fake, STATES, {}, {}, { endpoint: url });
    await expectTrackerError(tracker.fetchCandidateIssues(), 'tracker_transport_error');
  });

  it('a 429 is waited out for its Retry-After at most twice, then is tracker_api_error', async () => {
    const waits: number[] = [];
    fake.failNext(3, 429, { retryAfterS: 2 });
    const sleep = async (ms: number) => void waits.push(ms);
    await expectTrackerError(over({}, { sleep }).fetchCandidateIssues(), 'tracker_api_error');
    expect(waits).toEqual([2000, 2000]);
    expect(fake.requests).toHaveLength(3);
  });

  it('a Retry-After longer than jira.max_rate_limit_wait_ms fails at once as retryable', async () => {
    const waits: number[] = [];
    fake.failNext(1, 429, { retryAfterS: 60 });
    const error = (await over({ max_rate_limit_wait_ms: 5000 }, { sleep: async (ms) => void waits.push(ms) })
      .fetchCandidateIssues()
      .catch((e: unknown) => e)) as TrackerError;
    expect(error.kind).toBe('tracker_api_error');
    expect(error.message).toContain('retry after 60 s');
    expect(waits).toEqual([]);
  });

  it('a server that echoes the credential back never gets it into an error message', async () => {
    const echo: typeof fetch = async (_input, init) => {
      const auth = new Headers(init?.headers).get('authorization') ?? '';
      return new Response(
        JSON.stringify({ errorMessages: [`refused ${auth} (token tok_SECRET_value_42)`] }),
        { status: 400 },
      );
    };
    for (const block of [{}, { auth: 'bearer', email: null }]) {
      const error = (await over(block, { fetch: echo })
        .fetchCandidateIssues()
        .catch((e: unknown) => e)) as Error;
      expect(error.message).toContain('refused');
      expect(error.message).not.toContain('tok_SECRET_value_42');
      expect(error.message).not.toContain(
        Buffer.from(`${fake.email}:tok_SECRET_value_42`).toString('base64'),
      );
    }
  });

  it('the tracker built through the registry works against the site', async () => {
    fake.addIssue({ summary: 'x', status: 'Todo' });
    const create = trackerKind('jira')?.create;
    if (create === undefined) throw new Error('no create');
    const tracker = await create(jiraSettings(fake, STATES));
    expect((await tracker.fetchCandidateIssues()).map((i) => i.identifier)).toEqual(['PROJ-1']);
  });

  it('reach: any answer counts; a closed port is "connection refused", with no credential sent', async () => {
    expect(await reachHttp(`${fake.url}/`, fake.url, 1000)).toEqual({ ok: true });
    expect(fake.requests.map((r) => [r.method, r.auth])).toEqual([['HEAD', 'none']]);
    const url = fake.url;
    await fake.close();
    expect(await reachHttp(`${url}/`, url, 1000)).toEqual({
      ok: false,
      address: url,
      reason: 'connection refused',
    });
  });
});
