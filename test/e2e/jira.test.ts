/**
 * `orchestrator run` end to end against the fake Jira: the real CLI in a child process,
 * `tracker.kind: jira` pointed at the fake through `tracker.endpoint`, the `mock` runtime as
 * real subprocesses. Checks the order issues are taken in (priority, and a blocked issue only
 * once its blocker is done), what lands in the fake (workflow transitions, ADF comments),
 * that a status changed in Jira while an agent works stops it, and that the API token stays
 * with the orchestrator: not in the agent's environment, not in a hook's, in no log line.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeJira, fakeJiraTracker, startFakeJira } from '../support/fake-jira/server.js';
import { freePort } from '../support/ports.js';
import { collectServed, servedLeaks } from '../support/served.js';
import {
  createProject,
  dbRuns,
  type ServiceHandle,
  startService,
  useServiceCleanup,
  waitFor,
} from '../support/service.js';

useServiceCleanup();

const TOKEN = 'jira_e2eSecretToken_5d8e1c7a9b';
let fake: FakeJira | null = null;

afterEach(async () => {
  await fake?.close();
  fake = null;
});

async function startAgainstFake(
  seed: (fake: FakeJira) => void,
  config: Record<string, unknown> = {},
): Promise<{ service: ServiceHandle; dir: string; dbPath: string; base: string }> {
  fake = await startFakeJira({ token: TOKEN });
  seed(fake);
  const blocks = fakeJiraTracker(fake);
  const project = createProject({
    issues: [],
    config: {
      tracker: { ...blocks.tracker, comments: { on_dispatch: true, on_completion: true } },
      jira: blocks.jira,
      file: null,
      ...config,
    },
  });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const service = startService(project, {
    logLevel: 'debug',
    args: ['--port', String(port)],
    env: { JIRA_API_TOKEN: TOKEN },
  });
  return { service, dir: project.dir, dbPath: project.dbPath, base };
}

/** Keys in the order the fake saw them moved to In Progress. */
function startedOrder(f: FakeJira): string[] {
  const inProgress = String((f.statuses.indexOf('In Progress') + 1) * 10 + 1);
  return f.requests
    .filter((r) => r.method === 'POST' && r.path.endsWith('/transitions') && r.status === 204)
    .filter((r) => (r.body as { transition?: { id?: string } }).transition?.id === inProgress)
    .map((r) => f.issue(r.path.split('/')[5] as string).key);
}

