/**
 * The JSON shapes of the HTTP API, built by pure functions from the orchestrator's snapshot,
 * the store's records and the config. Every field is named here, one by one: a view never
 * spreads a record, so a field added to the config later (an API key, a hook script, an
 * environment value) cannot reach a response without someone writing it down on purpose.
 * Times are ISO-8601 UTC, durations whole seconds, money dollars from integer micro-dollars.
 */
import { addCounts, ZERO } from '../agent/usage/index.js';
import type { TokenCounts } from '../domain/agent.js';
import type { HoldRelease } from '../domain/errors.js';
import type { OrchestratorSnapshot, RunningEntry } from '../orchestrator/orchestrator.js';
import type { AgentRateLimit } from '../orchestrator/rate-limits.js';
import type { WaitingEntry } from '../orchestrator/waiting.js';
import type { RetryEntry, RunRecord, ToolCallCount, TotalsRecord, TurnRecord } from '../persistence/index.js';
import type { ServiceConfig } from '../workflow/config.js';
import type { IssueComment } from './issue-comments.js';
import type { AdapterHealth } from './ports.js';

const MICROS_PER_USD = 1_000_000;
/** The most `waiting` entries the state document lists (`counts.waiting` has them all). */
export const MAX_WAITING_LISTED = 200;

export interface TokensView {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  total_tokens: number;
}

export interface RunningView {
  issue_id: string;
  issue_identifier: string;
  title: string;
  state: string;
  /** 1-based: 1 on the first run of a claim, as in the run's record. */
  attempt: number;
  run_id: number;
  host: string;
  session_id: string | null;
  turn: number;
  started_at: string;
  elapsed_seconds: number;
  last_event: string;
  last_event_at: string;
  workspace: string | null;
  tokens: TokensView;
  tokens_by_model: Record<string, TokensView>;
  /** Settled cost as of the last finished turn; null before it or when unknown. */
  cost_usd: number | null;
  provenance: string | null;
}

export interface RetryView {
  issue_id: string;
  issue_identifier: string;
  /** The attempt the retry runs as: one more than the run it follows. */
  attempt: number;
  due_at: string;
  /** Whole seconds until due, 0 when overdue. */
  due_in_seconds: number;
  reason: string;
  last_error: string | null;
  previous_host: string | null;
}

/** An issue not dispatched again until it changes (after a failure no retry can fix). */
export interface HeldView {
  issue_id: string;
  issue_identifier: string;
  error: string;
  /** The failure's kind (`agent_not_found`, …); null when it had none. */
  error_kind: string | null;
  /** What ends the hold (a restart always does). */
  released_by: HoldRelease;
}

/** An issue the orchestrator knows of and is not running or retrying, with why. */
export interface WaitingView {
  issue_id: string;
  issue_identifier: string;
  title: string;
  /** The tracker state when last seen. */
  state: string;
  /**
   * Why, as a code: the dispatch plan's (`blocked`, `budget_exhausted`, `held`, `no_slot`,
   * `no_state_slot`, `not_active`, `terminal`, `missing_fields`, `ssh_hosts_at_capacity`,
   * `ssh_hosts_down`) or `parked` (moved to the blocked state for a person to answer).
   */
  reason: string;
  /** Why, in words: `waiting on DEMO-1`, `token budget 60,000 of 50,000`, `held: agent_not_found`. */
  detail: string;
  /** Identifiers of the open blockers; [] unless `reason` is `blocked`. */
  blocked_by: string[];
  /** When the orchestrator last saw it so (the tick that planned it, or when it parked it). */
  seen_at: string;
}

/** A comment the orchestrator posted on an issue (or tried to: `posted` false when the tracker refused). */
export interface CommentView {
  at: string;
  /** `dispatch`, `completion`, `failure`, `blocked` or `budget`. */
  lifecycle: string;
  posted: boolean;
  body: string;
}

export interface ConfigView {
  workflow_path: string;
  tracker: {
    kind: string;
    active_states: string[];
    terminal_states: string[];
    in_progress_state: string | null;
    handoff_state: string | null;
    blocked_state: string | null;
  };
  agent: {
    kind: string;
    max_concurrent_agents: number;
    max_concurrent_agents_by_state: Record<string, number>;
    max_turns: number;
    max_sessions: number;
    max_tokens: number;
    max_cost_usd: number;
    turn_timeout_ms: number;
    stall_timeout_ms: number;
  };
  polling_interval_ms: number;
  workspace_root: string;
  db_path: string;
  server: { host: string; port: number };
}

