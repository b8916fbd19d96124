/**
 * The typed shapes the store hands out and takes in, and the mapping between them and rows.
 * Rows are snake_case with 0/1 booleans and JSON text; callers only ever see camelCase
 * objects. Every enumerated or JSON column is checked as it is read, so a damaged or
 * hand-edited value surfaces as a `corrupt` error naming the table, column and row instead of
 * as a wrong value travelling through the orchestrator.
 */
import type {
  ExitReason,
  ReportedAmount,
  TokenCounts,
  TurnResult,
  UsageProvenance,
} from '../domain/agent.js';
import type { AgentErrorKind } from '../domain/errors.js';
import { AGENT_ERROR_KINDS } from '../domain/errors.js';
import { PersistenceError } from './errors.js';

/** How a worker attempt ended. */
export const RUN_EXIT_KINDS = [
  'succeeded',
  'failed',
  'cancelled',
  'blocked',
  /** The process stopped while the run was open; set by restart recovery. */
  'interrupted',
  'budget_exhausted',
  'released',
  /** `git.require_changes`: nothing to hand off. */
  'no_changes',
] as const;
export type RunExitKind = (typeof RUN_EXIT_KINDS)[number];

/** Why a retry is queued. */
export const RETRY_REASONS = ['continuation', 'error', 'stall', 'usage_limit', 'timer', 'reaction'] as const;
export type RetryReason = (typeof RETRY_REASONS)[number];

export const EXIT_REASONS: readonly ExitReason[] = [
  'turn_completed',
  'turn_failed',
  'turn_cancelled',
  'turn_input_required',
];
export const USAGE_PROVENANCES: readonly UsageProvenance[] = [
  'reported',
  'token_estimate',
  'local',
  'unmeasured',
];

/** What the store needs to open a run, written before the agent session starts. */
export interface StartRunInput {
  issueId: string;
  identifier: string;
  /** 1-based attempt number. */
  attempt: number;
  /** SSH host name, 'local', or null when not recorded. */
  host: string | null;
  agentKind: string;
  /** The session being resumed; null or absent for a new session. */
  sessionId?: string | null;
  /** The reaction that starts the run; null or absent for a run from the tracker. */
  reaction?: string | null;
  /** Absolute workspace path. */
  workspace: string;
  /** ISO-8601 UTC. */
  startedAt: string;
}

/** One finished turn: the adapter's result plus its timing and error. */
export type TurnInput = TurnResult & {
  /** ISO-8601 UTC. */
  endedAt: string;
  /** The AgentError kind when the turn failed, null otherwise. */
  errorKind: AgentErrorKind | null;
  /** The error text when the turn failed, null otherwise. */
  error: string | null;
};

/** How a run ended; written once, when the worker exits. */
export interface FinishRunInput {
  /** ISO-8601 UTC. */
  endedAt: string;
  exitKind: RunExitKind;
  /** The failure's kind (an ErrorKind or a layer's own kind), null when none. */
  errorKind: string | null;
  error: string | null;
  /** Turns the run completed. */
  turns: number;
  /** Run-cumulative usage. */
  usage: TokenCounts;
  usageByModel: Record<string, TokenCounts>;
  /** Integer micro-dollars; null = the cost is unknown (never "free"). */
  costMicroUsd: number | null;
  provenance: UsageProvenance;
  /** Turns whose spend stayed unaccounted at the end of the run. */
  unaccountedTurns: number;
  /** The session id the run ended with, null when none. */
  sessionId: string | null;
}

/** One worker attempt, as stored. `endedAt`/`exitKind` are null while the run is open. */
export interface RunRecord {
  id: number;
  issueId: string;
  identifier: string;
  attempt: number;
  host: string | null;
  agentKind: string;
  sessionId: string | null;
  workspace: string;
  startedAt: string;
  endedAt: string | null;
  exitKind: RunExitKind | null;
  errorKind: string | null;
  error: string | null;
  turns: number;
  usage: TokenCounts;
  usageByModel: Record<string, TokenCounts>;
  costMicroUsd: number | null;
  provenance: UsageProvenance;
  unaccountedTurns: number;
  /** The reaction that started the run (`ci_failure`, …); null for a run from the tracker. */
  reaction: string | null;
  /** The self-review record of the run; null when none ran. */
  review: unknown;
}

