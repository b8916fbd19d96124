/**
 * Kills what a turn left behind. Killing the agent's process group catches most
 * leftovers, but a tool that called setsid (a daemon, a double fork) has left the
 * group, and once its parent dies it is re-parented away and no longer looks like
 * the agent's descendant. So descendants are recorded while the agent is still
 * alive (`snapshotDescendants`, or a `DescendantTracker` sampling on an interval),
 * and the reaper kills those too, after checking each recorded pid still names the
 * same process (same start time), so a reused pid is never hit. Linux only: without
 * `/proc` only the group kill happens.
 *
 * A walk of `/proc` reads one file per process on the machine, synchronously. With
 * dozens of sessions sampling on every output line and on a timer each, those walks
 * saturated the event loop (one walk costs tens of milliseconds on a busy machine);
 * so trackers share walks: one timer per interval serves every tracker, and a
 * sample on output reuses any walk up to one interval old, so output adds at most
 * one walk per interval however many sessions print. Reaping and the sample before
 * a signal still walk afresh. Even one walk per interval read hundreds of files with a
 * couple of hundred agents running, so the shared walks read only processes they have
 * not seen: a process that was no agent's descendant when first seen never becomes
 * one (an orphan moves up to a reaper, never under another process), so its record
 * need not be read again. A known pid keeps its first record until the next full walk,
 * at most FULL_WALK_MAX_AGE_MS later; only a pid reused within that time, long before
 * the kernel's pid space wraps, could hide a descendant until then.
 */
import {
  listLiveProcesses,
  type ProcStat,
  readProcStat,
  refreshLiveProcesses,
  sendSignal,
  signalExists,
} from './proc-table.js';
import type { Leftovers } from './spawn.js';

/** A process recorded as a descendant of the agent: the pid plus its start time. */
export interface DescendantRecord {
  pid: number;
  /** Start time from `/proc/<pid>/stat`; a pid whose start time differs is another process. */
  startTime: string;
}

export interface ReapParams {
  /** The agent's process group (its pid, as it leads its own group). */
  pgid: number;
  /** The agent's pid; its live descendants are killed as well (while it still leads `pgid`). */
  rootPid: number;
  /** Descendants recorded while the agent was alive; their own live descendants are killed too. */
  snapshot?: readonly DescendantRecord[];
}

const MAX_REAP_ROUNDS = 5;
const REAP_ROUND_PAUSE_MS = 15;

/** How often a tracker samples unless told otherwise. */
const DEFAULT_SAMPLE_INTERVAL_MS = 250;

/** How old the last full read of every process may be before a shared walk reads them all again. */
export const FULL_WALK_MAX_AGE_MS = 5_000;

/**
 * The last walk of `/proc`, whoever made it, by pid too; `takenAtMs` is when it began and
 * `fullAtMs` when the last walk that read every process began (monotonic clock).
 */
let lastWalk: {
  table: readonly ProcStat[];
  byPid: ReadonlyMap<number, ProcStat>;
  takenAtMs: number;
  fullAtMs: number;
} | null = null;

function keepWalk(table: readonly ProcStat[], takenAtMs: number, fullAtMs: number): readonly ProcStat[] {
  lastWalk = { table, byPid: new Map(table.map((stat) => [stat.pid, stat])), takenAtMs, fullAtMs };
  return table;
}

/** A fresh walk of `/proc` that reads every process, kept for `recentTable`. */
function walkTable(): readonly ProcStat[] {
  const takenAtMs = performance.now();
  return keepWalk(listLiveProcesses(), takenAtMs, takenAtMs);
}

/**
 * The last walk when it began at most `maxAgeMs` ago; else a walk that reads only the
 * processes that walk did not have (all of them when its full read is too old).
 */
function recentTable(maxAgeMs: number): readonly ProcStat[] {
  const nowMs = performance.now();
  if (lastWalk !== null && nowMs - lastWalk.takenAtMs <= maxAgeMs) return lastWalk.table;
  if (lastWalk === null || nowMs - lastWalk.fullAtMs > FULL_WALK_MAX_AGE_MS) return walkTable();
  return keepWalk(refreshLiveProcesses(lastWalk.byPid), nowMs, lastWalk.fullAtMs);
}

/** Every live descendant of `rootPid` right now (not `rootPid` itself); [] without `/proc`. */
export function snapshotDescendants(rootPid: number): DescendantRecord[] {
  return collectDescendants(walkTable(), [rootPid]).map((stat) => ({
    pid: stat.pid,
    startTime: stat.startTime,
  }));
}

/** Merges snapshots, one record per process. */
export function mergeSnapshots(...snapshots: readonly (readonly DescendantRecord[])[]): DescendantRecord[] {
  const byKey = new Map<string, DescendantRecord>();
  for (const snapshot of snapshots) {
    for (const record of snapshot) byKey.set(`${record.pid}:${record.startTime}`, record);
  }
  return [...byKey.values()];
}

