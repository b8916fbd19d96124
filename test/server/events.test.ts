/**
 * The `/api/v1/events` stream against a real server: what a client gets on connect, that
 * observations turn into coalesced state pushes, that a finished worker brings the runs,
 * that the stream is kept alive and is not cut by the request timeout, and that a client
 * leaving takes its subscription with it.
 */
import { describe, expect, it } from 'vitest';
import { issue, MASKED, openEvents, request, runningEntry, started, waitFor } from './support.js';

describe('GET /api/v1/events', () => {
  it('opens with a reconnect delay, the state and the latest runs', async () => {
    const s = await started();
    const stream = await openEvents(`${s.url}/api/v1/events`);
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      expect(stream.headers['cache-control']).toBe('no-store');
      await stream.next((e) => e.event === 'runs');
      expect(stream.events.slice(0, 3).map((e) => e.event)).toEqual(['retry', 'state', 'runs']);
      expect(stream.events[0]?.data).toBe('2000');
      const state = JSON.parse(stream.events[1]?.data ?? '') as Record<string, unknown>;
      expect(state).toMatchObject({ version: '9.8.7', counts: { running: 1, retrying: 1 } });
      const runs = JSON.parse(stream.events[2]?.data ?? '') as { runs: Record<string, unknown>[] };
      expect(runs.runs.map((r) => r.id)).toEqual([
        s.runs.eng2Open,
        s.runs.eng3,
        s.runs.eng1Second,
        s.runs.eng1First,
      ]);
      // The runs went through the mask like every other body.
      expect(stream.events[2]?.data).not.toContain(MASKED);
      expect(stream.events[2]?.data).toContain('agent exited 3 (***)');
    } finally {
      stream.close();
    }
  });

  it('pushes the state again after an observation', async () => {
    const s = await started();
    const stream = await openEvents(`${s.url}/api/v1/events`);
    try {
      await stream.next((e) => e.event === 'runs');
      const seen = stream.events.length;
      s.snapshot.running.push(runningEntry({ issue: issue('issue-7', 'ENG-7'), runId: 99 }));
      s.emit({ type: 'dispatched', issue: issue('issue-7', 'ENG-7'), attempt: 1, host: 'local' });
      const pushed = await stream.next((e) => e.event === 'state', seen);
      const state = JSON.parse(pushed.data) as { running: { issue_identifier: string }[] };
      expect(state.running.map((r) => r.issue_identifier)).toEqual(['ENG-2', 'ENG-7']);
      // A dispatch opens a run row, so the history is pushed too; a tick alone does not.
      await stream.next((e) => e.event === 'runs', seen);
      const afterDispatch = stream.events.length;
      s.emit({ type: 'tick', result: 'success', durationMs: 3, candidates: 0 });
      await stream.next((e) => e.event === 'state', afterDispatch);
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(stream.events.slice(afterDispatch).filter((e) => e.event === 'runs')).toEqual([]);
    } finally {
      stream.close();
    }
  });

  it('coalesces a burst of observations into at most one push per 250 ms', async () => {
    const s = await started();
    const stream = await openEvents(`${s.url}/api/v1/events`);
    try {
      await stream.next((e) => e.event === 'runs');
      const seen = stream.events.length;
      const started = Date.now();
      for (let i = 0; i < 200; i += 1) {
        s.emit({ type: 'tick', result: 'success', durationMs: 1, candidates: i });
      }
      await stream.next((e) => e.event === 'state', seen);
      await new Promise((resolve) => setTimeout(resolve, 600));
      const states = stream.events.slice(seen).filter((e) => e.event === 'state');
      const elapsed = Date.now() - started;
      expect(states.length).toBeGreaterThanOrEqual(1);
      expect(states.length).toBeLessThanOrEqual(Math.ceil(elapsed / 250) + 1);
      // The burst happened at once, so it is one push, not one per observation.
      expect(states.length).toBe(1);
    } finally {
      stream.close();
    }
  });

  it('sends the runs again after a worker exited, including the run it just finished', async () => {
    const s = await started();
    const stream = await openEvents(`${s.url}/api/v1/events`);
    try {
      await stream.next((e) => e.event === 'runs');
      const seen = stream.events.length;
      s.store.finishRun(s.runs.eng2Open, {
        endedAt: '2025-03-01T12:00:00.000Z',
        exitKind: 'succeeded',
        errorKind: null,
        error: null,
        turns: 1,
        usage: runningEntry().usage,
        usageByModel: {},
        costMicroUsd: 5_000,
        provenance: 'reported',
        unaccountedTurns: 0,
        sessionId: 'sess-running',
      });
      s.snapshot.running = [];
      s.emit({
        type: 'worker_exited',
        issue: issue('issue-2', 'ENG-2'),
        exitKind: 'succeeded',
        durationMs: 90_000,
        host: 'local',
        costMicroUsd: 5_000,
      });
      const runs = await stream.next((e) => e.event === 'runs', seen);
      const latest = (JSON.parse(runs.data) as { runs: Record<string, unknown>[] }).runs[0];
      expect(latest).toMatchObject({ id: s.runs.eng2Open, exit_kind: 'succeeded', cost_usd: 0.005 });
      const state = stream.events.slice(seen).find((e) => e.event === 'state');
      expect(JSON.parse(state?.data ?? '{}')).toMatchObject({ counts: { running: 0 } });
    } finally {
      stream.close();
    }
  });

  it('keeps the stream alive with ping comments, past the request timeout', async () => {
    const s = await started(undefined, { ssePingMs: 100, requestTimeoutMs: 200 });
    const stream = await openEvents(`${s.url}/api/v1/events`);
    try {
      await stream.next((e) => e.event === 'runs');
      // Node checks request timeouts on an interval; give it several.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      // A paused process fires a late interval once, not once per period missed: count until there are five.
      const pings = () => stream.events.filter((e) => e.event === 'comment' && e.data === 'ping').length;
      await waitFor('five pings', () => pings() >= 5);
      expect(stream.ended).toBe(false);
      const seen = stream.events.length;
      s.emit({ type: 'tick', result: 'success', durationMs: 1, candidates: 0 });
      await stream.next((e) => e.event === 'state', seen);
    } finally {
      stream.close();
    }
  });

  it('skips a push the state cannot be built for, and carries on afterwards', async () => {
    const s = await started();
    const stream = await openEvents(`${s.url}/api/v1/events`);
    try {
      await stream.next((e) => e.event === 'runs');
      const seen = stream.events.length;
      const snapshot = s.sources.snapshot;
      s.sources.snapshot = () => {
        throw new Error('owner gone');
      };
      s.emit({ type: 'tick', result: 'success', durationMs: 1, candidates: 0 });
      await waitFor('a skipped push to be logged', () =>
        s.lines.find((l) => l.message === 'event stream push skipped'),
      );
      expect(stream.ended).toBe(false);
      s.sources.snapshot = snapshot;
      s.emit({ type: 'tick', result: 'success', durationMs: 1, candidates: 0 });
      await stream.next((e) => e.event === 'state', seen);
    } finally {
      stream.close();
    }
  });

  it('unsubscribes a client that went away', async () => {
    const s = await started();
    // The server's own token counter is always subscribed.
    expect(s.listeners.size).toBe(1);
    const first = await openEvents(`${s.url}/api/v1/events`);
    const second = await openEvents(`${s.url}/api/v1/events`);
    await first.next((e) => e.event === 'runs');
    await second.next((e) => e.event === 'runs');
    expect(s.listeners.size).toBe(3);
    first.close();
    await waitFor('the closed client to unsubscribe', () => s.listeners.size === 2);
    second.close();
    await waitFor('the other client to unsubscribe', () => s.listeners.size === 1);
  });

  it('answers HEAD with the stream headers and ends at once', async () => {
    const s = await started();
    const res = await request(`${s.url}/api/v1/events`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(s.listeners.size).toBe(1);
  });
});
