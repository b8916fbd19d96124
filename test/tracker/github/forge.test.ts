/**
 * The GitHub forge against the fake GitHub, built through the registry's `createForge` as the
 * service builds it: one pull request per branch however the calls interleave, labels never
 * created, CI reduced to passing/failing/pending with a cleaned log excerpt, reviews read as
 * each person's latest word, merges pinned to a head, and failures with the tracker's kinds.
 */
import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TrackerError } from '../../../src/domain/errors.js';
import type { ForgeAdapter, PullRequestSpec } from '../../../src/domain/forge.js';
import type { TrackerSettings } from '../../../src/domain/tracker.js';
import { runState } from '../../../src/tracker/github/checks.js';
import { readCapped } from '../../../src/tracker/github/job-log.js';
import { trackerKind } from '../../../src/tracker/registry.js';
import '../../../src/tracker/kinds.js';
import { type FakeGithub, startFakeGithub } from '../../support/fake-github/server.js';
import { githubSettings } from './harness.js';
import { STATES } from './helpers.js';

let fake: FakeGithub;
let warnings: string[];

beforeEach(async () => {
  fake = await startFakeGithub();
  warnings = [];
});

afterEach(async () => {
  await fake.close();
});

async function forge(overrides: Partial<TrackerSettings> = {}): Promise<ForgeAdapter> {
  const create = trackerKind('github')?.createForge;
  if (create === undefined) throw new Error('the github kind offers no forge');
  return create({ ...githubSettings(fake, STATES), ...overrides }, { warn: (m) => warnings.push(m) });
}

async function failure(promise: Promise<unknown>): Promise<TrackerError> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(TrackerError);
  return error as TrackerError;
}

const spec = (over: Partial<PullRequestSpec> = {}): PullRequestSpec => ({
  branch: 'orchestrator/42-fix',
  base: 'main',
  title: 'Fix the widget',
  body: 'Closes #42',
  draft: false,
  labels: [],
  ...over,
});

const posts = () => fake.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/pulls'));

