/**
 * The one owner of orchestrator state: running sessions, claims, the retry
 * queue and totals. Every mutation happens here, on the event loop, in order,
 * and anything that must survive a crash is written to the store before the
 * in-memory state moves on. Workers report; this class decides.
 */
import { createHash } from 'node:crypto';
import type { ProofStore } from '../agent/core/verify-credential.js';
import type { AgentKind } from '../agent/registry.js';
import {
  addCounts,
  formatDollars,
  isZero,
  maxByModel,
  maxCounts,
  subtractByModel,
  subtractCounts,
} from '../agent/usage/index.js';
import type { AgentAdapter, AgentEvent, TokenCounts, TurnResult, UsageProvenance } from '../domain/agent.js';
import { ZERO_TOKENS } from '../domain/agent.js';
import { type ErrorKind, type HoldRelease, holdRelease, TrackerError } from '../domain/errors.js';
import type { ForgeAdapter } from '../domain/forge.js';
import type { Issue } from '../domain/issue.js';
import type { TrackerAdapter } from '../domain/tracker.js';
import type { ReactionRequest, ScmRecord } from '../persistence/index.js';
import type { ReactionVariables } from '../prompt/reaction-variables.js';
import type { ServiceConfig } from '../workflow/config.js';
import type { Workflow } from '../workflow/load.js';
import { workspaceKey } from '../workspace/keys.js';
import { CONTINUATION_DELAY_MS, failureDelayMs } from './backoff.js';
import {
  type BudgetLimits,
  budgetStopComment,
  budgetVerdict,
  type IssueSpend,
  nextUnchangedRun,
  REQUIRE_CHANGES_LIMIT,
  sessionChange,
  type UnchangedRun,
  type UnchangedVerdict,
  unchangedVerdict,
} from './budget.js';
import { BLOCKED_PREFIX, type ExitAction, failuresInARow, planExit, type WorkerExit } from './exit-policy.js';
import { HostPool, type HostStatus } from './host-pool.js';
import type { Observer, ReconcileAction } from './observations.js';
import { describeNoHost, type PlanRow, planDispatch } from './plan.js';
import type {
  Clock,
  Logger,
  OrchestratorStore,
  PendingTransition,
  Pricing,
  RemoteWorkers,
  RetryEntry,
  RetryReason,
  Workspaces,
} from './ports.js';
import type { PublishedWork } from './publish.js';
import { type AgentRateLimit, RateLimitBook } from './rate-limits.js';
import type { ReactionDecision } from './reactions/types.js';
import { reactionVariables } from './reactions/variables.js';
import { PullWatcher, reactionsConfig } from './reactions/watcher.js';
import { missingLabels, missingLabelsText } from './required-labels.js';
import { reviewRecord } from './self-review/loop.js';
import { stateClassifier } from './states.js';
import { type ToolEndpointDeps, ToolHost } from './tool-host.js';
import { budgetText, MAX_PARKED, parkedEntry, type WaitingEntry, waitingFromPlan } from './waiting.js';
import { runWorker, type WorkerOutcome } from './worker.js';
import { isStoreFault, type StoreStatus, WriteBacklog } from './write-backlog.js';

/** How long shutdown waits for workers to finish their after_run hooks and records. */
const SHUTDOWN_DRAIN_MS = 30_000;
/** How often writes the database refused are tried again. */
export const STORE_RETRY_MS = 2_000;
/**
 * Spend reported mid-turn reaches the database at most this long after it was reported: the
 * first report after a quiet spell is written at once, later ones together at the end of the
 * interval (one write for every run), and a turn's or run's end writes its run's at once.
 */
export const PROGRESS_WRITE_INTERVAL_MS = 250;
const HOST_LOCAL = 'local';
const RECONCILE_ACTIONS: Record<'terminal' | 'inactive' | 'missing' | 'unlabelled', ReconcileAction> = {
  terminal: 'stop_terminal',
  inactive: 'stop_inactive',
  missing: 'stop_missing',
  // An issue that lost a required label is left like one that left the active states: stopped, kept.
  unlabelled: 'stop_inactive',
};

export interface OrchestratorDeps {
  /** The current good workflow; `reload()` re-reads the file (a failed reload keeps the last good one). */
  workflow: { current(): Workflow; reload(): void };
  tracker: TrackerAdapter;
  agent: { adapter: AgentAdapter; kind: AgentKind };
  /** Workspaces on this machine. */
  workspaces: Workspaces;
  /** SSH workers; absent: `worker.ssh_hosts` is ignored and everything runs here. */
  remote?: RemoteWorkers;
  store: OrchestratorStore;
  proofs: ProofStore;
  agentEnv: Record<string, string>;
  credentialValues: string[];
  pricing: Pricing;
  log: Logger;
  clock: Clock;
  /** Told of every dispatch, exit, retry, tick and agent event, after the store has it. */
  observe?: Observer;
  /** Where pull requests are opened and watched; absent or null when the tracker has no forge. */
  forge?: ForgeAdapter | null;
  /** The agents' tool endpoint; absent or null: no session is given tools. */
  tools?: ToolEndpointDeps | null;
}

/** A session the orchestrator is running, as the API and dashboard show it. */
export interface RunningEntry {
  issue: Issue;
  /** 1-based: the first run of a claim is attempt 1. */
  attempt: number;
  runId: number;
  host: string;
  startedAtMs: number;
  lastEventAtMs: number;
  lastEvent: string;
  turn: number;
  sessionId: string | null;
  workspace: string | null;
  usage: TokenCounts;
  usageByModel: Record<string, TokenCounts>;
  /** Where the figures of the last finished turn came from; null before the first turn ends. */
  provenance: UsageProvenance | null;
  /** Settled cost after the last finished turn (null when unknown or before the first turn ends). */
  costMicroUsd: number | null;
  controller: AbortController;
  /** Why the orchestrator stopped the session; `unlabelled`: the issue lost a required label. */
  cancelReason: 'terminal' | 'inactive' | 'missing' | 'unlabelled' | 'shutdown' | null;
  done: Promise<void>;
  /** The run's tool-session token; null when it has none (or it was closed). */
  toolToken: string | null;
  /** A question the agent asked through `ask_human`: the issue is parked after the turn. */
  question: string | null;
  /** The issue's spend when the run started (its own session counted); null when none was recorded. */
  spendBefore: IssueSpend | null;
}

export interface Totals {
  dispatches: number;
  tokens: TokenCounts;
  costMicroUsd: number;
}

/** What the API, dashboard and metrics read of the owner's state. */
export interface OrchestratorSnapshot {
  running: RunningEntry[];
  retries: RetryEntry[];
  /** Ticks finished since start: 0 until the first one completes. */
  ticks: number;
  /** True once shutdown began: nothing new is dispatched. */
  draining: boolean;
  totals: Totals;
  maxConcurrentAgents: number;
  /** Issues not dispatched again until they change (see `held`), with what releases each. */
  held: HeldEntry[];
  /** SSH hosts: configured ones and removed ones still running sessions; [] when all runs here. */
  hosts: HostStatus[];
  /** Whether the database takes writes; while it does not, nothing new is dispatched. */
  store: StoreStatus;
  /** The latest rate limit per agent kind and limit id the sessions reported; [] before any. */
  rateLimits: AgentRateLimit[];
  /**
   * Issues known and not running or queued, with why: the last tick's candidates it did not
   * dispatch (in dispatch order), then the issues parked in the blocked state for a person.
   */
  waiting: WaitingEntry[];
}

/** An issue held after a failure a retry cannot fix. */
export interface HeldEntry {
  issueId: string;
  identifier: string;
  /** `kind: message` of the failure. */
  error: string;
  /** The failure's kind; null when it had none. */
  errorKind: ErrorKind | null;
  /** What ends the hold besides a restart. */
  releasedBy: HoldRelease;
}

export class Orchestrator {
  private readonly running = new Map<string, RunningEntry>();
  private readonly claimed = new Set<string>();
  private readonly retries = new Map<string, { entry: RetryEntry; timer: unknown }>();
  /**
   * Issues whose last run failed in a way a retry cannot fix (agent_not_found, …): not
   * dispatched again until the issue changes (state, title, description or update time),
   * or it would fail again on every poll. The fingerprint is taken at the next fetch.
   */
  private readonly held = new Map<
    string,
    {
      fingerprint: string | null;
      identifier: string;
      error: string;
      errorKind: ErrorKind | null;
      /** The workflow in force when the hold began: a different one releases workflow-owned holds. */
      workflow: Workflow;
    }
  >();
  /** Writes the database refused, replayed in order every STORE_RETRY_MS until it takes them. */
  private readonly backlog = new WriteBacklog();
  private storeRetryTimer: unknown = null;
  /** Transitions decided at a run's end that the tracker has not confirmed yet; their issues stay claimed. */
  private readonly pendingTransitions = new Map<string, PendingTransition>();
  /** Per open run: the usage its events already added to the budget and totals. */
  private readonly counted = new Map<number, { usage: TokenCounts; byModel: Record<string, TokenCounts> }>();
  /** Per open run whose counted usage is not yet written: the part new to the budget and totals. */
  private readonly unwrittenProgress = new Map<number, { issueId: string; delta: TokenCounts }>();
  /** Armed while a progress write was made less than PROGRESS_WRITE_INTERVAL_MS ago. */
  private progressTimer: unknown = null;
  /**
   * Every worker whose exit handling has not finished, running or not, and every retry being
   * fired: shutdown waits for all (the store closes after it), and `settled()` is false meanwhile.
   */
  private readonly inFlight = new Set<Promise<void>>();
  private tickTimer: unknown = null;
  private ticking: Promise<void> | null = null;
  private stopping = false;
  private refreshRequested = false;
  private ticks = 0;
  readonly totals: Totals = { dispatches: 0, tokens: { ...ZERO_TOKENS }, costMicroUsd: 0 };
  /** Called after every state change (tick, dispatch, exit, retry): observers re-read the state. */
  onChange: () => void = () => undefined;
  private readonly observe: Observer;
  /** Per-host slots of the SSH workers; empty when no host is configured. */
  private readonly hosts: HostPool;
  /** What the provider last said about its rate limits, per agent kind. */
  private readonly rateLimits = new RateLimitBook();
  /** The last planned tick's candidates it did not dispatch, with why. */
  private waiting: WaitingEntry[] = [];
  /** Issues moved to the blocked state for a person, until the tracker shows them elsewhere. */
  private readonly parked = new Map<string, WaitingEntry>();

