import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fileAt, firstPullRequest, git, type LoopWorld, startLoopWorld } from '../support/git-repo.js';
import { freePort } from '../support/ports.js';
import { watchSecret } from '../support/proc-watch.js';
import { collectServed, servedLeaks } from '../support/served.js';
import {
  createProject,
  dbRuns,
  type Project,
  type ServiceHandle,
  startService,
  useServiceCleanup,
  waitFor,
} from '../support/service.js';

useServiceCleanup();

const TOKEN = 'ghp_loopSecretToken_4d9e1f7a2b6c';
const BRANCH = 'agent/1';
let world: LoopWorld | null = null;

afterEach(async () => {
  await world?.close();
  world = null;
});

const PROMPT = `{% if merge_conflict %}
!write conflict.txt merged {{ merge_conflict.base }} into {{ merge_conflict.head_sha }}
!commit merge the base in
!ok resolved
{% elsif ci_failure %}
!write ci-log.txt {{ ci_failure.log_lines | join: " | " }}
!commit fix CI of {{ ci_failure.head_sha }}
!ok fixed CI
{% elsif review_comments %}{% for c in review_comments.comments %}
!write review-{{ forloop.index }}.txt {{ c.path }}:{{ c.line }} {{ c.author }} {{ c.body }}
{% endfor %}
!commit address review
!ok addressed review
{% else %}{{ issue.description }}{% endif %}
`;