describe('opening pull requests', () => {
  beforeEach(() => fake.pulls.setBranch('orchestrator/42-fix', 'aaa111'));

  it('a second call for the same branch updates the one pull request instead of opening another', async () => {
    const f = await forge();
    const first = await f.openOrUpdatePullRequest(spec());
    expect(first).toMatchObject({ opened: true, state: 'open', headSha: 'aaa111' });
    expect(first.url).toContain(`/pull/${first.number}`);
    const second = await f.openOrUpdatePullRequest(
      spec({ title: 'Fix the widget, v2', body: 'Closes #42 (v2)' }),
    );
    expect(second).toMatchObject({ number: first.number, opened: false });
    expect(fake.pulls.pulls.size).toBe(1);
    expect(fake.issue(first.number)).toMatchObject({ title: 'Fix the widget, v2', body: 'Closes #42 (v2)' });
    const patches = () => fake.pulls.writes.filter((w) => w.method === 'PATCH').length;
    expect(patches()).toBe(1);
    await f.openOrUpdatePullRequest(spec({ title: 'Fix the widget, v2', body: 'Closes #42 (v2)' }));
    expect(patches()).toBe(1);
  });

  it('two calls racing for one branch leave exactly one pull request, opened by one of them', async () => {
    const [a, b] = await Promise.all([
      (await forge()).openOrUpdatePullRequest(spec()),
      (await forge()).openOrUpdatePullRequest(spec()),
    ]);
    expect(a?.number).toBe(b?.number);
    expect([a?.opened, b?.opened].filter(Boolean)).toHaveLength(1);
    expect(fake.pulls.pulls.size).toBe(1);
  });

  it('a create refused because someone opened the pull request in between returns theirs', async () => {
    const theirs = fake.pulls.open({
      head: 'orchestrator/42-fix',
      title: 'Fix the widget',
      body: 'Closes #42',
    });
    fake.pulls.lagListings(1);
    const ref = await (await forge()).openOrUpdatePullRequest(spec());
    expect(ref).toMatchObject({ number: theirs, opened: false });
    expect(posts().map((r) => r.status)).toEqual([422]);
    expect(fake.pulls.pulls.size).toBe(1);
  });

  it('labels the repository lacks are skipped with a warning and never created', async () => {
    fake.addLabel('Agent');
    const ref = await (await forge()).openOrUpdatePullRequest(spec({ labels: ['agent', 'no-such-label'] }));
    expect(fake.issue(ref.number).labels).toEqual(['Agent']);
    expect(fake.labels.has('no-such-label')).toBe(false);
    expect(warnings.join('\n')).toContain('"no-such-label" does not exist');
  });

  it('a draft is opened as a draft against the asked base', async () => {
    fake.pulls.setBranch('release', 'rel000');
    const ref = await (await forge()).openOrUpdatePullRequest(spec({ draft: true, base: 'release' }));
    expect(fake.pulls.pull(ref.number)).toMatchObject({ draft: true, base: 'release' });
    expect(fake.pulls.writes[0]?.body).toMatchObject({ draft: true, head: 'orchestrator/42-fix' });
  });

  it('a pull request reads as open, merged or closed, with its head and mergeability (null while computed)', async () => {
    const f = await forge();
    const { number } = await f.openOrUpdatePullRequest(spec());
    expect(await f.pullRequest(number)).toMatchObject({ state: 'open', mergeable: null, opened: false });
    fake.pulls.pull(number).mergeable = false;
    fake.pulls.setBranch('orchestrator/42-fix', 'bbb222');
    expect(await f.pullRequest(number)).toMatchObject({ mergeable: false, headSha: 'bbb222' });
    fake.pulls.pull(number).mergeable = true;
    await f.merge(number, 'merge', 'bbb222');
    expect((await f.pullRequest(number)).state).toBe('merged');
    const other = fake.pulls.open({ head: 'abandoned' });
    fake.pulls.pull(other).state = 'closed';
    expect((await f.pullRequest(other)).state).toBe('closed');
    expect((await failure(f.pullRequest(999))).kind).toBe('tracker_not_found');
  });
});

/** An Actions log as GitHub serves it: a BOM, a timestamp before every line, colour codes. */
const ACTIONS_LOG = [
  '\uFEFF2026-02-01T10:00:00.1000000Z ##[group]Run npm test',
  '2026-02-01T10:00:01.2000000Z \u001b[36;1mnpm test\u001b[0m',
  '2026-02-01T10:00:02.3000000Z > vitest run',
  '2026-02-01T10:00:03.4000000Z \u001b[31m\u001b[1mFAIL\u001b[22m\u001b[39m test/widget.test.ts > spins',
  '2026-02-01T10:00:03.5000000Z AssertionError: expected 2 to be 3',
  '2026-02-01T10:00:04.6000000Z \u001b[31m##[error]Process completed with exit code 1.\u001b[0m',
  '',
  '',
].join('\r\n');

