/**
 * `orchestrator run` end to end against the fake GitLab: the real CLI in a child process,
 * `tracker.kind: gitlab` pointed at the fake through `tracker.endpoint`, the `mock` runtime
 * as real subprocesses. Checks that issues are dispatched in `priority::N` order, that an
 * issue waits for its `is_blocked_by` blocker to be done, what lands in the fake (scoped
 * state labels, opened/closed, notes), that a state change made in GitLab while an agent
 * runs stops it, and that the token stays with the orchestrator: not in the agent's
 * environment, not in a hook's, not in any log line.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeGitlab, fakeGitlabTracker, startFakeGitlab } from '../support/fake-gitlab/server.js';
import { freePort } from '../support/ports.js';
import { collectServed, servedLeaks } from '../support/served.js';
import {
  createProject,
  type Project,
  type ServiceHandle,
  startService,
  useServiceCleanup,
  waitFor,
} from '../support/service.js';

useServiceCleanup();

const TOKEN = 'glpat-e2eSecretToken-4d9c2a7b1f';
const STATE_LABELS = ['Todo', 'In Progress', 'Review', 'Blocked', 'Done'].map(
  (s) => `workflow::${s.toLowerCase()}`,
);
let fake: FakeGitlab | null = null;

afterEach(async () => {
  await fake?.close();
  fake = null;
});

function labelsOf(iid: number): string[] {
  return (fake as FakeGitlab).issue(iid).labels.map((l) => l.toLowerCase());
}

function notesOf(iid: number): string[] {
  return (fake as FakeGitlab).userNotes(iid).map((n) => n.body);
}

/** The iids in the order their in-progress transition reached the fake. */
function startOrder(f: FakeGitlab): number[] {
  const order: number[] = [];
  for (const r of f.requests) {
    const match = /\/issues\/(\d+)$/.exec(r.path);
    if (r.method !== 'PUT' || match === null) continue;
    const iid = Number(match[1]);
    if (!order.includes(iid)) order.push(iid);
  }
  return order;
}

function pidLogLines(project: Project): string[] {
  if (!existsSync(project.pidLogPath)) return [];
  return readFileSync(project.pidLogPath, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.split(' ')[0] ?? '');
}

async function startAgainstFake(
  seed: (fake: FakeGitlab) => void,
  config: Record<string, unknown> = {},
): Promise<{ service: ServiceHandle; project: Project; base: string }> {
  fake = await startFakeGitlab({ token: TOKEN });
  for (const label of STATE_LABELS) fake.addLabel(label);
  seed(fake);
  const project = createProject({
    issues: [],
    config: {
      tracker: {
        ...fakeGitlabTracker(fake),
        comments: { on_dispatch: true, on_completion: true, on_blocked: true },
      },
      file: null,
      gitlab: { retry_backoff_ms: 50, max_rate_limit_wait_ms: 10_000 },
      ...config,
    },
  });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const service = startService(project, {
    logLevel: 'debug',
    args: ['--port', String(port)],
    env: { GITLAB_TOKEN: TOKEN },
  });
  return { service, project, base };
}

