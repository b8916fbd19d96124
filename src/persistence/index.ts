/**
 * The persistence layer's public surface: open a store, read and write durable orchestrator
 * state through it. Nothing outside this folder touches SQLite.
 */
export { PERSISTENCE_ERROR_CODES, PersistenceError, type PersistenceErrorCode } from './errors.js';
export { LATEST_SCHEMA_VERSION, MIGRATIONS, type Migration, type MigrationReport } from './migrations.js';
export {
  type FinishRunInput,
  type IssueBudget,
  type IssueSpend,
  RETRY_REASONS,
  type ReactionRequest,
  type RetryEntry,
  type RetryReason,
  type RetryRecord,
  RUN_EXIT_KINDS,
  type RunExitKind,
  type RunRecord,
  type SessionRecord,
  type StartRunInput,
  type Totals,
  type TotalsDelta,
  type TotalsRecord,
  type TurnInput,
  type TurnRecord,
} from './records.js';
export type { ReactionMemoryRecord, ScmRecord, ScmTable } from './scm.js';
export {
  type ConnectionSettings,
  DEFAULT_BUSY_TIMEOUT_MS,
  type OpenStoreOptions,
  openStore,
  type PendingTransition,
  type ProofTable,
  Store,
} from './store.js';
export type { ToolCallCount, ToolCallsTable } from './tool-calls.js';
