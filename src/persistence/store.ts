/**
 * The durable half of the orchestrator's state: run and turn history, the retry queue,
 * resume session ids, credential proofs, per-issue budgets and aggregate totals, in one
 * SQLite file.
 *
 * Every method is synchronous and commits before it returns, so the orchestrator can write a
 * state change and only then move its in-memory state on: a crash between the two loses
 * nothing that was acknowledged. WAL with `synchronous=NORMAL` makes a commit survive the
 * process being killed (the OS still holds the pages); only a power loss can lose the last
 * commits, never corrupt the file. One Store is one connection and the only writer; statements
 * are prepared once, when the store opens.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { type TokenCounts, ZERO_TOKENS } from '../domain/agent.js';
import { PersistenceError, sqliteCode, toPersistenceError } from './errors.js';
import { LATEST_SCHEMA_VERSION, type MigrationReport, migrate } from './migrations.js';
import {
  amountsJson,
  type BudgetRow,
  budgetFromRow,
  byModelJson,
  type FinishRunInput,
  type IssueBudget,
  type IssueSpend,
  type RetryEntry,
  type RetryRecord,
  type RetryRow,
  type RunRecord,
  type RunRow,
  retryFromRow,
  runFromRow,
  type SessionRecord,
  type SessionRow,
  type StartRunInput,
  sessionFromRow,
  type TotalsDelta,
  type TotalsRecord,
  type TotalsRow,
  type TurnInput,
  type TurnRecord,
  type TurnRow,
  totalsFromRow,
  turnFromRow,
} from './records.js';
import { ScmTable } from './scm.js';
import { ToolCallsTable } from './tool-calls.js';

/** How long a write waits for another connection's lock before failing with `busy`. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5_000;

const MEMORY = ':memory:';
const INTERRUPTED_ERROR = 'the orchestrator stopped while this run was open';

export interface OpenStoreOptions {
  /** Defaults to DEFAULT_BUSY_TIMEOUT_MS. */
  busyTimeoutMs?: number;
  /** Clock for `updated_at` and `applied_at` stamps (epoch ms); defaults to Date.now. */
  nowMs?: () => number;
}

/** Proof store shape the credential verifier expects: epoch ms of the last proof per key. */
export interface ProofTable {
  /** Epoch ms of the last proof for `key`, or null when none. */
  get(key: string): number | null;
  /** Records (replaces) the proof time for `key`. */
  put(key: string, verifiedAtMs: number): void;
}

export interface ConnectionSettings {
  /** 'wal' for a file store, 'memory' for ':memory:'. */
  journalMode: string;
  synchronous: 'off' | 'normal' | 'full' | 'extra' | 'unknown';
  foreignKeys: boolean;
  busyTimeoutMs: number;
}

const SYNCHRONOUS_NAMES = ['off', 'normal', 'full', 'extra'] as const;

/**
 * Opens (creating the file and its parent directory if needed) and migrates the store at
 * `filePath`; `':memory:'` gives a private in-memory store. Throws PersistenceError:
 * `open_failed`, `corrupt` (not a SQLite file), `schema_too_new`, `migration_failed`.
 */
