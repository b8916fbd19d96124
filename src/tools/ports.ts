/**
 * What the agents' tool server needs from the rest of the service, as ports.
 *
 * The tool server sits below the orchestrator, so it cannot reach the tracker, the store or
 * the run state itself; the orchestrator implements `ToolBackend` and hands it over with the
 * session it serves. Keeping the session here (and not in the agent's arguments) is what
 * stops one agent from acting as another: every call is scoped to `ToolSession`.
 */
import type { Issue } from '../domain/issue.js';
import type { TrackerQueryTool } from '../domain/tracker.js';

/** The one session a tool server serves; every call is scoped to it. */
export interface ToolSession {
  /** Tracker id of the session's issue. */
  issueId: string;
  /** Human key of the session's issue (`ABC-12`, `#9`). */
  identifier: string;
  /** Run id in the store, as the orchestrator numbers runs. */
  runId: number;
  /** Wall-clock start of the session, epoch milliseconds. */
  startedAtMs: number;
}

/** One budget the orchestrator enforces for the run; `left` = `limit - used`, never below 0. */
export interface ToolBudget {
  name: string;
  used: number;
  limit: number;
  left: number;
}

/** The run as the orchestrator sees it at the moment of the call. */
export interface ToolRunStatus {
  /** The turn in progress, 1-based. */
  turn: number;
  elapsedMs: number;
  tokens: { input: number; output: number; total: number };
  /** null = the runtime cannot price this run. */
  costUsd: number | null;
  budgets: ToolBudget[];
}

/** One earlier run of the same issue, newest first when listed. */
export interface ToolHistoryEntry {
  attempt: number;
  /** ISO-8601. */
  startedAt: string;
  /** ISO-8601; null while the run is still going. */
  endedAt: string | null;
  /** How the run ended (`succeeded`, `failed`, `cancelled`, …); null while running. */
  exitKind: string | null;
  turns: number;
  /** Total tokens of the run; null = unknown. */
  tokens: number | null;
  /** The failure message; null when the run did not fail. */
  error: string | null;
}

/**
 * What the tools call. The orchestrator implements it; a method that fails throws, and the
 * tool server turns that into a `tool_backend_failed` result.
 */
export interface ToolBackend {
  /** One issue, comments included. */
  issue(issueId: string): Promise<Issue>;
  /** The issue with that identifier (case-insensitive) in the configured project; null = none. */
  issueByIdentifier(identifier: string): Promise<Issue | null>;
  /** Adds a plain-text comment. */
  comment(issueId: string, body: string): Promise<void>;
  /** Moves the issue to `state`, given in the configured casing. */
  transition(issueId: string, state: string): Promise<void>;
  /** Issues matching `query` in the configured project, at most `limit`. */
  search(query: string, limit: number): Promise<Issue[]>;
  /** The live figures of the session's run. */
  runStatus(session: ToolSession): Promise<ToolRunStatus>;
  /** Earlier runs of the issue, newest first, at most `limit`. */
  history(issueId: string, limit: number): Promise<ToolHistoryEntry[]>;
  /** Posts the question on the session's issue and parks the issue until a human answers. */
  askHuman(session: ToolSession, question: string): Promise<void>;
  /** The tracker's own query language, scoped by the tracker to the project; absent = none. */
  readonly queryTool?: TrackerQueryTool;
}

/** The workflow's rules for the tools, resolved by the orchestrator. */
export interface ToolPolicy {
  /** The states the workflow names (active, terminal, handoff …); transitions go only there. */
  configuredStates: string[];
  /** Whether the agent may read issues other than its own (writes never leave its own). */
  allowOtherIssues: boolean;
  /** Longest comment or question accepted, in characters (code points). */
  maxCommentChars: number;
}