export interface AdapterView {
  kind: string;
  runnable: boolean;
  version: string | null;
  health: string;
  detail: string;
}

export interface HostView {
  host: string;
  running: number;
  /** 0 = no per-host cap. */
  cap: number;
  /** Set while the host is skipped after a failure to reach it. */
  down: { reason: string; retry_at: string } | null;
  /** False for a host removed from the workflow whose sessions still run. */
  configured: boolean;
}

/** One provider rate limit of an agent kind, as its sessions last reported it. */
export interface RateLimitView {
  agent_kind: string;
  limit_id: string;
  observed_at: string;
  windows: {
    window: string;
    /** 0–100; null when the runtime did not say. */
    used_percent: number | null;
    window_minutes: number | null;
    /** null when the runtime did not say. */
    resets_at: string | null;
  }[];
}

export interface StateView {
  generated_at: string;
  version: string;
  uptime_seconds: number;
  ready: boolean;
  draining: boolean;
  /** `waiting`: every issue known and not running or retrying, listed or not. */
  counts: { running: number; retrying: number; waiting: number };
  slots: { max: number; available: number };
  running: RunningView[];
  retrying: RetryView[];
  held: HeldView[];
  /** Issues known and not running or retrying, with why, in dispatch order; at most MAX_WAITING_LISTED. */
  waiting: WaitingView[];
  /** SSH hosts with their sessions, cap and down state; [] when sessions run on this machine. */
  ssh_hosts: HostView[];
  /** Whether the database takes writes; while it does not, nothing new is dispatched. */
  store: {
    available: boolean;
    /** When it stopped taking writes; null while available. */
    unavailable_since: string | null;
    /** Results kept in memory until it takes them. */
    pending_writes: number;
    last_error: string | null;
  };
  totals: {
    dispatches_since_start: number;
    runs_started: number;
    runs_finished: number;
    seconds_running: number;
    tokens: TokensView;
    /** What the finished runs cost; null when some run's cost is unknown (the sum would read as a total). */
    cost_usd: number | null;
    /** The sum of the finished runs whose cost is known. */
    known_cost_usd: number;
    /** Finished runs whose cost is unknown (their runtime could not price them). */
    unpriced_runs: number;
    active_tokens: TokensView;
    active_cost_usd: number | null;
  };
  tokens_by_model_since_start: Record<string, TokensView>;
  /** The latest rate limits per agent kind and limit; [] until a runtime reports one. */
  rate_limits: RateLimitView[];
  config: ConfigView;
  adapters: AdapterView[];
}

export interface RunView {
  id: number;
  issue_id: string;
  issue_identifier: string;
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
  tokens: TokensView;
  tokens_by_model: Record<string, TokensView>;
  cost_usd: number | null;
  provenance: string;
  unaccounted_turns: number;
  /** The reaction that started the run (`ci_failure`, `review_comments`, `merge_conflict`); null otherwise. */
  reaction: string | null;
  /** The self-review loop's record (status, final verdict, iterations); null when none ran. */
  self_review: unknown;
  /** Calls the run's agent made to the tool server, by tool and outcome; [] when none. */
  tool_calls: ToolCallCount[];
}

export interface TurnView {
  run_id: number;
  turn: number;
  session_id: string;
  started_at: string;
  ended_at: string;
  exit_reason: string;
  error_kind: string | null;
  error: string | null;
  tokens: TokensView;
  tokens_by_model: Record<string, TokensView>;
  usage_measured: boolean;
  spend_unaccounted: boolean;
  spend_coverable: boolean;
  covers_session: boolean;
  provenance: string;
  reported_amounts: { unit: string; micros: number }[];
  final_message: string;
}

export type IssueStatus = 'running' | 'retrying' | 'idle';

export interface IssueView {
  issue_identifier: string;
  issue_id: string;
  /** The title when the issue runs or waits now; null when only past runs name it. */
  title: string | null;
  status: IssueStatus;
  running: RunningView | null;
  retry: RetryView | null;
  /** Why it is not running, when the orchestrator knows of it and it is not running or retrying. */
  waiting: WaitingView | null;
  runs: (RunView & { turn_records: TurnView[] })[];
  /** Comments the orchestrator made on it since the service started, oldest first. */
  comments: CommentView[];
}