describe('CI status', () => {
  it('a commit with no check runs yet is pending, never passing', async () => {
    expect(await (await forge()).ciStatus('c0ffee', 20)).toEqual({
      state: 'pending',
      checks: [],
      logExcerpt: [],
    });
  });

  it('a failing Actions job yields the last N lines of its log, colour codes and timestamps gone', async () => {
    fake.pulls.setCheckRuns('c0ffee', [
      { id: 10, name: 'lint', status: 'completed', conclusion: 'success' },
      { id: 11, name: 'external-ci', status: 'completed', conclusion: 'failure', app: 'other-ci' },
      { id: 12, name: 'test', status: 'completed', conclusion: 'failure' },
    ]);
    fake.pulls.setJobLog(12, ACTIONS_LOG);
    const status = await (await forge()).ciStatus('c0ffee', 3);
    expect(status.state).toBe('failing');
    expect(status.checks.map((c) => [c.name, c.state, c.conclusion])).toEqual([
      ['lint', 'passing', 'success'],
      ['external-ci', 'failing', 'failure'],
      ['test', 'failing', 'failure'],
    ]);
    expect(status.logExcerpt).toEqual([
      'FAIL test/widget.test.ts > spins',
      'AssertionError: expected 2 to be 3',
      '##[error]Process completed with exit code 1.',
    ]);
    // The download address is signed: the token never goes there.
    expect(fake.pulls.rawLogAuth).toEqual(['']);
  });

  it('no log is read when no lines are asked for', async () => {
    fake.pulls.setCheckRuns('c0ffee', [{ id: 12, name: 'test', status: 'completed', conclusion: 'failure' }]);
    fake.pulls.setJobLog(12, ACTIONS_LOG);
    const status = await (await forge()).ciStatus('c0ffee', 0);
    expect(status).toMatchObject({ state: 'failing', logExcerpt: [] });
    expect(fake.requests.some((r) => r.path.includes('/actions/jobs/'))).toBe(false);
  });

  it('a log that cannot be read any more leaves the failure reported, without an excerpt', async () => {
    fake.pulls.setCheckRuns('c0ffee', [
      { id: 12, name: 'test', status: 'completed', conclusion: 'timed_out' },
    ]);
    const status = await (await forge()).ciStatus('c0ffee', 5);
    expect(status).toMatchObject({ state: 'failing', logExcerpt: [] });
    expect(warnings.join('\n')).toContain('without a log excerpt');
  });

  it('a log over 1 MiB is read only up to the cap, with a warning, and the excerpt still comes', async () => {
    fake.pulls.setCheckRuns('c0ffee', [{ id: 12, name: 'test', status: 'completed', conclusion: 'failure' }]);
    const line = (i: number) =>
      `2026-02-01T10:00:00.0000000Z line ${String(i).padStart(6, '0')} ${'.'.repeat(40)}`;
    fake.pulls.setJobLog(12, Array.from({ length: 20_000 }, (_, i) => line(i)).join('\n'));
    const status = await (await forge()).ciStatus('c0ffee', 2);
    expect(status.logExcerpt).toHaveLength(2);
    expect(status.logExcerpt[1]).toMatch(/^line \d{6} \.+$/);
    expect(Number(status.logExcerpt[1]?.slice(5, 11))).toBeLessThan(19_999);
    expect(warnings.join('\n')).toContain('over 1 MiB');
  });

  it('finished runs that succeeded, were skipped or neutral pass; one still running keeps it pending', async () => {
    const done = [
      { id: 1, name: 'build', status: 'completed', conclusion: 'success' },
      { id: 2, name: 'docs', status: 'completed', conclusion: 'skipped' },
      { id: 3, name: 'advisory', status: 'completed', conclusion: 'neutral' },
    ];
    fake.pulls.setCheckRuns('c0ffee', done);
    const f = await forge();
    expect((await f.ciStatus('c0ffee', 5)).state).toBe('passing');
    fake.pulls.setCheckRuns('c0ffee', [
      ...done,
      { id: 4, name: 'e2e', status: 'in_progress', conclusion: null },
    ]);
    const status = await f.ciStatus('c0ffee', 5);
    expect(status.state).toBe('pending');
    expect(status.checks.at(-1)).toMatchObject({ state: 'pending', conclusion: null });
  });

  it('runs are read across pages, and a re-run replaces the earlier run of the same name', async () => {
    const runs = Array.from({ length: 150 }, (_, i) => ({
      id: i + 1,
      name: `job-${i}`,
      status: 'completed',
      conclusion: 'success',
    }));
    runs.push({ id: 999, name: 'job-0', status: 'completed', conclusion: 'failure' });
    fake.pulls.setCheckRuns('c0ffee', runs);
    const status = await (await forge()).ciStatus('c0ffee', 0);
    expect(status.checks).toHaveLength(150);
    expect(status.state).toBe('failing');
  });

  it.each([
    ['completed', 'success', 'passing'],
    ['completed', 'neutral', 'passing'],
    ['completed', 'skipped', 'passing'],
    ['completed', 'failure', 'failing'],
    ['completed', 'timed_out', 'failing'],
    ['completed', 'cancelled', 'failing'],
    ['completed', 'action_required', 'failing'],
    ['completed', 'stale', 'pending'],
    ['completed', 'a-word-never-seen', 'pending'],
    ['completed', null, 'pending'],
    ['queued', null, 'pending'],
    ['in_progress', null, 'pending'],
  ])('a run %s with conclusion %s is %s', (status, conclusion, state) => {
    expect(runState(status, conclusion)).toBe(state);
  });

  it('a log read stops at the byte cap and drops the line it cut', async () => {
    const text = `${'x'.repeat(10)}\n${'y'.repeat(10)}\n${'z'.repeat(10)}\n`;
    const stream = new Blob([text]).stream();
    expect(await readCapped(stream, 15)).toEqual({ text: 'x'.repeat(10), truncated: true });
    expect(await readCapped(new Blob([text]).stream(), 1000)).toEqual({ text, truncated: false });
  });
});

