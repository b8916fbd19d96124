/**
 * The table `run --until-idle` ends with: each issue the run dispatched or left waiting, the
 * state the tracker shows for it at the end, its last attempt, and why it stopped there. The
 * reasons are the owner's own (the waiting list the last tick planned, with its blockers,
 * budgets and holds) or read from the issue's last run; this module only puts them side by
 * side, so the table never argues with the scheduler, the dashboard or the API.
 */

import type { WaitingEntry } from '../orchestrator/waiting.js';
import type { RunRecord } from '../persistence/index.js';

/** One line of the closing table. */
export interface ClosingRow {
  identifier: string;
  /** The tracker state at the end; null when the tracker no longer has the issue. */
  state: string | null;
  /** The last attempt's number (1-based); null when the run never dispatched the issue. */
  attempt: number | null;
  reason: string;
}

/** What the table is made of, read once the run is idle. */
export interface ClosingFacts {
  /** Issues the run dispatched, by id: their identifiers. */
  dispatched: ReadonlyMap<string, string>;
  /** The owner's waiting list after its last tick. */
  waiting: readonly WaitingEntry[];
  /** Tracker states at the end, by id; an id missing here is gone from the tracker. */
  states: ReadonlyMap<string, string>;
  /** Each dispatched issue's last run, by id. */
  lastRuns: ReadonlyMap<string, Pick<RunRecord, 'attempt' | 'exitKind' | 'errorKind'>>;
  handoffState: string | null;
  terminalStates: readonly string[];
}

/** The rows, ordered by identifier (numbers in identifiers compared as numbers). */
export function closingRows(facts: ClosingFacts): ClosingRow[] {
  const waiting = new Map(facts.waiting.map((w) => [w.issueId, w]));
  const ids = new Set([...facts.dispatched.keys(), ...waiting.keys()]);
  const rows = [...ids].map((id): ClosingRow => {
    const entry = waiting.get(id);
    const run = facts.lastRuns.get(id) ?? null;
    const state = facts.states.get(id) ?? entry?.state ?? null;
    return {
      identifier: facts.dispatched.get(id) ?? entry?.identifier ?? id,
      state,
      attempt: run?.attempt ?? null,
      reason: entry?.detail ?? endedBy(state, run, facts),
    };
  });
  return rows.sort((a, b) => a.identifier.localeCompare(b.identifier, 'en', { numeric: true }));
}

/** Why a dispatched issue the owner no longer lists as waiting is where it is. */
function endedBy(
  state: string | null,
  run: Pick<RunRecord, 'exitKind' | 'errorKind'> | null,
  facts: Pick<ClosingFacts, 'handoffState' | 'terminalStates'>,
): string {
  if (state === null) return 'no longer in the tracker';
  const same = (a: string | null) => a !== null && a.toLowerCase() === state.toLowerCase();
  if (run?.exitKind === 'succeeded' && same(facts.handoffState)) return `handed off to ${state}`;
  if (facts.terminalStates.some(same)) return `closed as ${state}`;
  switch (run?.exitKind ?? null) {
    case 'blocked':
      return 'held: the agent asked a question and needs an answer';
    case 'failed':
      return `failed: ${run?.errorKind ?? 'error'}`;
    case 'budget_exhausted':
      return 'budget spent';
    case 'cancelled':
      return `stopped when the issue moved to ${state}`;
    default:
      return `left in ${state}`;
  }
}

/** The table as text, with a heading line; '' when there are no rows. */
export function formatClosingTable(rows: readonly ClosingRow[]): string {
  if (rows.length === 0) return '';
  const cells = rows.map((r) => [
    r.identifier,
    r.state ?? '-',
    r.attempt === null ? '-' : String(r.attempt),
    r.reason,
  ]);
  const head = ['Issue', 'State', 'Attempt', 'Why it ended there'];
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? '').length)));
  const line = (c: readonly string[]) =>
    c
      .map((text, i) =>
        i === 2 ? text.padStart(widths[i] ?? 0) : i === c.length - 1 ? text : text.padEnd(widths[i] ?? 0),
      )
      .join('  ');
  return `${[line(head), ...cells.map(line)].join('\n')}\n`;
}