/** One turn, as stored: exactly the TurnInput that was recorded, plus its keys. */
export type TurnRecord = TurnInput & {
  runId: number;
  /** 1-based turn number within the run. */
  turn: number;
  /** ISO-8601 UTC. */
  startedAt: string;
};

/** A queued retry. One per issue: saving replaces the previous entry. */
export interface RetryEntry {
  issueId: string;
  identifier: string;
  /** The 1-based attempt number the retry runs as. */
  attempt: number;
  /** Epoch ms when the retry is due. */
  dueAtMs: number;
  reason: RetryReason;
  lastError: string | null;
  /** The host of the previous attempt (preferred again), null when none. */
  previousHost: string | null;
  /** The session to resume, null for a fresh session. */
  sessionId: string | null;
  /** The feedback a reaction run carries (reason `reaction`); absent or null otherwise. */
  reaction?: ReactionRequest | null;
}

/** What a queued reaction run carries to its prompt. */
export interface ReactionRequest {
  kind: string;
  fingerprint: string;
  /** The template variable's value (`ci_failure`, `review_comments`, `merge_conflict`). */
  variables: Record<string, unknown>;
}

/** A stored retry with the time it was last written. */
export type RetryRecord = RetryEntry & { /** ISO-8601 UTC. */ updatedAt: string };

/** The last session of an issue, kept for resume. */
export interface SessionRecord {
  issueId: string;
  sessionId: string;
  agentKind: string;
  /** ISO-8601 UTC. */
  updatedAt: string;
}

/** Spend to add to an issue's budget. */
export interface IssueSpend {
  sessions: number;
  tokens: number;
  /** Integer micro-dollars; pass 0 for a session whose cost is unknown. */
  costMicroUsd: number;
}

export interface IssueBudget extends IssueSpend {
  issueId: string;
  /** ISO-8601 UTC of the first exhaustion, null while within budget. */
  exhaustedAt: string | null;
  exhaustedReason: string | null;
  /** What the issue said (state, title, description) when a stop that lasts until a person changes it (`require_changes`) was made; null otherwise. */
  parkedFingerprint: string | null;
  /** True once the exhaustion was reported (commented) on the issue. */
  exhaustionReported: boolean;
  /** Sessions in a row that ended with the issue in `unchangedState`, the state their first turn found it in. */
  unchangedSessions: number;
  /** The state those sessions left the issue in; null while none is counted. */
  unchangedState: string | null;
}

/** Aggregate counters since the database was created. */
export interface Totals {
  tokens: TokenCounts;
  /** Integer micro-dollars of known cost. */
  costMicroUsd: number;
  /** Wall-clock seconds workers ran. */
  secondsRunning: number;
  runsStarted: number;
  runsFinished: number;
}

/** Amounts to add to the totals; absent fields add nothing. */
export type TotalsDelta = Partial<Totals>;

export type TotalsRecord = Totals & { /** ISO-8601 UTC. */ updatedAt: string };

// ---- rows ----

export interface RunRow {
  id: number;
  issue_id: string;
  identifier: string;
  attempt: number;
  host: string | null;
  agent_kind: string;
  session_id: string | null;
  workspace: string;
  started_at: string;
  ended_at: string | null;
  exit_kind: string | null;
  error_kind: string | null;
  error: string | null;
  turns: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  total_tokens: number;
  usage_by_model: string;
  cost_micro_usd: number | null;
  provenance: string;
  unaccounted_turns: number;
  reaction: string | null;
  review_json: string | null;
}

export interface TurnRow {
  run_id: number;
  turn: number;
  started_at: string;
  ended_at: string;
  session_id: string;
  exit_reason: string;
  error_kind: string | null;
  error: string | null;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  total_tokens: number;
  usage_by_model: string;
  usage_measured: number;
  spend_unaccounted: number;
  spend_coverable: number;
  covers_session: number;
  usage_provenance: string;
  reported_amounts: string;
  final_message: string;
}

export interface RetryRow {
  issue_id: string;
  identifier: string;
  attempt: number;
  due_at_ms: number;
  reason: string;
  last_error: string | null;
  previous_host: string | null;
  session_id: string | null;
  reaction: string | null;
  updated_at: string;
}

export interface SessionRow {
  issue_id: string;
  session_id: string;
  agent_kind: string;
  updated_at: string;
}

