/**
 * The handoff a finished run earns is written to the store before the tracker is asked,
 * and completed at the next start when the process died in between: finished work is
 * never dispatched again because a transition was lost. A crash is a second owner on the
 * same database while the first one's tracker write never returns.
 */
import { describe, expect, it } from 'vitest';
import { HARNESS_WORKFLOW, harness } from './harness.js';

const WORKFLOW = HARNESS_WORKFLOW.replace(
  '  terminal_states: [Done]\n',
  '  terminal_states: [Done]\n  handoff_state: Review\n',
);
const never = new Promise<void>(() => undefined);

describe('a handoff lost to a crash', () => {
  it('is completed at the next start instead of the issue being dispatched again', async () => {
    const first = harness({
      workflow: WORKFLOW,
      scripts: [{ error: null }],
      tracker: { transitionIssue: () => never },
    });
    await first.orchestrator.tick();
    await expect.poll(() => first.store.loadPendingTransitions()).toHaveLength(1);
    expect(first.store.runsForIssue('issue-1', 5)[0]?.exitKind).toBe('succeeded');

    const second = harness({ workflow: WORKFLOW, dir: first.dir, scripts: [{ error: null }] });
    await second.orchestrator.tick();
    await second.orchestrator.idle();
    expect(second.transitions).toEqual(['Review']);
    expect(second.adapter.runs).toBe(0);
    expect(second.store.loadPendingTransitions()).toEqual([]);
    await second.orchestrator.tick();
    expect(second.adapter.runs).toBe(0);
  });

  it('a person who moved the issue meanwhile wins: the pending handoff is dropped, not written over it', async () => {
    const first = harness({
      workflow: WORKFLOW,
      scripts: [{ error: null }],
      tracker: { transitionIssue: () => never },
    });
    await first.orchestrator.tick();
    await expect.poll(() => first.store.loadPendingTransitions()).toHaveLength(1);

    const second = harness({ workflow: WORKFLOW, dir: first.dir, scripts: [{ error: null }] });
    second.issue.state = 'Done';
    await second.orchestrator.tick();
    expect(second.transitions).toEqual([]);
    expect(second.store.loadPendingTransitions()).toEqual([]);
    expect(second.adapter.runs).toBe(0);
  });

  it('a handoff the tracker refused keeps the issue claimed and is tried again at the next tick', async () => {
    let refusals = 1;
    const s = harness({
      workflow: WORKFLOW,
      scripts: [{ error: null }, { error: null }],
      tracker: {
        transitionIssue: async (_id: string, state: string) => {
          if (refusals-- > 0) throw new Error('tracker down');
          s.transitions.push(state);
          s.issue.state = state;
        },
      },
    });
    await s.firstRun();
    expect(s.transitions).toEqual([]);
    expect(s.store.loadPendingTransitions()).toHaveLength(1);
    // Still Todo in the tracker, but claimed: the next tick moves it instead of running it again.
    await s.orchestrator.tick();
    await s.orchestrator.idle();
    expect(s.adapter.runs).toBe(1);
    expect(s.transitions).toEqual(['Review']);
    expect(s.store.loadPendingTransitions()).toEqual([]);
  });
});
