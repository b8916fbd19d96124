/**
 * `orchestrator run` end to end against the fake Linear: the real CLI in a child process,
 * `tracker.kind: linear` pointed at the fake through `tracker.endpoint`, the `mock` runtime as
 * real subprocesses. Checks the order work is dispatched in (priority first, a blocked issue
 * held until its blocker is done), what lands in the fake (workflow-state changes, comments),
 * that a state changed by a person while an agent works stops that session, and that the API
 * key stays with the orchestrator: not in the agent's environment, not in a hook's, not in
 * any log line.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type FakeIssue,
  type FakeLinear,
  fakeLinearTracker,
  startFakeLinear,
} from '../support/fake-linear/server.js';
import { freePort } from '../support/ports.js';
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

const TOKEN = 'lin_api_e2eSecretKey_5d2c8e1f9a7b';
let fake: FakeLinear | null = null;

afterEach(async () => {
  await fake?.close();
  fake = null;
});

async function startAgainstFake(
  seed: (fake: FakeLinear) => void,
  config: Record<string, unknown> = {},
): Promise<{ service: ServiceHandle; project: Project; fake: FakeLinear; base: string }> {
  const f = await startFakeLinear({ token: TOKEN });
  fake = f;
  seed(f);
  const project = createProject({
    issues: [],
    config: {
      tracker: {
        ...fakeLinearTracker(f),
        comments: { on_dispatch: true, on_completion: true },
      },
      file: null,
      linear: { max_rate_limit_wait_ms: 10_000 },
      ...config,
    },
  });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const service = startService(project, {
    logLevel: 'debug',
    args: ['--port', String(port)],
    env: { LINEAR_API_KEY: TOKEN },
  });
  return { service, project, fake: f, base };
}

/** The workflow states an issue was moved to, in order, as the fake received them. */
function transitions(f: FakeLinear, issueId: string): string[] {
  return f.requests
    .filter(
      (r) => r.operationName === 'OrchestratorSetState' && r.status === 200 && r.variables.id === issueId,
    )
    .map((r) => f.states.get(String(r.variables.stateId))?.name ?? '?');
}

