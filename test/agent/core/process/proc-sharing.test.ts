/**
 * Descendant trackers share their walks of `/proc`: with dozens of sessions, a walk per
 * tracker per output line and per timer tick saturated the event loop. Walks are counted
 * at `readdirSync('/proc')`, the one call every walk makes.
 */
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it, vi } from 'vitest';

const walks = vi.hoisted(() => ({ count: 0, statReads: [] as number[] }));

vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  const readdirSync = ((...args: Parameters<typeof actual.readdirSync>) => {
    if (args[0] === '/proc') walks.count++;
    return actual.readdirSync(...args);
  }) as typeof actual.readdirSync;
  const readFileSync = ((...args: Parameters<typeof actual.readFileSync>) => {
    const stat = typeof args[0] === 'string' ? /^\/proc\/(\d+)\/stat$/.exec(args[0]) : null;
    if (stat !== null) walks.statReads.push(Number(stat[1]));
    return actual.readFileSync(...args);
  }) as typeof actual.readFileSync;
  return { ...actual, default: { ...actual, readdirSync, readFileSync }, readdirSync, readFileSync };
});

const { DescendantTracker, FULL_WALK_MAX_AGE_MS, reapDescendants, snapshotDescendants } = await import(
  '../../../../src/agent/core/process/reap.js'
);

/** Pids whose `/proc/<pid>/stat` was read while `action` runs. */
function statReadsDuring(action: () => void): number[] {
  const from = walks.statReads.length;
  action();
  return walks.statReads.slice(from);
}

const trackers: InstanceType<typeof DescendantTracker>[] = [];

afterEach(() => {
  for (const tracker of trackers.splice(0)) tracker.stop();
});

/** Walks made while `action` runs. */
async function walksDuring(action: () => unknown): Promise<number> {
  const before = walks.count;
  await action();
  return walks.count - before;
}

describe.runIf(process.platform === 'linux')('shared /proc walks', () => {
  it('thirty-two trackers started together walk /proc once at their first tick, not once each at start', async () => {
    const made = await walksDuring(() => {
      for (let i = 0; i < 32; i++) trackers.push(new DescendantTracker(process.pid, { intervalMs: 30 }));
    });
    expect(made).toBe(0);
    const before = walks.count;
    await vi.waitFor(() => expect(walks.count - before).toBeGreaterThanOrEqual(1), { timeout: 5_000 });
    expect(walks.count - before).toBeLessThanOrEqual(2);
  });

  it('a sample on every output line reuses a recent walk instead of walking per line', async () => {
    for (let i = 0; i < 4; i++) trackers.push(new DescendantTracker(process.pid));
    const made = await walksDuring(() => {
      for (let line = 0; line < 500; line++) for (const tracker of trackers) tracker.sampleRecent();
    });
    // 2,000 samples: a walk only when the shared table is over one interval (250 ms) old.
    expect(made).toBeLessThanOrEqual(3);
  });

  it('one timer samples every tracker on an interval with one walk per tick', async () => {
    const intervalMs = 40;
    for (let i = 0; i < 32; i++) trackers.push(new DescendantTracker(process.pid, { intervalMs }));
    const startedMs = performance.now();
    const before = walks.count;
    await vi.waitFor(() => expect(walks.count - before).toBeGreaterThanOrEqual(3), { timeout: 5_000 });
    const elapsedMs = performance.now() - startedMs;
    // A walk per tracker per tick would be 32 a tick.
    expect(walks.count - before).toBeLessThanOrEqual(Math.ceil(elapsedMs / intervalMs) + 2);
  });

  it('a sample before a signal walks afresh even right after a shared walk', async () => {
    const tracker = new DescendantTracker(process.pid);
    trackers.push(tracker);
    tracker.sampleRecent();
    expect(await walksDuring(() => tracker.sample())).toBe(1);
  });

  it('a shared walk reads only processes it has not seen, and still finds a child born since', async () => {
    const tracker = new DescendantTracker(process.pid, { intervalMs: 0 });
    trackers.push(tracker);
    const full = statReadsDuring(() => tracker.sample());
    expect(full).toContain(process.pid);
    const child = spawn('sleep', ['5'], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => child.once('spawn', resolve));
      const again = statReadsDuring(() => tracker.sampleRecent(0));
      // Our own process was read by the full walk: its record is reused, not read again.
      expect(again).not.toContain(process.pid);
      expect(again).toContain(child.pid);
      expect(again.length).toBeLessThan(full.length);
      expect(tracker.snapshot().map((r) => r.pid)).toContain(child.pid);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('a shared walk reads every process again once the last full read is too old', () => {
    const tracker = new DescendantTracker(process.pid, { intervalMs: 0 });
    trackers.push(tracker);
    tracker.sample();
    const now = performance.now();
    const clock = vi.spyOn(performance, 'now').mockReturnValue(now + FULL_WALK_MAX_AGE_MS + 1);
    try {
      expect(statReadsDuring(() => tracker.sampleRecent(0))).toContain(process.pid);
    } finally {
      clock.mockRestore();
    }
  });

  it('a stopped tracker is no longer sampled, and the last one stops the timer', async () => {
    const tracker = new DescendantTracker(process.pid, { intervalMs: 10 });
    tracker.stop();
    tracker.stop();
    expect(await walksDuring(() => new Promise((resolve) => setTimeout(resolve, 100)))).toBe(0);
  });

  it('reaping a group that is gone, with nothing recorded, does not walk /proc', async () => {
    // A pid far above any pid_max in use names no process and no group.
    const gone = 2 ** 22 + 12_345;
    const made = await walksDuring(async () => {
      expect(await reapDescendants({ pgid: gone, rootPid: gone, snapshot: [] })).toEqual([]);
      expect(
        await reapDescendants({
          pgid: gone,
          rootPid: gone,
          snapshot: [{ pid: process.pid, startTime: '1' }],
        }),
      ).toEqual([]);
    });
    expect(made).toBe(0);
  });

  it('reaping walks /proc when a recorded process is still the same live process', async () => {
    const gone = 2 ** 22 + 12_346;
    const [own] = snapshotDescendants(process.ppid).filter((r) => r.pid === process.pid);
    expect(own).toBeDefined();
    // Our own process is recorded and alive: the reap must look (and, protected, never kill it).
    const made = await walksDuring(async () => {
      expect(await reapDescendants({ pgid: gone, rootPid: gone, snapshot: [own!] })).toEqual([]);
    });
    expect(made).toBeGreaterThanOrEqual(1);
  });
});