/** The trackers that sample on one interval, and the one timer that samples them all. */
class SharedSampler {
  private static readonly byInterval = new Map<number, SharedSampler>();
  private readonly trackers = new Set<DescendantTracker>();
  private readonly timer: NodeJS.Timeout;

  private constructor(private readonly intervalMs: number) {
    this.timer = setInterval(() => this.tick(), intervalMs);
    this.timer.unref();
  }

  static join(intervalMs: number, tracker: DescendantTracker): void {
    let sampler = SharedSampler.byInterval.get(intervalMs);
    if (sampler === undefined) {
      sampler = new SharedSampler(intervalMs);
      SharedSampler.byInterval.set(intervalMs, sampler);
    }
    sampler.trackers.add(tracker);
  }

  static leave(intervalMs: number, tracker: DescendantTracker): void {
    const sampler = SharedSampler.byInterval.get(intervalMs);
    if (sampler === undefined || !sampler.trackers.delete(tracker) || sampler.trackers.size > 0) return;
    clearInterval(sampler.timer);
    SharedSampler.byInterval.delete(intervalMs);
  }

  /** One walk for every tracker; a walk made by anyone within half an interval counts. */
  private tick(): void {
    const table = recentTable(this.intervalMs / 2);
    for (const tracker of this.trackers) tracker.absorb(table);
  }
}

/**
 * Samples the agent's descendants every `intervalMs` while the agent runs, so a
 * process that escapes the group and outlives its parent is still known at reap
 * time. A process born and escaped between two samples is missed: call
 * `sampleRecent()` on output and `sample()` before signalling. All trackers on one
 * interval share one timer and one `/proc` walk per tick; `intervalMs: 0` means no timer.
 */
export class DescendantTracker {
  private readonly records = new Map<string, DescendantRecord>();
  /** The table merged last, so merging the same shared table again is skipped. */
  private lastTable: readonly ProcStat[] | null = null;
  private readonly intervalMs: number;
  private sampling: boolean;

  constructor(
    private readonly rootPid: number,
    options: { intervalMs?: number } = {},
  ) {
    this.intervalMs = options.intervalMs ?? DEFAULT_SAMPLE_INTERVAL_MS;
    this.sampling = this.intervalMs > 0;
    // No sample here: just after the spawn the agent has started nothing yet, and a walk
    // then was measured at several times the cost of a later one (the new process is
    // still being set up). The first tick or output line takes the first sample.
    if (this.sampling) SharedSampler.join(this.intervalMs, this);
  }

  /** Walks `/proc` now and merges what it finds: for the moment before a signal. */
  sample(): void {
    this.absorb(walkTable());
  }

  /**
   * Merges a table taken at most `maxAgeMs` (default: one interval) ago, walking
   * `/proc` only when the last walk by anyone is older: cheap enough for every output line.
   */
  sampleRecent(maxAgeMs: number = this.intervalMs > 0 ? this.intervalMs : DEFAULT_SAMPLE_INTERVAL_MS): void {
    this.absorb(recentTable(maxAgeMs));
  }

  /** Merges the descendants `table` shows; called by the shared sampler too. */
  absorb(table: readonly ProcStat[]): void {
    if (table === this.lastTable) return;
    this.lastTable = table;
    for (const stat of collectDescendants(table, [this.rootPid])) {
      const key = `${stat.pid}:${stat.startTime}`;
      if (!this.records.has(key)) this.records.set(key, { pid: stat.pid, startTime: stat.startTime });
    }
  }

  /** Everything recorded so far. */
  snapshot(): DescendantRecord[] {
    return [...this.records.values()];
  }

  /** Stops sampling; idempotent. */
  stop(): void {
    if (!this.sampling) return;
    this.sampling = false;
    SharedSampler.leave(this.intervalMs, this);
  }
}

/** Leftovers of a local agent that leads its own group: sampled descendants, reaped with the group. */
export function trackLocalLeftovers(pid: number): Leftovers {
  const tracker = new DescendantTracker(pid);
  return {
    sample: () => tracker.sample(),
    sampleRecent: () => tracker.sampleRecent(),
    stop: () => tracker.stop(),
    reap: async () => {
      tracker.stop();
      await reapDescendants({ pgid: pid, rootPid: pid, snapshot: tracker.snapshot() });
    },
  };
}

/**
 * SIGKILLs the agent's process group, every live process still in it, every live
 * descendant of the agent, and every recorded descendant that is still the same
 * process (with its own descendants and, when it leads a group of its own, that
 * group). Repeats a few rounds to catch processes forked mid-kill. Returns the pids
 * that were sent SIGKILL, ascending; never our own process or its ancestors.
 */