  /** Watches the pull requests of the `git:` loop; null without a forge. */
  private readonly pulls: PullWatcher | null;
  private readonly tools: ToolHost | null;

  constructor(private readonly deps: OrchestratorDeps) {
    this.observe = deps.observe ?? (() => undefined);
    this.hosts = new HostPool({ nowMs: () => deps.clock.nowMs() });
    this.configureHosts();
    this.tools =
      deps.tools === undefined || deps.tools === null
        ? null
        : new ToolHost({
            endpoint: deps.tools,
            tracker: deps.tracker,
            store: deps.store,
            workflow: () => deps.workflow.current(),
            running: (issueId) => this.running.get(issueId),
            log: deps.log,
            observe: (o) => this.observe(o),
            nowMs: () => deps.clock.nowMs(),
          });
    const forge = deps.forge ?? null;
    this.pulls =
      forge === null
        ? null
        : new PullWatcher({
            scm: deps.store.scm,
            forge,
            tracker: deps.tracker,
            config: () => deps.workflow.current().config,
            log: deps.log,
            nowMs: () => deps.clock.nowMs(),
            observe: (o) => this.observe(o),
            busy: (issueId) =>
              this.running.has(issueId) || this.claimed.has(issueId) || this.retries.has(issueId),
            queueFix: (watch, decision) => this.queueFix(watch, decision),
            storeRefused: (error) => this.storeRefused(error),
          });
  }

  /**
   * Queues a reaction's fix run: the reaction's memory and the retry are one write, so a
   * restart neither loses the run nor queues the same feedback again.
   */
  private queueFix(watch: ScmRecord, decision: Extract<ReactionDecision, { type: 'dispatch' }>): void {
    const { store, clock } = this.deps;
    const memory = decision.memory[decision.kind];
    const entry: RetryEntry = {
      issueId: watch.issueId,
      identifier: watch.identifier,
      attempt: (store.runsForIssue(watch.issueId, 1)[0]?.attempt ?? 0) + 1,
      dueAtMs: clock.nowMs(),
      reason: 'reaction',
      lastError: null,
      previousHost: HOST_LOCAL,
      sessionId: store.sessionFor(watch.issueId)?.sessionId ?? null,
      reaction: {
        kind: decision.kind,
        fingerprint: decision.fingerprint,
        variables: { ...reactionVariables(decision) },
      },
    };
    store.transaction(() => {
      if (memory !== undefined) store.scm.saveMemory(watch.issueId, decision.kind, memory);
      store.saveRetry(entry);
    });
    this.scheduleRetry(entry, true, false);
  }

  /** Applies the current `worker.*` host settings (every tick: they hot-reload). */
  private configureHosts(): void {
    const { worker } = this.deps.workflow.current().config;
    const hosts = this.deps.remote === undefined ? [] : worker.sshHosts;
    this.hosts.configure(hosts, worker.maxConcurrentAgentsPerHost);
  }

  /** True when sessions run on SSH hosts rather than here. */
  private get remoteMode(): boolean {
    return this.deps.remote !== undefined && this.deps.workflow.current().config.worker.sshHosts.length > 0;
  }

  /** The workspaces where `host` ran or runs a session (`local` or an SSH host name). */
  private workspacesOn(host: string): Workspaces {
    const remote = this.deps.remote;
    if (host === HOST_LOCAL || remote === undefined) return this.deps.workspaces;
    return remote.workspaces(remote.host(host));
  }

  /** Where this mode keeps workspaces: every configured host when sessions run on hosts, else this machine. */
  private workspacePlaces(): string[] {
    return this.remoteMode ? [...this.deps.workflow.current().config.worker.sshHosts] : [HOST_LOCAL];
  }

  /** Removes an issue's workspace at each of `places` (`local` or host names); true when one was removed. */
  private async removeWorkspace(
    issue: { id: string; identifier: string },
    places: readonly string[],
  ): Promise<boolean> {
    let removed = false;
    for (const place of places) {
      const result = await this.workspacesOn(place).remove(issue.identifier, issue.id);
      if (result.removed) removed = true;
      else if (result.error !== null) {
        this.deps.log.warn(
          {
            issue_id: issue.id,
            issue_identifier: issue.identifier,
            host: place,
            error: result.error.message,
          },
          'workspace removal failed',
        );
      }
    }
    return removed;
  }

  /** After a failed run on a host: a host that no longer answers is marked down, so the retry goes elsewhere. */
  private async checkHost(host: string, failure: string | null): Promise<void> {
    const remote = this.deps.remote;
    if (remote === undefined || host === HOST_LOCAL) return;
    let reason = failure;
    if (reason === null) {
      const probe = await remote.host(host).probe();
      if (probe.ok) {
        this.hosts.markUp(host);
        return;
      }
      reason = probe.message;
    }
    this.hosts.markDown(host, reason);
    this.deps.log.warn({ host, error: reason }, 'SSH host marked down; its work goes to other hosts');
    this.onChange();
  }

  /**
   * A store write that must not be lost: made now, or, when the database refuses it (a full
   * disk, a read-only file), kept in order with the others and replayed until it is taken.
   */
  private write(what: string, write: () => void): void {
    const wasAvailable = this.backlog.available;
    if (this.backlog.submit(what, write, this.deps.clock.nowMs())) return;
    this.storeTrouble(wasAvailable);
  }

  /** A refusal of a write that cannot wait, or of a read the tick needed. */
  private storeRefused(error: unknown): void {
    if (!isStoreFault(error)) throw error;
    const wasAvailable = this.backlog.available;
    this.backlog.refused(error, this.deps.clock.nowMs());
    this.storeTrouble(wasAvailable);
  }

  private storeTrouble(wasAvailable: boolean): void {
    if (wasAvailable) {
      const status = this.backlog.status();
      this.deps.log.error(
        { code: 'store_unavailable', error: status.lastError },
        'the database refused a write: no new dispatches; results are kept in memory and written when it takes them again',
      );
      this.onChange();
    }
    this.armStoreRetry();
  }

  private armStoreRetry(): void {
    if (this.storeRetryTimer !== null || this.stopping) return;
    this.storeRetryTimer = this.deps.clock.setTimeout(() => {
      this.storeRetryTimer = null;
      const waiting = this.backlog.status().pendingWrites;
      if (!this.backlog.flush(this.deps.clock.nowMs())) {
        this.armStoreRetry();
        return;
      }
      this.deps.log.info(
        { writes: waiting },
        'the database takes writes again; everything kept was recorded',
      );
      this.onChange();
      this.requestRefresh();
    }, STORE_RETRY_MS);
  }

  /** Writes still unrecorded (0 when the store took everything); read at shutdown. */
  unrecordedWrites(): number {
    return this.backlog.status().pendingWrites;
  }

  /** Restores what a crash left (open runs, the retry queue) and, unless told not to, starts ticking. */
  start(options: { autoTick?: boolean } = {}): void {
    const { store, clock, log } = this.deps;
    const closed = store.closeInterruptedRuns(new Date(clock.nowMs()).toISOString());
    if (closed > 0) log.warn({ runs: closed }, 'closed runs left open by an earlier process as interrupted');
    for (const entry of store.loadRetries()) {
      this.claimed.add(entry.issueId);
      this.armRetry(entry);
    }
    for (const pending of store.loadPendingTransitions()) {
      this.claimed.add(pending.issueId);
      this.pendingTransitions.set(pending.issueId, pending);
    }
    this.autoTick = options.autoTick !== false;
    this.scheduleTick(0);
    void this.sweepTerminalWorkspaces();
  }

