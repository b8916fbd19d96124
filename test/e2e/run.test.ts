/**
 * `orchestrator run` end to end: the real CLI in a child process, the `file` tracker over a
 * temporary issues file and the `mock` runtime as real subprocesses. Each test drives one
 * path and checks what the service leaves behind: the tracker file (state and comments),
 * the run and turn rows in SQLite, the retry queue (sampled while rows exist, since a retry
 * row is deleted when it fires) and the agent processes (pid log + /proc).
 *
 * Slow by nature (every agent turn starts node + tsx): every test sets its own timeout and
 * waits on conditions with deadlines, never on fixed sleeps.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import {
  AgentMonitor,
  createProject,
  dbBudget,
  dbRetries,
  dbRuns,
  dbTurns,
  makeIssue,
  ms,
  type Project,
  RetryWatcher,
  type RunRow,
  type ServiceHandle,
  startService,
  useServiceCleanup,
  waitFor,
  waitIdle,
} from '../support/service.js';

useServiceCleanup();

const FAILURE_BASE_DELAY_MS = 10_000;
const CONTINUATION_DELAY_MS = 1_000;
/** Slack for the time between the run's end stamp and the retry being saved (same event-loop turn, a few writes). */
const DUE_SLACK_MS = 400;

/** SIGTERM, and the service must exit 0 by itself. */
async function stopCleanly(service: ServiceHandle): Promise<void> {
  const stopped = await service.stop(30_000);
  expect(stopped, service.tail()).toMatchObject({ code: 0, killed: false });
}

/** Waits until `n` more ticks completed after the log line count `from`. */
async function ticksAfter(service: ServiceHandle, from: number, n: number): Promise<void> {
  await waitFor(
    `${n} more ticks`,
    () =>
      service
        .logs()
        .slice(from)
        .filter((l) => l.msg === 'tick completed').length >= n,
    { timeoutMs: 30_000, explain: () => service.tail() },
  );
}

function pidLogLines(project: Project): { event: string; pid: number }[] {
  if (!existsSync(project.pidLogPath)) return [];
  return readFileSync(project.pidLogPath, 'utf8')
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const [event = '', pid = '0'] = l.split(' ');
      return { event, pid: Number(pid) };
    });
}

const waitRuns = (
  project: Project,
  identifier: string,
  what: string,
  ok: (runs: ReturnType<typeof dbRuns>) => boolean,
  service: ServiceHandle,
  timeoutMs = 60_000,
) =>
  waitFor(
    what,
    () => {
      const runs = dbRuns(project.dbPath, identifier);
      return ok(runs) ? runs : undefined;
    },
    {
      timeoutMs,
      explain: () => `${service.tail()}\nruns: ${JSON.stringify(dbRuns(project.dbPath), null, 1)}`,
    },
  );