export async function reapDescendants(params: ReapParams): Promise<number[]> {
  if (nothingLeft(params)) return [];
  const killed = new Set<number>();
  for (let round = 0; round < MAX_REAP_ROUNDS; round++) {
    const table = walkTable();
    const protectedPids = ownLineage(table);
    const targets = findTargets(table, params, protectedPids);
    const fresh = targets.filter((pid) => !killed.has(pid));
    for (const pid of targets) {
      if (sendSignal(pid, 'SIGKILL')) killed.add(pid);
    }
    if (params.pgid > 1 && !protectedPids.has(params.pgid)) sendSignal(-params.pgid, 'SIGKILL');
    if (fresh.length === 0) break;
    await new Promise((resolve) => setTimeout(resolve, REAP_ROUND_PAUSE_MS));
  }
  return [...killed].sort((a, b) => a - b);
}

/**
 * True when a walk could find nothing to kill: the group is empty (so the agent, which
 * leads it for life, is gone too) and no recorded process is still the same live
 * process. Descendants of dead processes were re-parented away, so no walk reaches
 * them either. This spares the common clean exit a full walk of `/proc`.
 */
function nothingLeft(params: ReapParams): boolean {
  if (params.pgid <= 1 || signalExists(-params.pgid)) return false;
  return (params.snapshot ?? []).every((record) => {
    const stat = readProcStat(record.pid);
    return stat === null || stat.startTime !== record.startTime || stat.state === 'Z' || stat.state === 'X';
  });
}

/** Live processes to kill; nothing in `protectedPids` is a target or a root to walk from. */
function findTargets(
  table: readonly ProcStat[],
  params: ReapParams,
  protectedPids: ReadonlySet<number>,
): number[] {
  const byPid = new Map(table.map((stat) => [stat.pid, stat]));
  const roots: number[] = [];
  const groups = new Set<number>();
  if (!protectedPids.has(params.pgid)) groups.add(params.pgid);
  // The agent leads its group for life; a process under its pid in another group is a reused pid.
  const root = byPid.get(params.rootPid);
  if (root && root.pgid === params.pgid && !protectedPids.has(root.pid)) roots.push(root.pid);
  for (const record of params.snapshot ?? []) {
    const stat = byPid.get(record.pid);
    if (!stat || stat.startTime !== record.startTime || protectedPids.has(stat.pid)) continue;
    roots.push(stat.pid);
    if (stat.pgid === stat.pid) groups.add(stat.pid);
  }
  const targets = new Set<number>(roots);
  for (const stat of table) {
    if (groups.has(stat.pgid) && !protectedPids.has(stat.pid)) {
      targets.add(stat.pid);
      roots.push(stat.pid);
    }
  }
  for (const stat of collectDescendants(table, roots, protectedPids)) targets.add(stat.pid);
  return [...targets];
}

/** Live descendants of `roots` in `table`, never entering `blocked` (roots excluded unless reached). */
function collectDescendants(
  table: readonly ProcStat[],
  roots: readonly number[],
  blocked: ReadonlySet<number> = new Set(),
): ProcStat[] {
  const children = childrenOf(table);
  const seen = new Set<number>(roots);
  const found: ProcStat[] = [];
  const queue = [...roots];
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    for (const child of children.get(next) ?? []) {
      if (seen.has(child.pid) || blocked.has(child.pid)) continue;
      seen.add(child.pid);
      found.push(child);
      queue.push(child.pid);
    }
  }
  return found;
}

/** Built once per table: every tracker sampling a shared table walks the same index. */
const childIndexes = new WeakMap<readonly ProcStat[], Map<number, ProcStat[]>>();

/** The table's processes by parent pid. */
function childrenOf(table: readonly ProcStat[]): Map<number, ProcStat[]> {
  let children = childIndexes.get(table);
  if (children !== undefined) return children;
  children = new Map();
  for (const stat of table) {
    const siblings = children.get(stat.ppid);
    if (siblings) siblings.push(stat);
    else children.set(stat.ppid, [stat]);
  }
  childIndexes.set(table, children);
  return children;
}

/** Our own pid, our process group and our ancestors: never reaped, whatever a table says. */
function ownLineage(table: readonly ProcStat[]): Set<number> {
  const lineage = new Set<number>([1, process.pid, process.ppid]);
  const byPid = new Map(table.map((stat) => [stat.pid, stat]));
  let stat = byPid.get(process.pid);
  if (stat) lineage.add(stat.pgid);
  for (let depth = 0; stat && depth < 1000; depth++) {
    lineage.add(stat.ppid);
    stat = byPid.get(stat.ppid);
  }
  return lineage;
}