describe('orchestrator run with the jira tracker (fake Jira)', () => {
  it('takes issues by priority, holds a blocked one until its blocker is done, and hands off with comments', {
    timeout: 150_000,
  }, async () => {
    const { service, base, dir } = await startAgainstFake(
      (f) => {
        f.addIssue({ summary: 'low', status: 'Todo', priority: 4, description: '!ok low done' });
        f.addIssue({
          summary: 'urgent',
          status: 'Todo',
          priority: 1,
          description: '!printenv JIRA_API_TOKEN\n!ok urgent done',
        });
        f.addIssue({ summary: 'medium', status: 'Todo', priority: 3, description: '!ok medium done' });
        const blocker = f.addIssue({ summary: 'blocker', status: 'Review', priority: 5 });
        const blocked = f.addIssue({
          summary: 'blocked',
          status: 'Todo',
          priority: 1,
          description: '!ok unblocked',
        });
        f.link(blocker.key, blocked.key);
        f.addIssue({ summary: 'finished', status: 'Done', priority: 1, description: '!ok' });
      },
      { agent: { max_concurrent_agents: 1 }, hooks: { after_create: 'env > hook-env.txt' } },
    );
    const f = fake as FakeJira;
    const status = (key: string) => f.issue(key).status;
    await waitFor(
      'PROJ-1..3 handed off to Review',
      () => ['PROJ-1', 'PROJ-2', 'PROJ-3'].every((k) => status(k) === 'Review'),
      { timeoutMs: 90_000, explain: () => `${service.tail()}\n${JSON.stringify(startedOrder(f))}` },
    );
    expect(startedOrder(f)).toEqual(['PROJ-2', 'PROJ-3', 'PROJ-1']);
    // Its blocker is in Review (not terminal): PROJ-5 has not been touched.
    const from = service.logs().length;
    await waitFor(
      'three more ticks',
      () =>
        service
          .logs()
          .slice(from)
          .filter((l) => l.msg === 'tick completed').length >= 3,
      {
        explain: () => service.tail(),
      },
    );
    expect(status('PROJ-5')).toBe('Todo');
    expect(f.issue('PROJ-5').comments).toEqual([]);

    f.setStatus('PROJ-4', 'Done');
    await waitFor('PROJ-5 handed off once its blocker is done', () => status('PROJ-5') === 'Review', {
      timeoutMs: 60_000,
      explain: () => service.tail(),
    });
    expect(startedOrder(f)).toEqual(['PROJ-2', 'PROJ-3', 'PROJ-1', 'PROJ-5']);
    await waitFor('the completion comment on PROJ-5', () => f.commentTexts('PROJ-5').length >= 2, {
      explain: () => service.tail(),
    });
    // Lifecycle comments landed as ADF documents and read back as the text that was posted.
    for (const key of ['PROJ-1', 'PROJ-2', 'PROJ-3', 'PROJ-5']) {
      expect(f.issue(key).comments.length, key).toBeGreaterThanOrEqual(2);
      for (const c of f.issue(key).comments) expect(c.body).toMatchObject({ type: 'doc', version: 1 });
    }
    // Never touched: the finished issue and the blocker.
    expect(f.issue('PROJ-6').comments).toEqual([]);
    expect(status('PROJ-6')).toBe('Done');
    // Every request carried Basic auth.
    expect(new Set(f.requests.map((r) => r.auth))).toEqual(new Set(['basic']));

    // The token is served nowhere: not by the API, the dashboard, the event stream or /metrics.
    expect(servedLeaks(await collectServed(base, ['PROJ-1', 'PROJ-2', 'PROJ-5']), [TOKEN])).toEqual([]);
    const stopped = await service.stop(30_000);
    expect(stopped.code, service.tail()).toBe(0);

    // The token: not in the agent's environment, not in the hook's, in no log line.
    const notices = service.logsWith('agent event').map((l) => String(l.message));
    expect(notices).toContain('JIRA_API_TOKEN=(unset)');
    expect(readFileSync(service.logPath, 'utf8')).not.toContain(TOKEN);
    expect(service.stderr()).not.toContain(TOKEN);
    const hookEnv = readFileSync(path.join(dir, 'workspaces', 'PROJ-2', 'hook-env.txt'), 'utf8');
    expect(hookEnv).not.toContain(TOKEN);
    expect(hookEnv).not.toContain('JIRA_API_TOKEN');
  });

  it('a status changed in Jira while the agent works stops the session', { timeout: 120_000 }, async () => {
    const { service, dbPath } = await startAgainstFake((f) => {
      f.addIssue({ summary: 'long job', status: 'Todo', priority: 2, description: '!abort' });
    });
    const f = fake as FakeJira;
    await service.waitForLog(
      'the working turn of PROJ-1',
      (l) => l.msg === 'turn started' && l.issue_identifier === 'PROJ-1',
    );
    expect(f.issue('PROJ-1').status).toBe('In Progress');

    f.setStatus('PROJ-1', 'Cancelled');
    const runs = await waitFor(
      'the run to close',
      () => {
        const rows = dbRuns(dbPath, 'PROJ-1');
        return rows[0]?.ended_at != null ? rows : null;
      },
      { timeoutMs: 60_000, explain: () => service.tail() },
    );
    expect(runs[0]).toMatchObject({ exit_kind: 'cancelled' });
    // The orchestrator did not move it back or hand it off: the operator's status stands.
    expect(f.issue('PROJ-1').status).toBe('Cancelled');
    const stopped = await service.stop(30_000);
    expect(stopped.code, service.tail()).toBe(0);
  });
});