describe('orchestrator run end to end (file tracker, mock runtime)', () => {
  it('success + handoff: a finished issue is moved to the handoff state, commented once and recorded (not left active or unrecorded)', {
    timeout: 120_000,
  }, async () => {
    const project = createProject({
      issues: [makeIssue(1, '!ok all good')],
      config: { tracker: { comments: { on_completion: true } } },
    });
    const service = startService(project);
    await waitFor('E-1 to reach Review', () => project.issue('E-1').state === 'Review', {
      timeoutMs: 60_000,
      explain: () => service.tail(),
    });
    await waitIdle(service);
    await stopCleanly(service);

    const issue = project.issue('E-1');
    expect(issue.state).toBe('Review');
    const runs = dbRuns(project.dbPath, 'E-1');
    expect(runs).toHaveLength(1);
    const run = runs[0]!;
    expect(run).toMatchObject({
      exit_kind: 'succeeded',
      attempt: 1,
      turns: 1,
      error_kind: null,
      error: null,
    });
    expect(run.session_id).toMatch(/^mock-/);
    expect(run.ended_at).not.toBeNull();
    expect(issue.comments).toHaveLength(1);
    expect(issue.comments?.[0]).toMatchObject({
      author: 'orchestrator',
      body: `Orchestrator session completed.\nTurns: 1\nSession: ${run.session_id}\n\nall good`,
    });
    const turns = dbTurns(project.dbPath, run.id);
    expect(turns).toHaveLength(1);
    expect(turns[0]).toMatchObject({
      turn: 1,
      exit_reason: 'turn_completed',
      error_kind: null,
      final_message: 'all good',
      session_id: run.session_id,
    });
    expect(ms(turns[0]!.started_at)).toBeGreaterThanOrEqual(ms(run.started_at));
    expect(ms(turns[0]!.ended_at)).toBeLessThanOrEqual(ms(run.ended_at));
    expect(dbRetries(project.dbPath)).toEqual([]);
    expect(existsSync(project.workspacePath('E-1'))).toBe(true);
  });

  it('run history: a finished run records the workspace it ran in (runs.workspace is not left empty)', {
    timeout: 120_000,
  }, async () => {
    const project = createProject({ issues: [makeIssue(1, '!ok recorded')] });
    const service = startService(project);
    await waitRuns(project, 'E-1', 'the run to close', (r) => r[0]?.ended_at != null, service);
    await waitIdle(service);
    await stopCleanly(service);
    expect(dbRuns(project.dbPath, 'E-1')[0]?.workspace).toBe(project.workspacePath('E-1'));
  });

  it('continuation: a clean exit on a still-active issue continues after 1 s in the same session (not handed off, not a new session)', {
    timeout: 120_000,
  }, async () => {
    const project = createProject({
      issues: [makeIssue(1, '!ok one step')],
      config: { tracker: { handoff_state: null } },
    });
    const retries = new RetryWatcher(project.dbPath).start();
    const service = startService(project);
    try {
      await waitRuns(
        project,
        'E-1',
        'a second, finished run of E-1',
        (r) => r.length >= 2 && r[1]!.ended_at !== null,
        service,
      );
    } finally {
      retries.stop();
    }
    await stopCleanly(service);

    const [first, second] = dbRuns(project.dbPath, 'E-1') as [
      ReturnType<typeof dbRuns>[0],
      ReturnType<typeof dbRuns>[0],
    ];
    expect(first).toMatchObject({ exit_kind: 'succeeded', attempt: 1, turns: 1 });
    expect(first.session_id).toMatch(/^mock-/);
    const continuation = retries.rows('1').find((r) => r.reason === 'continuation');
    expect(continuation, JSON.stringify(retries.rows())).toBeDefined();
    expect(continuation).toMatchObject({ attempt: 2, session_id: first.session_id, last_error: null });
    const delay = continuation!.due_at_ms - ms(first.ended_at);
    expect(delay).toBeGreaterThanOrEqual(CONTINUATION_DELAY_MS);
    expect(delay).toBeLessThan(CONTINUATION_DELAY_MS + DUE_SLACK_MS);
    // The second run waited for the due time, and resumed the same session.
    expect(ms(second.started_at)).toBeGreaterThanOrEqual(continuation!.due_at_ms - 5);
    expect(second).toMatchObject({ exit_kind: 'succeeded', attempt: 2, session_id: first.session_id });
    for (const turn of dbTurns(project.dbPath, second.id)) expect(turn.session_id).toBe(first.session_id);
    // No handoff: the issue is still where it was, with no comment.
    const issue = project.issue('E-1');
    expect(issue.state).toBe('Todo');
    expect(issue.comments ?? []).toEqual([]);
  });

  it('continuation waiting for a slot: a continuation that finds every slot busy still resumes its session when it finally runs (not a fresh session)', {
    timeout: 150_000,
  }, async () => {
    // One slot. E-1 finishes cleanly and is queued to continue in 1 s; meanwhile the freed slot
    // goes to E-2, so the continuation finds no slot and is queued again until E-2 is done.
    const project = createProject({
      issues: [
        makeIssue(1, '!ok one step', { priority: 1 }),
        makeIssue(2, '!silent 3000\n!ok other', { priority: 2 }),
      ],
      config: {
        tracker: { handoff_state: null },
        agent: { max_concurrent_agents: 1, max_retry_backoff_ms: 1_000 },
      },
    });
    const retries = new RetryWatcher(project.dbPath).start();
    const service = startService(project);
    try {
      await waitRuns(
        project,
        'E-1',
        'the continuation of E-1 to run',
        (r) => r.length >= 2 && r[1]!.ended_at !== null,
        service,
        90_000,
      );
    } finally {
      retries.stop();
    }
    await stopCleanly(service);

    const [first, second] = dbRuns(project.dbPath, 'E-1') as [RunRow, RunRow];
    const queued = retries.rows('1');
    // The path under test was taken: the continuation was re-queued for lack of a slot.
    expect(queued[0]).toMatchObject({ reason: 'continuation', session_id: first.session_id });
    expect(
      queued.some((r) => r.last_error === 'no available orchestrator slots'),
      JSON.stringify(queued),
    ).toBe(true);
    const e2 = dbRuns(project.dbPath, 'E-2')[0]!;
    expect(ms(e2.started_at)).toBeLessThan(ms(second.started_at));
    // Still the same session: a continuation that waited is still a continuation.
    const beforeSecond = queued.filter((r) => r.firstSeenMs <= ms(second.started_at));
    expect(beforeSecond.map((r) => r.session_id)).toEqual(beforeSecond.map(() => first.session_id));
    expect(second.session_id).toBe(first.session_id);
  });

  it('crash then retry: a crashed run is retried after min(10 s, max_retry_backoff_ms) and the retry succeeds (not dropped, not retried at once)', {
    timeout: 120_000,
  }, async () => {
    const cap = 2_000;
    const project = createProject({
      issues: [makeIssue(1, '!crash once\n!ok fixed it')],
      config: { agent: { max_retry_backoff_ms: cap } },
    });
    const retries = new RetryWatcher(project.dbPath).start();
    const service = startService(project);
    try {
      await waitFor('E-1 to reach Review', () => project.issue('E-1').state === 'Review', {
        timeoutMs: 60_000,
        explain: () => service.tail(),
      });
    } finally {
      retries.stop();
    }
    await waitIdle(service);
    await stopCleanly(service);

    const runs = dbRuns(project.dbPath, 'E-1');
    expect(runs.map((r) => [r.attempt, r.exit_kind, r.error_kind])).toEqual([
      [1, 'failed', 'port_exit'],
      [2, 'succeeded', null],
    ]);
    const [failed, succeeded] = runs as [(typeof runs)[0], (typeof runs)[0]];
    const retry = retries.rows('1');
    expect(retry, JSON.stringify(retry)).toHaveLength(1);
    // The retry runs as attempt 2, the number its run row, its logs and the API carry.
    expect(retry[0]).toMatchObject({ attempt: 2, reason: 'error', session_id: null });
    const ofRun = new Set([
      'dispatching',
      'turn started',
      'agent session started',
      'turn ended',
      'worker exited',
    ]);
    const runLines = service.logs().filter((l) => l.issue_identifier === 'E-1' && ofRun.has(l.msg));
    expect(runLines.length).toBeGreaterThanOrEqual(8);
    for (const line of runLines) expect(typeof line.attempt, JSON.stringify(line)).toBe('number');
    expect(service.logsWith('dispatching').map((l) => l.attempt)).toEqual([1, 2]);
    expect(service.logsWith('worker exited').map((l) => [l.attempt, l.exit])).toEqual([
      [1, 'failed'],
      [2, 'succeeded'],
    ]);
    expect(service.logsWith('retry scheduled').map((l) => l.attempt)).toEqual([2]);
    expect(retry[0]!.last_error).toMatch(/^port_exit: /);
    const expected = Math.min(FAILURE_BASE_DELAY_MS * 2 ** (1 - 1), cap);
    const delay = retry[0]!.due_at_ms - ms(failed.ended_at);
    expect(delay).toBeGreaterThanOrEqual(expected);
    expect(delay).toBeLessThan(expected + DUE_SLACK_MS);
    expect(ms(succeeded.started_at)).toBeGreaterThanOrEqual(retry[0]!.due_at_ms - 5);
    expect(dbTurns(project.dbPath, failed.id)).toMatchObject([
      { turn: 1, exit_reason: 'turn_failed', error_kind: 'port_exit' },
    ]);
    expect(dbTurns(project.dbPath, succeeded.id)).toMatchObject([
      { turn: 1, exit_reason: 'turn_completed', final_message: 'fixed it' },
    ]);
    expect(existsSync(path.join(project.workspacePath('E-1'), '.orchestrator', 'mock-crashed'))).toBe(true);
    expect(dbRetries(project.dbPath)).toEqual([]);
  });

  it('stall: an agent silent past stall_timeout_ms is stopped as response_timeout and retried (not left hanging)', {
    timeout: 120_000,
  }, async () => {
    const cap = 2_000;
    // Armed from spawn: it must also cover tsx starting the runtime on a loaded machine.
    const stall = 8_000;
    const project = createProject({
      issues: [makeIssue(1, '!silent 60000\n!ok never')],
      config: { agent: { stall_timeout_ms: stall, max_retry_backoff_ms: cap } },
    });
    const retries = new RetryWatcher(project.dbPath).start();
    const monitor = new AgentMonitor(project).start();
    const service = startService(project);
    try {
      await waitRuns(project, 'E-1', 'the retry run of E-1 to start', (r) => r.length >= 2, service);
    } finally {
      retries.stop();
    }
    await stopCleanly(service);
    monitor.stop();

    const [stalled, retried] = dbRuns(project.dbPath, 'E-1') as [
      ReturnType<typeof dbRuns>[0],
      ReturnType<typeof dbRuns>[0],
    ];
    expect(stalled).toMatchObject({ attempt: 1, exit_kind: 'failed', error_kind: 'response_timeout' });
    expect(dbTurns(project.dbPath, stalled.id)).toMatchObject([
      { turn: 1, exit_reason: 'turn_failed', error_kind: 'response_timeout' },
    ]);
    const turn = dbTurns(project.dbPath, stalled.id)[0]!;
    expect(ms(turn.ended_at) - ms(turn.started_at)).toBeGreaterThanOrEqual(stall);
    const retry = retries.rows('1')[0];
    expect(retry).toMatchObject({ attempt: 2, reason: 'stall' });
    expect(retry!.last_error).toMatch(/^response_timeout: /);
    const delay = retry!.due_at_ms - ms(stalled.ended_at);
    expect(delay).toBeGreaterThanOrEqual(Math.min(FAILURE_BASE_DELAY_MS, cap));
    expect(delay).toBeLessThan(Math.min(FAILURE_BASE_DELAY_MS, cap) + DUE_SLACK_MS);
    // The retry ran (attempt 2) and the shutdown closed it; no agent outlived the service.
    expect(retried.attempt).toBe(2);
    expect(retried.exit_kind).not.toBeNull();
    expect(monitor.liveNow()).toEqual([]);
    const lines = pidLogLines(project);
    expect(lines.filter((l) => l.event === 'stop')).toHaveLength(
      lines.filter((l) => l.event === 'start').length,
    );
  });

  it('BLOCKED: the question becomes a comment, the issue moves to blocked_state and the claim is released (no re-dispatch, no retry, not stuck claimed)', {
    timeout: 120_000,
  }, async () => {
    const project = createProject({ issues: [makeIssue(1, '!blocked which date?')] });
    const retries = new RetryWatcher(project.dbPath).start();
    const service = startService(project);
    await waitFor('E-1 to reach Blocked', () => project.issue('E-1').state === 'Blocked', {
      timeoutMs: 60_000,
      explain: () => service.tail(),
    });
    const run = (
      await waitRuns(project, 'E-1', 'the blocked run to close', (r) => r[0]?.ended_at != null, service)
    )[0]!;
    const agentStarts = pidLogLines(project).filter((l) => l.event === 'start').length;
    await ticksAfter(service, service.logs().length, 5);

    expect(run).toMatchObject({ exit_kind: 'blocked', attempt: 1, turns: 1, error_kind: null });
    expect(dbTurns(project.dbPath, run.id)).toMatchObject([
      { turn: 1, exit_reason: 'turn_completed', final_message: 'BLOCKED: which date?' },
    ]);
    const issue = project.issue('E-1');
    expect(issue.comments?.map((c) => c.body)).toEqual([
      'The agent is blocked and needs an answer:\n\nwhich date?',
    ]);
    expect(dbRuns(project.dbPath, 'E-1')).toHaveLength(1);
    expect(pidLogLines(project).filter((l) => l.event === 'start')).toHaveLength(agentStarts);
    expect(retries.rows()).toEqual([]);

    // Answered: a person moves it back to Todo; a released claim lets it be dispatched again.
    project.editIssue('E-1', { state: 'Todo', description: '!ok answered' });
    await waitFor('E-1 to reach Review after the answer', () => project.issue('E-1').state === 'Review', {
      timeoutMs: 60_000,
      explain: () => service.tail(),
    });
    retries.stop();
    await waitIdle(service);
    await stopCleanly(service);
    expect(dbRuns(project.dbPath, 'E-1').map((r) => [r.attempt, r.exit_kind])).toEqual([
      [1, 'blocked'],
      [1, 'succeeded'],
    ]);
    expect(retries.rows()).toEqual([]);
  });

  it('budget: a session that spends past max_tokens stops as budget_exhausted with exactly one comment, and is never dispatched again (not even after a restart)', {
    timeout: 150_000,
  }, async () => {
    const project = createProject({
      issues: [makeIssue(1, '!usage 40000 20000\n!ok expensive')],
      config: { agent: { max_tokens: 50_000 } },
    });
    const retries = new RetryWatcher(project.dbPath).start();
    let service = startService(project);
    const run = (
      await waitRuns(project, 'E-1', 'the budget run to close', (r) => r[0]?.ended_at != null, service)
    )[0]!;
    await ticksAfter(service, service.logs().length, 6);
    await stopCleanly(service);
    // A restart reads the exhaustion from the database: still no dispatch, no second comment.
    service = startService(project);
    await ticksAfter(service, 0, 6);
    retries.stop();
    await stopCleanly(service);

    expect(run).toMatchObject({ exit_kind: 'budget_exhausted', attempt: 1, turns: 1, total_tokens: 60_000 });
    expect(run.error).toBe('60000 of 50000 tokens used');
    const budgetComments = (project.issue('E-1').comments ?? []).filter((c) =>
      c.body.startsWith('Orchestrator budget exhausted'),
    );
    expect(budgetComments.map((c) => c.body)).toEqual([
      'Orchestrator budget exhausted (max_tokens): 60000 of 50000 tokens used. The issue will not be dispatched again until the budget is raised.',
    ]);
    expect(project.issue('E-1').comments).toHaveLength(1);
    expect(project.issue('E-1').state).toBe('Todo');
    expect(dbRuns(project.dbPath, 'E-1')).toHaveLength(1);
    expect(dbBudget(project.dbPath, '1')).toMatchObject({
      sessions: 1,
      tokens: 60_000,
      exhaustion_reported: 1,
    });
    expect(dbBudget(project.dbPath, '1')?.exhausted_at).not.toBeNull();
    expect(retries.rows()).toEqual([]);
  });

  it('non-retryable failure: exit 127 is agent_not_found, gets no retry row, releases the claim and is held until the issue changes (not re-dispatched on every poll)', {
    timeout: 120_000,
  }, async () => {
    const project = createProject({
      issues: [makeIssue(1, '!exit 127')],
      config: { tracker: { comments: { on_failure: true } }, polling: { interval_ms: 300 } },
    });
    const retries = new RetryWatcher(project.dbPath).start();
    const service = startService(project);
    await waitRuns(
      project,
      'E-1',
      'the failed run of E-1',
      (r) => r.length === 1 && r[0]?.ended_at !== null,
      service,
    );
    await service.waitForLog('the hold', (l) => l.msg.startsWith('issue held'));
    // Several polls later it has not been dispatched again.
    await ticksAfter(service, service.logs().length, 5);
    expect(dbRuns(project.dbPath, 'E-1')).toHaveLength(1);
    // A person fixes the issue: the change lets it go, as a fresh first attempt.
    project.editIssue('E-1', { description: '!ok fixed' });
    await waitRuns(
      project,
      'E-1',
      'a second run of E-1 to succeed',
      (r) => r[1]?.exit_kind === 'succeeded',
      service,
    );
    retries.stop();
    await stopCleanly(service);

    const [first, second] = dbRuns(project.dbPath, 'E-1') as [
      ReturnType<typeof dbRuns>[0],
      ReturnType<typeof dbRuns>[0],
    ];
    expect(first).toMatchObject({ attempt: 1, exit_kind: 'failed', error_kind: 'agent_not_found' });
    expect(dbTurns(project.dbPath, first.id)).toMatchObject([{ turn: 1, error_kind: 'agent_not_found' }]);
    expect(retries.rows()).toEqual([]);
    // Released, not retried: the next dispatch is a fresh first attempt, not a backoff retry.
    expect(second.attempt).toBe(1);
    expect(service.logsWith('held issue changed; it may be dispatched again')).toHaveLength(1);
    const comments = (project.issue('E-1').comments ?? []).map((c) => c.body);
    expect(comments[0]).toMatch(
      /^Orchestrator session failed\.\nError: agent_not_found: .*\nRetry: no \(not retryable\)$/s,
    );
  });

  it('reconcile, terminal: an issue moved to Done while its agent runs gets the agent stopped, the run cancelled and the workspace removed', {
    timeout: 120_000,
  }, async () => {
    const project = createProject({ issues: [makeIssue(1, '!abort')] });
    const retries = new RetryWatcher(project.dbPath).start();
    const monitor = new AgentMonitor(project).start();
    const service = startService(project);
    await service.waitForLog(
      'the working turn of E-1',
      (l) => l.msg === 'turn started' && l.issue_identifier === 'E-1',
    );
    await waitFor('the working agent to be live', () => monitor.liveNow().length === 1);
    expect(existsSync(project.workspacePath('E-1'))).toBe(true);

    project.editIssue('E-1', { state: 'Done' });
    const run = (
      await waitRuns(project, 'E-1', 'the run to close', (r) => r[0]?.ended_at != null, service)
    )[0]!;
    await waitFor('the workspace to be removed', () => !existsSync(project.workspacePath('E-1')), {
      explain: () => service.tail(),
    });
    await waitFor('no live agent', () => monitor.liveNow().length === 0, {
      explain: () => monitor.describe(),
    });
    await ticksAfter(service, service.logs().length, 3);
    retries.stop();
    await stopCleanly(service);
    monitor.stop();

    expect(run).toMatchObject({ exit_kind: 'cancelled', attempt: 1 });
    expect(dbTurns(project.dbPath, run.id)).toMatchObject([{ turn: 1, exit_reason: 'turn_cancelled' }]);
    expect(dbRuns(project.dbPath, 'E-1')).toHaveLength(1);
    expect(project.issue('E-1').state).toBe('Done');
    expect(retries.rows()).toEqual([]);
    // The agent was asked to stop (SIGTERM writes its stop line), not left running.
    const lines = pidLogLines(project);
    expect(lines.filter((l) => l.event === 'stop')).toHaveLength(
      lines.filter((l) => l.event === 'start').length,
    );
  });

  it('reconcile, no longer active: an issue moved to a non-active, non-terminal state gets its agent stopped and the run cancelled, but keeps its workspace', {
    timeout: 120_000,
  }, async () => {
    const project = createProject({ issues: [makeIssue(1, '!abort')] });
    const retries = new RetryWatcher(project.dbPath).start();
    const monitor = new AgentMonitor(project).start();
    const service = startService(project);
    await service.waitForLog(
      'the working turn of E-1',
      (l) => l.msg === 'turn started' && l.issue_identifier === 'E-1',
    );
    await waitFor('the working agent to be live', () => monitor.liveNow().length === 1);

    project.editIssue('E-1', { state: 'Backlog' });
    const run = (
      await waitRuns(project, 'E-1', 'the run to close', (r) => r[0]?.ended_at != null, service)
    )[0]!;
    await waitFor('no live agent', () => monitor.liveNow().length === 0, {
      explain: () => monitor.describe(),
    });
    await ticksAfter(service, service.logs().length, 3);
    retries.stop();
    await stopCleanly(service);
    monitor.stop();

    expect(run).toMatchObject({ exit_kind: 'cancelled', attempt: 1 });
    expect(dbRuns(project.dbPath, 'E-1')).toHaveLength(1);
    expect(project.issue('E-1').state).toBe('Backlog');
    expect(existsSync(project.workspacePath('E-1'))).toBe(true);
    expect(retries.rows()).toEqual([]);
  });

  it('hot reload: a changed agent.max_turns applies to the next dispatch, and not to the session already running', {
    timeout: 150_000,
  }, async () => {
    const project = createProject({ issues: [makeIssue(1, '!silent 2500\n!ok first')] });
    const service = startService(project);
    await service.waitForLog(
      'the working turn of E-1',
      (l) => l.msg === 'turn started' && l.issue_identifier === 'E-1',
    );
    project.writeWorkflow({ agent: { max_turns: 2 } });
    await service.waitForLog(
      'the reload',
      (l) => l.msg === 'workflow reloaded; applies to the next dispatch',
    );
    await waitFor('E-1 to reach Review', () => project.issue('E-1').state === 'Review', {
      timeoutMs: 60_000,
      explain: () => service.tail(),
    });
    project.writeIssues([...project.readIssues(), makeIssue(2, '!ok second')]);
    await waitFor('E-2 to reach Review', () => project.issue('E-2').state === 'Review', {
      timeoutMs: 60_000,
      explain: () => service.tail(),
    });
    await waitIdle(service);
    await stopCleanly(service);

    const [one] = dbRuns(project.dbPath, 'E-1');
    const [two] = dbRuns(project.dbPath, 'E-2');
    expect(one).toMatchObject({ exit_kind: 'succeeded', turns: 1 });
    expect(two).toMatchObject({ exit_kind: 'succeeded', turns: 2 });
    expect(dbTurns(project.dbPath, two!.id).map((t) => t.turn)).toEqual([1, 2]);
  });

  it('graceful shutdown: SIGTERM while an agent runs exits 0 within seconds, runs after_run, closes the run and leaves no agent alive', {
    timeout: 120_000,
  }, async () => {
    const project = createProject({
      issues: [makeIssue(1, '!abort')],
      config: { hooks: { after_run: 'echo "after_run $ORCHESTRATOR_ISSUE_IDENTIFIER" > after_run.txt' } },
    });
    const monitor = new AgentMonitor(project).start();
    const service = startService(project);
    await service.waitForLog(
      'the working turn of E-1',
      (l) => l.msg === 'turn started' && l.issue_identifier === 'E-1',
    );
    await waitFor('the working agent to be live', () => monitor.liveNow().length === 1);

    const t0 = Date.now();
    service.kill('SIGTERM');
    const status = await service.waitExit(15_000);
    const elapsed = Date.now() - t0;
    expect(status, service.tail()).toEqual({ code: 0, signal: null });
    expect(elapsed).toBeLessThan(10_000);
    monitor.stop();

    expect(readFileSync(path.join(project.workspacePath('E-1'), 'after_run.txt'), 'utf8')).toBe(
      'after_run E-1\n',
    );
    expect(monitor.liveNow()).toEqual([]);
    const lines = pidLogLines(project);
    expect(lines.filter((l) => l.event === 'stop')).toHaveLength(
      lines.filter((l) => l.event === 'start').length,
    );
    const runs = dbRuns(project.dbPath, 'E-1');
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ exit_kind: 'cancelled' });
    expect(service.logsWith('orchestrator stopped')).toHaveLength(1);
  });

  it('a second signal during a slow shutdown forces the exit at once (exit 1), instead of waiting for the drain', {
    timeout: 120_000,
  }, async () => {
    const project = createProject({
      issues: [makeIssue(1, '!abort')],
      config: { hooks: { after_run: 'sleep 30', timeout_ms: 60_000 } },
    });
    const service = startService(project);
    await service.waitForLog(
      'the working turn of E-1',
      (l) => l.msg === 'turn started' && l.issue_identifier === 'E-1',
    );
    service.kill('SIGTERM');
    await service.waitForLog(
      'the shutdown to begin',
      (l) => typeof l.msg === 'string' && l.msg.startsWith('shutting down'),
    );
    const t0 = Date.now();
    service.kill('SIGINT');
    const status = await service.waitExit(15_000);
    expect(status, service.tail()).toEqual({ code: 1, signal: null });
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(service.logsWith('second signal: exiting now')).toHaveLength(1);
  });

  it('graceful shutdown racing an exit: SIGTERM while a finished run is being handed off still completes the handoff and exits 0 (the store is not closed under it)', {
    timeout: 120_000,
  }, async () => {
    // A large unrelated issue makes every write of the issues file (transition, comment) take a while.
    const project = createProject({
      issues: [
        makeIssue(1, '!ok done'),
        makeIssue(2, 'padding', { state: 'Done', padding: 'x'.repeat(2 << 20) }),
      ],
      config: { tracker: { comments: { on_completion: true } } },
    });
    const service = startService(project);
    // `worker exited` is logged after the run row is closed, before the handoff's tracker writes.
    await waitFor(
      'E-1 to exit',
      () => service.logs().some((l) => l.msg === 'worker exited' && l.issue_identifier === 'E-1'),
      { intervalMs: 2, timeoutMs: 60_000, explain: () => service.tail() },
    );
    service.kill('SIGTERM');
    const status = await service.waitExit(30_000);

    expect(service.stderr()).not.toMatch(/PersistenceError/);
    expect(status, service.tail()).toEqual({ code: 0, signal: null });
    expect(project.issue('E-1').state).toBe('Review');
    expect((project.issue('E-1').comments ?? []).map((c) => c.body.split('\n')[0])).toEqual([
      'Orchestrator session completed.',
    ]);
    const messages = service.logs().map((l) => l.msg);
    expect(messages.indexOf('issue transitioned')).toBeGreaterThanOrEqual(0);
    expect(messages.indexOf('issue transitioned')).toBeLessThan(messages.indexOf('orchestrator stopped'));
  });

  it('--once: runs one tick, waits for its workers and exits 0 (does not keep polling or leave runs open)', {
    timeout: 120_000,
  }, async () => {
    const project = createProject({
      issues: [
        makeIssue(1, '!ok one', { priority: 1 }),
        makeIssue(2, '!silent 1500\n!ok two', { priority: 2 }),
        makeIssue(3, '!ok three', { priority: 3 }),
      ],
      config: { agent: { max_concurrent_agents: 2 } },
    });
    const service = startService(project, { args: ['--once'] });
    const status = await service.waitExit(90_000);
    expect(status, service.tail()).toEqual({ code: 0, signal: null });

    expect(service.logsWith('tick completed')).toHaveLength(1);
    expect(project.issue('E-1').state).toBe('Review');
    expect(project.issue('E-2').state).toBe('Review');
    expect(project.issue('E-3').state).toBe('Todo');
    const runs = dbRuns(project.dbPath);
    expect(runs.map((r) => [r.identifier, r.exit_kind])).toEqual(
      expect.arrayContaining([
        ['E-1', 'succeeded'],
        ['E-2', 'succeeded'],
      ]),
    );
    expect(runs).toHaveLength(2);
    expect(runs.every((r) => r.ended_at !== null)).toBe(true);
  });

  it('--dry-run: prints the plan and writes nothing (no database, no workspace, tracker file untouched)', {
    timeout: 60_000,
  }, () => {
    const project = createProject({
      issues: [
        makeIssue(1, '!ok', { priority: 1 }),
        makeIssue(2, '!ok', { priority: 2 }),
        makeIssue(3, '!ok', { state: 'Done' }),
      ],
      config: { agent: { max_concurrent_agents: 1 } },
    });
    const before = readFileSync(project.issuesPath);
    const result = runCli(['run', project.workflowPath, '--dry-run'], { cwd: project.dir });
    expect(result.status, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^E-1\s+dispatch\s+\[Todo\] issue 1$/);
    expect(lines[1]).toMatch(/^E-2\s+skip\s+\[Todo\] no_slot: /);
    expect(lines.at(-1)).toBe(
      '2 candidates, 1 would be dispatched to agent "mock" (max_concurrent_agents 1)',
    );
    expect(existsSync(project.dbPath)).toBe(false);
    expect(existsSync(`${project.dbPath}-wal`)).toBe(false);
    expect(existsSync(project.workspaceRoot)).toBe(false);
    expect(existsSync(project.pidLogPath)).toBe(false);
    expect(readFileSync(project.issuesPath).equals(before)).toBe(true);
  });
});
