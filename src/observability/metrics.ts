/**
 * Prometheus metrics for `GET /metrics`, prefixed `orchestrator_`, on a registry of
 * their own (never prom-client's global one, so two services in one process, or a
 * test, never share counters). Counters move on the orchestrator's observations;
 * gauges are read from the orchestrator's snapshot at scrape time, so they can
 * never drift from the state the API shows.
 *
 * The trap this avoids is unbounded label values: every label here comes from a
 * closed set (exit kinds, retry triggers, tool kinds …) or is capped (model names),
 * and nothing carries an issue id or identifier, so the series count stays fixed
 * however many issues pass through. Observations are counted inside a guard: a
 * metrics fault must never break the state owner that reports to it.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { AgentEventType, ToolKind } from '../domain/agent.js';
import type { ExitKind } from '../orchestrator/exit-policy.js';
import type {
  CommentLifecycle,
  Observation,
  ReactionAction,
  ReconcileAction,
} from '../orchestrator/observations.js';
import type { OrchestratorSnapshot } from '../orchestrator/orchestrator.js';
import type { SelfReviewStatus } from '../orchestrator/self-review/loop.js';
import { RETRY_REASONS } from '../persistence/records.js';
import { TOOL_ERROR_CODES } from '../tools/call.js';
import { TOOL_CATALOG } from '../tools/catalog.js';
import { REACTION_KINDS } from '../workflow/config.js';
import { TRACKER_OPERATIONS, type TrackerRequestResult } from './instrument-tracker.js';

export const METRIC_PREFIX = 'orchestrator_';
/** Distinct model label values kept; later models are counted under `other`. */
export const MAX_MODEL_LABELS = 50;
export const OTHER_LABEL = 'other';

/** Default Node.js gauges whose names end in _total although they are not counters. */
const NON_COUNTER_TOTALS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];
/** 0.01 s × 2^k, k = 0..11: 10 ms to about 20 s. */
const POLL_DURATION_BUCKETS_SECONDS = Array.from({ length: 12 }, (_, k) => 0.01 * 2 ** k);
/** 1 s × 2^k, k = 0..13: one second to about 2.3 hours. */
const WORKER_DURATION_BUCKETS_SECONDS = Array.from({ length: 14 }, (_, k) => 2 ** k);

// Records keyed by a union: adding a member to the union fails to compile until it is listed.
const EXIT_KINDS = keys<ExitKind>({
  succeeded: null,
  blocked: null,
  failed: null,
  cancelled: null,
  budget_exhausted: null,
  no_changes: null,
});
const RECONCILE_ACTIONS = keys<ReconcileAction>({
  stop_terminal: null,
  stop_inactive: null,
  stop_missing: null,
  sweep_cleanup: null,
});
const COMMENT_LIFECYCLES = keys<CommentLifecycle>({
  dispatch: null,
  completion: null,
  failure: null,
  blocked: null,
  budget: null,
});
const TOOL_KINDS = [...keys<ToolKind>({ shell: null, read: null, edit: null, skill: null }), OTHER_LABEL];
const AGENT_EVENT_TYPES = keys<AgentEventType>({
  session_started: null,
  token_usage: null,
  tool_result: null,
  notification: null,
  malformed: null,
  warning: null,
  tool_channel_gap: null,
  rate_limits: null,
  turn_completed: null,
  turn_failed: null,
  turn_cancelled: null,
  turn_input_required: null,
});
const BUDGET_LIMITS = [
  'max_sessions',
  'max_tokens',
  'max_cost_usd',
  'max_unchanged_sessions',
  'require_changes',
];
const SELF_REVIEW_STATUSES = keys<SelfReviewStatus>({
  passed: null,
  cap_reached: null,
  error: null,
  stopped: null,
});
const PULL_REQUEST_RESULTS = ['opened', 'updated', 'none'];
const TOOL_NAMES = TOOL_CATALOG.map((t) => t.name);
const TOOL_OUTCOMES = ['ok', ...TOOL_ERROR_CODES];
const REACTION_LABELS = [...REACTION_KINDS, 'poll', 'watch'] as const;
const REACTION_ACTIONS = keys<ReactionAction>({
  dispatched: null,
  escalated: null,
  merged: null,
  closed: null,
  expired: null,
  error: null,
});
const RESULTS: readonly TrackerRequestResult[] = ['success', 'error'];
const TOKEN_TYPES = ['input', 'output', 'cache_read', 'cache_write'] as const;

