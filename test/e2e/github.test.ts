/**
 * `orchestrator run` end to end against the fake GitHub: the real CLI in a child process,
 * `tracker.kind: github` pointed at the fake through `tracker.endpoint`, the `mock` runtime
 * as real subprocesses. Checks what lands in the fake (labels, open/closed, comments), that
 * a rate limit in the middle of the work delays it without losing a write, and that the
 * token stays with the orchestrator: not in the agent's environment, not in a hook's, not in
 * any log line.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeGithub, fakeGithubTracker, startFakeGithub } from '../support/fake-github/server.js';
import { freePort } from '../support/ports.js';
import { collectServed, servedLeaks } from '../support/served.js';
import {
  createProject,
  type ServiceHandle,
  startService,
  useServiceCleanup,
  waitFor,
} from '../support/service.js';

useServiceCleanup();

const TOKEN = 'ghp_e2eSecretToken_7c1f9a2b3d4e';
let fake: FakeGithub | null = null;

afterEach(async () => {
  await fake?.close();
  fake = null;
});

function labelsOf(number: number): string[] {
  return (fake as FakeGithub).issue(number).labels.map((l) => l.toLowerCase());
}

function commentsOf(number: number): string[] {
  return (fake as FakeGithub).issue(number).comments.map((c) => c.body);
}

async function startAgainstFake(
  seed: (fake: FakeGithub) => void,
  config: Record<string, unknown> = {},
): Promise<{ service: ServiceHandle; workspaceRoot: string; base: string }> {
  fake = await startFakeGithub({ token: TOKEN });
  for (const label of ['Todo', 'In Progress', 'Review', 'Blocked', 'Done']) fake.addLabel(label);
  seed(fake);
  const project = createProject({
    issues: [],
    config: {
      tracker: {
        ...fakeGithubTracker(fake),
        comments: { on_dispatch: true, on_completion: true, on_blocked: true },
      },
      file: null,
      github: { min_write_interval_ms: 0, max_rate_limit_wait_ms: 10_000 },
      ...config,
    },
  });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const service = startService(project, {
    logLevel: 'debug',
    args: ['--port', String(port)],
    env: { GITHUB_TOKEN: TOKEN },
  });
  return { service, workspaceRoot: project.workspaceRoot, base };
}

describe('orchestrator run with the github tracker (fake GitHub)', () => {
  it('moves issues through in-progress and handoff labels, posts lifecycle comments and the blocked question', {
    timeout: 120_000,
  }, async () => {
    const { service, base } = await startAgainstFake(
      (f) => {
        f.addIssue({ title: 'ship it', body: '!ok done', labels: ['Todo', 'feature'] });
        f.addIssue({
          title: 'needs a human',
          body: '!blocked which database should I use?',
          labels: ['Todo'],
        });
        f.addIssue({ title: 'unlabelled open issue', body: '!printenv GITHUB_TOKEN\n!ok fine' });
        f.addIssue({ title: 'a pull request', body: '!ok', labels: ['Todo'], pull: true });
        f.addIssue({ title: 'closed long ago', body: '!ok', state: 'closed', labels: ['Done'] });
      },
      {
        hooks: { after_create: 'env > hook-env.txt' },
      },
    );
    const f = fake as FakeGithub;
    await waitFor(
      '#1 and #3 in Review, #2 Blocked',
      () =>
        labelsOf(1).includes('review') && labelsOf(3).includes('review') && labelsOf(2).includes('blocked'),
      {
        timeoutMs: 90_000,
        explain: () => `${service.tail()}\n${JSON.stringify([...f.issues.values()], null, 1)}`,
      },
    );
    // Handoff swapped the state label, left topic labels alone and did not close the issue.
    expect(labelsOf(1).sort()).toEqual(['feature', 'review']);
    expect(f.issue(1).state).toBe('open');
    expect(labelsOf(2)).toEqual(['blocked']);
    // In progress was set on the way (the fake saw the label go on), comments were posted.
    const labelPosts = f.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/issues/1/labels'));
    expect(labelPosts.length).toBeGreaterThanOrEqual(2);
    await waitFor('the completion comment on #1', () => commentsOf(1).length >= 2, {
      explain: () => service.tail(),
    });
    expect(commentsOf(2).some((c) => c.includes('which database should I use?'))).toBe(true);
    // The pull request and the closed issue were never touched.
    expect(f.issue(4).labels).toEqual(['Todo']);
    expect(f.issue(4).comments).toEqual([]);
    expect(f.issue(5).comments).toEqual([]);

    // The token is served nowhere: not by the API, the dashboard, the event stream or /metrics.
    expect(servedLeaks(await collectServed(base, ['1', '2', '3']), [TOKEN])).toEqual([]);
    const stopped = await service.stop(30_000);
    expect(stopped.code, service.tail()).toBe(0);

    // The token: not in the agent's environment, not in the hook's, in no log line.
    const notices = service.logsWith('agent event').map((l) => String(l.message));
    expect(notices).toContain('GITHUB_TOKEN=(unset)');
    const logText = readFileSync(service.logPath, 'utf8');
    expect(logText.includes(TOKEN)).toBe(false);
    expect(service.stderr().includes(TOKEN)).toBe(false);
    const hookEnv = readFileSync(
      path.join(path.dirname(service.logPath), 'workspaces', '3', 'hook-env.txt'),
      'utf8',
    );
    expect(hookEnv).not.toContain(TOKEN);
    expect(hookEnv).not.toContain('GITHUB_TOKEN');
  });

  it('a secondary rate limit on a transition delays it and the transition still lands', {
    timeout: 120_000,
  }, async () => {
    const { service } = await startAgainstFake((f) => {
      f.addIssue({ title: 'one', body: '!ok', labels: ['Todo'] });
      f.secondaryLimit(1, 1, (method, p) => method === 'POST' && p.endsWith('/labels'));
    });
    const f = fake as FakeGithub;
    await waitFor('#1 in Review', () => labelsOf(1).includes('review'), {
      timeoutMs: 90_000,
      explain: () => service.tail(),
    });
    const limited = f.requests.findIndex((r) => r.status === 403);
    expect(limited).toBeGreaterThanOrEqual(0);
    const retried = f.requests
      .slice(limited + 1)
      .find((r) => r.method === 'POST' && r.path.endsWith('/labels'));
    expect(retried?.status).toBe(200);
    expect((retried?.at ?? 0) - (f.requests[limited]?.at ?? 0)).toBeGreaterThanOrEqual(900);
    // Both transitions landed: in progress (after the wait), then review.
    expect(labelsOf(1)).toEqual(['review']);
    const stopped = await service.stop(30_000);
    expect(stopped.code, service.tail()).toBe(0);
  });

  it('a spent primary quota with a reset 2 s away is waited out, not spun on, and the work goes on', {
    timeout: 120_000,
  }, async () => {
    const { service } = await startAgainstFake((f) => {
      f.addIssue({ title: 'one', body: '!ok', labels: ['Todo'] });
    });
    const f = fake as FakeGithub;
    await service.waitForLog('a first tick', (l) => l.msg === 'tick completed');
    const from = f.requests.length;
    f.exhaustPrimary(2_000);
    f.addIssue({ title: 'two', body: '!ok', labels: ['Todo'] });
    await waitFor(
      '#1 and #2 in Review',
      () => labelsOf(1).includes('review') && labelsOf(2).includes('review'),
      {
        timeoutMs: 90_000,
        explain: () => service.tail(),
      },
    );
    const refused = f.requests.slice(from).filter((r) => r.status === 403);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    // Polling every 200 ms, a client that spun would have been refused dozens of times: here
    // each request in flight is refused once and then waits for the reset.
    expect(refused.length).toBeLessThanOrEqual(6);
    const byRequest = new Map<string, number[]>();
    for (const r of refused)
      byRequest.set(`${r.method} ${r.path}`, [...(byRequest.get(`${r.method} ${r.path}`) ?? []), r.at]);
    for (const times of byRequest.values())
      for (let i = 1; i < times.length; i++)
        expect((times[i] ?? 0) - (times[i - 1] ?? 0)).toBeGreaterThanOrEqual(900);
    const stopped = await service.stop(30_000);
    expect(stopped.code, service.tail()).toBe(0);
  });

  it('the service survives every tracker failure during polls: 5xx past the retries, 401, 403, 422, 404', {
    timeout: 120_000,
  }, async () => {
    const { service } = await startAgainstFake(
      (f) => {
        f.addIssue({ title: 'one', body: '!ok', labels: ['Todo'] });
        const list = (method: string, p: string) => method === 'GET' && p.endsWith('/issues');
        f.failNext(4, 502, list);
        f.failNext(1, 401, list);
        f.failNext(1, 403, list);
        f.failNext(1, 422, list);
        f.failNext(1, 404, list);
      },
      { polling: { interval_ms: 100 } },
    );
    const f = fake as FakeGithub;
    await waitFor('#1 in Review', () => labelsOf(1).includes('review'), {
      timeoutMs: 90_000,
      explain: () => service.tail(),
    });
    expect(f.requests.filter((r) => r.status >= 400).length).toBeGreaterThanOrEqual(8);
    expect(service.exitStatus()).toBeNull();
    const stopped = await service.stop(30_000);
    expect(stopped.code, service.tail()).toBe(0);
  });
});
