/**
 * A dispatch plan for one tick from an empty state: which candidates would start
 * and why each other one would not. `run --dry-run` prints it; the tick uses the
 * same eligibility and slot rules.
 */
import type { Issue } from '../domain/issue.js';
import { dispatchOrder, type EligibilityInput, eligibilityCheck } from './eligibility.js';

export interface SlotLimits {
  maxConcurrentAgents: number;
  /** Lowercased state → cap. */
  maxConcurrentAgentsByState: Readonly<Record<string, number>>;
  /** Sessions already running, by lowercased state. */
  runningByState?: Readonly<Record<string, number>>;
}

export type PlanRow =
  | { issue: Issue; dispatch: true }
  | { issue: Issue; dispatch: false; reason: string; detail: string };

/** Orders candidates and decides each one against eligibility and free slots. */
export function planDispatch(
  candidates: readonly Issue[],
  eligibility: EligibilityInput,
  limits: SlotLimits,
): PlanRow[] {
  const running = { ...(limits.runningByState ?? {}) };
  let globalFree = Math.max(
    limits.maxConcurrentAgents - Object.values(running).reduce((a, b) => a + b, 0),
    0,
  );
  const ineligible = eligibilityCheck(eligibility);
  return dispatchOrder(candidates).map((issue): PlanRow => {
    const blocked = ineligible(issue);
    if (blocked !== null) return { issue, dispatch: false, reason: blocked.reason, detail: blocked.detail };
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
    running[state] = (running[state] ?? 0) + 1;
    globalFree -= 1;
    return { issue, dispatch: true };
  });
}
