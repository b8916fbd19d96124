/**
 * Concurrency limits, measured from the outside: every mock runtime process appends
 * `start`/`stop` lines to the pid log, the tracing wrapper stamps its spawn time and working
 * directory (the issue's workspace), and /proc is sampled for liveness. From those intervals
 * the test computes the most agent processes live at one instant, overall and per state.
 * The credential-verification turn runs inside the worker's slot (before its working turn),
 * so it counts toward the same cap.
 */
import { describe, expect, it } from 'vitest';
import {
  AgentMonitor,
  createProject,
  dbRuns,
  type IssueSpec,
  makeIssue,
  startService,
  useServiceCleanup,
  waitFor,
  waitIdle,
} from '../support/service.js';

useServiceCleanup();

const WORK = '!silent 800\n!ok done';

describe('concurrency caps (pid log + /proc)', () => {
  it('max_concurrent_agents: 12 issues never run more than 3 agent processes at once, and all finish', {
    timeout: 180_000,
  }, async () => {
    const issues = Array.from({ length: 12 }, (_, i) => makeIssue(i + 1, WORK));
    const project = createProject({
      issues,
      traceAgents: true,
      config: { agent: { max_concurrent_agents: 3, stall_timeout_ms: 30_000 } },
    });
    const monitor = new AgentMonitor(project).start();
    const service = startService(project);
    try {
      await waitFor(
        'all 12 issues to reach Review',
        () => project.readIssues().every((i) => i.state === 'Review'),
        { timeoutMs: 150_000, explain: () => `${service.tail()}\n${monitor.describe()}` },
      );
      await waitIdle(service);
    } finally {
      const stopped = await service.stop(30_000);
      monitor.stop();
      expect(stopped, service.tail()).toMatchObject({ code: 0, killed: false });
    }

    const processes = monitor.processes();
    // Every process was attributed to an issue (no blind spots in the measurement).
    expect(processes.filter((p) => p.issueKey === null)).toEqual([]);
    // Verification + one working turn for the first dispatch; one working turn for the others.
    expect(processes.length).toBeGreaterThanOrEqual(13);
    const overall = monitor.maxLive();
    expect(overall.max, monitor.describe()).toBeLessThanOrEqual(3);
    expect(overall.max, 'the measurement saw concurrency at all').toBeGreaterThanOrEqual(2);
    for (const [key, perIssue] of monitor.maxLivePerIssue()) expect(perIssue.max, key).toBe(1);

    const runs = dbRuns(project.dbPath);
    expect(runs).toHaveLength(12);
    expect(runs.every((r) => r.exit_kind === 'succeeded')).toBe(true);
    expect(monitor.liveNow()).toEqual([]);
  });

  it('max_concurrent_agents_by_state: Todo issues never run more than 1 agent at once while In Progress issues use the other slots, and all finish', {
    timeout: 180_000,
  }, async () => {
    const issues: IssueSpec[] = [
      ...Array.from({ length: 6 }, (_, i) => makeIssue(i + 1, WORK, { state: 'Todo', priority: 1 })),
      ...Array.from({ length: 6 }, (_, i) => makeIssue(i + 7, WORK, { state: 'In Progress', priority: 2 })),
    ];
    const initialState = new Map(issues.map((i) => [i.identifier, i.state]));
    const project = createProject({
      issues,
      traceAgents: true,
      config: {
        agent: {
          max_concurrent_agents: 4,
          max_concurrent_agents_by_state: { todo: 1 },
          stall_timeout_ms: 30_000,
        },
      },
    });
    const monitor = new AgentMonitor(project).start();
    const service = startService(project);
    try {
      await waitFor(
        'all 12 issues to reach Review',
        () => project.readIssues().every((i) => i.state === 'Review'),
        { timeoutMs: 150_000, explain: () => `${service.tail()}\n${monitor.describe()}` },
      );
      await waitIdle(service);
    } finally {
      const stopped = await service.stop(30_000);
      monitor.stop();
      expect(stopped, service.tail()).toMatchObject({ code: 0, killed: false });
    }

    expect(monitor.processes().filter((p) => p.issueKey === null)).toEqual([]);
    const stateOf = (key: string | null) => (key === null ? undefined : initialState.get(key));
    const todo = monitor.maxLive((p) => stateOf(p.issueKey) === 'Todo');
    const inProgress = monitor.maxLive((p) => stateOf(p.issueKey) === 'In Progress');
    const overall = monitor.maxLive();
    expect(todo.max, monitor.describe()).toBeLessThanOrEqual(1);
    expect(overall.max, monitor.describe()).toBeLessThanOrEqual(4);
    expect(inProgress.max, 'In Progress issues ran side by side').toBeGreaterThanOrEqual(2);
    expect(todo.max, 'Todo issues ran at all').toBe(1);
    if (process.env.E2E_DEBUG) console.log(monitor.describe(), todo, inProgress, overall);

    const runs = dbRuns(project.dbPath);
    expect(runs).toHaveLength(12);
    expect(runs.every((r) => r.exit_kind === 'succeeded')).toBe(true);
  });
});