describe('reviews', () => {
  let number: number;
  beforeEach(() => {
    number = fake.pulls.open({ head: 'orchestrator/42-fix' });
  });

  it('an approval with nobody asking for changes is approved', async () => {
    fake.pulls.addReview(number, { user: 'alice', state: 'COMMENTED', body: 'looking' });
    fake.pulls.addReview(number, { user: 'alice', state: 'APPROVED' });
    expect(await (await forge()).reviews(number)).toEqual({ approved: true, changesRequested: [] });
  });

  it('changes requested: the review text and its inline comments, bots and outdated lines left out', async () => {
    const review = fake.pulls.addReview(number, {
      user: 'alice',
      state: 'CHANGES_REQUESTED',
      body: 'Two things.',
    });
    const single = fake.pulls.addReviewComment(number, review, {
      user: 'alice',
      body: 'Handle null here',
      path: 'src/widget.ts',
      line: 12,
    });
    const range = fake.pulls.addReviewComment(number, review, {
      user: 'alice',
      body: 'Split this block',
      path: 'src/widget.ts',
      start_line: 30,
      line: 34,
    });
    const bare = fake.pulls.addReviewComment(number, review, {
      user: 'alice',
      body: 'And rename this',
      path: 'src/spin.ts',
      line: 7,
      omitLines: true,
    });
    fake.pulls.addReviewComment(number, review, {
      user: 'alice',
      body: 'old line',
      path: 'src/widget.ts',
      line: 3,
      outdated: true,
    });
    fake.pulls.addReviewComment(number, review, {
      user: 'lint-bot[bot]',
      bot: true,
      body: 'style',
      path: 'src/widget.ts',
      line: 5,
    });
    fake.pulls.addReview(number, {
      user: 'review-bot[bot]',
      bot: true,
      state: 'CHANGES_REQUESTED',
      body: 'bot says no',
    });
    const state = await (await forge()).reviews(number);
    expect(state.approved).toBe(false);
    expect(state.changesRequested.map((f) => [f.id, f.author, f.body, f.path, f.line, f.endLine])).toEqual([
      [`review-${review}`, 'alice', 'Two things.', null, null, null],
      [String(single), 'alice', 'Handle null here', 'src/widget.ts', 12, 12],
      [String(range), 'alice', 'Split this block', 'src/widget.ts', 30, 34],
      [String(bare), 'alice', 'And rename this', 'src/spin.ts', 7, 7],
    ]);
    expect(state.changesRequested.every((f) => f.createdAt !== '')).toBe(true);
  });

  it('a blank review text is not feedback, its comments still are', async () => {
    const review = fake.pulls.addReview(number, { user: 'alice', state: 'CHANGES_REQUESTED', body: '  \n' });
    fake.pulls.addReviewComment(number, review, { user: 'alice', body: 'this', path: 'a.ts', line: 1 });
    const state = await (await forge()).reviews(number);
    expect(state.changesRequested.map((f) => f.body)).toEqual(['this']);
  });

  it("a reviewer's later approval lifts their request for changes; a later plain comment does not", async () => {
    fake.pulls.addReview(number, { user: 'alice', state: 'CHANGES_REQUESTED', body: 'no' });
    fake.pulls.addReview(number, { user: 'bob', state: 'CHANGES_REQUESTED', body: 'not yet' });
    fake.pulls.addReview(number, { user: 'alice', state: 'APPROVED' });
    fake.pulls.addReview(number, { user: 'bob', state: 'COMMENTED', body: 'still looking' });
    const f = await forge();
    const before = await f.reviews(number);
    expect(before.approved).toBe(false);
    expect(before.changesRequested.map((r) => [r.author, r.body])).toEqual([['bob', 'not yet']]);
    fake.pulls.addReview(number, { user: 'bob', state: 'APPROVED' });
    expect(await f.reviews(number)).toEqual({ approved: true, changesRequested: [] });
  });
});

