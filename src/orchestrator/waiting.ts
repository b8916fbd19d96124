/**
 * Why each issue the orchestrator knows of is not running. A candidate the last tick did not
 * dispatch keeps the reason the dispatch plan gave it (the eligibility the tick and
 * `run --dry-run` act on); an issue the orchestrator moved to the blocked state waits for a
 * person. The trap is a second opinion: nothing here decides whether an issue may run. It only
 * puts the figures behind the plan's reason into words (which blocker, how much of which
 * budget, which failure), so the dashboard says what the scheduler did, not a guess at it.
 */
import { formatDollars } from '../agent/usage/index.js';
import type { Issue } from '../domain/issue.js';
import { type BudgetLimits, budgetVerdict, type IssueSpend } from './budget.js';
import type { PlanRow } from './plan.js';

/** Issues the orchestrator parked for a person that it remembers; the oldest are forgotten first. */
export const MAX_PARKED = 500;
/** Characters of the agent's question a parked entry keeps. */
const QUESTION_CHARS = 300;

/** An issue the orchestrator knows of and is not running, with why. */
export interface WaitingEntry {
  issueId: string;
  identifier: string;
  title: string;
  /** The tracker state when last seen. */
  state: string;
  /** The plan's reason (`blocked`, `budget_exhausted`, `held`, `no_slot`, `not_active`, …) or `parked`. */
  reason: string;
  /** The reason in words: `waiting on DEMO-1`, `token budget 60,000 of 50,000`, `held: agent_not_found`. */
  detail: string;
  /** Identifiers of the blockers still open; [] unless `reason` is `blocked`. */
  blockedBy: string[];
  /** When it was last seen so: the tick that planned it, or when the issue was parked. */
  seenAtMs: number;
}

/** What a tick knows besides its plan, to say why a row was not dispatched. */
export interface WaitingContext {
  seenAtMs: number;
  /** Issues whose budget is spent, by id: their spend and the reason recorded when it ran out. */
  exhausted: ReadonlyMap<string, IssueSpend & { exhaustedReason: string | null }>;
  limits: BudgetLimits;
  /** Held issues by id: the failure's kind (null when it had none) and its text. */
  held: ReadonlyMap<string, { error: string; errorKind: string | null }>;
}

/**
 * One entry per row not dispatched, in plan order. Rows skipped as `busy` are left out: they
 * run or wait for a retry, which the snapshot shows already.
 */
export function waitingFromPlan(rows: readonly PlanRow[], context: WaitingContext): WaitingEntry[] {
  const out: WaitingEntry[] = [];
  for (const row of rows) {
    if (row.dispatch || row.reason === 'busy') continue;
    const blockedBy = row.reason === 'blocked' ? [...(row.blockedBy ?? [])] : [];
    out.push({
      ...issueFields(row.issue),
      reason: row.reason,
      detail: detailOf(row, blockedBy, context),
      blockedBy,
      seenAtMs: context.seenAtMs,
    });
  }
  return out;
}

/** The entry of an issue moved to `state` (the blocked state) because its agent asked `question`. */
export function parkedEntry(issue: Issue, state: string, question: string, atMs: number): WaitingEntry {
  const asked = question.trim();
  const clipped = asked.length > QUESTION_CHARS ? `${asked.slice(0, QUESTION_CHARS - 1)}…` : asked;
  return {
    ...issueFields(issue),
    state,
    reason: 'parked',
    detail: `waiting for an answer in ${state}${clipped === '' ? '' : `: ${clipped}`}`,
    blockedBy: [],
    seenAtMs: atMs,
  };
}

/** A spent budget in words, named by the limit that stops the next session; null within every limit. */
export function budgetText(spend: IssueSpend, limits: BudgetLimits): string | null {
  const verdict = budgetVerdict(spend, limits, true);
  if (!verdict.exhausted) return null;
  switch (verdict.limit) {
    case 'max_sessions':
      return `session budget ${count(spend.sessions)} of ${count(limits.maxSessions)}`;
    case 'max_tokens':
      return `token budget ${count(spend.tokens)} of ${count(limits.maxTokens)}`;
    case 'max_cost_usd':
      return `cost budget ${formatDollars(spend.costMicroUsd ?? 0)} of ${formatDollars(limits.maxCostMicroUsd)}`;
    default:
      return assertNever(verdict.limit);
  }
}

function detailOf(
  row: Extract<PlanRow, { dispatch: false }>,
  blockedBy: readonly string[],
  context: WaitingContext,
): string {
  switch (row.reason) {
    case 'blocked':
      return blockedBy.length > 0 ? `waiting on ${blockedBy.join(', ')}` : row.detail;
    case 'budget_exhausted': {
      const spend = context.exhausted.get(row.issue.id);
      if (spend === undefined) return row.detail;
      // A limit raised since, or a stop no budget figure names (no progress), reads as recorded.
      return budgetText(spend, context.limits) ?? spend.exhaustedReason ?? row.detail;
    }
    case 'held': {
      const hold = context.held.get(row.issue.id);
      return hold === undefined ? row.detail : `held: ${hold.errorKind ?? hold.error}`;
    }
    default:
      return row.detail;
  }
}

function issueFields(issue: Issue): Pick<WaitingEntry, 'issueId' | 'identifier' | 'title' | 'state'> {
  return { issueId: issue.id, identifier: issue.identifier, title: issue.title, state: issue.state };
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}

function assertNever(value: never): never {
  throw new Error(`unexpected budget limit ${String(value)}`);
}
