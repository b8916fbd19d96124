import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  type TurnTimerReason,
  TurnTimers,
  type TurnTimersOptions,
} from '../../../../src/agent/core/process/timers.js';

let fired: TurnTimerReason[];

function timers(options: Partial<Omit<TurnTimersOptions, 'onFire'>>): TurnTimers {
  return new TurnTimers({
    firstEventTimeoutMs: 0,
    stallTimeoutMs: 0,
    turnTimeoutMs: 0,
    ...options,
    onFire: (reason) => fired.push(reason),
  });
}

beforeEach(() => {
  vi.useFakeTimers();
  fired = [];
});

afterEach(() => {
  vi.useRealTimers();
});

describe('TurnTimers', () => {
  it('the stall timer is reset by touch, so a steadily talking agent never stalls', () => {
    const t = timers({ stallTimeoutMs: 100 });
    for (let i = 0; i < 20; i++) {
      vi.advanceTimersByTime(90);
      t.touch();
    }
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(99);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['stall']);
    expect(t.fired).toBe('stall');
  });

  it('the turn timeout fires at its time however active the agent is', () => {
    const t = timers({ stallTimeoutMs: 100, turnTimeoutMs: 1_000 });
    t.markFirstEvent();
    for (let i = 0; i < 99; i++) {
      vi.advanceTimersByTime(10);
      t.touch();
    }
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(10);
    expect(fired).toEqual(['turn']);
  });

  it('markFirstEvent cancels the first-event timeout', () => {
    const t = timers({ firstEventTimeoutMs: 500 });
    vi.advanceTimersByTime(499);
    t.markFirstEvent();
    vi.advanceTimersByTime(10_000);
    expect(fired).toEqual([]);
  });

  it('no first event in time fires first_event', () => {
    const t = timers({ firstEventTimeoutMs: 500, stallTimeoutMs: 100, turnTimeoutMs: 5_000 });
    t.touch();
    vi.advanceTimersByTime(500);
    expect(fired).toEqual(['first_event']);
    expect(t.fired).toBe('first_event');
  });

  it('a slow start is judged by the first-event timeout, not the shorter stall timeout', () => {
    timers({ firstEventTimeoutMs: 500, stallTimeoutMs: 100 });
    vi.advanceTimersByTime(499);
    expect(fired).toEqual([]);
  });

  it('after the first event, silence longer than the stall timeout fires stall', () => {
    const t = timers({ firstEventTimeoutMs: 500, stallTimeoutMs: 100 });
    vi.advanceTimersByTime(400);
    t.markFirstEvent();
    vi.advanceTimersByTime(99);
    expect(fired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(fired).toEqual(['stall']);
  });

  it('without a first-event timeout the stall timer runs from the start', () => {
    timers({ stallTimeoutMs: 100 });
    vi.advanceTimersByTime(100);
    expect(fired).toEqual(['stall']);
  });

  it('0 disables each timer: nothing ever fires', () => {
    const t = timers({});
    vi.advanceTimersByTime(24 * 60 * 60_000);
    t.touch();
    t.markFirstEvent();
    vi.advanceTimersByTime(24 * 60 * 60_000);
    expect(fired).toEqual([]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('onFire is called once, with whichever fires first, and nothing fires after', () => {
    timers({ firstEventTimeoutMs: 300, stallTimeoutMs: 200, turnTimeoutMs: 300 });
    vi.advanceTimersByTime(10_000);
    expect(fired).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('clear cancels every timer, so a finished turn is never reported as timed out', () => {
    const t = timers({ firstEventTimeoutMs: 100, stallTimeoutMs: 100, turnTimeoutMs: 100 });
    t.clear();
    vi.advanceTimersByTime(10_000);
    expect(fired).toEqual([]);
    expect(t.fired).toBeNull();
    expect(vi.getTimerCount()).toBe(0);
    t.clear();
  });

  it('touching often does not pile up timers', () => {
    const t = timers({ stallTimeoutMs: 1_000, turnTimeoutMs: 60_000 });
    for (let i = 0; i < 1_000; i++) t.touch();
    expect(vi.getTimerCount()).toBe(2);
  });

  it('runs on an injected clock as well', () => {
    let now = 0;
    const pending: { at: number; callback: () => void; id: number }[] = [];
    let nextId = 0;
    const clock = {
      now: () => now,
      setTimeout: (callback: () => void, delayMs: number) => {
        const id = nextId++;
        pending.push({ at: now + delayMs, callback, id });
        return id;
      },
      clearTimeout: (id: unknown) => {
        const index = pending.findIndex((p) => p.id === id);
        if (index >= 0) pending.splice(index, 1);
      },
    };
    const advance = (ms: number) => {
      now += ms;
      for (;;) {
        const due = pending.filter((p) => p.at <= now).sort((a, b) => a.at - b.at)[0];
        if (!due) break;
        pending.splice(pending.indexOf(due), 1);
        due.callback();
      }
    };
    const t = new TurnTimers({
      firstEventTimeoutMs: 0,
      stallTimeoutMs: 50,
      turnTimeoutMs: 0,
      onFire: (reason) => fired.push(reason),
      clock,
    });
    advance(40);
    t.touch();
    advance(40);
    expect(fired).toEqual([]);
    expect(t.elapsedMs()).toBe(80);
    advance(10);
    expect(fired).toEqual(['stall']);
  });
});
