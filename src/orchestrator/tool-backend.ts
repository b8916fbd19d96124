/**
 * What the agents' tools act on, as the orchestrator provides it: the tracker (through the
 * service's own connection, so no agent ever holds its token), the run history in the store
 * and the live figures of the running session. The tool layer has already checked scope and
 * arguments; this only does the work.
 */
import type { Issue } from '../domain/issue.js';
import type { TrackerAdapter } from '../domain/tracker.js';
import type { RunRecord } from '../persistence/index.js';
import type {
  ToolBackend,
  ToolBudget,
  ToolHistoryEntry,
  ToolRunStatus,
  ToolSession,
} from '../tools/ports.js';
import type { BudgetLimits } from './budget.js';

/** The heading of the comment that carries an agent's question. */
export const QUESTION_HEADING = 'The agent asks:';

export interface ToolBackendDeps {
  tracker: TrackerAdapter;
  /** Every state the workflow names, searched by `tracker_search`. */
  states(): readonly string[];
  /** Runs of the issue, newest first. */
  runs(issueId: string, limit: number): RunRecord[];
  /** The session's live figures; null when its run is no longer running. */
  runStatus(session: ToolSession): ToolRunStatus | null;
  /** Notes the question on the running session so it is parked after its turn. */
  parkAfterTurn(session: ToolSession, question: string): void;
}

/** The orchestrator's implementation of the tools' backend. */
export function toolBackend(deps: ToolBackendDeps): ToolBackend {
  return {
    issue: (issueId) => deps.tracker.fetchIssueById(issueId),
    issueByIdentifier: async (identifier) => {
      const wanted = identifier.trim().toLowerCase();
      const found = await deps.tracker.fetchIssueStatesByIdentifiers([identifier.trim()]);
      const hit = found.find((r) => r.identifier.toLowerCase() === wanted);
      return hit === undefined ? null : deps.tracker.fetchIssueById(hit.id);
    },
    comment: (issueId, body) => deps.tracker.commentIssue(issueId, body),
    transition: (issueId, state) => deps.tracker.transitionIssue(issueId, state),
    search: async (query, limit) =>
      searchIssues(await deps.tracker.fetchIssuesByStates(deps.states()), query, limit),
    runStatus: async (session) => {
      const status = deps.runStatus(session);
      if (status === null) throw new Error('the session’s run has ended');
      return status;
    },
    history: async (issueId, limit) => deps.runs(issueId, limit).map(historyEntry),
    askHuman: async (session, question) => {
      await deps.tracker.commentIssue(session.issueId, `${QUESTION_HEADING}\n\n${question}`);
      deps.parkAfterTurn(session, question);
    },
    ...(deps.tracker.queryTool === undefined ? {} : { queryTool: deps.tracker.queryTool }),
  };
}

/**
 * Issues whose identifier, title or description holds every word of `query` (any case),
 * best first: identifier hits, then title hits, then the rest, each in tracker order.
 */
export function searchIssues(issues: readonly Issue[], query: string, limit: number): Issue[] {
  const words = query
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => w !== '');
  const rank = (issue: Issue): number | null => {
    const id = issue.identifier.toLowerCase();
    const title = issue.title.toLowerCase();
    const text = `${id}\n${title}\n${(issue.description ?? '').toLowerCase()}`;
    if (!words.every((w) => text.includes(w))) return null;
    if (words.some((w) => id.includes(w))) return 0;
    return words.some((w) => title.includes(w)) ? 1 : 2;
  };
  return issues
    .map((issue, order) => ({ issue, order, rank: rank(issue) }))
    .filter((r): r is { issue: Issue; order: number; rank: number } => r.rank !== null)
    .sort((a, b) => a.rank - b.rank || a.order - b.order)
    .slice(0, limit)
    .map((r) => r.issue);
}

function historyEntry(run: RunRecord): ToolHistoryEntry {
  return {
    attempt: run.attempt,
    startedAt: run.startedAt,
    endedAt: run.endedAt,
    exitKind: run.exitKind,
    turns: run.turns,
    tokens: run.usage.totalTokens,
    error: run.error,
  };
}

/** What is spent and what is left of each limit the workflow sets (0 = unlimited, left out). */
export function budgetsLeft(
  limits: BudgetLimits & { maxTurns: number },
  spent: { sessions: number; tokens: number; costMicroUsd: number | null; turns: number },
): ToolBudget[] {
  const budgets: ToolBudget[] = [];
  const add = (name: string, used: number, limit: number): void => {
    if (limit > 0) budgets.push({ name, used, limit, left: Math.max(0, limit - used) });
  };
  add('max_turns', spent.turns, limits.maxTurns);
  add('max_sessions', spent.sessions, limits.maxSessions);
  add('max_tokens', spent.tokens, limits.maxTokens);
  if (spent.costMicroUsd !== null)
    add('max_cost_usd', spent.costMicroUsd / 1e6, limits.maxCostMicroUsd / 1e6);
  return budgets;
}