describe('orchestrator run with the gitlab tracker (fake GitLab)', () => {
  it('dispatches by priority label, holds a blocked issue until its blocker is done, swaps scoped labels and posts notes', {
    timeout: 150_000,
  }, async () => {
    const { service, base } = await startAgainstFake(
      (f) => {
        f.addIssue({
          title: 'low',
          description: '!ok low done',
          labels: ['workflow::todo', 'priority::3', 'Feature'],
        });
        f.addIssue({
          title: 'high',
          description: '!ok high done',
          labels: ['workflow::todo', 'priority::1'],
        });
        f.addIssue({
          title: 'mid',
          description: '!printenv GITLAB_TOKEN\n!ok mid done',
          labels: ['priority::2'],
        });
        // Most urgent of all, but blocked by #2 until #2 is done.
        f.addIssue({
          title: 'blocked',
          description: '!ok unblocked done',
          labels: ['workflow::todo', 'priority::0'],
          blockedBy: [2],
        });
        f.addIssue({
          title: 'closed long ago',
          description: '!ok',
          state: 'closed',
          labels: ['workflow::done'],
        });
      },
      { agent: { max_concurrent_agents: 1 }, hooks: { after_create: 'env > hook-env.txt' } },
    );
    const f = fake as FakeGitlab;
    const explain = () => `${service.tail()}\n${JSON.stringify([...f.issues.values()], null, 1)}`;
    await waitFor(
      '#1, #2 and #3 in Review',
      () => [1, 2, 3].every((iid) => labelsOf(iid).includes('workflow::review')),
      { timeoutMs: 90_000, explain },
    );
    // One at a time, most urgent first: #2 (priority 1), #3 (2), #1 (3); #4 never touched.
    expect(startOrder(f)).toEqual([2, 3, 1]);
    expect(labelsOf(4)).toEqual(['workflow::todo', 'priority::0']);
    expect(notesOf(4)).toEqual([]);
    // Handoff swapped the state label, left topic labels alone and did not close the issue.
    expect(labelsOf(1).sort()).toEqual(['feature', 'priority::3', 'workflow::review']);
    expect(f.issue(1).state).toBe('opened');

    // A person finishes the blocker in GitLab: #4 becomes eligible and runs.
    f.issue(2).labels = ['workflow::done'];
    f.issue(2).state = 'closed';
    await waitFor('#4 in Review', () => labelsOf(4).includes('workflow::review'), {
      timeoutMs: 60_000,
      explain,
    });
    await waitFor('completion notes on #1 and #4', () => notesOf(1).length >= 2 && notesOf(4).length >= 2, {
      explain,
    });
    expect(f.issue(5).notes).toEqual([]);

    // The token is served nowhere: not by the API, the dashboard, the event stream or /metrics.
    expect(servedLeaks(await collectServed(base, ['1', '2', '3']), [TOKEN])).toEqual([]);
    const stopped = await service.stop(30_000);
    expect(stopped.code, service.tail()).toBe(0);

    // The token: sent to GitLab only as PRIVATE-TOKEN, not in the agent's or hook's environment, in no log line.
    expect(f.requests.every((r) => r.headers['private-token'] === TOKEN || r.method === 'HEAD')).toBe(true);
    expect(f.requests.some((r) => r.path.includes(TOKEN))).toBe(false);
    const notices = service.logsWith('agent event').map((l) => String(l.message));
    expect(notices).toContain('GITLAB_TOKEN=(unset)');
    expect(readFileSync(service.logPath, 'utf8').includes(TOKEN)).toBe(false);
    expect(service.stderr().includes(TOKEN)).toBe(false);
    const hookEnv = readFileSync(
      path.join(path.dirname(service.logPath), 'workspaces', '3', 'hook-env.txt'),
      'utf8',
    );
    expect(hookEnv).not.toContain(TOKEN);
    expect(hookEnv).not.toContain('GITLAB_TOKEN');
  });

  it('closing an issue in GitLab while its agent runs stops the session without a handoff', {
    timeout: 120_000,
  }, async () => {
    const { service, project } = await startAgainstFake((f) => {
      f.addIssue({ title: 'long job', description: '!abort', labels: ['workflow::todo'] });
    });
    const f = fake as FakeGitlab;
    await waitFor(
      '#1 in progress with a live agent',
      () => labelsOf(1).includes('workflow::in progress') && pidLogLines(project).includes('start'),
      {
        timeoutMs: 60_000,
        explain: () => service.tail(),
      },
    );
    f.issue(1).labels = ['workflow::done'];
    f.issue(1).state = 'closed';
    await waitFor(
      'the agent to be stopped',
      () => {
        const lines = pidLogLines(project);
        return lines.filter((l) => l === 'stop').length >= lines.filter((l) => l === 'start').length;
      },
      { timeoutMs: 60_000, explain: () => service.tail() },
    );
    const stopped = await service.stop(30_000);
    expect(stopped.code, service.tail()).toBe(0);
    // No handoff, no reopening: the issue stays as the person left it.
    expect(labelsOf(1)).toEqual(['workflow::done']);
    expect(f.issue(1).state).toBe('closed');
    expect(notesOf(1).some((n) => /complet/i.test(n))).toBe(false);
  });
});