export function openStore(filePath: string, options: OpenStoreOptions = {}): Store {
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  const nowMs = options.nowMs ?? Date.now;
  const memory = filePath === MEMORY;
  const shownPath = memory ? MEMORY : path.resolve(filePath);

  if (!memory) {
    try {
      mkdirSync(path.dirname(shownPath), { recursive: true });
    } catch (error) {
      throw openFailed(shownPath, 'cannot create its directory', error);
    }
  }

  let db: Database.Database;
  try {
    db = new Database(memory ? MEMORY : shownPath, { timeout: busyTimeoutMs });
  } catch (error) {
    throw openFailed(shownPath, 'cannot open', error);
  }

  try {
    // The first statement reads the header: a file that is not a database fails here.
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (!memory && mode !== 'wal') {
      throw new PersistenceError(
        'open_failed',
        `${shownPath}: the file system refused WAL mode (got ${mode})`,
      );
    }
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(busyTimeoutMs))}`);
    const report = migrate(db, { path: shownPath, nowIso: () => new Date(nowMs()).toISOString() });
    if (!memory) assertWritable(db, shownPath);
    return new Store(db, shownPath, report, nowMs);
  } catch (error) {
    db.close();
    if (error instanceof PersistenceError) throw error;
    throw toPersistenceError(error, shownPath, 'open');
  }
}

/**
 * Proves the open database takes a write, rolled back at once. SQLite opens a file it
 * cannot write read-only without a word, and migrations write nothing to an up-to-date
 * schema, so without this a read-only database failed only at the first run's record,
 * after the service had started serving.
 */
function assertWritable(db: Database.Database, filePath: string): void {
  const version = db.pragma('user_version', { simple: true });
  try {
    db.exec('BEGIN IMMEDIATE');
    db.pragma(`user_version = ${Number(version)}`);
  } catch (error) {
    const code = sqliteCode(error);
    if (code !== null && (code.startsWith('SQLITE_READONLY') || code === 'SQLITE_PERM')) {
      throw new PersistenceError(
        'read_only',
        `${filePath}: the database cannot be written (a read-only file, directory or file system)`,
        { cause: error },
      );
    }
    throw toPersistenceError(error, filePath, 'write check');
  } finally {
    if (db.inTransaction) db.exec('ROLLBACK');
  }
}

function openFailed(filePath: string, what: string, error: unknown): PersistenceError {
  const wrapped = toPersistenceError(error, filePath, what);
  if (wrapped.code !== 'query_failed') return wrapped;
  const detail = error instanceof Error ? error.message : String(error);
  return new PersistenceError('open_failed', `${what} ${filePath}: ${detail}`, { cause: error });
}

function prepareStatements(db: Database.Database) {
  const runColumns = `id, issue_id, identifier, attempt, host, agent_kind, session_id, workspace, started_at,
    ended_at, exit_kind, error_kind, error, turns, input_tokens, output_tokens, cache_read_tokens,
    cache_write_tokens, total_tokens, usage_by_model, cost_micro_usd, provenance, unaccounted_turns, reaction,
    review_json`;
  const budgetColumns = `issue_id, sessions, tokens, cost_micro_usd, exhausted_at, exhausted_reason, exhaustion_reported,
    parked_fingerprint,
    unchanged_sessions, unchanged_state`;
  return {
    startRun: db.prepare<StartRunParams>(
      `INSERT INTO runs (issue_id, identifier, attempt, host, agent_kind, session_id, workspace, started_at,
         reaction)
       VALUES (@issueId, @identifier, @attempt, @host, @agentKind, @sessionId, @workspace, @startedAt,
         @reaction)`,
    ),
    insertTurn: db.prepare<TurnParams>(
      `INSERT INTO turns (run_id, turn, started_at, ended_at, session_id, exit_reason, error_kind, error,
         input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, total_tokens, usage_by_model,
         usage_measured, spend_unaccounted, spend_coverable, covers_session, usage_provenance,
         reported_amounts, final_message)
       VALUES (@runId, @turn, @startedAt, @endedAt, @sessionId, @exitReason, @errorKind, @error,
         @inputTokens, @outputTokens, @cacheReadTokens, @cacheWriteTokens, @totalTokens, @usageByModel,
         @usageMeasured, @spendUnaccounted, @spendCoverable, @coversSession, @usageProvenance,
         @reportedAmounts, @finalMessage)`,
    ),
    runAfterTurn: db.prepare<TurnParams>(
      `UPDATE runs SET turns = MAX(turns, @turn), session_id = COALESCE(NULLIF(@sessionId, ''), session_id),
         input_tokens = @inputTokens, output_tokens = @outputTokens, cache_read_tokens = @cacheReadTokens,
         cache_write_tokens = @cacheWriteTokens, total_tokens = @totalTokens, usage_by_model = @usageByModel
       WHERE id = @runId AND ended_at IS NULL`,
    ),
    savePendingTransition: db.prepare<PendingTransition & { createdAt: string }>(
      `INSERT INTO pending_transitions (issue_id, identifier, state, purpose, created_at)
       VALUES (@issueId, @identifier, @state, @purpose, @createdAt)
       ON CONFLICT (issue_id) DO UPDATE SET identifier = excluded.identifier, state = excluded.state,
         purpose = excluded.purpose, created_at = excluded.created_at`,
    ),
    deletePendingTransition: db.prepare<[string]>('DELETE FROM pending_transitions WHERE issue_id = ?'),
    pendingTransitions: db.prepare<
      [],
      { issue_id: string; identifier: string; state: string; purpose: string }
    >('SELECT issue_id, identifier, state, purpose FROM pending_transitions ORDER BY created_at, issue_id'),
    setRunUsage: db.prepare<CountParams & { runId: number; usageByModel: string }>(
      `UPDATE runs SET input_tokens = @inputTokens, output_tokens = @outputTokens,
         cache_read_tokens = @cacheReadTokens, cache_write_tokens = @cacheWriteTokens,
         total_tokens = @totalTokens, usage_by_model = @usageByModel
       WHERE id = @runId AND ended_at IS NULL`,
    ),
    finishRun: db.prepare<FinishRunParams>(
      `UPDATE runs SET ended_at = @endedAt, exit_kind = @exitKind, error_kind = @errorKind, error = @error,
         turns = @turns, input_tokens = @inputTokens, output_tokens = @outputTokens,
         cache_read_tokens = @cacheReadTokens, cache_write_tokens = @cacheWriteTokens,
         total_tokens = @totalTokens, usage_by_model = @usageByModel, cost_micro_usd = @costMicroUsd,
         provenance = @provenance, unaccounted_turns = @unaccountedTurns,
         session_id = COALESCE(@sessionId, session_id)
       WHERE id = @runId AND ended_at IS NULL`,
    ),
    setRunWorkspace: db.prepare<[string, number]>(
      'UPDATE runs SET workspace = ? WHERE id = ? AND ended_at IS NULL',
    ),
    setRunReview: db.prepare<[string, number]>('UPDATE runs SET review_json = ? WHERE id = ?'),
    runById: db.prepare<[number], RunRow>(`SELECT ${runColumns} FROM runs WHERE id = ?`),
    workspaceUsers: db.prepare<[string], { issue_id: string }>(
      'SELECT DISTINCT issue_id FROM runs WHERE workspace = ? LIMIT 2',
    ),
    openRuns: db.prepare<[], RunRow>(`SELECT ${runColumns} FROM runs WHERE ended_at IS NULL ORDER BY id`),
    closeInterrupted: db.prepare<[string, string]>(
      `UPDATE runs SET ended_at = ?, exit_kind = 'interrupted', error = COALESCE(error, ?)
       WHERE ended_at IS NULL`,
    ),
    runsForIssue: db.prepare<[string, number], RunRow>(
      `SELECT ${runColumns} FROM runs WHERE issue_id = ? ORDER BY id DESC LIMIT ?`,
    ),
    recentRuns: db.prepare<[number, number], RunRow>(
      `SELECT ${runColumns} FROM runs WHERE id < ? ORDER BY id DESC LIMIT ?`,
    ),
    runByIdentifier: db.prepare<[string], RunRow>(
      `SELECT ${runColumns} FROM runs WHERE identifier = ? ORDER BY id DESC LIMIT 1`,
    ),
    turnsForRun: db.prepare<[number], TurnRow>('SELECT * FROM turns WHERE run_id = ? ORDER BY turn'),
    unpricedRuns: db.prepare<[], { n: number }>(
      'SELECT COUNT(*) AS n FROM runs WHERE ended_at IS NOT NULL AND cost_micro_usd IS NULL',
    ),
    countSessions: db.prepare<[string], { issue_id: string; n: number }>(
      `SELECT ids.value AS issue_id, COUNT(runs.id) AS n
       FROM json_each(?) AS ids LEFT JOIN runs ON runs.issue_id = ids.value
       GROUP BY ids.value`,
    ),

    saveRetry: db.prepare<RetryRow>(
      `INSERT INTO retry_queue (issue_id, identifier, attempt, due_at_ms, reason, last_error, previous_host,
         session_id, reaction, updated_at)
       VALUES (@issue_id, @identifier, @attempt, @due_at_ms, @reason, @last_error, @previous_host,
         @session_id, @reaction, @updated_at)
       ON CONFLICT (issue_id) DO UPDATE SET identifier = excluded.identifier, attempt = excluded.attempt,
         due_at_ms = excluded.due_at_ms, reason = excluded.reason, last_error = excluded.last_error,
         previous_host = excluded.previous_host, session_id = excluded.session_id,
         reaction = excluded.reaction, updated_at = excluded.updated_at`,
    ),
    deleteRetry: db.prepare<[string]>('DELETE FROM retry_queue WHERE issue_id = ?'),
    loadRetries: db.prepare<[], RetryRow>('SELECT * FROM retry_queue ORDER BY due_at_ms, issue_id'),
    retryFor: db.prepare<[string], RetryRow>('SELECT * FROM retry_queue WHERE issue_id = ?'),

    saveSession: db.prepare<SessionRow>(
      `INSERT INTO sessions (issue_id, session_id, agent_kind, updated_at)
       VALUES (@issue_id, @session_id, @agent_kind, @updated_at)
       ON CONFLICT (issue_id) DO UPDATE SET session_id = excluded.session_id,
         agent_kind = excluded.agent_kind, updated_at = excluded.updated_at`,
    ),
    sessionFor: db.prepare<[string], SessionRow>('SELECT * FROM sessions WHERE issue_id = ?'),
    deleteSession: db.prepare<[string]>('DELETE FROM sessions WHERE issue_id = ?'),

    getProof: db.prepare<[string], { verified_at_ms: number }>(
      'SELECT verified_at_ms FROM credential_proofs WHERE proof_key = ?',
    ),
    putProof: db.prepare<[string, number]>(
      `INSERT INTO credential_proofs (proof_key, verified_at_ms) VALUES (?, ?)
       ON CONFLICT (proof_key) DO UPDATE SET verified_at_ms = excluded.verified_at_ms`,
    ),

    addIssueSpend: db.prepare<[string, number, number, number, string], BudgetRow>(
      `INSERT INTO issue_budgets (issue_id, sessions, tokens, cost_micro_usd, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (issue_id) DO UPDATE SET sessions = sessions + excluded.sessions,
         tokens = tokens + excluded.tokens, cost_micro_usd = cost_micro_usd + excluded.cost_micro_usd,
         updated_at = excluded.updated_at
       RETURNING ${budgetColumns}`,
    ),
    issueBudget: db.prepare<[string], BudgetRow>(
      `SELECT ${budgetColumns} FROM issue_budgets WHERE issue_id = ?`,
    ),
    exhaustedIssues: db.prepare<[], BudgetRow>(
      `SELECT ${budgetColumns} FROM issue_budgets WHERE exhausted_at IS NOT NULL ORDER BY issue_id`,
    ),
    markExhausted: db.prepare<[string, string, string, string | null, string]>(
      `INSERT INTO issue_budgets (issue_id, exhausted_at, exhausted_reason, parked_fingerprint, updated_at)
       VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (issue_id) DO UPDATE SET exhausted_at = excluded.exhausted_at,
         exhausted_reason = excluded.exhausted_reason, parked_fingerprint = excluded.parked_fingerprint,
         exhaustion_reported = 0, updated_at = excluded.updated_at
       WHERE issue_budgets.exhausted_at IS NULL`,
    ),
    markExhaustionReported: db.prepare<[string, string]>(
      `UPDATE issue_budgets SET exhaustion_reported = 1, updated_at = ?
       WHERE issue_id = ? AND exhausted_at IS NOT NULL AND exhaustion_reported = 0`,
    ),
    setUnchangedRun: db.prepare<[string, number, string | null, string]>(
      `INSERT INTO issue_budgets (issue_id, unchanged_sessions, unchanged_state, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (issue_id) DO UPDATE SET unchanged_sessions = excluded.unchanged_sessions,
         unchanged_state = excluded.unchanged_state, updated_at = excluded.updated_at`,
    ),
    clearExhaustion: db.prepare<[string, string]>(
      `UPDATE issue_budgets SET exhausted_at = NULL, exhausted_reason = NULL, exhaustion_reported = 0,
         updated_at = ?
       WHERE issue_id = ? AND exhausted_at IS NOT NULL`,
    ),

    addTotals: db.prepare<TotalsParams>(
      `UPDATE totals SET input_tokens = input_tokens + @inputTokens, output_tokens = output_tokens + @outputTokens,
         cache_read_tokens = cache_read_tokens + @cacheReadTokens,
         cache_write_tokens = cache_write_tokens + @cacheWriteTokens,
         total_tokens = total_tokens + @totalTokens, cost_micro_usd = cost_micro_usd + @costMicroUsd,
         seconds_running = seconds_running + @secondsRunning, runs_started = runs_started + @runsStarted,
         runs_finished = runs_finished + @runsFinished, updated_at = @updatedAt
       WHERE id = 1`,
    ),
    totals: db.prepare<[], TotalsRow>(
      `SELECT input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, total_tokens, cost_micro_usd,
         seconds_running, runs_started, runs_finished, updated_at
       FROM totals WHERE id = 1`,
    ),
  };
}

type Statements = ReturnType<typeof prepareStatements>;

interface StartRunParams {
  issueId: string;
  identifier: string;
  attempt: number;
  host: string | null;
  agentKind: string;
  sessionId: string | null;
  workspace: string;
  startedAt: string;
  reaction: string | null;
}

/** A tracker transition the owner decided and has not yet seen succeed. */
export interface PendingTransition {
  issueId: string;
  identifier: string;
  state: string;
  purpose: 'handoff' | 'blocked';
}

interface CountParams {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  totalTokens: number;
}

interface TurnParams extends CountParams {
  runId: number;
  turn: number;
  startedAt: string;
  endedAt: string;
  sessionId: string;
  exitReason: string;
  errorKind: string | null;
  error: string | null;
  usageByModel: string;
  usageMeasured: number;
  spendUnaccounted: number;
  spendCoverable: number;
  coversSession: number;
  usageProvenance: string;
  reportedAmounts: string;
  finalMessage: string;
}

interface FinishRunParams extends CountParams {
  runId: number;
  endedAt: string;
  exitKind: string;
  errorKind: string | null;
  error: string | null;
  turns: number;
  usageByModel: string;
  costMicroUsd: number | null;
  provenance: string;
  unaccountedTurns: number;
  sessionId: string | null;
}

interface TotalsParams extends CountParams {
  costMicroUsd: number;
  secondsRunning: number;
  runsStarted: number;
  runsFinished: number;
  updatedAt: string;
}

function countParams(usage: TokenCounts): CountParams {
  return {
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cacheReadTokens: usage.cacheReadTokens,
    cacheWriteTokens: usage.cacheWriteTokens,
    totalTokens: usage.totalTokens,
  };
}

const bit = (flag: boolean): number => (flag ? 1 : 0);

/** SQLite's LIMIT: a non-negative integer (a negative LIMIT would mean "no limit"). */
function limitOf(limit: number): number {
  return Number.isFinite(limit) ? Math.max(0, Math.trunc(limit)) : Number.MAX_SAFE_INTEGER;
}

export class Store {
  readonly #db: Database.Database;
  readonly #sql: Statements;
  readonly #recordTurn: (params: TurnParams) => void;
  readonly #nowMs: () => number;
  /** Credential proofs, shaped as the credential verifier's proof store. */
  readonly proofs: ProofTable;
  /** Branches, pull requests and reaction memory of the pull-request loop. */
  readonly scm: ScmTable;
  /** Calls to the agents' tool server, per run. */
  readonly toolCalls: ToolCallsTable;

  /** Use openStore. */
  constructor(
    db: Database.Database,
    /** Absolute path of the database file (or ':memory:'), as error messages name it. */
    readonly path: string,
    /** What opening did to the schema. */
    readonly migration: MigrationReport,
    nowMs: () => number,
  ) {
    this.#db = db;
    this.#nowMs = nowMs;
    this.#sql = prepareStatements(db);
    this.#recordTurn = db.transaction((params: TurnParams) => {
      if (this.#sql.runAfterTurn.run(params).changes === 0) throw this.#notOpen(params.runId);
      this.#sql.insertTurn.run(params);
    }).immediate;
    this.scm = new ScmTable(
      db,
      (operation, fn) => this.#guard(operation, fn),
      () => this.#nowIso(),
    );
    this.toolCalls = new ToolCallsTable(db, (operation, fn) => this.#guard(operation, fn));
    this.proofs = {
      get: (key) =>
        this.#guard('read credential proof', () => this.#sql.getProof.get(key)?.verified_at_ms ?? null),
      put: (key, verifiedAtMs) => {
        this.#guard('write credential proof', () => this.#sql.putProof.run(key, verifiedAtMs));
      },
    };
  }

  /** The schema version this store runs at. */
  get schemaVersion(): number {
    return LATEST_SCHEMA_VERSION;
  }

  /** The connection's durability settings as SQLite reports them (for diagnostics and tests). */
  connectionSettings(): ConnectionSettings {
    return this.#guard('read settings', () => ({
      journalMode: String(this.#db.pragma('journal_mode', { simple: true })),
      synchronous: SYNCHRONOUS_NAMES[Number(this.#db.pragma('synchronous', { simple: true }))] ?? 'unknown',
      foreignKeys: Number(this.#db.pragma('foreign_keys', { simple: true })) === 1,
      busyTimeoutMs: Number(this.#db.pragma('busy_timeout', { simple: true })),
    }));
  }

  /** False after close(). */
  get isOpen(): boolean {
    return this.#db.open;
  }

  // ---- runs and turns ----

  /** Opens a run row before the agent session starts; returns its id. */
  startRun(input: StartRunInput): number {
    return this.#guard('start run', () => {
      const result = this.#sql.startRun.run({
        issueId: input.issueId,
        identifier: input.identifier,
        attempt: input.attempt,
        host: input.host,
        agentKind: input.agentKind,
        sessionId: input.sessionId ?? null,
        workspace: input.workspace,
        startedAt: input.startedAt,
        reaction: input.reaction ?? null,
      });
      return Number(result.lastInsertRowid);
    });
  }

  /**
   * Records a finished turn (1-based `turn`) of an open run, and copies its run-cumulative usage
   * and session id onto the run, so a crash leaves the run with its last known figure.
   * Throws `run_not_open` for an unknown or finished run, `constraint` for a repeated turn.
   */
  recordTurn(runId: number, turn: number, startedAt: string, result: TurnInput): void {
    const params: TurnParams = {
      runId,
      turn,
      startedAt,
      endedAt: result.endedAt,
      sessionId: result.sessionId,
      exitReason: result.exitReason,
      errorKind: result.errorKind,
      error: result.error,
      ...countParams(result.usage),
      usageByModel: byModelJson(result.usageByModel),
      usageMeasured: bit(result.usageMeasured),
      spendUnaccounted: bit(result.spendUnaccounted),
      spendCoverable: bit(result.spendCoverable),
      coversSession: bit(result.coversSession),
      usageProvenance: result.usageProvenance,
      reportedAmounts: amountsJson(result.reportedAmounts),
      finalMessage: result.finalMessage,
    };
    this.#guard('record turn', () => this.#recordTurn(params));
  }

  /** Records the workspace of an open run once it is known (it is prepared after the run starts). */
  setRunWorkspace(runId: number, workspace: string): void {
    this.#guard('set run workspace', () => {
      if (this.#sql.setRunWorkspace.run(workspace, runId).changes === 0) throw this.#notOpen(runId);
    });
  }

  /** True when runs recorded `workspace` and every one of them was `issueId`'s (the old-name adoption check). */
  onlyIssueUsedWorkspace(issueId: string, workspace: string): boolean {
    return this.#guard('read workspace users', () => {
      const users = this.#sql.workspaceUsers.all(workspace).map((r) => r.issue_id);
      return users.length === 1 && users[0] === issueId;
    });
  }

  /**
   * Records an open run's usage so far and adds `delta` (what is new since the last call)
   * to the issue's budget and the totals, in one write: spend counts as it arrives, so a
   * run that never finishes (a kill mid-turn) is still in its issue's budget and the totals.
   */
  recordRunProgress(
    runId: number,
    issueId: string,
    progress: { usage: TokenCounts; usageByModel: Record<string, TokenCounts>; delta: TokenCounts },
  ): void {
    this.transaction(() => {
      this.#guard('record run progress', () => {
        const changes = this.#sql.setRunUsage.run({
          runId,
          ...countParams(progress.usage),
          usageByModel: byModelJson(progress.usageByModel),
        }).changes;
        if (changes === 0) throw this.#notOpen(runId);
      });
      this.addIssueSpend(issueId, { sessions: 0, tokens: progress.delta.totalTokens, costMicroUsd: 0 });
      this.addTotals({ tokens: progress.delta });
    });
  }

  /** Records a tracker transition decided at a run's end, before it is attempted (replaces the issue's earlier one). */
  savePendingTransition(pending: PendingTransition): void {
    this.#guard('save pending transition', () => {
      this.#sql.savePendingTransition.run({ ...pending, createdAt: this.#nowIso() });
    });
  }

  /** Forgets the issue's pending transition once the tracker confirmed it. */
  deletePendingTransition(issueId: string): void {
    this.#guard('delete pending transition', () => this.#sql.deletePendingTransition.run(issueId));
  }

  /** Transitions decided and not yet confirmed, oldest first (recovery completes them). */
  loadPendingTransitions(): PendingTransition[] {
    return this.#guard('load pending transitions', () =>
      this.#sql.pendingTransitions.all().map((r) => ({
        issueId: r.issue_id,
        identifier: r.identifier,
        state: r.state,
        purpose: r.purpose === 'blocked' ? 'blocked' : 'handoff',
      })),
    );
  }

  /** Closes an open run with its outcome. Throws `run_not_open` for an unknown or finished run. */
  finishRun(runId: number, input: FinishRunInput): void {
    this.#guard('finish run', () => {
      const changes = this.#sql.finishRun.run({
        runId,
        endedAt: input.endedAt,
        exitKind: input.exitKind,
        errorKind: input.errorKind,
        error: input.error,
        turns: input.turns,
        ...countParams(input.usage),
        usageByModel: byModelJson(input.usageByModel),
        costMicroUsd: input.costMicroUsd,
        provenance: input.provenance,
        unaccountedTurns: input.unaccountedTurns,
        sessionId: input.sessionId,
      }).changes;
      if (changes === 0) throw this.#notOpen(runId);
    });
  }

  /** Keeps the run's self-review record (shown by the API). */
  setRunReview(runId: number, review: unknown): void {
    this.#guard('record self-review', () => this.#sql.setRunReview.run(JSON.stringify(review), runId));
  }

  /** The run with this id, or null. */
  run(runId: number): RunRecord | null {
    return this.#guard('read run', () => {
      const row = this.#sql.runById.get(runId);
      return row === undefined ? null : runFromRow(row, this.path);
    });
  }

  /** Runs not yet finished, oldest first. */
  openRuns(): RunRecord[] {
    return this.#guard('read open runs', () => this.#sql.openRuns.all().map((r) => runFromRow(r, this.path)));
  }

  /**
   * Restart recovery: marks every open run `interrupted`, ended at `nowIso`, keeping the usage
   * its last recorded turn left. Returns how many runs it closed.
   */
  closeInterruptedRuns(nowIso: string): number {
    return this.#guard(
      'close interrupted runs',
      () => this.#sql.closeInterrupted.run(nowIso, INTERRUPTED_ERROR).changes,
    );
  }

  /** The issue's runs, newest first, at most `limit`. */
  runsForIssue(issueId: string, limit: number): RunRecord[] {
    return this.#guard('read runs for issue', () =>
      this.#sql.runsForIssue.all(issueId, limitOf(limit)).map((r) => runFromRow(r, this.path)),
    );
  }

  /** The latest runs, newest first; pass the last id seen as `beforeId` for the next page. */
  recentRuns(limit: number, beforeId: number = Number.MAX_SAFE_INTEGER): RunRecord[] {
    return this.#guard('read recent runs', () =>
      this.#sql.recentRuns.all(beforeId, limitOf(limit)).map((r) => runFromRow(r, this.path)),
    );
  }

  /** The newest run of the issue with this human identifier, or null. */
  runByIdentifier(identifier: string): RunRecord | null {
    return this.#guard('read run by identifier', () => {
      const row = this.#sql.runByIdentifier.get(identifier);
      return row === undefined ? null : runFromRow(row, this.path);
    });
  }

  /** The run's turns in order. */
  turnsForRun(runId: number): TurnRecord[] {
    return this.#guard('read turns', () =>
      this.#sql.turnsForRun.all(runId).map((r) => turnFromRow(r, this.path)),
    );
  }

  /** Finished runs whose cost is unknown (not priced): the totals' known cost leaves them out. */
  unpricedRuns(): number {
    return this.#guard('count unpriced runs', () => this.#sql.unpricedRuns.get()?.n ?? 0);
  }

  /**
   * Sessions used per issue (every run row, open, interrupted or finished, since each started
   * a session), in one query. Every requested id is in the map; an issue without runs has 0.
   */
  countSessions(issueIds: readonly string[]): Map<string, number> {
    return this.#guard('count sessions', () => {
      const counts = new Map<string, number>();
      const unique = [...new Set(issueIds)];
      if (unique.length === 0) return counts;
      for (const row of this.#sql.countSessions.all(JSON.stringify(unique))) counts.set(row.issue_id, row.n);
      return counts;
    });
  }

  // ---- retry queue ----

  /** Saves the issue's retry, replacing any earlier one (one retry per issue). */
  saveRetry(entry: RetryEntry): void {
    this.#guard('save retry', () => {
      this.#sql.saveRetry.run({
        issue_id: entry.issueId,
        identifier: entry.identifier,
        attempt: entry.attempt,
        due_at_ms: entry.dueAtMs,
        reason: entry.reason,
        last_error: entry.lastError,
        previous_host: entry.previousHost,
        session_id: entry.sessionId,
        reaction: entry.reaction ? JSON.stringify(entry.reaction) : null,
        updated_at: this.#nowIso(),
      });
    });
  }

  /** Removes the issue's retry; false when there was none. */
  deleteRetry(issueId: string): boolean {
    return this.#guard('delete retry', () => this.#sql.deleteRetry.run(issueId).changes > 0);
  }

  /** Every queued retry, soonest due first (ties by issue id). */
  loadRetries(): RetryRecord[] {
    return this.#guard('load retries', () =>
      this.#sql.loadRetries.all().map((r) => retryFromRow(r, this.path)),
    );
  }

  /** The issue's queued retry, or null. */
  retryFor(issueId: string): RetryRecord | null {
    return this.#guard('read retry', () => {
      const row = this.#sql.retryFor.get(issueId);
      return row === undefined ? null : retryFromRow(row, this.path);
    });
  }

  // ---- sessions (resume ids) ----

  /** Records the issue's latest session id (for resume), replacing the previous one. */
  saveSession(issueId: string, sessionId: string, agentKind: string): void {
    this.#guard('save session', () => {
      this.#sql.saveSession.run({
        issue_id: issueId,
        session_id: sessionId,
        agent_kind: agentKind,
        updated_at: this.#nowIso(),
      });
    });
  }

  /** The issue's latest session, or null. */
  sessionFor(issueId: string): SessionRecord | null {
    return this.#guard('read session', () => {
      const row = this.#sql.sessionFor.get(issueId);
      return row === undefined ? null : sessionFromRow(row);
    });
  }

  /** Forgets the issue's session; false when there was none. */
  deleteSession(issueId: string): boolean {
    return this.#guard('delete session', () => this.#sql.deleteSession.run(issueId).changes > 0);
  }

  // ---- budgets ----

  /** Adds spend to the issue's budget record (created on first use); returns the new record. */
  addIssueSpend(issueId: string, spend: IssueSpend): IssueBudget {
    return this.#guard('add issue spend', () => {
      const row = this.#sql.addIssueSpend.get(
        issueId,
        spend.sessions,
        spend.tokens,
        spend.costMicroUsd,
        this.#nowIso(),
      );
      if (row === undefined)
        throw new PersistenceError('query_failed', `${this.path}: budget upsert returned no row`);
      return budgetFromRow(row, this.path);
    });
  }

  /** The issue's budget record, or null when it has none. */
  issueBudget(issueId: string): IssueBudget | null {
    return this.#guard('read issue budget', () => {
      const row = this.#sql.issueBudget.get(issueId);
      return row === undefined ? null : budgetFromRow(row, this.path);
    });
  }

  /** Budget records of every exhausted issue, by issue id. */
  exhaustedIssues(): IssueBudget[] {
    return this.#guard('read exhausted issues', () =>
      this.#sql.exhaustedIssues.all().map((r) => budgetFromRow(r, this.path)),
    );
  }

  /**
   * Marks the issue's budget exhausted at `atIso`. True when this call marked it; false when it
   * already was (the first time and reason are kept).
   */
  markExhausted(
    issueId: string,
    reason: string,
    atIso: string,
    parkedFingerprint: string | null = null,
  ): boolean {
    return this.#guard(
      'mark budget exhausted',
      () =>
        this.#sql.markExhausted.run(issueId, atIso, reason, parkedFingerprint, this.#nowIso()).changes > 0,
    );
  }

  /**
   * Claims the one report of the issue's exhaustion: true exactly once per exhaustion (post the
   * comment then), false when already reported or not exhausted.
   */
  markExhaustionReported(issueId: string): boolean {
    return this.#guard(
      'mark exhaustion reported',
      () => this.#sql.markExhaustionReported.run(this.#nowIso(), issueId).changes > 0,
    );
  }

  /** Lifts the issue's exhaustion (a raised budget); the spend so far is kept. False when not exhausted. */
  clearExhaustion(issueId: string): boolean {
    return this.#guard(
      'clear exhaustion',
      () => this.#sql.clearExhaustion.run(this.#nowIso(), issueId).changes > 0,
    );
  }

  /**
   * Records the issue's no-progress count: `sessions` in a row ended with it in `state` (0 and
   * null: none counted). Created on first use, like the spend.
   */
  setUnchangedRun(issueId: string, run: { sessions: number; state: string | null }): void {
    this.#guard('set unchanged sessions', () => {
      this.#sql.setUnchangedRun.run(issueId, run.sessions, run.state, this.#nowIso());
    });
  }

  // ---- totals ----

  /** Adds to the aggregate totals; absent fields add nothing. */
  addTotals(delta: TotalsDelta): void {
    this.#guard('add totals', () => {
      this.#sql.addTotals.run({
        ...countParams(delta.tokens ?? ZERO_TOKENS),
        costMicroUsd: delta.costMicroUsd ?? 0,
        secondsRunning: delta.secondsRunning ?? 0,
        runsStarted: delta.runsStarted ?? 0,
        runsFinished: delta.runsFinished ?? 0,
        updatedAt: this.#nowIso(),
      });
    });
  }

  /** The aggregate totals. */
  totals(): TotalsRecord {
    return this.#guard('read totals', () => {
      const row = this.#sql.totals.get();
      if (row === undefined) throw new PersistenceError('corrupt', `${this.path}: the totals row is missing`);
      return totalsFromRow(row);
    });
  }

  /** True when the database answers a trivial query (readiness probes). */
  ping(): boolean {
    if (!this.#db.open) return false;
    try {
      return this.#db.prepare('SELECT 1 AS ok').get() !== undefined;
    } catch {
      return false;
    }
  }

  // ---- plumbing ----

  /**
   * Runs `fn` in one transaction: every store write inside commits together or not at all.
   * Nested calls become savepoints. An exception from `fn` rolls back and is rethrown as is.
   */
  transaction<T>(fn: () => T): T {
    this.#assertOpen('transaction');
    try {
      return this.#db.transaction(fn).immediate();
    } catch (error) {
      if (error instanceof PersistenceError || sqliteCode(error) === null) throw error;
      throw toPersistenceError(error, this.path, 'transaction');
    }
  }

  /** Closes the connection (checkpointing the WAL). Idempotent. */
  close(): void {
    if (this.#db.open) this.#db.close();
  }

  #nowIso(): string {
    return new Date(this.#nowMs()).toISOString();
  }

  #notOpen(runId: number): PersistenceError {
    return new PersistenceError('run_not_open', `${this.path}: run ${runId} is unknown or already finished`);
  }

  #assertOpen(operation: string): void {
    if (!this.#db.open)
      throw new PersistenceError('closed', `${operation} on ${this.path}: the store is closed`);
  }

  /** Runs one store operation, translating any failure into a PersistenceError. */
  #guard<T>(operation: string, fn: () => T): T {
    this.#assertOpen(operation);
    try {
      return fn();
    } catch (error) {
      throw toPersistenceError(error, this.path, operation);
    }
  }
}