  /** Removes the workspaces of issues that reached a terminal state while the service was down. */
  private async sweepTerminalWorkspaces(): Promise<void> {
    const { config } = this.deps.workflow.current();
    if (config.tracker.terminalStates.length === 0) return;
    try {
      // Each place is listed once; a workspace is removed only where it exists, so a host
      // that is down costs one failed listing, not one failure per terminal issue.
      const keysByPlace = new Map<string, Set<string>>();
      for (const place of this.workspacePlaces()) {
        try {
          keysByPlace.set(place, new Set(await this.workspacesOn(place).existingKeys()));
        } catch (error) {
          this.deps.log.warn({ host: place, error: describe(error) }, 'listing workspaces failed');
        }
      }
      if ([...keysByPlace.values()].every((keys) => keys.size === 0)) return;
      const terminal = await this.deps.tracker.fetchIssuesByStates(config.tracker.terminalStates);
      for (const issue of terminal) {
        if (this.claimed.has(issue.id) || this.running.has(issue.id)) continue;
        const key = workspaceKey(issue.identifier);
        if (!key.ok) continue;
        const places = [...keysByPlace].filter(([, keys]) => keys.has(key.key)).map(([place]) => place);
        if (await this.removeWorkspace(issue, places)) {
          this.observe({ type: 'reconciled', issueId: issue.id, action: 'sweep_cleanup' });
          this.deps.log.info(
            { issue_id: issue.id, issue_identifier: issue.identifier },
            'removed the workspace of a terminal issue',
          );
        }
      }
    } catch (error) {
      this.deps.log.warn({ error: describe(error) }, 'start-up workspace sweep failed');
    }
  }

  /** True when nothing runs and no retry is queued: the service has nothing left to do until the tracker changes. */
  settled(): boolean {
    return this.inFlight.size === 0 && this.retries.size === 0 && this.ticking === null;
  }

  /** Runs one tick now (also used by `--once`); concurrent calls share one tick. */
  tick(): Promise<void> {
    if (this.ticking === null) {
      this.ticking = this.runTick()
        .catch((error: unknown) => {
          // A database that cannot even be read this tick: reported, and the next tick tries again.
          this.storeRefused(error);
          this.ticks += 1;
          this.onChange();
        })
        .finally(() => {
          this.ticking = null;
        });
    }
    return this.ticking;
  }

  /** Asks for a tick soon; several requests before it runs coalesce into one. */
  requestRefresh(): 'queued' | 'coalesced' | 'draining' {
    if (this.stopping) return 'draining';
    if (this.refreshRequested) return 'coalesced';
    this.refreshRequested = true;
    this.scheduleTick(0);
    return 'queued';
  }

  /** Resolves when no worker is running and no retry is due (for `--once`). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  /** Stops dispatching, cancels workers, waits (bounded) for their after_run and records. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.tickTimer !== null) this.deps.clock.clearTimeout(this.tickTimer);
    for (const { timer } of this.retries.values()) this.deps.clock.clearTimeout(timer);
    for (const entry of this.running.values()) {
      entry.cancelReason = 'shutdown';
      entry.controller.abort('shutdown');
    }
    await Promise.race([
      this.idle(),
      new Promise((resolve) => setTimeout(resolve, SHUTDOWN_DRAIN_MS).unref()),
    ]);
    await this.ticking;
    if (this.progressTimer !== null) this.deps.clock.clearTimeout(this.progressTimer);
    this.progressTimer = null;
    this.writeProgress(null);
    if (this.storeRetryTimer !== null) this.deps.clock.clearTimeout(this.storeRetryTimer);
    this.storeRetryTimer = null;
    // One last try: what the database still refuses is named in the log, not lost silently.
    if (!this.backlog.flush(this.deps.clock.nowMs())) {
      const status = this.backlog.status();
      this.deps.log.error(
        { code: 'store_unavailable', writes: status.pendingWrites, error: status.lastError },
        'stopping with writes the database never took; they are lost',
      );
    }
  }

  /** A snapshot of running sessions, the retry queue and counters, for the API and metrics. */
  snapshot(): OrchestratorSnapshot {
    return {
      running: [...this.running.values()],
      retries: [...this.retries.values()].map((r) => r.entry).sort((a, b) => a.dueAtMs - b.dueAtMs),
      ticks: this.ticks,
      draining: this.stopping,
      totals: { ...this.totals, tokens: { ...this.totals.tokens } },
      held: [...this.held].map(([issueId, h]) => ({
        issueId,
        identifier: h.identifier,
        error: h.error,
        errorKind: h.errorKind,
        releasedBy: holdRelease(h.errorKind),
      })),
      maxConcurrentAgents: this.deps.workflow.current().config.agent.maxConcurrentAgents,
      hosts: this.hosts.status(),
      rateLimits: this.rateLimits.list(),
      waiting: this.waitingNow(),
      store: this.backlog.status(),
    };
  }

  private autoTick = true;

  private scheduleTick(delayMs: number): void {
    if (this.stopping || !this.autoTick) return;
    if (this.tickTimer !== null) this.deps.clock.clearTimeout(this.tickTimer);
    this.tickTimer = this.deps.clock.setTimeout(() => {
      this.tickTimer = null;
      // A refresh asked for while a tick was already running gets a tick of its own.
      void this.tick().then(() =>
        this.scheduleTick(this.refreshRequested ? 0 : this.deps.workflow.current().config.pollingIntervalMs),
      );
    }, delayMs);
  }

  private async runTick(): Promise<void> {
    this.refreshRequested = false;
    const { log, clock } = this.deps;
    const tickStartMs = clock.nowMs();
    this.deps.workflow.reload();
    this.configureHosts();
    const { config } = this.deps.workflow.current();
    // Taken before the fetch: a worker that hands off and releases while the fetch reads
    // the old file must still count as busy, or its issue is dispatched a second time.
    const busyBeforeFetch = new Set([...this.claimed, ...this.running.keys()]);
    let candidates: Issue[] | null = null;
    let fetchError: unknown = null;
    try {
      candidates = await this.deps.tracker.fetchCandidateIssues();
    } catch (error) {
      fetchError = error;
    }
    await this.completePendingTransitions();
    // Reconciled before anything is dispatched; the candidates already carry the state of
    // every running issue that is still active, so only the others cost a tracker read.
    await this.reconcile(candidates ?? []);
    if (this.stopping) return;
    if (candidates === null) {
      log.warn({ error: describe(fetchError) }, 'fetching candidates failed; will try again next tick');
      this.ticks += 1;
      this.observe({ type: 'tick', result: 'error', durationMs: clock.nowMs() - tickStartMs, candidates: 0 });
      this.onChange();
      return;
    }
    this.refreshHeld(candidates);
    await this.refreshParked(candidates, busyBeforeFetch);
    if (!this.backlog.available) {
      this.ticks += 1;
      this.observe({ type: 'tick', result: 'error', durationMs: clock.nowMs() - tickStartMs, candidates: 0 });
      this.onChange();
      return;
    }
    // One query per tick, not one per candidate: a large tracker has thousands of candidates.
    const exhaustedBudgets = this.liftBudgetStops(this.deps.store.exhaustedIssues(), candidates);
    const exhausted = new Set(exhaustedBudgets.map((b) => b.issueId));
    const runningByState: Record<string, number> = {};
    for (const r of this.running.values()) {
      const s = r.issue.state.toLowerCase();
      runningByState[s] = (runningByState[s] ?? 0) + 1;
    }
    const rows = planDispatch(
      candidates,
      {
        activeStates: config.tracker.activeStates,
        terminalStates: config.tracker.terminalStates,
        busyIds: new Set([...busyBeforeFetch, ...this.claimed, ...this.running.keys()]),
        exhaustedIds: exhausted,
        heldIds: new Set(this.held.keys()),
        requiredLabels: config.tracker.requiredLabels,
      },
      {
        maxConcurrentAgents: config.agent.maxConcurrentAgents,
        maxConcurrentAgentsByState: config.agent.maxConcurrentAgentsByState,
        runningByState,
      },
    );
    // Rows the plan would dispatch that this tick did not, with why (no host, a spent budget).
    const skipped = new Map<string, Extract<PlanRow, { dispatch: false }>>();
    let noHost: { reason: string; detail: string } | null = null;
    for (const row of rows) {
      if (this.stopping) break;
      if (!row.dispatch) continue;
      // With SSH hosts, a session needs a host slot as well; none free ends this tick's dispatching.
      let host: string | null = null;
      if (this.remoteMode && noHost === null) {
        const picked = this.hosts.pick(null);
        if (picked.ok) host = picked.host;
        else noHost = { reason: picked.reason, detail: describeNoHost(this.hosts, picked.reason) };
      }
      if (noHost !== null) {
        skipped.set(row.issue.id, { issue: row.issue, dispatch: false, ...noHost });
        continue;
      }
      const refusal = this.budgetRefusal(row.issue);
      if (refusal !== null) {
        skipped.set(row.issue.id, {
          issue: row.issue,
          dispatch: false,
          reason: 'budget_exhausted',
          detail: refusal,
        });
        continue;
      }
      this.dispatchSafely(row.issue, 1, null, host);
    }
    this.waiting = waitingFromPlan(
      rows.map((row) => skipped.get(row.issue.id) ?? row),
      {
        seenAtMs: tickStartMs,
        exhausted: new Map(exhaustedBudgets.map((b) => [b.issueId, b])),
        limits: this.budgetLimits(),
        held: this.held,
      },
    );
    this.ticks += 1;
    if (this.pulls !== null && !this.stopping) {
      const polling = this.pulls.poll().then(() => this.onChange());
      this.inFlight.add(polling);
      void polling.finally(() => this.inFlight.delete(polling));
    }
    log.debug(
      { candidates: candidates.length, running: this.running.size, retrying: this.retries.size },
      'tick completed',
    );
    this.observe({
      type: 'tick',
      result: 'success',
      durationMs: clock.nowMs() - tickStartMs,
      candidates: candidates.length,
    });
    this.onChange();
  }

