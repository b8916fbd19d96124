/**
 * The no-progress cap (`agent.max_unchanged_sessions`): a workflow without a handoff state
 * continues an issue the agent finished for as long as it stays active, so an agent that never
 * moves it ran for ever. Sessions in a row that end with the issue in the state their first
 * turn found it in are counted (in the store, across restarts) and enough of them stop the
 * issue like a spent budget: one comment, no retry, nothing dispatched until it moves or the
 * cap is raised.
 */
import { describe, expect, it } from 'vitest';
import {
  nextUnchangedRun,
  type SessionEnd,
  sessionChange,
  UNCHANGED_LIMIT,
  unchangedVerdict,
} from '../../src/orchestrator/budget.js';
import { HARNESS_WORKFLOW, harness } from './harness.js';

const withAgentKey = (line: string) =>
  HARNESS_WORKFLOW.replace('  max_turns: 1\n', `  max_turns: 1\n  ${line}\n`);
const TWO_ACTIVE = HARNESS_WORKFLOW.replace('active_states: [Todo]', 'active_states: [Todo, In Progress]');

/** Runs the queued continuation `n` times (each one session). */
async function continueTimes(s: ReturnType<typeof harness>, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await s.fireRetry();
}

describe('the no-progress cap', () => {
  it('five sessions in a row that leave the issue in its state stop it: no retry is promised, one comment says why and how to go on', async () => {
    const s = harness({ scripts: [] });
    await s.firstRun();
    await continueTimes(s, 4);
    expect(s.adapter.runs).toBe(5);
    expect(s.orchestrator.snapshot().retries).toEqual([]);
    expect(s.store.loadRetries()).toEqual([]);
    expect(s.store.exhaustedIssues()).toMatchObject([
      {
        issueId: 'issue-1',
        exhaustedReason: expect.stringMatching(/^max_unchanged_sessions: 5 of 5 sessions in a row/),
      },
    ]);
    expect(s.comments).toHaveLength(1);
    expect(s.comments[0]).toContain('5 of 5 sessions in a row ended with the issue still in "Todo"');
    expect(s.comments[0]).toContain('raise agent.max_unchanged_sessions');
    expect(s.comments[0]).toContain('tracker.handoff_state');
    // The stop is a budget stop: later ticks leave the issue alone and comment no more.
    await s.orchestrator.tick();
    await s.orchestrator.tick();
    await s.orchestrator.idle();
    expect(s.adapter.runs).toBe(5);
    expect(s.comments).toHaveLength(1);
  });

  it('the count and the stop survive a restart; a raised cap lifts the stop and the count goes on from where it was', async () => {
    const first = harness({ scripts: [] });
    await first.firstRun();
    await continueTimes(first, 2);
    await first.orchestrator.stop();
    expect(first.store.issueBudget('issue-1')).toMatchObject({
      unchangedSessions: 3,
      unchangedState: 'Todo',
    });

    const second = harness({ scripts: [], dir: first.dir });
    await continueTimes(second, 2);
    expect(second.adapter.runs).toBe(2);
    expect(second.orchestrator.snapshot().retries).toEqual([]);
    expect(second.comments).toHaveLength(1);
    await second.orchestrator.stop();

    const same = harness({ scripts: [], dir: first.dir });
    await same.firstRun();
    expect(same.adapter.runs).toBe(0);
    await same.orchestrator.stop();

    const raised = harness({
      scripts: [],
      dir: first.dir,
      workflow: withAgentKey('max_unchanged_sessions: 7'),
    });
    await raised.firstRun();
    await continueTimes(raised, 1);
    expect(raised.adapter.runs).toBe(2);
    expect(raised.orchestrator.snapshot().retries).toEqual([]);
    expect(raised.comments).toEqual([expect.stringContaining('7 of 7 sessions in a row')]);
  });

  it('an issue seen in another state is let go: it moved, so its count no longer applies', async () => {
    const s = harness({
      workflow: TWO_ACTIVE,
      scripts: [],
      tracker: {
        fetchCandidateIssues: async () =>
          ['Todo', 'In Progress'].includes(s.issue.state) ? [{ ...s.issue }] : [],
      },
    });
    await s.firstRun();
    await continueTimes(s, 4);
    expect(s.orchestrator.snapshot().retries).toEqual([]);
    await s.firstRun();
    expect(s.adapter.runs).toBe(5);

    s.issue.state = 'In Progress';
    await s.firstRun();
    expect(s.adapter.runs).toBe(6);
    expect(s.store.exhaustedIssues()).toEqual([]);
    // A new count in the new state: four more sessions, then the stop again.
    await continueTimes(s, 4);
    expect(s.adapter.runs).toBe(10);
    expect(s.orchestrator.snapshot().retries).toEqual([]);
    expect(s.comments.at(-1)).toContain('still in "In Progress"');
  });

  it('0 means no cap: the sixth session is continued like the first', async () => {
    const s = harness({ workflow: withAgentKey('max_unchanged_sessions: 0'), scripts: [] });
    await s.firstRun();
    await continueTimes(s, 5);
    expect(s.adapter.runs).toBe(6);
    expect(s.retry().reason).toBe('continuation');
    expect(s.store.exhaustedIssues()).toEqual([]);
  });

  it('failed sessions are not counted: a failing agent is retried with backoff, not stopped as "no progress"', async () => {
    const failing = Array.from({ length: 7 }, () => ({ error: { kind: 'turn_failed' as const } }));
    const s = harness({ scripts: failing });
    await s.firstRun();
    await continueTimes(s, 6);
    expect(s.adapter.runs).toBe(7);
    expect(s.retry().reason).toBe('error');
    expect(s.store.issueBudget('issue-1')).toMatchObject({ unchangedSessions: 0 });
  });
});

