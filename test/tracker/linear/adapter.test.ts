import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectTrackerError } from '../../../internal-contracts/tracker/conformance.js';
import type { TrackerError } from '../../../src/domain/errors.js';
import { type FakeLinear, startFakeLinear } from '../../support/fake-linear/server.js';
import { STATES, trackerOver } from './helpers.js';

let fake: FakeLinear;

beforeEach(async () => {
  fake = await startFakeLinear();
});

afterEach(async () => {
  await fake.close();
});

const ops = (name: string) => fake.requests.filter((r) => r.operationName === name);
const titles = (issues: readonly { title: string }[]) => issues.map((i) => i.title).sort();

describe('reads', () => {
  it('an issue carries Linear identifier, branch name, url, assignee id, parent, priority and blockers of type "blocks" only', async () => {
    const parent = fake.addIssue({ title: 'epic', state: 'Backlog' });
    const blocker = fake.addIssue({ title: 'blocker', state: 'Done' });
    const related = fake.addIssue({ title: 'related', state: 'Todo' });
    const user = fake.addUser({ name: 'Ada' });
    const issue = fake.addIssue({
      title: 'Ship the thing',
      state: 'todo',
      priority: 2,
      labels: ['Bug', 'Backend'],
      assigneeId: user.id,
      parentId: parent.id,
      blockedBy: [blocker.id],
      description: 'Do it.',
    });
    fake.relations.push({ id: 'rel-x', type: 'related', issueId: related.id, relatedIssueId: issue.id });
    const { tracker } = trackerOver(fake);
    const read = await tracker.fetchIssueById(issue.id);
    expect(read).toMatchObject({
      id: issue.id,
      identifier: 'ENG-4',
      displayId: 'ENG-4',
      title: 'Ship the thing',
      description: 'Do it.',
      priority: 2,
      state: 'Todo',
      branchName: 'eng-4-ship-the-thing',
      url: 'https://linear.app/fake/issue/ENG-4/ship-the-thing',
      labels: ['bug', 'backend'],
      assignee: user.id,
      issueType: '',
      parent: { id: parent.id, identifier: 'ENG-1' },
      blockedBy: [{ id: blocker.id, identifier: 'ENG-2', state: 'Done' }],
      comments: [],
    });
    const candidate = (await tracker.fetchCandidateIssues()).find((i) => i.id === issue.id);
    expect(candidate?.blockedBy).toEqual([{ id: blocker.id, identifier: 'ENG-2', state: 'Done' }]);
  });

  it('priority 0 ("no priority") is null, so it never ranks as urgent', async () => {
    fake.addIssue({ title: 'none', state: 'Todo', priority: 0 });
    fake.addIssue({ title: 'low', state: 'Todo', priority: 4 });
    const got = await trackerOver(fake).tracker.fetchCandidateIssues();
    expect(Object.fromEntries(got.map((i) => [i.title, i.priority]))).toEqual({ none: null, low: 4 });
  });

  it('candidates are the project issues in active states, matched in any casing on both sides', async () => {
    fake.addIssue({ title: 'todo', state: 'Todo' });
    fake.addIssue({ title: 'started', state: 'In Progress' });
    fake.addIssue({ title: 'review', state: 'Human Review' });
    fake.addIssue({ title: 'done', state: 'Done' });
    const other = fake.addProject({ name: 'Other' });
    fake.addIssue({ title: 'other project', state: 'Todo', project: other.slugId });
    fake.addIssue({ title: 'no project', state: 'Todo', project: null });
    const states = { ...STATES, activeStates: ['TODO', 'in progress'], inProgressState: 'in progress' };
    expect(titles(await trackerOver(fake, { states }).tracker.fetchCandidateIssues())).toEqual([
      'started',
      'todo',
    ]);
    const sent = ops('OrchestratorIssues')[0]?.variables.filter as Record<string, unknown>;
    expect(sent).toEqual({
      project: { slugId: { eq: fake.project.slugId } },
      state: { or: [{ name: { eqIgnoreCase: 'TODO' } }, { name: { eqIgnoreCase: 'in progress' } }] },
    });
  });

  it('assignee "me" is resolved once through viewer and filters the candidates', async () => {
    const other = fake.addUser({ name: 'Someone else' });
    fake.addIssue({ title: 'mine', state: 'Todo', assigneeId: fake.viewer.id });
    fake.addIssue({ title: 'theirs', state: 'Todo', assigneeId: other.id });
    fake.addIssue({ title: 'nobody', state: 'Todo' });
    const { tracker } = trackerOver(fake, { settings: { assignee: 'me' } });
    expect(titles(await tracker.fetchCandidateIssues())).toEqual(['mine']);
    expect(titles(await tracker.fetchCandidateIssues())).toEqual(['mine']);
    expect(ops('OrchestratorViewer')).toHaveLength(1);
    // Other reads are not narrowed by the assignee: a reassigned issue is still seen by state.
    expect(titles(await tracker.fetchIssuesByStates(['Todo']))).toEqual(['mine', 'nobody', 'theirs']);
  });

  it('an assignee given as a user id filters without asking for the viewer', async () => {
    const other = fake.addUser({ name: 'Someone else' });
    fake.addIssue({ title: 'mine', state: 'Todo', assigneeId: fake.viewer.id });
    fake.addIssue({ title: 'theirs', state: 'Todo', assigneeId: other.id });
    const { tracker } = trackerOver(fake, { settings: { assignee: other.id } });
    expect(titles(await tracker.fetchCandidateIssues())).toEqual(['theirs']);
    expect(ops('OrchestratorViewer')).toHaveLength(0);
  });

  it('a page that says more follow without an end cursor is tracker_missing_end_cursor', async () => {
    fake.addIssue({ title: 'one', state: 'Todo' });
    fake.missingEndCursorNext(1);
    await expectTrackerError(trackerOver(fake).tracker.fetchCandidateIssues(), 'tracker_missing_end_cursor');
  });

  it('pages are as large as linear.page_size asks and stop at linear.max_pages with a warning', async () => {
    for (let i = 0; i < 25; i++) fake.addIssue({ title: `issue ${i}`, state: 'Todo' });
    const { tracker, warnings } = trackerOver(fake, { block: { page_size: 10, max_pages: 2 } });
    expect(await tracker.fetchCandidateIssues()).toHaveLength(20);
    expect(ops('OrchestratorIssues').map((r) => r.variables.first)).toEqual([10, 10]);
    expect(warnings).toEqual([expect.stringContaining('stopped after 2 pages (linear.max_pages)')]);
  });

  it('states by ids go in batches of 50 typed [ID!]!, scoped to the project, omitting unknown ids', async () => {
    const ids = Array.from({ length: 120 }, (_, i) => fake.addIssue({ title: `i${i}`, state: 'Todo' }).id);
    const other = fake.addProject({ name: 'Other' });
    const moved = fake.addIssue({ title: 'moved away', state: 'Todo', project: other.slugId });
    const readings = await trackerOver(fake).tracker.fetchIssueStatesByIds([
      ...ids,
      moved.id,
      'gone',
      ids[0] as string,
    ]);
    expect(readings).toHaveLength(120);
    const batches = ops('OrchestratorIssueStates');
    expect(batches.map((r) => (r.variables.ids as string[]).length)).toEqual([50, 50, 22]);
    expect(batches[0]?.query).toContain('$ids: [ID!]!');
  });

  it('states by identifiers ask by team key and number and omit what does not parse', async () => {
    fake.addIssue({ title: 'one', state: 'Todo' });
    fake.addIssue({ title: 'two', state: 'Done' });
    const readings = await trackerOver(fake).tracker.fetchIssueStatesByIdentifiers([
      'eng-2',
      'ENG-1',
      'ENG-9',
      'nope',
    ]);
    expect(readings.map((r) => [r.identifier, r.state]).sort()).toEqual([
      ['ENG-1', 'Todo'],
      ['ENG-2', 'Done'],
    ]);
  });

  it('an issue of another project is not found here, by id or for its comments', async () => {
    const other = fake.addProject({ name: 'Other' });
    const issue = fake.addIssue({ title: 'elsewhere', state: 'Todo', project: other.slugId });
    const { tracker } = trackerOver(fake);
    await expectTrackerError(tracker.fetchIssueById(issue.id), 'tracker_not_found');
    await expectTrackerError(tracker.fetchIssueComments(issue.id), 'tracker_not_found');
  });

  it('comments are read across pages, oldest first, with the author display name', async () => {
    const issue = fake.addIssue({ title: 'chatty', state: 'Todo' });
    const ada = fake.addUser({ name: 'Ada Lovelace', displayName: 'ada' });
    for (let i = 0; i < 120; i++)
      fake.addComment(issue.id, {
        body: `c${i}`,
        userId: ada.id,
        createdAt: new Date(Date.parse('2026-02-01T00:00:00Z') + (120 - i) * 1000).toISOString(),
      });
    const { tracker } = trackerOver(fake);
    const comments = await tracker.fetchIssueComments(issue.id);
    expect(comments).toHaveLength(120);
    expect(comments[0]).toMatchObject({ body: 'c119', author: 'ada' });
    expect(comments.at(-1)?.body).toBe('c0');
    expect((await tracker.fetchIssueById(issue.id)).comments).toHaveLength(120);
  });

  it('an issue with more labels than one nested page is read with a warning naming it', async () => {
    fake.addIssue({
      title: 'labelled',
      state: 'Todo',
      labels: Array.from({ length: 30 }, (_, i) => `l${i}`),
    });
    const { tracker, warnings } = trackerOver(fake);
    const [issue] = await tracker.fetchCandidateIssues();
    expect(issue?.labels).toHaveLength(25);
    expect(warnings).toEqual([expect.stringContaining('ENG-1 has more than 25 labels or relations')]);
  });

  it('a malformed issue is left out of a listing with a warning that names it', async () => {
    const bad = fake.addIssue({ title: 'bad', state: 'Todo' });
    fake.addIssue({ title: 'good', state: 'Todo' });
    fake.malform(bad.id);
    const { tracker, warnings } = trackerOver(fake);
    expect(titles(await tracker.fetchCandidateIssues())).toEqual(['good']);
    expect(warnings).toEqual([expect.stringContaining('issue ENG-1 has no title; that issue is left out')]);
  });
});