  /**
   * Forgets parked issues that are candidates again (a person answered and moved them back) or
   * that the tracker shows in another state or no longer has; one tracker read for the rest.
   * `busyBeforeFetch`: claimed when the candidates were read.
   */
  private async refreshParked(
    candidates: readonly Issue[],
    busyBeforeFetch: ReadonlySet<string>,
  ): Promise<void> {
    if (this.parked.size === 0) return;
    // Until its run's end is carried out (the move to the blocked state, the release) a parked
    // issue still reads as active: only a settled one is judged by what the tracker shows.
    const settled = (id: string) =>
      !busyBeforeFetch.has(id) && !this.claimed.has(id) && !this.pendingTransitions.has(id);
    for (const issue of candidates) if (settled(issue.id)) this.parked.delete(issue.id);
    const ids = [...this.parked.keys()].filter(settled);
    if (ids.length === 0) return;
    let states: Map<string, string>;
    try {
      const readings = await this.deps.tracker.fetchIssueStatesByIds(ids);
      states = new Map(readings.map((r) => [r.id, r.state]));
    } catch (error) {
      this.deps.log.debug(
        { error: describe(error) },
        'reading the states of parked issues failed; kept as they were',
      );
      return;
    }
    for (const id of ids) {
      const state = states.get(id);
      const entry = this.parked.get(id);
      if (entry !== undefined && state?.toLowerCase() !== entry.state.toLowerCase()) this.parked.delete(id);
    }
  }

  /** Remembers an issue moved to the blocked state with the question its agent asked. */
  private park(issue: Issue, state: string, finalMessage: string): void {
    const question = finalMessage.trim().slice(BLOCKED_PREFIX.length);
    this.parked.delete(issue.id);
    this.parked.set(issue.id, parkedEntry(issue, state, question, this.deps.clock.nowMs()));
    for (const id of this.parked.keys()) {
      if (this.parked.size <= MAX_PARKED) break;
      this.parked.delete(id);
    }
  }

  /** The issues known and not running: the last tick's and the parked ones, less any running or queued since. */
  private waitingNow(): WaitingEntry[] {
    const active = (id: string) => this.running.has(id) || this.retries.has(id);
    const planned = this.waiting.filter((w) => !active(w.issueId));
    const listed = new Set(planned.map((w) => w.issueId));
    const parked = [...this.parked.values()].filter((p) => !active(p.issueId) && !listed.has(p.issueId));
    return [...planned, ...parked];
  }

  /** Lets a held issue go once it changed (or left the candidates); fingerprints newly held ones. */
  private refreshHeld(candidates: readonly Issue[]): void {
    if (this.held.size === 0) return;
    const byId = new Map(candidates.map((c) => [c.id, c]));
    const workflow = this.deps.workflow.current();
    for (const [id, hold] of this.held) {
      const issue = byId.get(id);
      if (issue === undefined) {
        this.held.delete(id);
        continue;
      }
      if (hold.workflow !== workflow && holdRelease(hold.errorKind) === 'issue_or_workflow_change') {
        this.held.delete(id);
        this.deps.log.info(
          { issue_id: id, issue_identifier: issue.identifier, error_kind: hold.errorKind },
          'workflow changed since the issue was held; it may be dispatched again',
        );
        continue;
      }
      const fingerprint = issueFingerprint(issue);
      if (hold.fingerprint === null) hold.fingerprint = fingerprint;
      else if (hold.fingerprint !== fingerprint) {
        this.held.delete(id);
        this.deps.log.info(
          { issue_id: id, issue_identifier: issue.identifier },
          'held issue changed; it may be dispatched again',
        );
      }
    }
  }

  /** Stops sessions whose issue left the active states; cleans the workspace of terminal ones. */
  private async reconcile(candidates: readonly Issue[]): Promise<void> {
    if (this.running.size === 0) return;
    const { config } = this.deps.workflow.current();
    const ids = [...this.running.keys()];
    const byId = new Map<string, string>();
    // Labels are known only for running issues the candidate listing shows; the others keep running.
    const unlabelled = new Map<string, string[]>();
    for (const issue of candidates) {
      if (!this.running.has(issue.id)) continue;
      byId.set(issue.id, issue.state);
      const missing = missingLabels(issue.labels, config.tracker.requiredLabels);
      if (missing.length > 0) unlabelled.set(issue.id, missing);
    }
    const unknown = ids.filter((id) => !byId.has(id));
    try {
      if (unknown.length > 0) {
        for (const s of await this.deps.tracker.fetchIssueStatesByIds(unknown)) byId.set(s.id, s.state);
      }
    } catch (error) {
      this.deps.log.warn(
        { error: describe(error) },
        'reconciliation refresh failed; keeping running sessions',
      );
      return;
    }
    const classify = stateClassifier(config.tracker);
    for (const id of ids) {
      const entry = this.running.get(id);
      if (entry === undefined || entry.cancelReason !== null) continue;
      const state = byId.get(id);
      let reason: RunningEntry['cancelReason'] = null;
      if (state === undefined) reason = 'missing';
      else if (classify(state) === 'terminal') reason = 'terminal';
      else if (classify(state) === 'inactive') reason = 'inactive';
      else if (unlabelled.has(id)) reason = 'unlabelled';
      if (state !== undefined) entry.issue = { ...entry.issue, state };
      if (reason !== null) {
        entry.cancelReason = reason;
        this.observe({ type: 'reconciled', issueId: id, action: RECONCILE_ACTIONS[reason] });
        const missing = unlabelled.get(id);
        this.deps.log.info(
          {
            issue_id: id,
            issue_identifier: entry.issue.identifier,
            reason,
            ...(reason === 'unlabelled' && missing !== undefined
              ? { detail: missingLabelsText(missing) }
              : {}),
          },
          'stopping session: issue changed',
        );
        entry.controller.abort(`reconcile:${reason}`);
      }
    }
  }

  /** Checks the issue's budget before claiming; an exhausted issue is commented on once. */
  private admitBudget(issue: Issue): boolean {
    return this.budgetRefusal(issue) === null;
  }

  /** Null when the issue's budget admits another session; else the spent budget in words (the issue is marked exhausted). */
  private budgetRefusal(issue: Issue): string | null {
    const budget = this.deps.store.issueBudget(issue.id);
    const spend = {
      sessions: budget?.sessions ?? 0,
      tokens: budget?.tokens ?? 0,
      costMicroUsd: budget?.costMicroUsd ?? 0,
    };
    const limits = this.budgetLimits();
    const spent = budgetVerdict(spend, limits, true);
    const verdict = spent.exhausted ? spent : this.unchangedVerdictFor(unchangedRunOf(budget), issue.state);
    if (!verdict.exhausted) return null;
    void this.exhaust(issue.id, issue.identifier, verdict.limit, verdict.detail);
    return budgetText(spend, limits) ?? verdict.detail;
  }

  /** The no-progress cap's verdict on an issue now in `state` after `run` (null: unknown, no stop). */
  private unchangedVerdictFor(run: UnchangedRun | null, state: string): UnchangedVerdict {
    if (run === null) return { exhausted: false };
    return unchangedVerdict(run, this.deps.workflow.current().config.agent.maxUnchangedSessions, state);
  }

  /**
   * A budget stop lasts while a limit is broken. One whose limit was raised since, or a
   * no-progress stop of an issue seen in another state, is lifted, and the issue may run
   * again; an issue gone from the candidates left the active states, which ends its run of
   * unchanged sessions. Returns the stops that remain.
   */
  private liftBudgetStops(
    exhausted: ReturnType<OrchestratorStore['exhaustedIssues']>,
    candidates: readonly Issue[],
  ): ReturnType<OrchestratorStore['exhaustedIssues']> {
    const { store, log } = this.deps;
    const byId = new Map(candidates.map((c) => [c.id, c]));
    const limits = this.budgetLimits();
    return exhausted.filter((budget) => {
      const issue = byId.get(budget.issueId);
      if (issue === undefined) {
        if (budget.unchangedSessions > 0) {
          this.write('unchanged sessions', () =>
            store.setUnchangedRun(budget.issueId, { sessions: 0, state: null }),
          );
        }
        return true;
      }
      // A run with nothing to hand off stays parked until a person changes the issue.
      if (budget.exhaustedReason?.startsWith(`${REQUIRE_CHANGES_LIMIT}:`)) {
        if (budget.parkedFingerprint === null || budget.parkedFingerprint === parkFingerprint(issue))
          return true;
      } else if (budgetVerdict(budget, limits, true).exhausted) return true;
      if (this.unchangedVerdictFor(unchangedRunOf(budget), issue.state).exhausted) return true;
      this.write('budget stop lifted', () => store.clearExhaustion(budget.issueId));
      log.info(
        { issue_id: issue.id, issue_identifier: issue.identifier, was: budget.exhaustedReason },
        'budget stop lifted: the issue may be dispatched again',
      );
      return false;
    });
  }

