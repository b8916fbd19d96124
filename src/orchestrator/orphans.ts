/**
 * Agents and hooks left running by an orchestrator that was killed: their process
 * groups are detached on purpose, so they survive it. Every agent and every hook
 * carries an owner tag in its environment, and so does anything they start, even a
 * process that left the group; a starting orchestrator kills every process group
 * that carries its own tag, so an issue never has two live agents, or two of its
 * hooks, after a restart.
 */
import { createHash } from 'node:crypto';
import { processesWithEnv, readProcStat, sendSignal } from '../agent/core/process/proc-table.js';
import { OWNER_ENV } from '../domain/owner.js';

export { OWNER_ENV };

/** The owner tag for a database path (stable across restarts of the same service). */
export function ownerTag(dbPath: string): string {
  return createHash('sha256').update(dbPath).digest('hex').slice(0, 16);
}

/** SIGKILLs the process groups of processes tagged with `tag`; returns the pids found. */
export function killOrphans(tag: string): number[] {
  const found = processesWithEnv(OWNER_ENV, tag);
  const ownGroup = readProcStat(process.pid)?.pgid ?? -1;
  for (const stat of found) {
    if (stat.pgid !== ownGroup) sendSignal(-stat.pgid, 'SIGKILL');
    sendSignal(stat.pid, 'SIGKILL');
  }
  return found.map((s) => s.pid);
}
