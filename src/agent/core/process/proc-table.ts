/**
 * A read of the Linux process table from `/proc/<pid>/stat`: parent, process group,
 * state and start time of every process. Reaping needs it because `kill(-pgid, 0)`
 * cannot see processes that left the group, and because a zombie still answers
 * `kill(pid, 0)` although it is dead and holds nothing open. The start time pins a
 * pid to one process, so a pid recorded earlier and reused since is never killed.
 * On other platforms every function here reports an empty table.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** One process as `/proc/<pid>/stat` describes it. */
export interface ProcStat {
  pid: number;
  ppid: number;
  /** Process group id. */
  pgid: number;
  /** One-letter state: `R`, `S`, `D`, `Z` (zombie), `T`, … */
  state: string;
  /** Start time in clock ticks since boot, as text; with the pid it names one process. */
  startTime: string;
}

/** True where `/proc/<pid>/stat` can be read. */
export const HAS_PROC_TABLE = process.platform === 'linux';

/** Parses the text of `/proc/<pid>/stat`; null when it is not in the expected form. */
export function parseProcStat(text: string): ProcStat | null {
  // The command name sits in parentheses and may itself contain spaces and parentheses.
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  const pid = Number(text.slice(0, open).trim());
  const fields = text
    .slice(close + 1)
    .trim()
    .split(' ');
  // fields[0] is stat field 3 (state); start time is field 22.
  const state = fields[0];
  const ppid = Number(fields[1]);
  const pgid = Number(fields[2]);
  const startTime = fields[19];
  if (state === undefined || startTime === undefined || !Number.isInteger(pid)) return null;
  if (!Number.isInteger(ppid) || !Number.isInteger(pgid)) return null;
  return { pid, ppid, pgid, state, startTime };
}

/** The stat of one process, null when it does not exist (or has no `/proc`). */
export function readProcStat(pid: number): ProcStat | null {
  if (!HAS_PROC_TABLE) return null;
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/** Every process that is not a zombie; empty without `/proc`. */
export function listLiveProcesses(): ProcStat[] {
  return refreshLiveProcesses(new Map());
}

/**
 * The processes listed in `/proc` now, reading the stat file only of pids `known` does not
 * hold: a known pid keeps its known record, whose state and parent may since have changed
 * (a zombie is still listed, a re-parented process still names its old parent). Listing
 * `/proc` is one cheap call; reading one stat file per process is what makes a full walk
 * cost tens of milliseconds on a busy machine. Empty without `/proc`.
 */
export function refreshLiveProcesses(known: ReadonlyMap<number, ProcStat>): ProcStat[] {
  if (!HAS_PROC_TABLE) return [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: ProcStat[] = [];
  for (const name of names) {
    const code = name.charCodeAt(0);
    if (code < 0x30 || code > 0x39) continue;
    const pid = Number(name);
    const stat = known.get(pid) ?? readProcStat(pid);
    if (stat && stat.state !== 'Z' && stat.state !== 'X') out.push(stat);
  }
  return out;
}

/**
 * True while `pid` names a process that is not a zombie. Without `/proc` it falls
 * back to `kill(pid, 0)`, which also answers for zombies.
 */
export function isProcessAlive(pid: number): boolean {
  if (HAS_PROC_TABLE) {
    const stat = readProcStat(pid);
    return stat !== null && stat.state !== 'Z' && stat.state !== 'X';
  }
  return signalExists(pid);
}

/** `kill(target, 0)`: true when the process (or group, for a negative target) exists. */
export function signalExists(target: number): boolean {
  assertSafeTarget(target);
  try {
    process.kill(target, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Sends `signal` to `target` (a pid, or `-pgid` for a group); false when nothing received it. */
export function sendSignal(target: number, signal: NodeJS.Signals): boolean {
  assertSafeTarget(target);
  try {
    process.kill(target, signal);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ESRCH' || code === 'EPERM') return false;
    throw error;
  }
}

/** 0, 1, -1 and non-integers would signal our own group, init or every process: always a bug. */
function assertSafeTarget(target: number): void {
  if (!Number.isInteger(target) || Math.abs(target) <= 1) {
    throw new Error(`refusing to signal ${target}: not a single process or process group`);
  }
}

/**
 * Live processes whose environment holds `name=value`: how a restarted
 * orchestrator finds agents an earlier, killed instance left running (their
 * groups are detached, so they outlive it). Only processes we may read qualify.
 */
export function processesWithEnv(name: string, value: string): ProcStat[] {
  const needle = Buffer.from(`${name}=${value}\0`);
  const self = process.pid;
  return listLiveProcesses().filter((stat) => {
    if (stat.pid === self) return false;
    try {
      const environ = readFileSync(`/proc/${stat.pid}/environ`);
      return (
        environ.indexOf(needle) === 0 || environ.indexOf(Buffer.concat([Buffer.from('\0'), needle])) !== -1
      );
    } catch {
      return false;
    }
  });
}
