/**
 * Paces process starts. `spawn` blocks the event loop until the child has exec'd, and how long
 * that takes depends on the machine's run queue: a few milliseconds when it is idle, 30–60 ms
 * while hundreds of agents boot on two cores. Starting them back to back, even one per loop
 * turn, stacks those blocks between the few loop turns an HTTP request needs, and every answer
 * waits hundreds of milliseconds. So starts take turns, and after a start that blocked the
 * loop for d ms the next one waits `pauseFactor` × d ms: the loop spends at most
 * 1 / (1 + pauseFactor) of its time inside spawn, requests and timers run between two starts,
 * and starting slows down exactly when the machine is too busy to boot processes quickly
 * anyway (fewer processes booting at once is also what makes the next block shorter).
 */

export interface SpawnPacingOptions {
  /** The pause after a start, as a multiple of how long that start blocked. */
  pauseFactor: number;
  /** Blocks shorter than this cost no pause (an idle machine starts processes back to back). */
  minBlockMs: number;
  /** Upper bound of one pause, for a pathological start that blocked for seconds. */
  maxPauseMs: number;
  /** Milliseconds on a monotonic clock. */
  now?: () => number;
  /** Waits this long; a timer unless a test replaces it. */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * A factor of 8 (at most 11 % of the loop in spawn) is what kept the API's p99 under 100 ms
 * while 200 agents started on 2 cores; 3 left it at 140–250 ms (docs/performance.md, api-load).
 */
export const DEFAULT_SPAWN_PACING: SpawnPacingOptions = {
  pauseFactor: 8,
  minBlockMs: 2,
  maxPauseMs: 1_000,
};

/** Runs synchronous process starts one at a time, in order, each in its own loop turn, paced by how long they block. */
export class SpawnPacer {
  private previous: Promise<void> = Promise.resolve();
  private notBeforeMs = 0;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly options: SpawnPacingOptions = DEFAULT_SPAWN_PACING) {
    this.now = options.now ?? (() => performance.now());
    this.sleep = options.sleep ?? ((ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  }

  /** Runs `start` when its turn comes and returns what it returned (or throws what it threw). */
  run<T>(start: () => T): Promise<T> {
    const result = this.previous.then(async () => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      const waitMs = this.notBeforeMs - this.now();
      if (waitMs > 0) await this.sleep(waitMs);
      const startedMs = this.now();
      try {
        return start();
      } finally {
        this.notBeforeMs = this.now() + this.pauseAfter(this.now() - startedMs);
      }
    });
    this.previous = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  private pauseAfter(blockedMs: number): number {
    if (blockedMs < this.options.minBlockMs) return 0;
    return Math.min(this.options.maxPauseMs, blockedMs * this.options.pauseFactor);
  }
}
