/**
 * Agents start from the launcher process, so the service's own `spawn`, which blocks the event
 * loop until the child has exec'd (tens of milliseconds on a loaded machine), runs once for the
 * launcher and never per agent. Without the launcher, starts are paced: a tick that starts
 * hundreds of agents must neither spawn them in one loop turn nor back to back: after a start
 * that blocked for d ms the next waits 8 × d ms, and HTTP requests and timers run in between.
 * Loop turns are counted by a setImmediate chain, which advances once per turn of the event loop.
 */
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';

const recorded = vi.hoisted(() => ({ turns: [] as number[], turn: 0 }));

vi.mock('node:child_process', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:child_process')>();
  const spawn = ((...args: Parameters<typeof actual.spawn>) => {
    recorded.turns.push(recorded.turn);
    return actual.spawn(...args);
  }) as typeof actual.spawn;
  return { ...actual, default: { ...actual, spawn }, spawn };
});

const { spawnAgentProcess } = await import('../../../../src/agent/core/process/spawn.js');
const { setLaunchMode } = await import('../../../../src/agent/core/process/launcher.js');
const { DEFAULT_SPAWN_PACING, SpawnPacer } = await import(
  '../../../../src/agent/core/process/spawn-pacing.js'
);
const { childEnv, makeScratch } = await import('./child-scripts.js');

const scratch = makeScratch();
let ticking = false;

/** Counts event-loop turns until stopped. */
function countTurns(): void {
  ticking = true;
  const tick = () => {
    recorded.turn += 1;
    if (ticking) setImmediate(tick);
  };
  setImmediate(tick);
}

/** A pacer on a fake clock: each start "blocks" for the next of `blocksMs`; sleeps are recorded and advance the clock. */
function fakePacer(blocksMs: number[]) {
  let clockMs = 1_000;
  const sleeps: number[] = [];
  const startsAtMs: number[] = [];
  const pacer = new SpawnPacer({
    ...DEFAULT_SPAWN_PACING,
    now: () => clockMs,
    sleep: async (ms) => {
      sleeps.push(ms);
      clockMs += ms;
    },
  });
  const start = () => {
    startsAtMs.push(clockMs);
    clockMs += blocksMs[startsAtMs.length - 1] ?? 0;
    return startsAtMs.length;
  };
  return { pacer, start, sleeps, startsAtMs };
}

afterEach(() => {
  ticking = false;
  recorded.turns.length = 0;
});
afterAll(() => scratch.cleanup());

describe('spawn pacing', () => {
  it('starts waiting together run one per event-loop turn, in order', async () => {
    countTurns();
    const pacer = new SpawnPacer();
    const seen: { caller: number; turn: number }[] = [];
    await Promise.all(
      Array.from({ length: 5 }, (_, caller) => pacer.run(() => seen.push({ caller, turn: recorded.turn }))),
    );
    expect(seen.map((s) => s.caller)).toEqual([0, 1, 2, 3, 4]);
    for (let i = 1; i < seen.length; i++) {
      expect(seen[i]?.turn).toBeGreaterThan(seen[i - 1]?.turn as number);
    }
  });

  it('after a start that blocked for d ms, the next waits 8 × d ms', async () => {
    const { pacer, start, sleeps, startsAtMs } = fakePacer([20, 40, 0]);
    const results = await Promise.all([pacer.run(start), pacer.run(start), pacer.run(start)]);
    expect(results).toEqual([1, 2, 3]);
    expect(sleeps).toEqual([160, 320]);
    // Each start begins eight blocks' worth after the previous one ended.
    expect(startsAtMs).toEqual([1_000, 1_000 + 20 + 160, 1_000 + 20 + 160 + 40 + 320]);
  });

  it('quick starts (an idle machine) are not paused, and a pause has a ceiling', async () => {
    const quick = fakePacer([1, 1, 1, 1]);
    await Promise.all(Array.from({ length: 4 }, () => quick.pacer.run(quick.start)));
    expect(quick.sleeps).toEqual([]);

    const slow = fakePacer([5_000, 0]);
    await Promise.all([slow.pacer.run(slow.start), slow.pacer.run(slow.start)]);
    expect(slow.sleeps).toEqual([DEFAULT_SPAWN_PACING.maxPauseMs]);
  });

  it('a start that throws rejects its own caller only; the next start still runs', async () => {
    const pacer = new SpawnPacer();
    const failing = pacer.run(() => {
      throw new Error('spawn EAGAIN');
    });
    const next = pacer.run(() => 'started');
    await expect(failing).rejects.toThrow('spawn EAGAIN');
    await expect(next).resolves.toBe('started');
  });

  /** Starts six agents at once and waits for their ends; the turns of the service's own spawns are recorded. */
  async function startSix(): Promise<void> {
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        spawnAgentProcess({
          command: process.execPath,
          args: ['-e', '0'],
          cwd: scratch.dir,
          env: childEnv(),
          stdin: 'ignore',
        }),
      ),
    );
    for (const result of results) {
      expect(result.ok).toBe(true);
      if (result.ok) await result.process.exited;
    }
  }

  it('agents started together without the launcher are spawned in different event-loop turns', async () => {
    setLaunchMode('direct');
    try {
      recorded.turns.length = 0;
      countTurns();
      await startSix();
      expect(recorded.turns).toHaveLength(6);
      expect(new Set(recorded.turns).size).toBe(6);
    } finally {
      setLaunchMode('launcher');
    }
  });

  it('through the launcher the service spawns no agent itself: six agents, one spawn (the launcher)', async () => {
    recorded.turns.length = 0;
    await startSix();
    expect(recorded.turns).toHaveLength(1);
    recorded.turns.length = 0;
    await startSix();
    expect(recorded.turns).toHaveLength(0);
  });
});
