/**
 * The tracker contract. Every tracker (file, GitHub, …) implements exactly this,
 * and the shared conformance suite in internal-contracts/ proves it.
 */
import type { Issue, IssueComment } from './issue.js';

/** A state reading for reconciliation: the issue's id, identifier and current state. */
export interface IssueStateReading {
  id: string;
  identifier: string;
  state: string;
}

export interface TrackerAdapter {
  /** Issues in active states, filtered by the tracker's own query; `comments` is null. */
  fetchCandidateIssues(): Promise<Issue[]>;
  /** One fully populated issue, comments included ([] when none). Unknown id → tracker_not_found. */
  fetchIssueById(id: string): Promise<Issue>;
  /** Issues whose state matches one of `states`, case-insensitively. */
  fetchIssuesByStates(states: readonly string[]): Promise<Issue[]>;
  /** Current states of the given ids; ids the tracker no longer has are omitted, not an error. */
  fetchIssueStatesByIds(ids: readonly string[]): Promise<IssueStateReading[]>;
  /** Current states of the given identifiers; missing ones are omitted. */
  fetchIssueStatesByIdentifiers(identifiers: readonly string[]): Promise<IssueStateReading[]>;
  /** Comments of one issue, oldest first; [] when none. */
  fetchIssueComments(id: string): Promise<IssueComment[]>;
  /** Move an issue to `state`; a state outside the configured ones is a tracker_payload_error. */
  transitionIssue(id: string, state: string): Promise<void>;
  /** Add a plain-text comment. */
  commentIssue(id: string, body: string): Promise<void>;
  /** Add a label (lowercased). */
  addLabel(id: string, label: string): Promise<void>;
  /** The tracker's own query language as an agent tool; absent when the tracker offers none. */
  readonly queryTool?: TrackerQueryTool;
}

/**
 * A tracker's own query language, offered to agents as one read-only tool. The adapter
 * scopes it to the configured project: a query that could read, or answered with, anything
 * outside it is refused, not trimmed.
 */
export interface TrackerQueryTool {
  /** The tool's name as agents see it (`<tracker>_<language>`, lowercase, digits and `_`). */
  readonly name: string;
  /** What the agent reads: the language, the scope and how refusals look. */
  readonly description: string;
  /** Runs one read-only query; refusals and failures are values, never throws. */
  run(query: string, variables: Readonly<Record<string, unknown>>): Promise<TrackerQueryAnswer>;
}

/** A query's answer: the data, or why there is none (`invalid`: the query; `forbidden`: the scope). */
export type TrackerQueryAnswer =
  | { ok: true; data: unknown }
  | { ok: false; reason: 'invalid' | 'forbidden' | 'failed'; message: string };

/** The tracker's slice of the workflow config, resolved ($VAR, ~, overrides applied). */
export interface TrackerSettings {
  kind: string;
  /** API base URL; "" = the adapter's default. */
  endpoint: string;
  /** Resolved secret; "" when none. */
  apiKey: string;
  project: string;
  queryFilter: string;
  /** Route only issues assigned to this user (`me` = the token's own user); null = anyone's. */
  assignee: string | null;
  /**
   * Labels an issue must all carry to be dispatched or continued, trimmed and lowercased; a
   * blank one (kept as "") matches nothing. The orchestrator applies them, not the tracker.
   */
  requiredLabels: string[];
  activeStates: string[];
  terminalStates: string[];
  /** null = not configured. */
  handoffState: string | null;
  inProgressState: string | null;
  blockedState: string | null;
  /** The tracker kind's own pass-through block (`file:`, `github:` …), {} when absent. */
  options: Record<string, unknown>;
  /** Directory of WORKFLOW.md; relative paths in options resolve against it. */
  baseDir: string;
}
