/**
 * A stop must leave nothing behind that still uses the store or keeps the process alive: the
 * composition root closes the database as soon as `stop()` resolves. Work started by a timer
 * (a retry being fired, waiting on the tracker) counts as running work, and a retry decided
 * while stopping is saved for the next start without arming a timer.
 */
import { describe, expect, it, vi } from 'vitest';
import { harness, interceptStore } from './harness.js';

/** A promise the test opens; `entered` says whether anything waits on it yet. */
function gate() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  const state = { entered: false, open, opened };
  return state;
}

describe('stopping the owner', () => {
  it('a retry that is being fired keeps the owner busy: stop() waits for it, it dispatches nothing, and the store is not used after stop', async () => {
    const fetch = gate();
    const closed = { now: false, calls: [] as string[] };
    const s = harness({
      scripts: [{ error: null }, { error: null }],
      tracker: {
        fetchIssueById: async () => {
          fetch.entered = true;
          await fetch.opened;
          return { ...s.issue, comments: [] };
        },
      },
      wrapStore: interceptStore((method) => {
        if (closed.now) closed.calls.push(method);
      }),
    });
    await s.firstRun();
    // No handoff state: the clean run is continued after 1 s.
    s.clock.advanceTo(s.retry().dueAtMs);
    await vi.waitFor(() => expect(fetch.entered).toBe(true));
    // `run --until-idle` stops once settled: a retry waiting on the tracker is not settled.
    expect(s.orchestrator.settled()).toBe(false);

    let stopped = false;
    const stopping = s.orchestrator.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stopped).toBe(false);
    fetch.open();
    await stopping;
    closed.now = true;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(s.adapter.runs).toBe(1);
    expect(closed.calls).toEqual([]);
    // Still saved: the next start fires it.
    expect(s.store.loadRetries()).toHaveLength(1);
  });

  it('a retry decided while stopping is saved for the next start and arms no timer that would keep the process alive', async () => {
    const comment = gate();
    const s = harness({
      // A retryable failure; HARNESS_WORKFLOW comments on failures, and that comment is slow.
      scripts: [{ error: { kind: 'turn_failed' } }],
      tracker: {
        commentIssue: async () => {
          comment.entered = true;
          await comment.opened;
        },
      },
    });
    await s.orchestrator.tick();
    await vi.waitFor(() => expect(comment.entered).toBe(true));
    const stopping = s.orchestrator.stop();
    comment.open();
    await stopping;
    expect([...s.clock.timers.values()]).toEqual([]);
    expect(s.store.loadRetries()).toMatchObject([{ issueId: 'issue-1', reason: 'error' }]);
  });
});
