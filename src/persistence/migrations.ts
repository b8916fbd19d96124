/**
 * The schema, as an ordered list of migrations, and the one routine that applies them.
 * Migrations only ever append: a released migration is never edited, because a database in
 * the field already ran it. Each one runs in its own transaction together with its
 * `schema_migrations` row, so a crash or a bad statement leaves the schema at the last good
 * version instead of half-built. A database stamped with a version this build does not know
 * was written by a newer build, and is refused rather than written with an older idea of it.
 *
 * Tables are STRICT, so a fractional token count or a string in an integer column is an
 * error at the write that made it, not a surprise at some later read.
 */
import type { Database } from 'better-sqlite3';
import { PersistenceError, toPersistenceError } from './errors.js';

export interface Migration {
  /** 1, 2, 3, … with no gaps; the version recorded once the migration commits. */
  version: number;
  /** A short description, for logs and the error of a failed migration. */
  name: string;
  sql: string;
}

const MIGRATION_1 = `
CREATE TABLE runs (
  id                 INTEGER PRIMARY KEY AUTOINCREMENT,
  issue_id           TEXT NOT NULL,
  identifier         TEXT NOT NULL,
  attempt            INTEGER NOT NULL CHECK (attempt >= 1),
  host               TEXT,
  agent_kind         TEXT NOT NULL,
  session_id         TEXT,
  workspace          TEXT NOT NULL,
  started_at         TEXT NOT NULL,
  ended_at           TEXT,
  exit_kind          TEXT,
  error_kind         TEXT,
  error              TEXT,
  turns              INTEGER NOT NULL DEFAULT 0 CHECK (turns >= 0),
  input_tokens       INTEGER NOT NULL DEFAULT 0,
  output_tokens      INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
  cache_write_tokens INTEGER NOT NULL DEFAULT 0,
  total_tokens       INTEGER NOT NULL DEFAULT 0,
  usage_by_model     TEXT NOT NULL DEFAULT '{}',
  cost_micro_usd     INTEGER,
  provenance         TEXT NOT NULL DEFAULT 'unmeasured',
  unaccounted_turns  INTEGER NOT NULL DEFAULT 0 CHECK (unaccounted_turns >= 0),
  CHECK ((ended_at IS NULL) = (exit_kind IS NULL))
) STRICT;
CREATE INDEX runs_issue_id ON runs (issue_id, id);
CREATE INDEX runs_identifier ON runs (identifier, id);
CREATE INDEX runs_open ON runs (id) WHERE ended_at IS NULL;

CREATE TABLE turns (
  run_id             INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  turn               INTEGER NOT NULL CHECK (turn >= 1),
  started_at         TEXT NOT NULL,
  ended_at           TEXT NOT NULL,
  session_id         TEXT NOT NULL,
  exit_reason        TEXT NOT NULL,
  error_kind         TEXT,
  error              TEXT,
  input_tokens       INTEGER NOT NULL,
  output_tokens      INTEGER NOT NULL,
  cache_read_tokens  INTEGER NOT NULL,
  cache_write_tokens INTEGER NOT NULL,
  total_tokens       INTEGER NOT NULL,
  usage_by_model     TEXT NOT NULL,
  usage_measured     INTEGER NOT NULL CHECK (usage_measured IN (0, 1)),
  spend_unaccounted  INTEGER NOT NULL CHECK (spend_unaccounted IN (0, 1)),
  spend_coverable    INTEGER NOT NULL CHECK (spend_coverable IN (0, 1)),
  covers_session     INTEGER NOT NULL CHECK (covers_session IN (0, 1)),
  usage_provenance   TEXT NOT NULL,
  reported_amounts   TEXT NOT NULL,
  final_message      TEXT NOT NULL,
  PRIMARY KEY (run_id, turn)
) STRICT;

CREATE TABLE retry_queue (
  issue_id      TEXT PRIMARY KEY NOT NULL,
  identifier    TEXT NOT NULL,
  attempt       INTEGER NOT NULL CHECK (attempt >= 1),
  due_at_ms     INTEGER NOT NULL,
  reason        TEXT NOT NULL,
  last_error    TEXT,
  previous_host TEXT,
  session_id    TEXT,
  updated_at    TEXT NOT NULL
) STRICT;
CREATE INDEX retry_queue_due ON retry_queue (due_at_ms, issue_id);

CREATE TABLE sessions (
  issue_id   TEXT PRIMARY KEY NOT NULL,
  session_id TEXT NOT NULL,
  agent_kind TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT;

CREATE TABLE credential_proofs (
  proof_key      TEXT PRIMARY KEY NOT NULL,
  verified_at_ms INTEGER NOT NULL
) STRICT;

CREATE TABLE issue_budgets (
  issue_id            TEXT PRIMARY KEY NOT NULL,
  sessions            INTEGER NOT NULL DEFAULT 0,
  tokens              INTEGER NOT NULL DEFAULT 0,
  cost_micro_usd      INTEGER NOT NULL DEFAULT 0,
  exhausted_at        TEXT,
  exhausted_reason    TEXT,
  exhaustion_reported INTEGER NOT NULL DEFAULT 0 CHECK (exhaustion_reported IN (0, 1)),
  updated_at          TEXT NOT NULL
) STRICT;

CREATE TABLE totals (
  id                 INTEGER PRIMARY KEY CHECK (id = 1),
  input_tokens       INTEGER NOT NULL DEFAULT 0,
  output_tokens      INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
  cache_write_tokens INTEGER NOT NULL DEFAULT 0,
  total_tokens       INTEGER NOT NULL DEFAULT 0,
  cost_micro_usd     INTEGER NOT NULL DEFAULT 0,
  seconds_running    REAL NOT NULL DEFAULT 0,
  runs_started       INTEGER NOT NULL DEFAULT 0,
  runs_finished      INTEGER NOT NULL DEFAULT 0,
  updated_at         TEXT NOT NULL
) STRICT;
INSERT INTO totals (id, updated_at) VALUES (1, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
`;