describe('merging', () => {
  let number: number;
  beforeEach(() => {
    fake.pulls.setBranch('orchestrator/42-fix', 'aaa111');
    number = fake.pulls.open({ head: 'orchestrator/42-fix' });
  });

  it('a merge at the current head merges with the asked method', async () => {
    await (await forge()).merge(number, 'squash', 'aaa111');
    expect(fake.pulls.pull(number)).toMatchObject({ merged: true, mergedWith: 'squash', state: 'closed' });
    expect(fake.pulls.writes.at(-1)?.body).toEqual({ sha: 'aaa111', merge_method: 'squash' });
  });

  it('a head that moved is refused as a payload error with GitHub’s reason, and nothing is merged', async () => {
    fake.pulls.setBranch('orchestrator/42-fix', 'ccc333');
    const error = await failure((await forge()).merge(number, 'merge', 'aaa111'));
    expect(error.kind).toBe('tracker_payload_error');
    expect(error.message).toContain('Head branch was modified');
    expect(fake.pulls.pull(number).merged).toBe(false);
  });

  it('a pull request GitHub cannot merge is refused as a payload error', async () => {
    fake.pulls.pull(number).mergeable = false;
    const error = await failure((await forge()).merge(number, 'rebase', 'aaa111'));
    expect(error.kind).toBe('tracker_payload_error');
    expect(error.message).toContain('not mergeable');
    fake.pulls.pull(number).mergeable = true;
    fake.pulls.allowedMergeMethods.delete('rebase');
    const method = await failure((await forge()).merge(number, 'rebase', 'aaa111'));
    expect(method.message).toContain('Rebase merges are not allowed');
    expect(fake.pulls.pull(number).merged).toBe(false);
  });
});

describe('failures', () => {
  it('a rejected token is tracker_auth_error, and the token is in no message', async () => {
    const secret = 'ghp_rejected_secret_4242';
    const f = await forge({ apiKey: secret });
    fake.pulls.setBranch('orchestrator/42-fix', 'aaa111');
    for (const call of [
      f.openOrUpdatePullRequest(spec()),
      f.pullRequest(1),
      f.ciStatus('c0ffee', 5),
      f.reviews(1),
      f.merge(1, 'merge', 'aaa111'),
    ]) {
      const error = await failure(call);
      expect(error.kind).toBe('tracker_auth_error');
      expect(error.message).not.toContain(secret);
      expect(inspect(error, { depth: 8 })).not.toContain(secret);
    }
  });

  it('a workflow without a token gets no forge', async () => {
    const create = trackerKind('github')?.createForge;
    const error = await failure(
      Promise.resolve().then(() => create?.({ ...githubSettings(fake, STATES), apiKey: '' })),
    );
    expect(error.kind).toBe('missing_tracker_api_key');
  });
});
