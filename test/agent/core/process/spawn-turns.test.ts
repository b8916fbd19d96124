/**
 * Spawns take turns: `spawn` blocks the event loop until the child has exec'd (tens of
 * milliseconds on a loaded machine), so a tick that starts hundreds of agents must not spawn
 * them all in one loop turn, or every HTTP request waits behind all of them. Loop turns are
 * counted by a setImmediate chain, which advances once per turn of the event loop.
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

const { spawnAgentProcess, takeSpawnTurn } = await import('../../../../src/agent/core/process/spawn.js');
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

afterEach(() => {
  ticking = false;
  recorded.turns.length = 0;
});
afterAll(() => scratch.cleanup());

describe('spawn turns', () => {
  it('callers waiting together are let through one per event-loop turn, in order', async () => {
    countTurns();
    const seen: { caller: number; turn: number }[] = [];
    await Promise.all(
      Array.from({ length: 5 }, (_, caller) =>
        takeSpawnTurn().then(() => seen.push({ caller, turn: recorded.turn })),
      ),
    );
    expect(seen.map((s) => s.caller)).toEqual([0, 1, 2, 3, 4]);
    for (let i = 1; i < seen.length; i++) {
      expect(seen[i]?.turn).toBeGreaterThan(seen[i - 1]?.turn as number);
    }
  });

  it('agents started together are spawned in different event-loop turns', async () => {
    countTurns();
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
    expect(recorded.turns).toHaveLength(6);
    expect(new Set(recorded.turns).size).toBe(6);
  });
});
