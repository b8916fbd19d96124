/**
 * Which issues may be dispatched, in which order, and why the others may not.
 * Pure policy: the tick, `run --dry-run` and the preview all ask this module, so
 * the reason an operator reads is the reason the scheduler acted on.
 */
import type { Issue } from '../domain/issue.js';
import { missingLabels, missingLabelsText } from './required-labels.js';
import { stateClassifier } from './states.js';

export interface EligibilityInput {
  activeStates: readonly string[];
  terminalStates: readonly string[];
  /** Ids currently running or claimed. */
  busyIds: ReadonlySet<string>;
  /** Ids whose budget is spent. */
  exhaustedIds: ReadonlySet<string>;
  /** Ids held after a failure that retrying cannot fix, until the issue changes. */
  heldIds?: ReadonlySet<string>;
  /** `tracker.required_labels`: an issue must carry all of them; absent or [] = no requirement. */
  requiredLabels?: readonly string[];
}

export type Ineligibility =
  | { reason: 'missing_fields'; detail: string }
  | { reason: 'not_active'; detail: string }
  | { reason: 'terminal'; detail: string }
  | { reason: 'busy'; detail: string }
  | { reason: 'budget_exhausted'; detail: string }
  | { reason: 'held'; detail: string }
  /** `missing`: the required labels the issue lacks. */
  | { reason: 'missing_labels'; detail: string; missing: string[] }
  /** `blockedBy`: the identifiers (or ids) of the blockers still open. */
  | { reason: 'blocked'; detail: string; blockedBy: string[] };

/** Why `issue` cannot be dispatched now, or null when it can. */
export function ineligibility(issue: Issue, input: EligibilityInput): Ineligibility | null {
  return eligibilityCheck(input)(issue);
}

/** The check of `ineligibility` with its state sets built once, for a whole list of candidates. */
export function eligibilityCheck(input: EligibilityInput): (issue: Issue) => Ineligibility | null {
  const classify = stateClassifier(input);
  return (issue) => {
    const missing = (['id', 'identifier', 'title', 'state'] as const).filter((k) => issue[k].trim() === '');
    if (missing.length > 0) return { reason: 'missing_fields', detail: `missing ${missing.join(', ')}` };
    const stateClass = classify(issue.state);
    if (stateClass === 'terminal')
      return { reason: 'terminal', detail: `state "${issue.state}" is terminal` };
    if (stateClass === 'inactive') {
      return { reason: 'not_active', detail: `state "${issue.state}" is not active` };
    }
    if (input.busyIds.has(issue.id)) return { reason: 'busy', detail: 'already running or claimed' };
    const lacking = missingLabels(issue.labels, input.requiredLabels ?? []);
    if (lacking.length > 0)
      return { reason: 'missing_labels', detail: missingLabelsText(lacking), missing: lacking };
    if (input.exhaustedIds.has(issue.id)) return { reason: 'budget_exhausted', detail: 'budget spent' };
    if (input.heldIds?.has(issue.id) === true) {
      return {
        reason: 'held',
        detail: 'the last run failed in a way a retry cannot fix; edit the issue to retry',
      };
    }
    const open = issue.blockedBy.filter((b) => b.state === '' || classify(b.state) !== 'terminal');
    if (open.length > 0) {
      const blockedBy = open.map((b) => b.identifier || b.id);
      return { reason: 'blocked', detail: `blocked by ${blockedBy.join(', ')}`, blockedBy };
    }
    return null;
  };
}

/** Ranked priorities: 1 (urgent) to 4 (low). 0 is "no priority" in Linear; other values are unknown scales. */
const RANKED_PRIORITIES: ReadonlySet<number> = new Set([1, 2, 3, 4]);

/** A priority's place in the order: 1–4 as themselves, everything else (none, 0, 7, 2.5) after them, all alike. */
function priorityRank(priority: number | null): number {
  return priority !== null && RANKED_PRIORITIES.has(priority) ? priority : RANKED_PRIORITIES.size + 1;
}

/**
 * Dispatch order: priorities 1–4 ascending, then every other issue (no priority, 0 or an
 * unknown value) together; within a rank the oldest first (no creation time last), then
 * by identifier. Stable.
 */
export function dispatchOrder(issues: readonly Issue[]): Issue[] {
  return [...issues].sort((a, b) => {
    const pa = priorityRank(a.priority);
    const pb = priorityRank(b.priority);
    if (pa !== pb) return pa - pb;
    if (a.createdAt !== b.createdAt) {
      if (a.createdAt === '') return 1;
      if (b.createdAt === '') return -1;
      return a.createdAt < b.createdAt ? -1 : 1;
    }
    return a.identifier < b.identifier ? -1 : a.identifier > b.identifier ? 1 : 0;
  });
}
