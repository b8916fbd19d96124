/**
 * Kills what a turn left behind. Killing the agent's process group catches most
 * leftovers, but a tool that called setsid (a daemon, a double fork) has left the
 * group, and once its parent dies it is re-parented away and no longer looks like
 * the agent's descendant. So descendants are recorded while the agent is still
 * alive (`snapshotDescendants`, or a `DescendantTracker` sampling on an interval),
 * and the reaper kills those too, after checking each recorded pid still names the
 * same process (same start time), so a reused pid is never hit. Linux only: without
 * `/proc` only the group kill happens.
 */
import { listLiveProcesses, type ProcStat, sendSignal } from './proc-table.js';

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

/** Every live descendant of `rootPid` right now (not `rootPid` itself); [] without `/proc`. */
export function snapshotDescendants(rootPid: number): DescendantRecord[] {
  const table = listLiveProcesses();
  return collectDescendants(table, [rootPid]).map((stat) => ({ pid: stat.pid, startTime: stat.startTime }));
}

/** Merges snapshots, one record per process. */
export function mergeSnapshots(...snapshots: readonly (readonly DescendantRecord[])[]): DescendantRecord[] {
  const byKey = new Map<string, DescendantRecord>();
  for (const snapshot of snapshots) {
    for (const record of snapshot) byKey.set(`${record.pid}:${record.startTime}`, record);
  }
  return [...byKey.values()];
}

/**
 * Samples the agent's descendants every `intervalMs` while the agent runs, so a
 * process that escapes the group and outlives its parent is still known at reap
 * time. A process born and escaped between two samples is missed: call `sample()`
 * at moments that matter (on output, before signalling).
 */
export class DescendantTracker {
  private records: DescendantRecord[] = [];
  private timer: NodeJS.Timeout | null;

  constructor(
    private readonly rootPid: number,
    options: { intervalMs?: number } = {},
  ) {
    const intervalMs = options.intervalMs ?? 250;
    this.sample();
    this.timer = intervalMs > 0 ? setInterval(() => this.sample(), intervalMs) : null;
    this.timer?.unref();
  }

  /** Takes one snapshot now and merges it in. */
  sample(): void {
    this.records = mergeSnapshots(this.records, snapshotDescendants(this.rootPid));
  }

  /** Everything recorded so far. */
  snapshot(): DescendantRecord[] {
    return [...this.records];
  }

  /** Stops sampling; idempotent. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

/**
 * SIGKILLs the agent's process group, every live process still in it, every live
 * descendant of the agent, and every recorded descendant that is still the same
 * process (with its own descendants and, when it leads a group of its own, that
 * group). Repeats a few rounds to catch processes forked mid-kill. Returns the pids
 * that were sent SIGKILL, ascending; never our own process or its ancestors.
 */
export async function reapDescendants(params: ReapParams): Promise<number[]> {
  const killed = new Set<number>();
  for (let round = 0; round < MAX_REAP_ROUNDS; round++) {
    const table = listLiveProcesses();
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
  const children = new Map<number, ProcStat[]>();
  for (const stat of table) {
    const siblings = children.get(stat.ppid);
    if (siblings) siblings.push(stat);
    else children.set(stat.ppid, [stat]);
  }
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