export type Check = 'pass' | 'fail';

export interface ReadinessView {
  status: Check;
  version: string;
  uptime_seconds: number;
  checks: { database: Check; store_writes: Check; first_tick: Check; workflow: Check; draining: Check };
}

/** Dollars from integer micro-dollars; null stays null (unknown, never free). */
export function usd(micros: number | null): number | null {
  return micros === null ? null : micros / MICROS_PER_USD;
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function wholeSeconds(ms: number): number {
  return Math.max(0, Math.floor(ms / 1_000));
}

export function tokensView(counts: TokenCounts): TokensView {
  return {
    input_tokens: counts.inputTokens,
    output_tokens: counts.outputTokens,
    cache_read_tokens: counts.cacheReadTokens,
    cache_write_tokens: counts.cacheWriteTokens,
    total_tokens: counts.totalTokens,
  };
}

export function tokensByModelView(byModel: Record<string, TokenCounts>): Record<string, TokensView> {
  // fromEntries defines own properties, so a model named "__proto__" stays a model.
  return Object.fromEntries(Object.entries(byModel).map(([model, c]) => [model, tokensView(c)]));
}

export function runningView(entry: RunningEntry, nowMs: number): RunningView {
  return {
    issue_id: entry.issue.id,
    issue_identifier: entry.issue.identifier,
    title: entry.issue.title,
    state: entry.issue.state,
    attempt: entry.attempt,
    run_id: entry.runId,
    host: entry.host,
    session_id: entry.sessionId,
    turn: entry.turn,
    started_at: iso(entry.startedAtMs),
    elapsed_seconds: wholeSeconds(nowMs - entry.startedAtMs),
    last_event: entry.lastEvent,
    last_event_at: iso(entry.lastEventAtMs),
    workspace: entry.workspace,
    tokens: tokensView(entry.usage),
    tokens_by_model: tokensByModelView(entry.usageByModel),
    cost_usd: usd(entry.costMicroUsd),
    provenance: entry.provenance,
  };
}

export function waitingView(entry: WaitingEntry): WaitingView {
  return {
    issue_id: entry.issueId,
    issue_identifier: entry.identifier,
    title: entry.title,
    state: entry.state,
    reason: entry.reason,
    detail: entry.detail,
    blocked_by: [...entry.blockedBy],
    seen_at: iso(entry.seenAtMs),
  };
}

export function commentView(comment: IssueComment): CommentView {
  return {
    at: iso(comment.atMs),
    lifecycle: comment.lifecycle,
    posted: comment.result === 'success',
    body: comment.body,
  };
}

export function retryView(entry: RetryEntry, nowMs: number): RetryView {
  return {
    issue_id: entry.issueId,
    issue_identifier: entry.identifier,
    attempt: entry.attempt,
    due_at: iso(entry.dueAtMs),
    due_in_seconds: Math.max(0, Math.ceil((entry.dueAtMs - nowMs) / 1_000)),
    reason: entry.reason,
    last_error: entry.lastError,
    previous_host: entry.previousHost,
  };
}

/** The config an operator may see: limits and states, never credentials, commands, hooks or options. */
export function configView(config: ServiceConfig, workflowPath: string): ConfigView {
  const { tracker, agent } = config;
  return {
    workflow_path: workflowPath,
    tracker: {
      kind: tracker.kind,
      active_states: [...tracker.activeStates],
      terminal_states: [...tracker.terminalStates],
      in_progress_state: tracker.inProgressState,
      handoff_state: tracker.handoffState,
      blocked_state: tracker.blockedState,
    },
    agent: {
      kind: agent.kind,
      max_concurrent_agents: agent.maxConcurrentAgents,
      max_concurrent_agents_by_state: Object.fromEntries(Object.entries(agent.maxConcurrentAgentsByState)),
      max_turns: agent.maxTurns,
      max_sessions: agent.maxSessions,
      max_tokens: agent.maxTokens,
      max_cost_usd: agent.maxCostUsd,
      turn_timeout_ms: agent.turnTimeoutMs,
      stall_timeout_ms: agent.stallTimeoutMs,
    },
    polling_interval_ms: config.pollingIntervalMs,
    workspace_root: config.workspaceRoot,
    db_path: config.dbPath,
    server: { host: config.server.host, port: config.server.port },
  };
}

export function adapterView(health: AdapterHealth): AdapterView {
  return {
    kind: health.kind,
    runnable: health.runnable,
    version: health.version,
    health: health.health,
    detail: health.detail,
  };
}

export function runView(run: RunRecord, toolCalls: ToolCallCount[]): RunView {
  return {
    id: run.id,
    issue_id: run.issueId,
    issue_identifier: run.identifier,
    attempt: run.attempt,
    host: run.host,
    agent_kind: run.agentKind,
    session_id: run.sessionId,
    workspace: run.workspace,
    started_at: run.startedAt,
    ended_at: run.endedAt,
    exit_kind: run.exitKind,
    error_kind: run.errorKind,
    error: run.error,
    turns: run.turns,
    tokens: tokensView(run.usage),
    tokens_by_model: tokensByModelView(run.usageByModel),
    cost_usd: usd(run.costMicroUsd),
    provenance: run.provenance,
    unaccounted_turns: run.unaccountedTurns,
    reaction: run.reaction,
    self_review: run.review,
    tool_calls: toolCalls,
  };
}

export function turnView(turn: TurnRecord): TurnView {
  return {
    run_id: turn.runId,
    turn: turn.turn,
    session_id: turn.sessionId,
    started_at: turn.startedAt,
    ended_at: turn.endedAt,
    exit_reason: turn.exitReason,
    error_kind: turn.errorKind,
    error: turn.error,
    tokens: tokensView(turn.usage),
    tokens_by_model: tokensByModelView(turn.usageByModel),
    usage_measured: turn.usageMeasured,
    spend_unaccounted: turn.spendUnaccounted,
    spend_coverable: turn.spendCoverable,
    covers_session: turn.coversSession,
    provenance: turn.usageProvenance,
    reported_amounts: turn.reportedAmounts.map((a) => ({ unit: a.unit, micros: a.micros })),
    final_message: turn.finalMessage,
  };
}

/**
 * The live cost of the running sessions in micro-dollars: each session's settled cost as of
 * its last finished turn or, before that, its live tokens priced at the current rates; null
 * when some session has neither (a sum that silently dropped it would read as a total).
 */
export function activeCostMicroUsd(
  running: readonly RunningEntry[],
  priceTokens: (usage: TokenCounts) => number | null,
): number | null {
  let sum = 0;
  for (const entry of running) {
    const cost = entry.costMicroUsd ?? priceTokens(entry.usage);
    if (cost === null) return null;
    sum += cost;
  }
  return sum;
}

/** Everything `/api/v1/state` is built from, read once per response. */
export interface StateInputs {
  nowMs: number;
  version: string;
  startedAtMs: number;
  workflowPath: string;
  snapshot: OrchestratorSnapshot;
  /** Persisted totals since the database was created. */
  totals: TotalsRecord;
  /** Finished runs whose cost is unknown. */
  unpricedRuns: number;
  config: ServiceConfig;
  adapters: readonly AdapterHealth[];
  /** Tokens by model the server has seen since it started. */
  tokensByModel: Record<string, TokenCounts>;
  /** Whether /readyz passes (the state view repeats it for the dashboard). */
  ready: boolean;
  priceTokens(usage: TokenCounts): number | null;
}

/** One reported rate limit as the state document shows it. */
export function rateLimitView(limit: AgentRateLimit): RateLimitView {
  return {
    agent_kind: limit.kind,
    limit_id: limit.limitId,
    observed_at: iso(limit.observedAtMs),
    windows: limit.windows.map((w) => ({
      window: w.window,
      used_percent: w.usedPercent,
      window_minutes: w.windowMinutes,
      resets_at: w.resetsAtMs === null ? null : iso(w.resetsAtMs),
    })),
  };
}

export function stateView(input: StateInputs): StateView {
  const { snapshot, totals, nowMs } = input;
  const activeTokens = snapshot.running.reduce<TokenCounts>((sum, e) => addCounts(sum, e.usage), ZERO);
  const max = snapshot.maxConcurrentAgents;
  return {
    generated_at: iso(nowMs),
    version: input.version,
    uptime_seconds: wholeSeconds(nowMs - input.startedAtMs),
    ready: input.ready,
    draining: snapshot.draining,
    counts: {
      running: snapshot.running.length,
      retrying: snapshot.retries.length,
      waiting: snapshot.waiting.length,
    },
    slots: { max, available: Math.max(0, max - snapshot.running.length) },
    running: snapshot.running.map((e) => runningView(e, nowMs)),
    retrying: [...snapshot.retries].sort((a, b) => a.dueAtMs - b.dueAtMs).map((e) => retryView(e, nowMs)),
    held: snapshot.held.map((h) => ({
      issue_id: h.issueId,
      issue_identifier: h.identifier,
      error: h.error,
      error_kind: h.errorKind,
      released_by: h.releasedBy,
    })),
    waiting: snapshot.waiting.slice(0, MAX_WAITING_LISTED).map(waitingView),
    ssh_hosts: snapshot.hosts.map((h) => ({
      host: h.host,
      running: h.running,
      cap: h.cap,
      down: h.down === null ? null : { reason: h.down.reason, retry_at: iso(h.down.untilMs) },
      configured: h.configured,
    })),
    store: {
      available: snapshot.store.available,
      unavailable_since: snapshot.store.sinceMs === null ? null : iso(snapshot.store.sinceMs),
      pending_writes: snapshot.store.pendingWrites,
      last_error: snapshot.store.lastError,
    },
    totals: {
      dispatches_since_start: snapshot.totals.dispatches,
      runs_started: totals.runsStarted,
      runs_finished: totals.runsFinished,
      // Finished runs from the store plus the sessions running now.
      seconds_running:
        totals.secondsRunning +
        snapshot.running.reduce((sum, e) => sum + wholeSeconds(nowMs - e.startedAtMs), 0),
      tokens: tokensView(totals.tokens),
      cost_usd: input.unpricedRuns > 0 ? null : totals.costMicroUsd / MICROS_PER_USD,
      known_cost_usd: totals.costMicroUsd / MICROS_PER_USD,
      unpriced_runs: input.unpricedRuns,
      active_tokens: tokensView(activeTokens),
      active_cost_usd: usd(activeCostMicroUsd(snapshot.running, input.priceTokens)),
    },
    tokens_by_model_since_start: tokensByModelView(input.tokensByModel),
    rate_limits: snapshot.rateLimits.map(rateLimitView),
    config: configView(input.config, input.workflowPath),
    adapters: input.adapters.map(adapterView),
  };
}

/** Where an issue stands, from what is running, what is queued and what the store has. */
export function issueView(input: {
  identifier: string;
  issueId: string;
  running: RunningEntry | null;
  retry: RetryEntry | null;
  waiting: WaitingEntry | null;
  runs: readonly { run: RunRecord; turns: readonly TurnRecord[]; toolCalls: ToolCallCount[] }[];
  comments: readonly IssueComment[];
  nowMs: number;
}): IssueView {
  const status: IssueStatus = input.running !== null ? 'running' : input.retry !== null ? 'retrying' : 'idle';
  const waiting = input.running === null && input.retry === null ? input.waiting : null;
  return {
    issue_identifier: input.identifier,
    issue_id: input.issueId,
    title: input.running?.issue.title ?? waiting?.title ?? null,
    status,
    running: input.running === null ? null : runningView(input.running, input.nowMs),
    retry: input.retry === null ? null : retryView(input.retry, input.nowMs),
    waiting: waiting === null ? null : waitingView(waiting),
    runs: input.runs.map(({ run, turns, toolCalls }) => ({
      ...runView(run, toolCalls),
      turn_records: turns.map(turnView),
    })),
    comments: input.comments.map(commentView),
  };
}

/** The readiness verdict: every check must pass. */
export function readinessView(input: {
  version: string;
  uptimeMs: number;
  checks: ReadinessView['checks'];
}): ReadinessView {
  const pass = Object.values(input.checks).every((c) => c === 'pass');
  return {
    status: pass ? 'pass' : 'fail',
    version: input.version,
    uptime_seconds: wholeSeconds(input.uptimeMs),
    checks: { ...input.checks },
  };
}