describe('orchestrator run with the linear tracker (fake Linear)', () => {
  it('dispatches by priority, holds a blocked issue until its blocker is done, hands off with comments, and keeps the key to itself', {
    timeout: 150_000,
  }, async () => {
    const {
      service,
      base,
      fake: f,
    } = await startAgainstFake(
      (seed) => {
        seed.addIssue({ title: 'low', description: '!ok done low', priority: 3, state: 'Todo' });
        const urgent = seed.addIssue({
          title: 'urgent',
          description: '!ok done urgent',
          priority: 1,
          state: 'Todo',
        });
        seed.addIssue({
          title: 'high',
          description: '!printenv LINEAR_API_KEY\n!ok done high',
          priority: 2,
          state: 'Todo',
        });
        seed.addIssue({
          title: 'after urgent',
          description: '!ok done after',
          priority: 1,
          state: 'Todo',
          blockedBy: [urgent.id],
        });
        seed.addIssue({ title: 'parked', description: '!ok', priority: 1, state: 'Backlog' });
        seed.addIssue({ title: 'finished', description: '!ok', priority: 1, state: 'Done' });
      },
      {
        agent: { max_concurrent_agents: 1 },
        hooks: { after_create: 'env > hook-env.txt' },
      },
    );
    const [low, urgent, high, after, parked, finished] = [1, 2, 3, 4, 5, 6].map((n) =>
      f.issue(`ENG-${n}`),
    ) as [FakeIssue, FakeIssue, FakeIssue, FakeIssue, FakeIssue, FakeIssue];
    const inReview = (...issues: FakeIssue[]) => issues.every((i) => f.stateOf(i) === 'Human Review');
    await waitFor('ENG-1, ENG-2 and ENG-3 in Human Review', () => inReview(low, urgent, high), {
      timeoutMs: 90_000,
      explain: () =>
        `${service.tail()}\n${[...f.issues.values()].map((i) => `${f.identifierOf(i)} ${f.stateOf(i)}`).join('\n')}`,
    });
    const dispatched = () => service.logsWith('dispatching').map((l) => String(l.issue_identifier));
    // Priority 1, 2, 3; the priority-1 issue blocked by ENG-2 (in review, not done) is held.
    expect(dispatched().slice(0, 3)).toEqual(['ENG-2', 'ENG-3', 'ENG-1']);
    const ticks = service.logsWith('tick completed').length;
    await waitFor('three more ticks', () => service.logsWith('tick completed').length >= ticks + 3, {
      explain: () => service.tail(),
    });
    expect(dispatched()).not.toContain('ENG-4');
    expect(f.stateOf(after)).toBe('Todo');

    const doneAt = Date.now();
    f.setState(urgent.id, 'Done');
    await waitFor('ENG-4 in Human Review once its blocker is done', () => inReview(after), {
      timeoutMs: 60_000,
      explain: () => service.tail(),
    });
    const afterDispatch = service.logsWith('dispatching').find((l) => l.issue_identifier === 'ENG-4');
    expect(Date.parse(String(afterDispatch?.time))).toBeGreaterThanOrEqual(doneAt - 1_000);

    // Each worked issue went to In Progress on dispatch, then to Human Review at handoff.
    for (const issue of [low, urgent, high, after])
      expect(transitions(f, issue.id)).toEqual(['In Progress', 'Human Review']);
    await waitFor('dispatch and completion comments on the worked issues', () =>
      [low, urgent, high, after].every((i) => f.commentsOf(i).length >= 2),
    );
    expect(
      f
        .commentsOf(high)
        .map((c) => c.body)
        .join('\n'),
    ).toContain('done high');
    // Issues outside the active states were never touched.
    for (const untouched of [parked, finished]) {
      expect(f.commentsOf(untouched)).toEqual([]);
      expect(transitions(f, untouched.id)).toEqual([]);
    }
    expect(f.stateOf(finished)).toBe('Done');
    // Every poll and write was understood by the (schema-validating) fake: no failed fetch, no warning.
    expect(f.requests.filter((r) => r.status !== 200)).toEqual([]);
    expect(service.logsWith('fetching candidates failed; will try again next tick')).toEqual([]);
    expect(service.logsWith('tracker warning')).toEqual([]);

    // The token is served nowhere: not by the API, the dashboard, the event stream or /metrics.
    expect(servedLeaks(await collectServed(base, ['ENG-1', 'ENG-2', 'ENG-3']), [TOKEN])).toEqual([]);
    const stopped = await service.stop(30_000);
    expect(stopped.code, service.tail()).toBe(0);

    // The key: not in the agent's environment, not in the hook's, in no log line.
    const notices = service.logsWith('agent event').map((l) => String(l.message));
    expect(notices).toContain('LINEAR_API_KEY=(unset)');
    expect(readFileSync(service.logPath, 'utf8').includes(TOKEN)).toBe(false);
    expect(service.stderr().includes(TOKEN)).toBe(false);
    const hookEnv = readFileSync(
      path.join(path.dirname(service.logPath), 'workspaces', 'ENG-3', 'hook-env.txt'),
      'utf8',
    );
    expect(hookEnv).not.toContain(TOKEN);
    expect(hookEnv).not.toContain('LINEAR_API_KEY');
    // Every request to the fake carried the key raw.
    expect(f.requests.every((r) => r.key === 'raw')).toBe(true);
  });

  it('an issue a person moves out of the active states while its agent works gets its session stopped', {
    timeout: 120_000,
  }, async () => {
    const {
      service,
      project,
      fake: f,
    } = await startAgainstFake((seed) => {
      seed.addIssue({ title: 'long job', description: '!abort', state: 'Todo', priority: 2 });
    });
    await service.waitForLog(
      'the working turn of ENG-1',
      (l) => l.msg === 'turn started' && l.issue_identifier === 'ENG-1',
    );
    expect(f.stateOf('ENG-1')).toBe('In Progress');
    f.setState('ENG-1', 'Backlog');
    const run = await waitFor(
      'the run of ENG-1 to close',
      () => {
        const row = dbRuns(project.dbPath, 'ENG-1')[0];
        return row?.ended_at != null ? row : undefined;
      },
      { timeoutMs: 60_000, explain: () => service.tail() },
    );
    expect(run.exit_kind).toBe('cancelled');
    // The person's decision stands: no handoff, no move back.
    expect(f.stateOf('ENG-1')).toBe('Backlog');
    expect(transitions(f, f.issue('ENG-1').id)).toEqual(['In Progress']);
    const stopped = await service.stop(30_000);
    expect(stopped.code, service.tail()).toBe(0);
    expect(dbRuns(project.dbPath, 'ENG-1')).toHaveLength(1);
  });
});
