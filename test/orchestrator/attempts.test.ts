/**
 * Attempts are counted one way through the real owner and store: the first run of a claim is
 * attempt 1, whatever runs after attempt N is attempt N+1, and the run row, the queued retry
 * and the tracker comments all carry that number. The error backoff follows the failures in
 * a row instead, and a failure never promises a retry the issue's budget would refuse.
 */
import { describe, expect, it } from 'vitest';
import { failureDelayMs } from '../../src/orchestrator/backoff.js';
import { harness, type Script, T0 } from './harness.js';

const workflow = (agent: string) => `---
tracker:
  kind: file
  active_states: [Todo]
  terminal_states: [Done]
  comments:
    on_dispatch: true
    on_failure: true
file:
  path: issues.json
agent:
  kind: mock
  max_turns: 1
${agent}
---
Work on {{ issue.identifier }}.
`;

const crash: Script = { error: { kind: 'port_exit' } };
const clean: Script = { error: null };

describe('attempts through the orchestrator', () => {
  it('the run row, the queued retry and the comments give the first run 1 and its retry 2 (not 0 and 1)', async () => {
    const s = harness({ scripts: [crash, clean], workflow: workflow('') });
    await s.firstRun();
    expect(s.store.runsForIssue('issue-1', 5).map((r) => r.attempt)).toEqual([1]);
    expect(s.retry()).toMatchObject({
      attempt: 2,
      reason: 'error',
      dueAtMs: T0 + failureDelayMs(1, 300_000),
    });
    expect(s.comments).toEqual([
      'Orchestrator session started.\nAgent: mock\nAttempt: 1',
      'Orchestrator session failed.\nError: port_exit: refused\nRetry: yes, as attempt 2 in 10 s',
    ]);

    await s.fireRetry();
    expect(s.store.runsForIssue('issue-1', 5).map((r) => [r.attempt, r.exitKind])).toEqual([
      [2, 'succeeded'],
      [1, 'failed'],
    ]);
    expect(s.comments.at(-1)).toBe('Orchestrator session started.\nAgent: mock\nAttempt: 2');
  });

  it('a continuation is the next attempt, and a failure after it waits the first backoff, not one grown by the attempt number', async () => {
    const s = harness({ scripts: [clean, crash, crash], workflow: workflow('') });
    await s.firstRun();
    expect(s.retry()).toMatchObject({ attempt: 2, reason: 'continuation' });
    await s.fireRetry();
    const afterFirstFailure = s.clock.now;
    expect(s.retry()).toMatchObject({
      attempt: 3,
      reason: 'error',
      dueAtMs: afterFirstFailure + failureDelayMs(1, 300_000),
    });
    await s.fireRetry();
    expect(s.retry()).toMatchObject({
      attempt: 4,
      reason: 'error',
      dueAtMs: s.clock.now + failureDelayMs(2, 300_000),
    });
  });

  it('a failure on the last session the budget allows promises no retry: it says why, marks the budget spent, and neither queues nor holds the issue', async () => {
    const s = harness({ scripts: [crash], workflow: workflow('  max_sessions: 1') });
    await s.firstRun();
    const snapshot = s.orchestrator.snapshot();
    expect(snapshot.retries).toEqual([]);
    expect(snapshot.held).toEqual([]);
    expect(s.comments.slice(1)).toEqual([
      'Orchestrator session failed.\nError: port_exit: refused\nRetry: no (budget exhausted, max_sessions: 1 of 1 sessions used)',
      'Orchestrator budget exhausted (max_sessions): 1 of 1 sessions used. The issue will not be dispatched again until the budget is raised.',
    ]);
    expect(s.comments.join('\n')).not.toContain('Retry: yes');
    expect(s.store.issueBudget('issue-1')?.exhaustedAt).not.toBeNull();
    // Nothing left to fire: the next tick does not dispatch it either.
    await s.orchestrator.tick();
    await s.orchestrator.idle();
    expect(s.adapter.runs).toBe(1);
  });
});
