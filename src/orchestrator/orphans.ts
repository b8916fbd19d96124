/**
 * Agents and hooks left running by an orchestrator that was killed: their process
 * groups are detached on purpose, so they survive it. Every agent and every hook
 * carries an owner tag in its environment, and so does anything they start, even a
 * process that left the group; a starting orchestrator kills every process group
 * that carries its own tag, so an issue never has two live agents, or two of its
 * hooks, after a restart.
 */
import { createHash } from 'node:crypto';
import {
  isProcessAlive,
  processesWithEnv,
  readProcStat,
  sendSignal,
} from '../agent/core/process/proc-table.js';
import { OWNER_ENV } from '../domain/owner.js';

export { OWNER_ENV };

/** The owner tag for a database path (stable across restarts of the same service). */
export function ownerTag(dbPath: string): string {
  return createHash('sha256').update(dbPath).digest('hex').slice(0, 16);
}

/** How long a start waits for the orphans it killed to be gone before it carries on regardless. */
export const ORPHAN_EXIT_WAIT_MS = 5_000;
const ORPHAN_POLL_MS = 10;

/** What the start-up reaper found and killed, and which of those were still alive when it stopped waiting. */
export interface OrphanReport {
  pids: number[];
  survivors: number[];
}

/**
 * SIGKILLs the process groups of processes tagged with `tag`, then waits up to `waitMs` until
 * they are gone: a SIGKILLed process takes a moment to exit, and until it has, an old hook
 * could still be writing in the workspace the new service is about to prepare.
 */
export async function killOrphans(tag: string, waitMs = ORPHAN_EXIT_WAIT_MS): Promise<OrphanReport> {
  const found = processesWithEnv(OWNER_ENV, tag);
  const ownGroup = readProcStat(process.pid)?.pgid ?? -1;
  for (const stat of found) {
    if (stat.pgid !== ownGroup) sendSignal(-stat.pgid, 'SIGKILL');
    sendSignal(stat.pid, 'SIGKILL');
  }
  const pids = found.map((s) => s.pid);
  const deadline = Date.now() + waitMs;
  let survivors = pids.filter(isProcessAlive);
  while (survivors.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, ORPHAN_POLL_MS));
    survivors = survivors.filter(isProcessAlive);
  }
  return { pids, survivors };
}
