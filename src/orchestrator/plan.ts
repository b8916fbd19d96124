/**
 * A dispatch plan for one tick from an empty state: which candidates would start
 * and why each other one would not. `run --dry-run` prints it; the tick uses the
 * same eligibility and slot rules. With SSH worker hosts the plan also assigns
 * each dispatch a host on a copy of the pool, so the caller's real slots are never
 * taken by planning and a dry run shows the host each candidate would get.
 */
import type { Issue } from '../domain/issue.js';
import { dispatchOrder, type EligibilityInput, eligibilityCheck } from './eligibility.js';
import type { HostPool, NoHostReason } from './host-pool.js';

export interface SlotLimits {
  maxConcurrentAgents: number;
  /** Lowercased state → cap. */
  maxConcurrentAgentsByState: Readonly<Record<string, number>>;
  /** Sessions already running, by lowercased state. */
  runningByState?: Readonly<Record<string, number>>;
}

/**
 * One candidate's decision; a dispatch row's `host` is its SSH worker host, null = this machine.
 * A row skipped as `blocked` names the open blockers in `blockedBy`.
 */
export type PlanRow =
  | { issue: Issue; dispatch: true; host: string | null }
  | { issue: Issue; dispatch: false; reason: string; detail: string; blockedBy?: readonly string[] };

/**
 * Orders candidates and decides each one against eligibility, free slots and, when
 * `hosts` lists any, a free SSH host. `hosts` is read, never changed: the plan works
 * on a clone, so the caller still takes the slot of each row's host when it dispatches.
 */
export function planDispatch(
  candidates: readonly Issue[],
  eligibility: EligibilityInput,
  limits: SlotLimits,
  hosts?: HostPool | null,
): PlanRow[] {
  const running = { ...(limits.runningByState ?? {}) };
  let globalFree = Math.max(
    limits.maxConcurrentAgents - Object.values(running).reduce((a, b) => a + b, 0),
    0,
  );
  const pool = hosts !== undefined && hosts !== null && hosts.hosts().length > 0 ? hosts.clone() : null;
  // Once no host has room none appears during the plan, so the reason is worked out once.
  let noHost: { reason: NoHostReason; detail: string } | null = null;
  const ineligible = eligibilityCheck(eligibility);
  return dispatchOrder(candidates).map((issue): PlanRow => {
    const blocked = ineligible(issue);
    if (blocked !== null) {
      const { reason, detail } = blocked;
      return blocked.reason === 'blocked'
        ? { issue, dispatch: false, reason, detail, blockedBy: blocked.blockedBy }
        : { issue, dispatch: false, reason, detail };
    }
    if (globalFree === 0) {
      return {
        issue,
        dispatch: false,
        reason: 'no_slot',
        detail: `all ${limits.maxConcurrentAgents} agent slots in use`,
      };
    }
    const state = issue.state.toLowerCase();
    const cap = limits.maxConcurrentAgentsByState[state];
    if (cap !== undefined && (running[state] ?? 0) >= cap) {
      return {
        issue,
        dispatch: false,
        reason: 'no_state_slot',
        detail: `state "${issue.state}" is at its limit of ${cap}`,
      };
    }
    let host: string | null = null;
    if (pool !== null) {
      if (noHost === null) {
        const picked = pool.pick(null);
        if (picked.ok) {
          host = picked.host;
          pool.take(host);
        } else {
          noHost = { reason: picked.reason, detail: describeNoHost(pool, picked.reason) };
        }
      }
      if (noHost !== null) return { issue, dispatch: false, ...noHost };
    }
    running[state] = (running[state] ?? 0) + 1;
    globalFree -= 1;
    return { issue, dispatch: true, host };
  });
}

/** Why no host could be picked, naming each host's load or failure. */
export function describeNoHost(pool: HostPool, reason: NoHostReason): string {
  const status = pool.status().filter((s) => s.configured);
  if (reason === 'ssh_hosts_down') {
    const why = status.map((s) => `${s.host}: ${s.down?.reason ?? 'down'}`).join('; ');
    return `every ssh host is down (${why})`;
  }
  const each = status
    .map((s) => `${s.host} ${s.running}/${s.cap}${s.down !== null ? ' down' : ''}`)
    .join(', ');
  return `no ssh host has a free slot (max_concurrent_agents_per_host ${pool.perHostCap()}: ${each})`;
}