/** Tracker transitions decided at a run's end and not yet confirmed by the tracker. */
const MIGRATION_2 = `
CREATE TABLE pending_transitions (
  issue_id   TEXT PRIMARY KEY NOT NULL,
  identifier TEXT NOT NULL,
  state      TEXT NOT NULL,
  purpose    TEXT NOT NULL CHECK (purpose IN ('handoff', 'blocked')),
  created_at TEXT NOT NULL
) STRICT;
`;

/**
 * The no-progress count of each issue: sessions in a row that ended with the issue in the state
 * their first turn found it in, and that state (a session that starts in another state begins a
 * new count).
 */
const MIGRATION_3 = `
ALTER TABLE issue_budgets ADD COLUMN unchanged_sessions INTEGER NOT NULL DEFAULT 0 CHECK (unchanged_sessions >= 0);
ALTER TABLE issue_budgets ADD COLUMN unchanged_state TEXT;
`;

/**
 * The pull-request loop: the branch, head and pull request the orchestrator pushed and opened
 * for each issue (and whether it still watches it), what each reaction last acted on (so a
 * restart never sends the same feedback twice), a queued reaction run's feedback, and each
 * run's reaction and self-review record.
 */
const MIGRATION_4 = `
CREATE TABLE issue_scm (
  issue_id     TEXT PRIMARY KEY NOT NULL,
  identifier   TEXT NOT NULL,
  branch       TEXT NOT NULL,
  base         TEXT NOT NULL,
  head_sha     TEXT NOT NULL,
  pr_number    INTEGER,
  pr_url       TEXT,
  pushed_at_ms INTEGER NOT NULL,
  watching     INTEGER NOT NULL DEFAULT 0 CHECK (watching IN (0, 1)),
  ended_reason TEXT,
  updated_at   TEXT NOT NULL
) STRICT;
CREATE TABLE reaction_memory (
  issue_id    TEXT NOT NULL,
  kind        TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  attempts    INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  dispatched  INTEGER NOT NULL DEFAULT 0 CHECK (dispatched IN (0, 1)),
  escalated   INTEGER NOT NULL DEFAULT 0 CHECK (escalated IN (0, 1)),
  updated_at  TEXT NOT NULL,
  PRIMARY KEY (issue_id, kind)
) STRICT;
ALTER TABLE retry_queue ADD COLUMN reaction TEXT;
ALTER TABLE runs ADD COLUMN reaction TEXT;
ALTER TABLE runs ADD COLUMN review_json TEXT;
ALTER TABLE issue_budgets ADD COLUMN parked_fingerprint TEXT;
`;

const MIGRATION_5 = `
CREATE TABLE run_tool_calls (
  run_id   INTEGER NOT NULL REFERENCES runs (id),
  tool     TEXT NOT NULL,
  outcome  TEXT NOT NULL,
  calls    INTEGER NOT NULL CHECK (calls > 0),
  PRIMARY KEY (run_id, tool, outcome)
) STRICT;
`;