export interface BudgetRow {
  issue_id: string;
  sessions: number;
  tokens: number;
  cost_micro_usd: number;
  exhausted_at: string | null;
  exhausted_reason: string | null;
  exhaustion_reported: number;
  parked_fingerprint: string | null;
  unchanged_sessions: number;
  unchanged_state: string | null;
}

export interface TotalsRow {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  total_tokens: number;
  cost_micro_usd: number;
  seconds_running: number;
  runs_started: number;
  runs_finished: number;
  updated_at: string;
}

/** Where a value was read from, for the `corrupt` error. */
interface Origin {
  path: string;
  table: string;
  key: string;
}

function corrupt(origin: Origin, column: string, detail: string): PersistenceError {
  return new PersistenceError(
    'corrupt',
    `${origin.path}: ${origin.table}.${column} of ${origin.key} ${detail}`,
  );
}

function oneOf<T extends string>(allowed: readonly T[], value: string, origin: Origin, column: string): T {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw corrupt(origin, column, `holds ${JSON.stringify(value)}, not one of ${allowed.join('|')}`);
}

function bool(value: number, origin: Origin, column: string): boolean {
  if (value === 0 || value === 1) return value === 1;
  throw corrupt(origin, column, `holds ${value}, not 0 or 1`);
}

function parseJson(text: string, origin: Origin, column: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw corrupt(origin, column, 'is not valid JSON');
  }
}

const COUNT_KEYS = [
  'inputTokens',
  'outputTokens',
  'cacheReadTokens',
  'cacheWriteTokens',
  'totalTokens',
] as const;

function isCounts(value: unknown): value is TokenCounts {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return COUNT_KEYS.every((k) => typeof record[k] === 'number');
}

function byModel(text: string, origin: Origin, column: string): Record<string, TokenCounts> {
  const value = parseJson(text, origin, column);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw corrupt(origin, column, 'is not a JSON object');
  }
  // fromEntries defines own properties, so a model named "__proto__" stays a model.
  return Object.fromEntries(
    Object.entries(value).map(([model, counts]: [string, unknown]) => {
      if (!isCounts(counts)) {
        throw corrupt(origin, column, `has malformed counts for model ${JSON.stringify(model)}`);
      }
      return [model, pickCounts(counts)];
    }),
  );
}

function amounts(text: string, origin: Origin, column: string): ReportedAmount[] {
  const value = parseJson(text, origin, column);
  if (!Array.isArray(value)) throw corrupt(origin, column, 'is not a JSON array');
  return value.map((item: unknown) => {
    const entry = item as Partial<ReportedAmount> | null;
    if (typeof entry?.unit !== 'string' || typeof entry.micros !== 'number') {
      throw corrupt(origin, column, 'has an entry without unit and micros');
    }
    return { unit: entry.unit, micros: entry.micros };
  });
}

function pickCounts(c: TokenCounts): TokenCounts {
  return {
    inputTokens: c.inputTokens,
    outputTokens: c.outputTokens,
    cacheReadTokens: c.cacheReadTokens,
    cacheWriteTokens: c.cacheWriteTokens,
    totalTokens: c.totalTokens,
  };
}

/** JSON text of a per-model map, with only the count fields (extra keys are not persisted). */
export function byModelJson(map: Record<string, TokenCounts>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(map).map(([model, c]) => [model, pickCounts(c)])));
}

/** JSON text of reported amounts, with only unit and micros. */
export function amountsJson(list: readonly ReportedAmount[]): string {
  return JSON.stringify(list.map((a) => ({ unit: a.unit, micros: a.micros })));
}

function countsOf(row: {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  total_tokens: number;
}): TokenCounts {
  return {
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    cacheReadTokens: row.cache_read_tokens,
    cacheWriteTokens: row.cache_write_tokens,
    totalTokens: row.total_tokens,
  };
}