  /** The per-issue budget limits of the current workflow. */
  private budgetLimits(): BudgetLimits {
    const { agent } = this.deps.workflow.current().config;
    return {
      maxSessions: agent.maxSessions,
      maxTokens: agent.maxTokens,
      maxCostMicroUsd: Math.round(agent.maxCostUsd * 1e6),
    };
  }

  private async exhaust(
    issueId: string,
    identifier: string,
    limit: string,
    detail: string,
    /** What the issue said when parked (`require_changes`): a change to it lifts the stop. */
    parkedFingerprint: string | null = null,
  ): Promise<void> {
    const { store, clock, log, tracker } = this.deps;
    let firstReport: boolean;
    try {
      store.markExhausted(
        issueId,
        `${limit}: ${detail}`,
        new Date(clock.nowMs()).toISOString(),
        parkedFingerprint,
      );
      // True exactly once per exhaustion: the issue gets one comment, not one per tick.
      firstReport = store.markExhaustionReported(issueId);
    } catch (error) {
      // Checked again at the next admission, once the database takes writes.
      this.storeRefused(error);
      return;
    }
    if (!firstReport) return;
    log.warn({ issue_id: issueId, issue_identifier: identifier, limit, detail }, 'issue budget exhausted');
    this.observe({ type: 'budget_exhausted', issueId, limit });
    const body = budgetStopComment(limit, detail);
    await tracker
      .commentIssue(issueId, body)
      .then(() => this.observe({ type: 'comment', issueId, lifecycle: 'budget', result: 'success', body }))
      .catch((error: unknown) => {
        this.observe({ type: 'comment', issueId, lifecycle: 'budget', result: 'error', body });
        log.warn({ issue_id: issueId, error: describe(error) }, 'budget comment failed');
      });
  }

  /** Dispatches; a failure to even start (the store refused a write) releases the claim instead of crashing the tick. */
  private dispatchSafely(
    issue: Issue,
    attempt: number,
    resumeSessionId: string | null,
    host: string | null,
    reaction: ReactionRequest | null = null,
  ): void {
    try {
      this.dispatch(issue, attempt, resumeSessionId, host, reaction);
    } catch (error) {
      if (this.running.delete(issue.id) && host !== null) this.hosts.release(host);
      this.claimed.delete(issue.id);
      this.deps.log.error(
        { issue_id: issue.id, issue_identifier: issue.identifier, error: describe(error) },
        'dispatch failed',
      );
      if (isStoreFault(error)) this.storeRefused(error);
    }
  }

  private dispatch(
    issue: Issue,
    attempt: number,
    resumeSessionId: string | null,
    hostName: string | null,
    reaction: ReactionRequest | null,
  ): void {
    const { store, clock, log } = this.deps;
    const workflow = this.deps.workflow.current();
    const startedAtMs = clock.nowMs();
    const host = hostName ?? HOST_LOCAL;
    const remote = this.deps.remote;
    const onHost = hostName === null || remote === undefined ? null : { remote, host: remote.host(hostName) };
    this.claimed.add(issue.id);
    // The run, the session it spends and the started counter are one write: a kill between
    // them would leave the counter short of the runs.
    const runId = store.transaction(() => {
      const id = store.startRun({
        issueId: issue.id,
        identifier: issue.identifier,
        attempt,
        host,
        agentKind: workflow.config.agent.kind,
        workspace: '',
        startedAt: new Date(startedAtMs).toISOString(),
        reaction: reaction?.kind ?? null,
      });
      store.addIssueSpend(issue.id, { sessions: 1, tokens: 0, costMicroUsd: 0 });
      store.addTotals({
        tokens: ZERO_TOKENS,
        costMicroUsd: 0,
        secondsRunning: 0,
        runsStarted: 1,
        runsFinished: 0,
      });
      return id;
    });
    const controller = new AbortController();
    const budgetBefore = store.issueBudget(issue.id);
    const entry: RunningEntry = {
      issue,
      attempt,
      runId,
      host,
      startedAtMs,
      lastEventAtMs: startedAtMs,
      lastEvent: 'dispatched',
      turn: 0,
      sessionId: resumeSessionId,
      workspace: null,
      usage: { ...ZERO_TOKENS },
      usageByModel: {},
      provenance: null,
      costMicroUsd: null,
      controller,
      cancelReason: null,
      done: Promise.resolve(),
      toolToken: null,
      question: null,
      spendBefore: budgetBefore,
    };
    this.running.set(issue.id, entry);
    if (hostName !== null) this.hosts.take(hostName);
    this.totals.dispatches += 1;
    log.info({ issue_id: issue.id, issue_identifier: issue.identifier, attempt, host }, 'dispatching');
    this.observe({ type: 'dispatched', issue, attempt, host });
    const toolHost = this.tools;
    const agentKind = this.deps.agent.kind;
    entry.done = runWorker(
      {
        issue,
        attempt,
        resumeSessionId,
        workflow,
        reaction: reaction === null ? null : (reaction.variables as unknown as ReactionVariables),
      },
      {
        tracker: this.deps.tracker,
        adapter: this.deps.agent.adapter,
        kind: this.deps.agent.kind,
        workspaces: onHost === null ? this.deps.workspaces : onHost.remote.workspaces(onHost.host),
        host: onHost?.host ?? null,
        proofs: this.deps.proofs,
        agentEnv: onHost === null ? this.deps.agentEnv : onHost.remote.agentEnv,
        credentialValues: this.deps.credentialValues,
        log,
        nowMs: () => clock.nowMs(),
        observe: this.observe,
        onEvent: (event) => this.onEvent(entry, event),
        onWorkspace: (path) => {
          entry.workspace = path;
          this.write('run workspace', () => store.setRunWorkspace(runId, path));
        },
        onTurnStart: (turn) => {
          entry.turn = turn;
          this.onChange();
        },
        onTurn: (record) => {
          this.writeProgress(runId);
          this.write('turn', () =>
            store.recordTurn(runId, record.turn, record.startedAt, {
              ...record.result,
              endedAt: record.endedAt,
              errorKind: record.errorKind,
              error: record.error,
            }),
          );
          entry.turn = record.turn;
          entry.provenance = record.result.usageProvenance;
          entry.costMicroUsd = this.deps.pricing(record.result.usage, record.result.reportedAmounts);
          this.observe({ type: 'turn', issueId: issue.id, turn: record.turn });
          this.onChange();
        },
        budgetAfterTurn: (result) => this.budgetAfterTurn(budgetBefore, result),
        forge: this.deps.forge ?? null,
        // The tracker's token is the forge's: the push authenticates with it, through askpass.
        forgeToken: workflow.config.tracker.apiKey,
        // Opened by the worker once its workspace is ready: a host's forward needs its connection.
        openTools:
          toolHost === null ? null : () => toolHost.open(entry, agentKind, workflow, onHost?.host ?? null),
        question: () => entry.question,
      },
      controller.signal,
    ).then(
      (outcome) => this.onWorkerExit(entry, outcome, workflow),
      (error: unknown) =>
        this.onWorkerExit(
          entry,
          {
            exit: {
              type: 'failed',
              kind: undefined,
              message: `worker crashed: ${describe(error)}`,
              resetAtMs: null,
              sessionId: entry.sessionId,
              turns: entry.turn,
            },
            lastState: entry.issue.state,
            firstTurnState: null,
            workspace: entry.workspace,
            lastResult: null,
            unaccountedTurns: 0,
          },
          workflow,
        ),
    );
    const done = entry.done;
    this.inFlight.add(done);
    void done.finally(() => this.inFlight.delete(done));
    this.onChange();
  }

  /** Failed runs of this claim right before `entry`'s (its earlier attempts), for the error backoff. */
  private failuresBefore(entry: RunningEntry): number {
    if (entry.attempt <= 1) return 0;
    try {
      // The exponent stops growing long before 32 failures, so older runs do not matter.
      const earlier = this.deps.store
        .runsForIssue(entry.issue.id, Math.min(entry.attempt, 32))
        .filter((run) => run.id !== entry.runId)
        .slice(0, entry.attempt - 1);
      return failuresInARow(earlier);
    } catch (error) {
      if (!isStoreFault(error)) throw error;
      return 0;
    }
  }

  /**
   * The limit the issue's next session would break once this run's spend (`newTokens`, not yet
   * written, and `costMicroUsd`) is added, or null: a retry is only promised when it could start.
   */
  private budgetStop(issueId: string, newTokens: number, costMicroUsd: number) {
    const { config } = this.deps.workflow.current();
    let spent: ReturnType<OrchestratorStore['issueBudget']>;
    try {
      spent = this.deps.store.issueBudget(issueId);
    } catch (error) {
      // Unreadable now: the retry's admission checks the budget again.
      if (!isStoreFault(error)) throw error;
      return null;
    }
    const verdict = budgetVerdict(
      {
        sessions: spent?.sessions ?? 0,
        tokens: (spent?.tokens ?? 0) + newTokens,
        costMicroUsd: (spent?.costMicroUsd ?? 0) + costMicroUsd,
      },
      {
        maxSessions: config.agent.maxSessions,
        maxTokens: config.agent.maxTokens,
        maxCostMicroUsd: Math.round(config.agent.maxCostUsd * 1e6),
      },
      true,
    );
    return verdict.exhausted ? { limit: verdict.limit, detail: verdict.detail } : null;
  }