describe('writes', () => {
  it('a transition finds the state by name in the issue’s own team, whatever its casing there', async () => {
    const ops2 = fake.addTeam({ key: 'OPS', states: ['todo', 'in progress', 'human review', 'done'] });
    const eng = fake.addIssue({ title: 'eng', state: 'Todo' });
    const opsIssue = fake.addIssue({ title: 'ops', team: ops2.key, state: 'todo' });
    const { tracker } = trackerOver(fake);
    await tracker.transitionIssue(eng.id, 'Human Review');
    await tracker.transitionIssue(opsIssue.id, 'HUMAN REVIEW');
    expect(fake.stateOf(eng)).toBe('Human Review');
    expect(fake.stateOf(opsIssue)).toBe('human review');
    const ids = ops('OrchestratorSetState').map((r) => r.variables.stateId);
    expect(new Set(ids).size).toBe(2);
  });

  it('a configured state missing from the issue’s team is a payload error naming both, and nothing is written', async () => {
    const team = fake.addTeam({ key: 'OPS', name: 'Operations', states: ['Todo', 'Done'] });
    const issue = fake.addIssue({ title: 'ops', team: team.key, state: 'Todo' });
    const error = await trackerOver(fake)
      .tracker.transitionIssue(issue.id, 'Human Review')
      .then(
        () => null,
        (e: unknown) => e as TrackerError,
      );
    expect(error?.kind).toBe('tracker_payload_error');
    expect(error?.message).toContain('"Human Review"');
    expect(error?.message).toContain('Operations (OPS)');
    expect(ops('OrchestratorSetState')).toHaveLength(0);
    expect(fake.stateOf(issue)).toBe('Todo');
  });

  it('a target outside the configured states is a payload error before any request', async () => {
    const issue = fake.addIssue({ title: 'one', state: 'Todo' });
    await expectTrackerError(
      trackerOver(fake).tracker.transitionIssue(issue.id, 'Backlog'),
      'tracker_payload_error',
    );
    expect(fake.requests).toEqual([]);
  });

  it('a transition to the state the issue is already in writes nothing', async () => {
    const issue = fake.addIssue({ title: 'one', state: 'In Progress' });
    await trackerOver(fake).tracker.transitionIssue(issue.id, 'in progress');
    expect(ops('OrchestratorSetState')).toHaveLength(0);
  });

  it('an added label is the issue team’s label before a workspace one, added by id and never created', async () => {
    const ops2 = fake.addTeam({ key: 'OPS' });
    fake.addLabel({ name: 'Urgent' });
    const teamLabel = fake.addLabel({ name: 'urgent', team: 'ENG' });
    fake.addLabel({ name: 'ops-only', team: ops2.key });
    const issue = fake.addIssue({ title: 'one', state: 'Todo', labels: ['bug'] });
    const { tracker } = trackerOver(fake);
    await tracker.addLabel(issue.id, 'URGENT');
    expect(issue.labelIds).toContain(teamLabel.id);
    const labelsBefore = fake.labels.size;
    await expectTrackerError(tracker.addLabel(issue.id, 'ops-only'), 'tracker_payload_error');
    await expectTrackerError(tracker.addLabel(issue.id, 'never-made'), 'tracker_payload_error');
    expect(fake.labels.size).toBe(labelsBefore);
    expect(fake.labelsOf(issue).sort()).toEqual(['bug', 'urgent']);
  });

  it('a label the issue already has (any casing) sends no write', async () => {
    const issue = fake.addIssue({ title: 'one', state: 'Todo', labels: ['Bug'] });
    await trackerOver(fake).tracker.addLabel(issue.id, 'BUG');
    expect(ops('OrchestratorAddLabel')).toHaveLength(0);
    expect(ops('OrchestratorLabelsNamed')).toHaveLength(0);
  });

  it('a comment is posted as written, by the key’s user', async () => {
    const issue = fake.addIssue({ title: 'one', state: 'Todo' });
    await trackerOver(fake).tracker.commentIssue(issue.id, 'hello **world**\n\n- a list');
    expect(fake.commentsOf(issue).map((c) => [c.body, c.userId])).toEqual([
      ['hello **world**\n\n- a list', fake.viewer.id],
    ]);
  });

  it('a write the API answers without success is a retryable tracker_api_error', async () => {
    const issue = fake.addIssue({ title: 'one', state: 'Todo' });
    const refuse: typeof fetch = async (input, init) => {
      const body = JSON.parse(String(init?.body)) as { query: string };
      if (body.query.includes('commentCreate'))
        return Response.json({ data: { commentCreate: { success: false, comment: { id: 'x' } } } });
      return fetch(input, init);
    };
    await expectTrackerError(
      trackerOver(fake, { fetch: refuse }).tracker.commentIssue(issue.id, 'hi'),
      'tracker_api_error',
    );
  });
});