export function runFromRow(row: RunRow, path: string): RunRecord {
  const origin = { path, table: 'runs', key: `run ${row.id}` };
  return {
    id: row.id,
    issueId: row.issue_id,
    identifier: row.identifier,
    attempt: row.attempt,
    host: row.host,
    agentKind: row.agent_kind,
    sessionId: row.session_id,
    workspace: row.workspace,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    exitKind: row.exit_kind === null ? null : oneOf(RUN_EXIT_KINDS, row.exit_kind, origin, 'exit_kind'),
    errorKind: row.error_kind,
    error: row.error,
    turns: row.turns,
    usage: countsOf(row),
    usageByModel: byModel(row.usage_by_model, origin, 'usage_by_model'),
    costMicroUsd: row.cost_micro_usd,
    provenance: oneOf(USAGE_PROVENANCES, row.provenance, origin, 'provenance'),
    unaccountedTurns: row.unaccounted_turns,
    reaction: row.reaction,
    review: jsonOrNull(row.review_json),
  };
}

/** A stored JSON column; a damaged value reads as null (it is a record for people, not state). */
function jsonOrNull(text: string | null): unknown {
  if (text === null) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

export function turnFromRow(row: TurnRow, path: string): TurnRecord {
  const origin = { path, table: 'turns', key: `run ${row.run_id} turn ${row.turn}` };
  return {
    runId: row.run_id,
    turn: row.turn,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    sessionId: row.session_id,
    exitReason: oneOf(EXIT_REASONS, row.exit_reason, origin, 'exit_reason'),
    errorKind:
      row.error_kind === null ? null : oneOf(AGENT_ERROR_KINDS, row.error_kind, origin, 'error_kind'),
    error: row.error,
    usage: countsOf(row),
    usageByModel: byModel(row.usage_by_model, origin, 'usage_by_model'),
    usageMeasured: bool(row.usage_measured, origin, 'usage_measured'),
    spendUnaccounted: bool(row.spend_unaccounted, origin, 'spend_unaccounted'),
    spendCoverable: bool(row.spend_coverable, origin, 'spend_coverable'),
    coversSession: bool(row.covers_session, origin, 'covers_session'),
    usageProvenance: oneOf(USAGE_PROVENANCES, row.usage_provenance, origin, 'usage_provenance'),
    reportedAmounts: amounts(row.reported_amounts, origin, 'reported_amounts'),
    finalMessage: row.final_message,
  };
}

export function retryFromRow(row: RetryRow, path: string): RetryRecord {
  const origin = { path, table: 'retry_queue', key: `issue ${JSON.stringify(row.issue_id)}` };
  return {
    issueId: row.issue_id,
    identifier: row.identifier,
    attempt: row.attempt,
    dueAtMs: row.due_at_ms,
    reason: oneOf(RETRY_REASONS, row.reason, origin, 'reason'),
    lastError: row.last_error,
    previousHost: row.previous_host,
    sessionId: row.session_id,
    reaction: reactionOf(row.reaction),
    updatedAt: row.updated_at,
  };
}

function reactionOf(text: string | null): ReactionRequest | null {
  const value = jsonOrNull(text);
  if (value === null || typeof value !== 'object') return null;
  const r = value as Partial<ReactionRequest>;
  if (typeof r.kind !== 'string' || typeof r.fingerprint !== 'string') return null;
  return {
    kind: r.kind,
    fingerprint: r.fingerprint,
    variables: r.variables !== null && typeof r.variables === 'object' ? r.variables : {},
  };
}

export function sessionFromRow(row: SessionRow): SessionRecord {
  return {
    issueId: row.issue_id,
    sessionId: row.session_id,
    agentKind: row.agent_kind,
    updatedAt: row.updated_at,
  };
}

export function budgetFromRow(row: BudgetRow, path: string): IssueBudget {
  const origin = { path, table: 'issue_budgets', key: `issue ${JSON.stringify(row.issue_id)}` };
  return {
    issueId: row.issue_id,
    sessions: row.sessions,
    tokens: row.tokens,
    costMicroUsd: row.cost_micro_usd,
    exhaustedAt: row.exhausted_at,
    exhaustedReason: row.exhausted_reason,
    parkedFingerprint: row.parked_fingerprint,
    exhaustionReported: bool(row.exhaustion_reported, origin, 'exhaustion_reported'),
    unchangedSessions: row.unchanged_sessions,
    unchangedState: row.unchanged_state,
  };
}

export function totalsFromRow(row: TotalsRow): TotalsRecord {
  return {
    tokens: countsOf(row),
    costMicroUsd: row.cost_micro_usd,
    secondsRunning: row.seconds_running,
    runsStarted: row.runs_started,
    runsFinished: row.runs_finished,
    updatedAt: row.updated_at,
  };
}