  /** The issue's recorded run of unchanged sessions; null when the store cannot be read now. */
  private unchangedRun(issueId: string): UnchangedRun | null {
    try {
      return unchangedRunOf(this.deps.store.issueBudget(issueId));
    } catch (error) {
      if (!isStoreFault(error)) throw error;
      return null;
    }
  }

  private budgetAfterTurn(before: ReturnType<OrchestratorStore['issueBudget']>, result: TurnResult) {
    const { config } = this.deps.workflow.current();
    const cost = this.deps.pricing(result.usage, result.reportedAmounts);
    return budgetVerdict(
      {
        sessions: 0,
        tokens: (before?.tokens ?? 0) + result.usage.totalTokens,
        costMicroUsd: cost === null ? null : (before?.costMicroUsd ?? 0) + cost,
      },
      {
        maxSessions: 0,
        maxTokens: config.agent.maxTokens,
        maxCostMicroUsd: Math.round(config.agent.maxCostUsd * 1e6),
      },
      false,
    );
  }

  private onEvent(entry: RunningEntry, event: AgentEvent): void {
    entry.lastEventAtMs = this.deps.clock.nowMs();
    entry.lastEvent = event.type;
    const fields = {
      issue_id: entry.issue.id,
      issue_identifier: entry.issue.identifier,
      attempt: entry.attempt,
      session_id: entry.sessionId,
      turn: Math.max(1, entry.turn),
      host: entry.host,
    };
    if (event.type === 'session_started') {
      if (entry.sessionId !== event.sessionId) {
        this.deps.log.info({ ...fields, session_id: event.sessionId }, 'agent session started');
      }
      entry.sessionId = event.sessionId;
      const { sessionId } = event;
      const kind = this.deps.workflow.current().config.agent.kind;
      this.write('session', () => this.deps.store.saveSession(entry.issue.id, sessionId, kind));
    }
    if (event.type === 'token_usage') {
      this.countProgress(entry, event.usage, event.usageByModel);
      this.observeTokens(entry, event.usage, event.usageByModel, event.model);
      entry.usage = event.usage;
      entry.usageByModel = event.usageByModel;
    }
    if (event.type === 'rate_limits') {
      this.rateLimits.record(
        this.deps.agent.kind.name,
        event.limitId,
        event.windows,
        this.deps.clock.nowMs(),
      );
    }
    if (event.type === 'notification' || event.type === 'warning' || event.type === 'malformed') {
      this.deps.log.debug({ ...fields, event: event.type, message: event.message }, 'agent event');
    }
    this.observe({ type: 'agent_event', issue: entry.issue, event });
  }

  /**
   * Adds what is new of a run's usage so far to the issue's budget and the totals at once,
   * so tokens spent by a turn that never ends (the service killed mid-turn) still count, and
   * has it written: at once after a quiet spell, else with the other runs' at the end of the
   * interval (see PROGRESS_WRITE_INTERVAL_MS), since a usage event per streamed line made a
   * commit per line. A write the database refuses waits in the backlog like every other.
   */
  private countProgress(entry: RunningEntry, usage: TokenCounts, byModel: Record<string, TokenCounts>): void {
    const counted = this.counted.get(entry.runId) ?? { usage: ZERO_TOKENS, byModel: {} };
    const next = { usage: maxCounts(usage, counted.usage), byModel: maxByModel(byModel, counted.byModel) };
    const delta = subtractCounts(next.usage, counted.usage);
    if (isZero(delta)) return;
    this.counted.set(entry.runId, next);
    this.totals.tokens = addCounts(this.totals.tokens, delta);
    const waiting = this.unwrittenProgress.get(entry.runId);
    this.unwrittenProgress.set(entry.runId, {
      issueId: entry.issue.id,
      delta: waiting === undefined ? delta : addCounts(waiting.delta, delta),
    });
    if (this.progressTimer === null) this.writeProgressNowAndWait();
  }

  /** Writes every run's unwritten progress now, then holds later progress for one interval. */
  private writeProgressNowAndWait(): void {
    this.writeProgress(null);
    this.progressTimer = this.deps.clock.setTimeout(() => {
      this.progressTimer = null;
      if (this.unwrittenProgress.size > 0) this.writeProgressNowAndWait();
    }, PROGRESS_WRITE_INTERVAL_MS);
  }

  /** Writes the unwritten progress of `runId` (null: of every run) in one write: the counted usage and the new part. */
  private writeProgress(runId: number | null): void {
    const one = runId === null ? undefined : this.unwrittenProgress.get(runId);
    const pending =
      runId === null ? [...this.unwrittenProgress] : one === undefined ? [] : [[runId, one] as const];
    if (pending.length === 0) return;
    const runs = pending.map(([id, progress]) => {
      this.unwrittenProgress.delete(id);
      const counted = this.counted.get(id) ?? { usage: ZERO_TOKENS, byModel: {} };
      return {
        id,
        issueId: progress.issueId,
        usage: counted.usage,
        usageByModel: counted.byModel,
        delta: progress.delta,
      };
    });
    const { store } = this.deps;
    this.write('run usage', () =>
      store.transaction(() => {
        for (const { id, issueId, ...progress } of runs) store.recordRunProgress(id, issueId, progress);
      }),
    );
  }

  /** Reports what a session used since its previous usage event, per model. */
  private observeTokens(
    entry: RunningEntry,
    usage: TokenCounts,
    byModel: Record<string, TokenCounts>,
    model: string | null,
  ): void {
    if (Object.keys(byModel).length === 0) {
      const delta = subtractCounts(usage, entry.usage);
      if (!isZero(delta)) this.observe({ type: 'tokens', model: model ?? 'unknown', delta });
      return;
    }
    for (const [name, delta] of Object.entries(subtractByModel(byModel, entry.usageByModel))) {
      this.observe({ type: 'tokens', model: name, delta });
    }
  }

