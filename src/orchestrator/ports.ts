/**
 * What the orchestrator needs from the world, as narrow interfaces: the
 * composition root hands in the real store, workspace manager, tracker and
 * logger; tests hand in the same real parts or small fakes. Nothing here is
 * implemented in this layer.
 */
import type { ReportedAmount, TokenCounts, TurnResult } from '../domain/agent.js';
import type { AgentErrorKind } from '../domain/errors.js';
import type { RemoteHost } from '../domain/remote.js';
import type { Store } from '../persistence/index.js';
import type { WorkspaceError } from '../workspace/errors.js';
import type { HookResult, PreparedWorkspace } from '../workspace/manager.js';

/** Structured log lines; fields use snake_case names (issue_id, session_id, turn…). */
export interface Logger {
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

export type { PendingTransition, RetryEntry, RetryReason } from '../persistence/index.js';

/** A finished turn as the worker reports it. */
export interface TurnRecord {
  turn: number;
  startedAt: string;
  endedAt: string;
  result: TurnResult;
  errorKind: AgentErrorKind | null;
  error: string | null;
}

/** The persistence the orchestrator writes before its in-memory state moves on. */
export type OrchestratorStore = Pick<
  Store,
  | 'startRun'
  | 'setRunWorkspace'
  | 'transaction'
  | 'recordTurn'
  | 'recordRunProgress'
  | 'savePendingTransition'
  | 'deletePendingTransition'
  | 'loadPendingTransitions'
  | 'finishRun'
  | 'closeInterruptedRuns'
  | 'runsForIssue'
  | 'saveRetry'
  | 'deleteRetry'
  | 'loadRetries'
  | 'saveSession'
  | 'addIssueSpend'
  | 'issueBudget'
  | 'exhaustedIssues'
  | 'markExhausted'
  | 'markExhaustionReported'
  | 'clearExhaustion'
  | 'setUnchangedRun'
  | 'addTotals'
  | 'scm'
  | 'setRunReview'
  | 'sessionFor'
  | 'toolCalls'
>;

/** The workspace operations a worker and the owner use. */
export interface Workspaces {
  /** `attempt` is 1-based (1 on the first run of a claim), as hooks see it. */
  prepare(
    issue: { id: string; identifier: string },
    attempt: number,
    signal?: AbortSignal,
  ): Promise<{ ok: true; workspace: PreparedWorkspace } | { ok: false; error: WorkspaceError }>;
  /** `extraEnv` adds variables for the hook (the self-review's outcome). */
  afterRun(
    workspace: string,
    issue: { id: string; identifier: string },
    attempt: number,
    extraEnv?: Record<string, string>,
  ): Promise<HookResult | null>;
  /** Runs a command in the workspace as hooks run, with its own timeout (verification commands). */
  runCommand(
    workspace: string,
    issue: { id: string; identifier: string },
    attempt: number,
    command: { script: string; timeoutMs: number; signal?: AbortSignal },
  ): Promise<HookResult>;
  remove(identifier: string, issueId?: string): Promise<{ removed: boolean; error: WorkspaceError | null }>;
  existingKeys(): Promise<string[]>;
}

/** What running on SSH hosts needs: the composition root builds these from `worker.*`. */
export interface RemoteWorkers {
  /** The host object for a configured `worker.ssh_hosts` entry (one per entry, reused). */
  host(name: string): RemoteHost;
  /** The workspaces on that host (one manager per host, reused). */
  workspaces(host: RemoteHost): Workspaces;
  /** The environment an agent on a host gets: only what is meant for it (its credentials, the owner tag). */
  agentEnv: Record<string, string>;
}

/** A settled figure in dollars for reporting, from reported amounts or token rates. */
export type Pricing = (usage: TokenCounts, amounts: readonly ReportedAmount[]) => number | null;

/** Timers, injectable so policy tests can run on fake time. */
export interface Clock {
  nowMs(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const SYSTEM_CLOCK: Clock = {
  nowMs: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};