describe('branch, push, pull request and reactions (real git over HTTP, fake GitHub, mock agent)', () => {
  it('an issue becomes one pull request that takes a CI fix and a review fix, survives a restart without repeats, and is merged and closed', {
    timeout: 240_000,
  }, async () => {
    world = await startLoopWorld(TOKEN, {
      title: 'add a greeting',
      body: '!write greeting.txt hello from the agent\n!commit add greeting\n!ok greeting added',
    });
    const { fake: f, origin: o } = world;
    const project: Project = createProject({
      issues: [],
      prompt: PROMPT,
      config: world.config({
        git: { pull_request: { body: 'Work of the agent for {{ issue.identifier }}.' } },
        reactions: {
          ci_failure: { poll_interval_ms: 1000, max_retries: 2, max_log_lines: 3 },
          review_comments: { poll_interval_ms: 1000, debounce_ms: 0 },
          auto_merge: { poll_interval_ms: 1000, merge_method: 'squash' },
        },
      }),
    });
    const services: ServiceHandle[] = [];
    const watch = watchSecret(TOKEN, { exempt: () => services.map((s) => s.pid) });
    const port = await freePort();
    const start = () => {
      const service = startService(project, {
        logLevel: 'debug',
        args: ['--port', String(port)],
        env: { GITHUB_TOKEN: TOKEN },
      });
      services.push(service);
      return service;
    };
    let service = start();
    const explain = () => `${service.tail(40)}\nheads: ${JSON.stringify(o.heads())}`;

    // 1. Branch, push, pull request linked to the issue, handoff.
    const { pr, head: first } = await firstPullRequest(world, BRANCH, explain);
    expect(fileAt(o.bareDir, BRANCH, 'greeting.txt')).toBe('hello from the agent\n');
    expect(f.issue(pr.number).body).toContain('Closes #1');
    expect(f.issue(pr.number).body).toContain('Work of the agent for 1.');
    // Every request to the repository carried the token, through the askpass helper.
    expect(o.requests.filter((r) => r.path.endsWith('git-receive-pack')).every((r) => r.authorised)).toBe(
      true,
    );

    // 2. CI fails on that head: the failing log lines reach a fix run, whose push updates the same pull request.
    f.pulls.setJobLog(901, 'setting up\nnpm test\nFAIL greeting.test.ts\nexpected "hi" got "hello"\n');
    f.pulls.setCheckRuns(first, [
      { id: 901, name: 'test', status: 'completed', conclusion: 'failure' },
      { id: 902, name: 'lint', status: 'completed', conclusion: 'success' },
    ]);
    const second = await waitFor(
      'the CI fix pushed',
      () => (o.heads()[BRANCH] !== first ? o.heads()[BRANCH] : null),
      { timeoutMs: 60_000, explain },
    );
    expect(fileAt(o.bareDir, BRANCH, 'ci-log.txt')).toBe(
      'npm test | FAIL greeting.test.ts | expected "hi" got "hello"\n',
    );
    await waitFor('#1 back in Review', () => f.issue(1).labels.includes('Review'), {
      timeoutMs: 30_000,
      explain,
    });
    expect(f.pulls.pull(pr.number).headSha).toBe(second);

    // 3. Green CI, then a reviewer asks for a change with an inline comment: one review fix run.
    f.pulls.setCheckRuns(second, [{ id: 903, name: 'test', status: 'completed', conclusion: 'success' }]);
    const review = f.pulls.addReview(pr.number, {
      user: 'alice',
      state: 'CHANGES_REQUESTED',
      body: 'Almost.',
    });
    f.pulls.addReviewComment(pr.number, review, {
      user: 'alice',
      body: 'say hi instead',
      path: 'greeting.txt',
      line: 1,
    });
    const third = await waitFor(
      'the review fix pushed',
      () => (o.heads()[BRANCH] !== second ? o.heads()[BRANCH] : null),
      { timeoutMs: 60_000, explain },
    );
    expect(fileAt(o.bareDir, BRANCH, 'review-1.txt')).toBe(': alice Almost.\n');
    expect(fileAt(o.bareDir, BRANCH, 'review-2.txt')).toBe('greeting.txt:1 alice say hi instead\n');
    await waitFor('#1 in Review again', () => f.issue(1).labels.includes('Review'), {
      timeoutMs: 30_000,
      explain,
    });

    // 4. A restart while the same review still stands: nothing is sent again.
    expect((await service.stop(30_000)).code).toBe(0);
    const runsBefore = dbRuns(project.dbPath).length;
    service = start();
    await waitFor('three polls after the restart', () => service.logsWith('tick completed').length >= 8, {
      timeoutMs: 30_000,
      explain,
    });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(dbRuns(project.dbPath)).toHaveLength(runsBefore);
    expect(o.heads()[BRANCH]).toBe(third);

    // 5. Approved and green: merged with the configured method, and the issue is closed.
    f.pulls.setCheckRuns(third, [{ id: 904, name: 'test', status: 'completed', conclusion: 'success' }]);
    f.pulls.pull(pr.number).mergeable = true;
    f.pulls.addReview(pr.number, { user: 'alice', state: 'APPROVED' });
    await waitFor('merged', () => f.pulls.pull(pr.number).merged, { timeoutMs: 30_000, explain });
    expect(f.pulls.pull(pr.number).mergedWith).toBe('squash');
    await waitFor('#1 closed as Done', () => f.issue(1).state === 'closed', { timeoutMs: 30_000, explain });

    const runs = dbRuns(project.dbPath, '1');
    expect(runs.map((r) => [r.exit_kind, (r as unknown as { reaction: string | null }).reaction])).toEqual([
      ['succeeded', null],
      ['succeeded', 'ci_failure'],
      ['succeeded', 'review_comments'],
    ]);
    // One pull request for the branch, ever.
    expect(f.pulls.all().filter((p) => p.head === BRANCH)).toHaveLength(1);

    // The token: in no process but the service, not in the clone's config, the logs or the API.
    const base = `http://127.0.0.1:${port}`;
    expect(servedLeaks(await collectServed(base, ['1']), [TOKEN])).toEqual([]);
    expect((await service.stop(30_000)).code).toBe(0);
    const seen = watch.stop();
    expect(seen.scans).toBeGreaterThan(100);
    expect(seen.leaks).toEqual([]);
    const workspace = path.join(project.workspaceRoot, '1');
    expect(readFileSync(path.join(workspace, '.git', 'config'), 'utf8')).not.toContain(TOKEN);
    for (const s of services) expect(s.stderr()).not.toContain(TOKEN);
    for (const file of readdirSync(project.dir).filter((n) => n.endsWith('.jsonl'))) {
      expect(readFileSync(path.join(project.dir, file), 'utf8')).not.toContain(TOKEN);
    }
  });
  it('a merge conflict gets a fix run with the base fetched by the service; a CI failure past max_retries asks a person once', {
    timeout: 180_000,
  }, async () => {
    world = await startLoopWorld(
      TOKEN,
      { title: 'add a greeting', body: '!write greeting.txt hello\n!commit add greeting\n!ok' },
      ['needs-human'],
    );
    const { fake: f, origin: o, seedDir } = world;
    const project = createProject({
      issues: [],
      prompt: PROMPT,
      config: world.config({
        git: {},
        reactions: {
          merge_conflict: { poll_interval_ms: 1000 },
          ci_failure: { poll_interval_ms: 1000, max_retries: 1, escalation: 'label' },
        },
      }),
    });
    const service = startService(project, { env: { GITHUB_TOKEN: TOKEN } });
    const explain = () => `${service.tail(40)}\nheads: ${JSON.stringify(o.heads())}`;
    const { pr, head: first } = await firstPullRequest(world, BRANCH, explain);

    // Someone lands a change on main; GitHub says the pull request no longer merges.
    writeFileSync(path.join(seedDir, 'README.md'), '# demo, changed on main\n');
    git(
      ['-c', 'user.name=seed', '-c', 'user.email=seed@localhost', 'commit', '--quiet', '-am', 'main moves'],
      seedDir,
    );
    git(['push', '--quiet', o.bareDir, 'main'], seedDir);
    const main = o.heads().main as string;
    f.pulls.pull(pr.number).mergeable = false;
    const second = await waitFor(
      'the conflict fix pushed',
      () => (o.heads()[BRANCH] !== first ? o.heads()[BRANCH] : null),
      { timeoutMs: 60_000, explain },
    );
    expect(fileAt(o.bareDir, BRANCH, 'conflict.txt')).toBe(`merged main into ${first}\n`);
    // The service fetched the new base over HTTP with its token before the run.
    const workspace = path.join(project.workspaceRoot, '1');
    expect(git(['rev-parse', 'refs/remotes/origin/main'], workspace)).toBe(main);
    f.pulls.pull(pr.number).mergeable = true;
    await waitFor('#1 back in Review', () => f.issue(1).labels.includes('Review'), {
      timeoutMs: 30_000,
      explain,
    });

    // CI fails; one fix run (max_retries: 1); it fails again on the fix: a person is asked, once.
    f.pulls.setCheckRuns(second, [{ id: 1, name: 'test', status: 'completed', conclusion: 'failure' }]);
    const third = await waitFor(
      'the CI fix pushed',
      () => (o.heads()[BRANCH] !== second ? o.heads()[BRANCH] : null),
      { timeoutMs: 60_000, explain },
    );
    await waitFor('#1 in Review after the CI fix', () => f.issue(1).labels.includes('Review'), {
      timeoutMs: 30_000,
      explain,
    });
    f.pulls.setCheckRuns(third, [{ id: 2, name: 'test', status: 'completed', conclusion: 'failure' }]);
    await waitFor('needs-human on #1', () => f.issue(1).labels.includes('needs-human'), {
      timeoutMs: 30_000,
      explain,
    });
    await waitFor('more polls', () => service.logsWith('tick completed').length >= 40, {
      timeoutMs: 30_000,
      explain,
    });
    const runs = dbRuns(project.dbPath, '1').map(
      (r) => (r as unknown as { reaction: string | null }).reaction,
    );
    expect(runs).toEqual([null, 'merge_conflict', 'ci_failure']);
    expect(service.logsWith('reaction escalated to a person')).toHaveLength(1);
    expect(o.heads()[BRANCH]).toBe(third);
    expect((await service.stop(30_000)).code).toBe(0);
  });
});