  /** `workflow`: the one the run was dispatched with (a hold remembers it). */
  private async onWorkerExit(entry: RunningEntry, outcome: WorkerOutcome, workflow: Workflow): Promise<void> {
    const { store, clock, log } = this.deps;
    const { config } = this.deps.workflow.current();
    const issue = entry.issue;
    this.running.delete(issue.id);
    this.tools?.close(entry);
    if (entry.host !== HOST_LOCAL) {
      this.hosts.release(entry.host);
      const exit = outcome.exit;
      if (exit.type !== 'failed') this.hosts.markUp(entry.host);
      else void this.checkHost(entry.host, exit.kind === 'host_unreachable' ? exit.message : null);
    }
    // What the run's events already counted stays counted; the exit adds only the rest, and
    // the run keeps the larger of the two figures (a turn cut off mid-way has no result).
    // What the run's events counted is written before its end, which adds only the rest.
    this.writeProgress(entry.runId);
    const counted = this.counted.get(entry.runId) ?? { usage: ZERO_TOKENS, byModel: {} };
    this.counted.delete(entry.runId);
    const usage = maxCounts(outcome.lastResult?.usage ?? ZERO_TOKENS, counted.usage);
    const usageByModel = maxByModel(outcome.lastResult?.usageByModel ?? {}, counted.byModel);
    const newUsage = subtractCounts(usage, counted.usage);
    const cost = outcome.lastResult
      ? this.deps.pricing(usage, outcome.lastResult.reportedAmounts)
      : isZero(usage)
        ? 0
        : this.deps.pricing(usage, []);
    const endedMs = clock.nowMs();
    let exit: WorkerExit = outcome.exit;
    if (exit.type === 'cancelled' && entry.cancelReason === null) {
      exit = { ...exit, reason: 'cancelled' };
    }
    if (exit.type === 'failed' && exit.kind === 'usage_limit' && exit.resetAtMs === null) {
      // The refusal named no reset; the used-up window the account reported may.
      exit = { ...exit, resetAtMs: this.rateLimits.exhaustedResetAtMs(this.deps.agent.kind.name, endedMs) };
    }
    const issueActive =
      outcome.lastState !== '' && stateClassifier(config.tracker)(outcome.lastState) === 'active';
    // The no-progress count after this session; null when the store cannot be read now.
    const unchangedBefore = this.unchangedRun(issue.id);
    const unchangedAfter = (moved: boolean): UnchangedRun | null => {
      if (unchangedBefore === null) return null;
      const change = sessionChange({
        exit: exit.type,
        cancelReason: entry.cancelReason,
        startState: outcome.firstTurnState,
        endState: outcome.lastState,
        moved,
      });
      return nextUnchangedRun(unchangedBefore, change, outcome.lastState);
    };
    const noProgress = this.unchangedVerdictFor(unchangedAfter(false), outcome.lastState);
    const plan = planExit(exit, {
      attempt: entry.attempt,
      failuresBefore: this.failuresBefore(entry),
      budgetStop:
        this.budgetStop(issue.id, newUsage.totalTokens, cost ?? 0) ??
        (noProgress.exhausted ? { limit: noProgress.limit, detail: noProgress.detail } : null),
      issueActive,
      handoffState: config.tracker.handoffState,
      blockedState: config.tracker.blockedState,
      comments: config.tracker.comments,
      maxRetryBackoffMs: config.agent.maxRetryBackoffMs,
      nowMs: endedMs,
    });
    // The run's end and its retry (or release) commit together, before any tracker call:
    // a crash in between can then lose neither the run's outcome nor its retry.
    const retry = plan.actions.find((a): a is Extract<ExitAction, { type: 'retry' }> => a.type === 'retry');
    const transition = plan.actions.find(
      (a): a is Extract<ExitAction, { type: 'transition' }> => a.type === 'transition',
    );
    const unchanged = unchangedAfter(transition !== undefined);
    const retryEntry: RetryEntry | null =
      retry === undefined || entry.cancelReason === 'shutdown'
        ? null
        : {
            issueId: issue.id,
            identifier: issue.identifier,
            attempt: retry.attempt,
            dueAtMs: endedMs + retry.delayMs,
            reason: retry.reason,
            lastError: retry.error,
            previousHost: entry.host,
            sessionId: retry.sessionId,
          };
    this.write('run end', () =>
      store.transaction(() => {
        store.finishRun(entry.runId, {
          exitKind: plan.kind,
          errorKind: exit.type === 'failed' ? (exit.kind ?? null) : null,
          error:
            exit.type === 'failed' ? exit.message : exit.type === 'budget_exhausted' ? exit.detail : null,
          turns: exit.turns,
          sessionId: exit.sessionId,
          usage,
          usageByModel,
          costMicroUsd: cost,
          provenance: outcome.lastResult?.usageProvenance ?? 'unmeasured',
          unaccountedTurns: outcome.unaccountedTurns,
          endedAt: new Date(endedMs).toISOString(),
        });
        if (outcome.review) store.setRunReview(entry.runId, reviewRecord(outcome.review));
        if (outcome.published) store.scm.save(scmRecord(issue, outcome.published, watchesPulls(config)));
        store.addIssueSpend(issue.id, { sessions: 0, tokens: newUsage.totalTokens, costMicroUsd: cost ?? 0 });
        store.addTotals({
          tokens: newUsage,
          costMicroUsd: cost ?? 0,
          secondsRunning: Math.max(0, Math.round((endedMs - entry.startedAtMs) / 1000)),
          runsStarted: 0,
          runsFinished: 1,
        });
        if (retryEntry !== null) store.saveRetry(retryEntry);
        else if (entry.cancelReason !== 'shutdown') store.deleteRetry(issue.id);
        if (
          unchanged !== null &&
          (unchanged.sessions !== unchangedBefore?.sessions || unchanged.state !== unchangedBefore.state)
        ) {
          store.setUnchangedRun(issue.id, unchanged);
        }
        // The handoff (or blocked move) is decided here and written before the tracker is
        // asked: a crash before the tracker write is then completed at the next start instead
        // of finished work being dispatched again.
        if (transition !== undefined) {
          store.savePendingTransition({
            issueId: issue.id,
            identifier: issue.identifier,
            state: transition.state,
            purpose: transition.purpose,
          });
        }
      }),
    );
    this.totals.tokens = addCounts(this.totals.tokens, newUsage);
    this.totals.costMicroUsd += cost ?? 0;
    // The slot is free now (the claim still guards the issue until its release): refill it
    // without waiting for the handoff writes below or the polling interval.
    if (entry.cancelReason !== 'shutdown') this.requestRefresh();
    log.info(
      {
        issue_id: issue.id,
        issue_identifier: issue.identifier,
        attempt: entry.attempt,
        session_id: exit.sessionId,
        host: entry.host,
        exit: plan.kind,
        turns: exit.turns,
        tokens: usage.totalTokens,
        cost: cost === null ? null : formatDollars(cost),
      },
      'worker exited',
    );
    if (outcome.review) {
      this.observe({
        type: 'self_review',
        status: outcome.review.status,
        iterations: outcome.review.iterations.length,
      });
    }
    if (outcome.published?.pushed) {
      const pull = outcome.published.pullRequest;
      this.observe({
        type: 'published',
        pullRequest: pull === null ? 'none' : pull.opened ? 'opened' : 'updated',
      });
      this.pulls?.pushed(issue.id);
    }
    this.observe({
      type: 'worker_exited',
      issue,
      exitKind: plan.kind,
      durationMs: endedMs - entry.startedAtMs,
      host: entry.host,
      costMicroUsd: cost,
    });
    if (entry.cancelReason === 'terminal' && outcome.workspace !== null) {
      await this.removeWorkspace(issue, [entry.host]);
    }
    if (entry.cancelReason === 'shutdown') {
      // Shutdown keeps the claim on disk: the next start re-dispatches by polling.
      this.claimed.delete(issue.id);
      this.onChange();
      return;
    }
    const budgetStopped = plan.actions.some((a) => a.type === 'mark_exhausted');
    if (plan.kind === 'failed' && retryEntry === null && !budgetStopped) {
      this.held.set(issue.id, {
        fingerprint: null,
        identifier: issue.identifier,
        error: exit.type === 'failed' ? `${exit.kind ?? 'error'}: ${exit.message}` : plan.kind,
        errorKind: exit.type === 'failed' ? (exit.kind ?? null) : null,
        workflow,
      });
      log.warn(
        { issue_id: issue.id, issue_identifier: issue.identifier },
        holdRelease(exit.type === 'failed' ? exit.kind : null) === 'issue_or_workflow_change'
          ? 'issue held: its run failed in a way a retry cannot fix; change the issue or WORKFLOW.md to dispatch it again'
          : 'issue held: its run failed in a way a retry cannot fix; change the issue to dispatch it again',
      );
    }
    if (transition?.purpose === 'blocked' && exit.type === 'completed') {
      this.park(issue, transition.state, exit.finalMessage);
    }
    for (const action of plan.actions) await this.apply(issue, action, retryEntry, outcome.lastState);
    this.onChange();
  }

  private async apply(
    issue: Issue,
    action: ExitAction,
    retryEntry: RetryEntry | null,
    lastState: string,
  ): Promise<void> {
    const { tracker, log } = this.deps;
    const fields = { issue_id: issue.id, issue_identifier: issue.identifier };
    switch (action.type) {
      case 'transition':
        await this.transition({
          issueId: issue.id,
          identifier: issue.identifier,
          state: action.state,
          purpose: action.purpose,
        });
        return;
      case 'comment':
        await tracker
          .commentIssue(issue.id, action.body)
          .then(() => this.observe({ ...commented(issue.id, action), result: 'success' }))
          .catch((error: unknown) => {
            this.observe({ ...commented(issue.id, action), result: 'error' });
            log.warn({ ...fields, error: describe(error) }, 'comment failed');
          });
        return;
      case 'retry':
        // Saved with the run's end; only the timer is armed here.
        if (retryEntry !== null) {
          this.claimed.add(issue.id);
          this.armRetry(retryEntry);
          this.observe({
            type: 'retry_scheduled',
            issueId: issue.id,
            trigger: retryEntry.reason,
            dueAtMs: retryEntry.dueAtMs,
          });
          log.info(
            { ...fields, attempt: retryEntry.attempt, reason: retryEntry.reason, due_in_ms: action.delayMs },
            'retry scheduled',
          );
        }
        return;
      case 'release':
        // An unconfirmed handoff keeps the claim: the issue is still active in the tracker.
        if (!this.pendingTransitions.has(issue.id)) this.release(issue.id);
        return;
      case 'mark_exhausted':
        await this.exhaust(
          issue.id,
          issue.identifier,
          action.limit,
          action.detail,
          action.limit === REQUIRE_CHANGES_LIMIT ? parkFingerprint({ ...issue, state: lastState }) : null,
        );
        return;
    }
  }

  /**
   * Asks the tracker for a decided transition. Confirmed: the pending record goes. Failed:
   * it stays pending (and the issue claimed) and is tried again at the next tick.
   */
  private async transition(pending: PendingTransition): Promise<boolean> {
    const { tracker, log, store } = this.deps;
    const fields = { issue_id: pending.issueId, issue_identifier: pending.identifier, state: pending.state };
    try {
      await tracker.transitionIssue(pending.issueId, pending.state);
    } catch (error) {
      this.pendingTransitions.set(pending.issueId, pending);
      this.observe({ type: 'transition', purpose: pending.purpose, result: 'error' });
      log.warn(
        { ...fields, error: describe(error) },
        'transition failed; it is tried again at the next tick',
      );
      return false;
    }
    this.pendingTransitions.delete(pending.issueId);
    this.observe({ type: 'transition', purpose: pending.purpose, result: 'success' });
    log.info(fields, 'issue transitioned');
    // Were it lost, the record is checked against the tracker at the next start and dropped.
    this.write('pending transition', () => store.deletePendingTransition(pending.issueId));
    return true;
  }

  /**
   * Completes transitions decided before a crash or refused by the tracker. An issue that
   * is no longer active was moved (by this transition before the crash, or by a person)
   * and is left where it is; an active one is moved now. Either way the claim is released.
   */
  private async completePendingTransitions(): Promise<void> {
    const waiting = [...this.pendingTransitions.values()].filter((p) => !this.running.has(p.issueId));
    if (waiting.length === 0) return;
    const { config } = this.deps.workflow.current();
    const classify = stateClassifier(config.tracker);
    let states: Map<string, string>;
    try {
      const readings = await this.deps.tracker.fetchIssueStatesByIds(waiting.map((p) => p.issueId));
      states = new Map(readings.map((r) => [r.id, r.state]));
    } catch (error) {
      this.deps.log.warn({ error: describe(error) }, 'checking pending transitions failed; will try again');
      return;
    }
    for (const pending of waiting) {
      const state = states.get(pending.issueId);
      const moved = state === undefined || classify(state) !== 'active';
      if (moved) {
        this.pendingTransitions.delete(pending.issueId);
        this.write('pending transition', () => this.deps.store.deletePendingTransition(pending.issueId));
      } else if (!(await this.transition(pending))) continue;
      this.release(pending.issueId);
    }
  }