describe('lifting a budget stop', () => {
  it('a raised session budget lets a stopped issue run again, as its comment promises (it stayed stopped for good before)', async () => {
    const first = harness({ workflow: withAgentKey('max_sessions: 1'), scripts: [] });
    await first.firstRun();
    expect(first.orchestrator.snapshot().retries).toEqual([]);
    expect(first.comments).toEqual([expect.stringContaining('until the budget is raised')]);
    await first.orchestrator.stop();

    const raised = harness({ workflow: withAgentKey('max_sessions: 2'), dir: first.dir, scripts: [] });
    await raised.firstRun();
    expect(raised.adapter.runs).toBe(1);
    expect(raised.store.issueBudget('issue-1')).toMatchObject({ sessions: 2 });
    // Spent again at the new limit: stopped again, with a comment of its own.
    expect(raised.orchestrator.snapshot().retries).toEqual([]);
    expect(raised.comments).toEqual([expect.stringContaining('max_sessions')]);
  });
});

describe('what counts as an unchanged session', () => {
  const end = (over: Partial<SessionEnd>): SessionEnd => ({
    exit: 'completed',
    cancelReason: null,
    startState: 'Todo',
    endState: 'Todo',
    moved: false,
    ...over,
  });
  it.each([
    ['a finished session that leaves the state as its first turn found it', 'unchanged', end({})],
    ['the same state spelled in another case', 'unchanged', end({ endState: 'TODO' })],
    ['the agent (or a person) moved the issue', 'changed', end({ endState: 'In Progress' })],
    ['the tracker no longer has the issue', 'changed', end({ endState: '' })],
    ['the orchestrator hands it off or parks it', 'changed', end({ moved: true })],
    [
      'reconciliation stopped it (the issue left the active states)',
      'changed',
      end({ exit: 'cancelled', cancelReason: 'inactive' }),
    ],
    ['a shutdown stopped it', 'unknown', end({ exit: 'cancelled', cancelReason: 'shutdown' })],
    ['it failed in the same state', 'unknown', end({ exit: 'failed' })],
    ['it failed after moving the issue', 'changed', end({ exit: 'failed', endState: 'In Progress' })],
    ['no turn ran', 'unknown', end({ startState: null })],
  ] as const)('%s: %s', (_what, expected, session) => {
    expect(sessionChange(session)).toBe(expected);
  });

  it('a count goes on in the same state, starts again at 1 in another, is cleared by a change and kept by the unknown', () => {
    const run = { sessions: 3, state: 'Todo' };
    expect(nextUnchangedRun(run, 'unchanged', 'todo')).toEqual({ sessions: 4, state: 'Todo' });
    expect(nextUnchangedRun(run, 'unchanged', 'In Progress')).toEqual({ sessions: 1, state: 'In Progress' });
    expect(nextUnchangedRun(run, 'changed', 'Review')).toEqual({ sessions: 0, state: null });
    expect(nextUnchangedRun(run, 'unknown', 'Todo')).toBe(run);
  });

  it('the cap stops only an issue still in the counted state, at the cap, and never when it is 0', () => {
    const run = { sessions: 5, state: 'Todo' };
    expect(unchangedVerdict(run, 5, 'Todo')).toMatchObject({ exhausted: true, limit: UNCHANGED_LIMIT });
    expect(unchangedVerdict(run, 6, 'Todo').exhausted).toBe(false);
    expect(unchangedVerdict(run, 5, 'In Progress').exhausted).toBe(false);
    expect(unchangedVerdict(run, 0, 'Todo').exhausted).toBe(false);
    expect(unchangedVerdict({ sessions: 0, state: null }, 1, 'Todo').exhausted).toBe(false);
  });
});