export interface MetricsOptions {
  /** The orchestrator's version, for `build_info`. */
  version: string;
  /** Read at every scrape for the gauges; a throw leaves the gauges at their last values. */
  snapshot: () => OrchestratorSnapshot;
  /** Epoch ms, for elapsed times; Date.now by default. */
  nowMs?: () => number;
  /** The name of the tracker's query tool, a `tool` label besides the catalog's; null = none. */
  queryToolName?: () => string | null;
}

export interface Metrics {
  /** The registry every metric (default process metrics included) is registered in. */
  readonly registry: Registry;
  /** The orchestrator's observer: counts one observation. Never throws. */
  observe(observation: Observation): void;
  /** Counts one tracker call (see instrumentTracker). */
  trackerRequest(operation: string, result: TrackerRequestResult): void;
  /** The text exposition of the registry, with its content type. */
  exposition(): Promise<{ contentType: string; body: string }>;
}

/** Creates the service's metrics on a fresh registry, process metrics included. */
export function createMetrics(options: MetricsOptions): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });
  // These gauges end in _total, which Prometheus reserves for counters (promtool rejects them);
  // each is the sum over `type` of the same gauge without the suffix, which stays.
  for (const base of NON_COUNTER_TOTALS) registry.removeSingleMetric(`${METRIC_PREFIX}${base}`);
  const nowMs = options.nowMs ?? Date.now;
  const name = (base: string) => `${METRIC_PREFIX}${base}`;
  const registers = [registry];

  /** The snapshot, or null when the orchestrator cannot give one yet. */
  const read = (): OrchestratorSnapshot | null => {
    try {
      return options.snapshot();
    } catch {
      return null;
    }
  };

  /** A gauge read from the snapshot at scrape time; it keeps its last value when there is none. */
  const snapshotGauge = (base: string, help: string, value: (snapshot: OrchestratorSnapshot) => number) =>
    new Gauge({
      name: name(base),
      help,
      registers,
      collect() {
        const snapshot = read();
        if (snapshot !== null) this.set(value(snapshot));
      },
    });
  snapshotGauge('sessions_running', 'Agent sessions running now.', (s) => s.running.length);
  snapshotGauge(
    'store_available',
    '1 while the database takes writes, 0 while it refuses them (nothing new is dispatched then).',
    (s) => (s.store.available ? 1 : 0),
  );
  snapshotGauge(
    'store_pending_writes',
    'Results kept in memory because the database refused to write them.',
    (s) => s.store.pendingWrites,
  );
  snapshotGauge('sessions_retrying', 'Issues waiting in the retry queue now.', (s) => s.retries.length);
  snapshotGauge(
    'sessions_held',
    'Issues held after a failure a retry cannot fix, until they change.',
    (s) => s.held.length,
  );
  snapshotGauge(
    'slots_available',
    'Free session slots: agent.max_concurrent_agents minus the sessions running, at least 0.',
    (s) => Math.max(0, s.maxConcurrentAgents - s.running.length),
  );
  snapshotGauge(
    'active_sessions_elapsed_seconds',
    'Sum of the time the running sessions have been running, in seconds.',
    (s) => {
      const now = nowMs();
      return s.running.reduce((sum, r) => sum + Math.max(0, now - r.startedAtMs), 0) / 1000;
    },
  );
  const seenHosts = new Set<string>();
  new Gauge({
    name: name('ssh_host_usage'),
    help: 'Sessions running now per worker host ("local" for sessions on this machine).',
    labelNames: ['host'] as const,
    registers,
    collect() {
      const snapshot = read();
      if (snapshot === null) return;
      const byHost = new Map<string, number>();
      for (const r of snapshot.running) byHost.set(r.host, (byHost.get(r.host) ?? 0) + 1);
      for (const host of byHost.keys()) seenHosts.add(host);
      for (const { host } of snapshot.hosts) seenHosts.add(host);
      // A host seen once stays at 0 rather than vanishing, so graphs show it idle.
      for (const host of seenHosts) this.set({ host }, byHost.get(host) ?? 0);
    },
  });
  // Provider rate limits as last reported, one series per kind, limit and window. The series
  // are rebuilt at every scrape, so a window the runtime stopped reporting disappears; the
  // orchestrator keeps a few limits per kind and the core a few windows per limit.
  const rateLimitGauge = (
    base: string,
    help: string,
    value: (w: OrchestratorSnapshot['rateLimits'][number]['windows'][number]) => number | null,
  ) =>
    new Gauge({
      name: name(base),
      help,
      labelNames: ['kind', 'limit', 'window'] as const,
      registers,
      collect() {
        const snapshot = read();
        if (snapshot === null) return;
        this.reset();
        for (const limit of snapshot.rateLimits) {
          for (const w of limit.windows) {
            const v = value(w);
            if (v !== null) this.set({ kind: limit.kind, limit: limit.limitId, window: w.window }, v);
          }
        }
      },
    });
  rateLimitGauge(
    'agent_rate_limit_used_percent',
    'Share of a provider rate-limit window used, in percent, as the agent runtime last reported it.',
    (w) => w.usedPercent,
  );
  rateLimitGauge(
    'agent_rate_limit_reset_timestamp_seconds',
    'When a provider rate-limit window resets, in Unix seconds, as the agent runtime last reported it.',
    (w) => (w.resetsAtMs === null ? null : w.resetsAtMs / 1000),
  );
  new Gauge({
    name: name('build_info'),
    help: 'Always 1; the labels carry the orchestrator and Node.js versions.',
    labelNames: ['version', 'node_version'] as const,
    registers,
  }).set({ version: options.version, node_version: process.version }, 1);

  const tokens = new Counter({
    name: name('tokens_total'),
    help: 'Tokens used, by type and model. input includes cache_read and cache_write, which are its parts.',
    labelNames: ['type', 'model'] as const,
    registers,
  });
  const cost = new Counter({
    name: name('cost_usd_total'),
    help: 'Settled cost of finished runs in US dollars (runs that cannot be priced add nothing).',
    registers,
  });
  const dispatches = new Counter({
    name: name('dispatches_total'),
    help: 'Sessions dispatched, by attempt (first run or retry).',
    labelNames: ['attempt'] as const,
    registers,
  });
  const workerExits = new Counter({
    name: name('worker_exits_total'),
    help: 'Worker runs that ended, by exit kind.',
    labelNames: ['exit_kind'] as const,
    registers,
  });
  const retries = new Counter({
    name: name('retries_total'),
    help: 'Retries scheduled, by trigger.',
    labelNames: ['trigger'] as const,
    registers,
  });
  const reconciliations = new Counter({
    name: name('reconciliation_actions_total'),
    help: 'Reconciliation actions: sessions stopped because their issue changed, workspaces swept.',
    labelNames: ['action'] as const,
    registers,
  });
  const pollCycles = new Counter({
    name: name('poll_cycles_total'),
    help: 'Poll cycles (ticks) finished, by result.',
    labelNames: ['result'] as const,
    registers,
  });
  const trackerRequests = new Counter({
    name: name('tracker_requests_total'),
    help: 'Tracker calls, by operation and result.',
    labelNames: ['operation', 'result'] as const,
    registers,
  });
  const transitionCounter = (base: string, help: string) =>
    new Counter({ name: name(base), help, labelNames: ['result'] as const, registers });
  const transitions = {
    in_progress: transitionCounter(
      'dispatch_transitions_total',
      'Moves of a dispatched issue to tracker.in_progress_state, by result.',
    ),
    handoff: transitionCounter(
      'handoff_transitions_total',
      'Moves of a finished issue to tracker.handoff_state, by result.',
    ),
    blocked: transitionCounter(
      'blocked_transitions_total',
      'Moves of a blocked issue to tracker.blocked_state, by result.',
    ),
  };
  const comments = new Counter({
    name: name('tracker_comments_total'),
    help: 'Lifecycle comments posted to the tracker, by lifecycle and result.',
    labelNames: ['lifecycle', 'result'] as const,
    registers,
  });
  const toolCalls = new Counter({
    name: name('tool_calls_total'),
    help: 'Agent tool calls that returned a result, by tool kind and result.',
    labelNames: ['tool_kind', 'result'] as const,
    registers,
  });
  const toolServerCalls = new Counter({
    name: name('tool_server_calls_total'),
    help: "Calls agents made to the orchestrator's tool server, by tool and outcome (ok or the tool error code).",
    labelNames: ['tool', 'outcome'] as const,
    registers,
  });
  const budgetExhausted = new Counter({
    name: name('budget_exhausted_total'),
    help: 'Issues that reached a budget limit, by limit.',
    labelNames: ['limit'] as const,
    registers,
  });
  const selfReviews = new Counter({
    name: name('self_reviews_total'),
    help: 'Self-review loops ended, by how they ended.',
    labelNames: ['status'] as const,
    registers,
  });
  const selfReviewIterations = new Counter({
    name: name('self_review_iterations_total'),
    help: 'Self-review iterations (a review turn and its verification) run.',
    registers,
  });
  const pushes = new Counter({
    name: name('pushes_total'),
    help: 'Runs whose work was pushed, by what happened to the pull request.',
    labelNames: ['pull_request'] as const,
    registers,
  });
  const reactions = new Counter({
    name: name('reactions_total'),
    help: 'Pull-request reaction actions, by reaction kind and action.',
    labelNames: ['kind', 'action'] as const,
    registers,
  });
  const turns = new Counter({
    name: name('turns_total'),
    help: 'Agent turns finished and recorded.',
    registers,
  });
  const agentEvents = new Counter({
    name: name('agent_events_total'),
    help: 'Events received from agent sessions, by event type.',
    labelNames: ['type'] as const,
    registers,
  });
  const pollDuration = new Histogram({
    name: name('poll_duration_seconds'),
    help: 'Duration of a poll cycle (reconcile, fetch, dispatch), in seconds.',
    buckets: POLL_DURATION_BUCKETS_SECONDS,
    registers,
  });
  const workerDuration = new Histogram({
    name: name('worker_duration_seconds'),
    help: 'Duration of a worker run from dispatch to exit, in seconds, by exit kind.',
    labelNames: ['exit_kind'] as const,
    buckets: WORKER_DURATION_BUCKETS_SECONDS,
    registers,
  });

  // Series of the closed label sets exist from the start, at 0, so rate() and absent() work at once.
  for (const attempt of ['first', 'retry']) dispatches.inc({ attempt }, 0);
  for (const exit_kind of EXIT_KINDS) {
    workerExits.inc({ exit_kind }, 0);
    workerDuration.zero({ exit_kind });
  }
  for (const trigger of RETRY_REASONS) retries.inc({ trigger }, 0);
  for (const action of RECONCILE_ACTIONS) reconciliations.inc({ action }, 0);
  for (const result of RESULTS) {
    pollCycles.inc({ result }, 0);
    for (const operation of Object.values(TRACKER_OPERATIONS)) trackerRequests.inc({ operation, result }, 0);
    for (const counter of Object.values(transitions)) counter.inc({ result }, 0);
    for (const lifecycle of COMMENT_LIFECYCLES) comments.inc({ lifecycle, result }, 0);
    for (const tool_kind of TOOL_KINDS) toolCalls.inc({ tool_kind, result }, 0);
  }
  for (const limit of BUDGET_LIMITS) budgetExhausted.inc({ limit }, 0);
  for (const status of SELF_REVIEW_STATUSES) selfReviews.inc({ status }, 0);
  for (const pull_request of PULL_REQUEST_RESULTS) pushes.inc({ pull_request }, 0);
  for (const kind of REACTION_LABELS)
    for (const action of REACTION_ACTIONS) reactions.inc({ kind, action }, 0);
  for (const type of AGENT_EVENT_TYPES) agentEvents.inc({ type }, 0);

  const models = new Set<string>();
  const modelLabel = (model: string): string => {
    if (models.has(model)) return model;
    if (models.size >= MAX_MODEL_LABELS) return OTHER_LABEL;
    models.add(model);
    return model;
  };

  const count = (observation: Observation): void => {
    switch (observation.type) {
      case 'tick':
        pollCycles.inc({ result: observation.result });
        pollDuration.observe(seconds(observation.durationMs));
        return;
      case 'dispatched':
        dispatches.inc({ attempt: observation.attempt === 1 ? 'first' : 'retry' });
        return;
      case 'worker_exited':
        workerExits.inc({ exit_kind: observation.exitKind });
        workerDuration.observe({ exit_kind: observation.exitKind }, seconds(observation.durationMs));
        if (observation.costMicroUsd !== null) addPositive(cost, {}, observation.costMicroUsd / 1e6);
        return;
      case 'retry_scheduled':
        retries.inc({ trigger: observation.trigger });
        return;
      case 'reconciled':
        reconciliations.inc({ action: observation.action });
        return;
      case 'transition':
        transitions[observation.purpose].inc({ result: observation.result });
        return;
      case 'comment':
        comments.inc({ lifecycle: observation.lifecycle, result: observation.result });
        return;
      case 'budget_exhausted':
        budgetExhausted.inc({ limit: bounded(observation.limit, BUDGET_LIMITS) });
        return;
      case 'self_review':
        selfReviews.inc({ status: observation.status });
        selfReviewIterations.inc(observation.iterations);
        return;
      case 'published':
        pushes.inc({ pull_request: observation.pullRequest });
        return;
      case 'reaction':
        reactions.inc({ kind: observation.kind, action: observation.action });
        return;
      case 'tokens': {
        const model = modelLabel(observation.model);
        const { delta } = observation;
        const byType: Record<(typeof TOKEN_TYPES)[number], number> = {
          input: delta.inputTokens,
          output: delta.outputTokens,
          cache_read: delta.cacheReadTokens,
          cache_write: delta.cacheWriteTokens,
        };
        for (const type of TOKEN_TYPES) addPositive(tokens, { type, model }, byType[type]);
        return;
      }
      case 'agent_event': {
        const { event } = observation;
        agentEvents.inc({ type: bounded(event.type, AGENT_EVENT_TYPES) });
        if (event.type === 'tool_result') {
          toolCalls.inc({
            tool_kind: event.toolKind ?? OTHER_LABEL,
            result: event.toolError ? 'error' : 'success',
          });
        }
        return;
      }
      case 'turn':
        turns.inc();
        return;
      case 'tool_call':
        toolServerCalls.inc({
          tool:
            observation.tool === options.queryToolName?.()
              ? observation.tool
              : bounded(observation.tool, TOOL_NAMES),
          outcome: bounded(observation.outcome, TOOL_OUTCOMES),
        });
        return;
      case 'released':
        return;
      default:
        assertNever(observation);
    }
  };

  return {
    registry,
    observe(observation) {
      try {
        count(observation);
      } catch {
        // A metrics fault is not the orchestrator's problem; the counter just misses one.
      }
    },
    trackerRequest(operation, result) {
      trackerRequests.inc({ operation, result });
    },
    async exposition() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}

function keys<K extends string>(record: Record<K, null>): K[] {
  return Object.keys(record) as K[];
}

function bounded(value: string, allowed: readonly string[]): string {
  return allowed.includes(value) ? value : OTHER_LABEL;
}

function seconds(ms: number): number {
  return Number.isFinite(ms) ? Math.max(0, ms) / 1000 : 0;
}

/** Counters reject negative increments; a zero, negative or non-finite amount adds nothing. */
function addPositive<T extends string>(
  counter: Counter<T>,
  labels: Partial<Record<T, string>>,
  amount: number,
): void {
  if (Number.isFinite(amount) && amount > 0) counter.inc(labels, amount);
}

function assertNever(value: never): never {
  throw new Error(`unhandled observation: ${JSON.stringify(value)}`);
}