/** Every migration this build knows, in order. Append only. */
export const MIGRATIONS: readonly Migration[] = Object.freeze([
  { version: 1, name: 'runs, turns, retry queue, sessions, proofs, budgets, totals', sql: MIGRATION_1 },
  { version: 2, name: 'pending tracker transitions', sql: MIGRATION_2 },
  { version: 3, name: 'sessions in a row that left the issue unchanged', sql: MIGRATION_3 },
  { version: 4, name: 'branches, pull requests, reactions and self-review', sql: MIGRATION_4 },
  { version: 5, name: 'calls to the agents’ tool server, per run', sql: MIGRATION_5 },
]);

/** The schema version this build writes. */
export const LATEST_SCHEMA_VERSION: number = MIGRATIONS.at(-1)?.version ?? 0;

const CREATE_SCHEMA_MIGRATIONS = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version    INTEGER PRIMARY KEY,
  applied_at TEXT NOT NULL
) STRICT`;

export interface MigrationReport {
  /** The version before migrating (0 for a new database). */
  from: number;
  /** The version after migrating. */
  to: number;
  /** Versions this call applied, in order ([] when the database was current). */
  applied: number[];
}

export interface MigrateOptions {
  /** The database path, for error messages. */
  path: string;
  /** ISO-8601 UTC time recorded as `applied_at`. */
  nowIso: () => string;
  /** Defaults to MIGRATIONS; tests pass their own list. */
  migrations?: readonly Migration[];
}

/** The highest version recorded in `schema_migrations`, 0 when none (or no table yet). */
export function schemaVersion(db: Database): number {
  const table = db
    .prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'")
    .get();
  if (table === undefined) return 0;
  const row = db.prepare('SELECT MAX(version) AS version FROM schema_migrations').get() as
    | { version: number | null }
    | undefined;
  return row?.version ?? 0;
}

/** Throws unless `migrations` are numbered 1, 2, 3, … in order. */
export function checkMigrationOrder(migrations: readonly Migration[]): void {
  migrations.forEach((m, index) => {
    if (m.version !== index + 1) {
      throw new Error(
        `migration #${index + 1} ("${m.name}") has version ${m.version}; versions must be 1..n`,
      );
    }
  });
}

/**
 * Brings the database up to the last migration. Refuses (`schema_too_new`) a database whose
 * version is beyond the list; a failing migration is rolled back (`migration_failed`).
 */
export function migrate(db: Database, options: MigrateOptions): MigrationReport {
  const migrations = options.migrations ?? MIGRATIONS;
  checkMigrationOrder(migrations);
  const latest = migrations.at(-1)?.version ?? 0;
  db.exec(CREATE_SCHEMA_MIGRATIONS);
  const from = schemaVersion(db);
  if (from > latest) throw schemaTooNew(options.path, from, latest);

  const isApplied = db.prepare<[number], { one: number }>(
    'SELECT 1 AS one FROM schema_migrations WHERE version = ?',
  );
  const record = db.prepare<[number, string]>(
    'INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)',
  );
  const applied: number[] = [];
  for (const migration of migrations) {
    if (migration.version <= from) continue;
    // Re-checked under the write lock: another process may have migrated since `from` was read.
    const apply = db.transaction(() => {
      if (isApplied.get(migration.version) !== undefined) return false;
      const newest = schemaVersion(db);
      if (newest > latest) throw schemaTooNew(options.path, newest, latest);
      db.exec(migration.sql);
      record.run(migration.version, options.nowIso());
      return true;
    });
    try {
      if (apply.immediate()) applied.push(migration.version);
    } catch (error) {
      if (error instanceof PersistenceError) throw error;
      const cause = toPersistenceError(error, options.path, `migration ${migration.version}`);
      if (cause.code === 'corrupt' || cause.code === 'busy' || cause.code === 'io_failed') throw cause;
      const detail = error instanceof Error ? error.message : String(error);
      throw new PersistenceError(
        'migration_failed',
        `migration ${migration.version} ("${migration.name}") failed on ${options.path} and was rolled back: ${detail}`,
        { cause: error },
      );
    }
  }
  return { from, to: Math.max(from, schemaVersion(db)), applied };
}

function schemaTooNew(path: string, found: number, known: number): PersistenceError {
  return new PersistenceError(
    'schema_too_new',
    `${path} has schema version ${found}, but this build knows only up to version ${known}; ` +
      'it was written by a newer build. Run that build, or point the store at another file.',
  );
}