  private release(issueId: string): void {
    this.write('retry', () => this.deps.store.deleteRetry(issueId));
    const queued = this.retries.get(issueId);
    if (queued) this.deps.clock.clearTimeout(queued.timer);
    this.retries.delete(issueId);
    this.claimed.delete(issueId);
    this.observe({ type: 'released', issueId });
  }

  /**
   * Persists the retry first, then arms its timer; a later retry replaces an earlier one.
   * A wait for a free slot is not a new retry and is not reported as one.
   */
  private scheduleRetry(entry: RetryEntry, report = true, save = true): void {
    if (save) this.write('retry', () => this.deps.store.saveRetry(entry));
    this.claimed.add(entry.issueId);
    this.deps.log.info(
      {
        issue_id: entry.issueId,
        issue_identifier: entry.identifier,
        attempt: entry.attempt,
        reason: entry.reason,
        due_in_ms: entry.dueAtMs - this.deps.clock.nowMs(),
      },
      'retry scheduled',
    );
    this.armRetry(entry);
    if (!report) return;
    this.observe({
      type: 'retry_scheduled',
      issueId: entry.issueId,
      trigger: entry.reason,
      dueAtMs: entry.dueAtMs,
    });
  }

  private armRetry(entry: RetryEntry): void {
    const previous = this.retries.get(entry.issueId);
    if (previous) this.deps.clock.clearTimeout(previous.timer);
    if (this.stopping) {
      // Saved already: the next start restores it. A timer now would outlive the store.
      this.retries.delete(entry.issueId);
      return;
    }
    const delay = Math.max(0, entry.dueAtMs - this.deps.clock.nowMs());
    const timer = this.deps.clock.setTimeout(() => {
      const firing = this.fireRetry(entry.issueId);
      this.inFlight.add(firing);
      void firing.finally(() => this.inFlight.delete(firing));
    }, delay);
    this.retries.set(entry.issueId, { entry, timer });
  }

  /** A due retry: re-fetch the issue by id and dispatch it if it is still wanted and a slot is free. */
  private async fireRetry(issueId: string): Promise<void> {
    const queued = this.retries.get(issueId);
    if (queued === undefined || this.stopping) return;
    // While the database refuses writes nothing starts: the retry waits in memory, as saved.
    if (!this.backlog.available) {
      this.armRetry({ ...queued.entry, dueAtMs: this.deps.clock.nowMs() + STORE_RETRY_MS });
      return;
    }
    try {
      await this.fireDueRetry(issueId, queued.entry);
    } catch (error) {
      this.storeRefused(error);
      if (!this.retries.has(issueId) && !this.running.has(issueId)) {
        this.armRetry({ ...queued.entry, dueAtMs: this.deps.clock.nowMs() + STORE_RETRY_MS });
      }
      this.onChange();
    }
  }

  private async fireDueRetry(issueId: string, entry: RetryEntry): Promise<void> {
    this.retries.delete(issueId);
    const { config } = this.deps.workflow.current();
    // The attempt has not run, so it keeps its number.
    const reschedule = (error: string, reason: RetryReason = 'timer') =>
      this.scheduleRetry({
        ...entry,
        dueAtMs: this.deps.clock.nowMs() + failureDelayMs(1, config.agent.maxRetryBackoffMs),
        reason,
        lastError: error,
      });
    if (this.running.has(issueId)) {
      this.armRetry({ ...entry, dueAtMs: this.deps.clock.nowMs() + 1_000 });
      return;
    }
    let issue: Issue;
    try {
      issue = await this.deps.tracker.fetchIssueById(issueId);
      // Stopping meanwhile: the retry stays saved for the next start.
      if (this.stopping) return;
    } catch (error) {
      if (error instanceof TrackerError && error.kind === 'tracker_not_found') {
        this.release(issueId);
        this.onChange();
        return;
      }
      reschedule(`retry refresh failed: ${describe(error)}`);
      this.onChange();
      return;
    }
    let stateClass = stateClassifier(config.tracker)(issue.state);
    const blockedState = config.tracker.blockedState?.toLowerCase();
    if (
      entry.reason === 'reaction' &&
      stateClass !== 'active' &&
      stateClass !== 'terminal' &&
      issue.state.toLowerCase() !== blockedState
    ) {
      // The issue waits in review: the fix run brings it back to work (and hands it off again).
      const back = config.tracker.inProgressState ?? config.tracker.activeStates[0];
      if (back !== undefined) {
        try {
          await this.deps.tracker.transitionIssue(issueId, back);
          this.observe({ type: 'transition', purpose: 'in_progress', result: 'success' });
          issue = { ...issue, state: back };
          stateClass = 'active';
        } catch (error) {
          this.observe({ type: 'transition', purpose: 'in_progress', result: 'error' });
          reschedule(
            `moving the issue back to ${back} for its fix run failed: ${describe(error)}`,
            'reaction',
          );
          this.onChange();
          return;
        }
      }
    }
    const state = issue.state.toLowerCase();
    const terminal = stateClass === 'terminal';
    if (stateClass !== 'active') {
      this.release(issueId);
      // The workspace is where the previous attempt ran (older entries name no host).
      if (terminal) {
        await this.removeWorkspace(issue, entry.previousHost ? [entry.previousHost] : this.workspacePlaces());
      }
      this.onChange();
      return;
    }
    const runningCount = this.running.size;
    const stateCap = config.agent.maxConcurrentAgentsByState[state];
    const inState = [...this.running.values()].filter((r) => r.issue.state.toLowerCase() === state).length;
    if (runningCount >= config.agent.maxConcurrentAgents || (stateCap !== undefined && inState >= stateCap)) {
      // Waiting for a slot is not a failure: same attempt, same reason, same session.
      this.scheduleRetry(
        {
          ...entry,
          dueAtMs: this.deps.clock.nowMs() + CONTINUATION_DELAY_MS,
          lastError: 'no available orchestrator slots',
        },
        false,
      );
      this.onChange();
      return;
    }
    let host: string | null = null;
    if (this.remoteMode) {
      // A retry goes back to the host that has its workspace, unless that host is full or down.
      const picked = this.hosts.pick(entry.previousHost === HOST_LOCAL ? null : entry.previousHost);
      if (!picked.ok) {
        this.scheduleRetry(
          {
            ...entry,
            dueAtMs: this.deps.clock.nowMs() + CONTINUATION_DELAY_MS,
            lastError: `no available SSH hosts (${picked.reason})`,
          },
          false,
        );
        this.onChange();
        return;
      }
      host = picked.host;
    }
    if (!this.admitBudget(issue)) {
      this.release(issueId);
      this.onChange();
      return;
    }
    this.write('retry', () => this.deps.store.deleteRetry(issueId));
    // Failure retries are saved without a session, so only continuations resume one.
    this.dispatchSafely(issue, entry.attempt, entry.sessionId, host, entry.reaction ?? null);
  }
}

/** Whether the workflow reacts to pull requests (so a new one is watched). */
function watchesPulls(config: ServiceConfig): boolean {
  return Object.keys(reactionsConfig(config.reactions)).length > 0;
}

/** The branch record of a run's published work. */
function scmRecord(issue: Issue, work: PublishedWork, watch: boolean): ScmRecord {
  return {
    issueId: issue.id,
    identifier: issue.identifier,
    branch: work.branch,
    base: work.base,
    headSha: work.headSha,
    prNumber: work.pullRequest?.number ?? null,
    prUrl: work.pullRequest?.url ?? null,
    pushedAtMs: work.pushedAtMs,
    watching: watch && work.pullRequest !== null,
    endedReason: null,
  };
}

/** The observation of a lifecycle comment, less its result. */
function commented(issueId: string, action: Extract<ExitAction, { type: 'comment' }>) {
  return { type: 'comment', issueId, lifecycle: action.lifecycle, body: action.body } as const;
}

/** An issue's recorded run of unchanged sessions (none when it has no budget record). */
function unchangedRunOf(
  budget: { unchangedSessions: number; unchangedState: string | null } | null,
): UnchangedRun {
  return { sessions: budget?.unchangedSessions ?? 0, state: budget?.unchangedState ?? null };
}

/**
 * What a person changes to let a parked issue run again: its state, title or description (not
 * its update time, which the orchestrator's own comment moves). Hashed: descriptions are long.
 */
function parkFingerprint(issue: Pick<Issue, 'state' | 'title' | 'description'>): string {
  return createHash('sha256')
    .update(JSON.stringify([issue.state.toLowerCase(), issue.title, issue.description]))
    .digest('hex');
}

/** What must change about an issue before a held one is tried again. */
function issueFingerprint(issue: Issue): string {
  return JSON.stringify([issue.state, issue.title, issue.description, issue.updatedAt]);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
