/**
 * Watches the pull requests the orchestrator opened: on each tick, every watched pull request
 * whose poll is due (and whose issue is not running or queued) is read from the forge, and the
 * pure decision (decide.ts) is carried out: a fix run queued through the owner, a person asked,
 * a merge, or the end of the watch. What a reaction acted on is written before the act, so a
 * restart never sends the same feedback twice; poll timing lives in memory (a restart polls at
 * once, which is harmless).
 */
import type { ForgeAdapter } from '../../domain/forge.js';
import type { TrackerAdapter } from '../../domain/tracker.js';
import type { ScmRecord, ScmTable } from '../../persistence/scm.js';
import { REACTION_KINDS, type ServiceConfig } from '../../workflow/config.js';
import type { Observer } from '../observations.js';
import type { Logger } from '../ports.js';
import { decideReaction } from './decide.js';
import { pollFailed, watchPollIntervalMs } from './poll.js';
import type {
  FixReactionKind,
  ForgeReading,
  PullWatch,
  ReactionDecision,
  ReactionsConfig,
  WatchMemory,
} from './types.js';

const FIX_KINDS: readonly FixReactionKind[] = ['ci_failure', 'review_comments', 'merge_conflict'];

/** The reactions a workflow configures, in the decision module's terms. */
export function reactionsConfig(reactions: ServiceConfig['reactions']): ReactionsConfig {
  const out: ReactionsConfig = {};
  for (const kind of REACTION_KINDS) {
    const r = reactions[kind];
    if (r === undefined) continue;
    out[kind] = {
      maxRetries: r.max_retries,
      maxContinuationTurns: r.max_continuation_turns,
      escalation: r.escalation,
      escalationLabel: r.escalation_label,
      maxLogLines: r.max_log_lines,
      pollIntervalMs: r.poll_interval_ms,
      debounceMs: r.debounce_ms,
      ttlMs: r.ttl_ms,
      mergeMethod: r.merge_method,
    };
  }
  return out;
}

export interface PullWatcherDeps {
  scm: Pick<ScmTable, 'watched' | 'save' | 'endWatch' | 'memory' | 'saveMemory'>;
  forge: ForgeAdapter;
  tracker: TrackerAdapter;
  config(): ServiceConfig;
  log: Logger;
  nowMs(): number;
  observe: Observer;
  /** Running, queued or claimed: its pull request is not polled meanwhile. */
  busy(issueId: string): boolean;
  /** Queues the fix run, saving the reaction's memory with the retry in one write. */
  queueFix(watch: ScmRecord, decision: Extract<ReactionDecision, { type: 'dispatch' }>): void;
  /** Persistence refused a write: the owner's store-trouble path. */
  storeRefused(error: unknown): void;
}

/** Polls due pull requests; one poll at a time. */
export class PullWatcher {
  readonly #timing = new Map<string, { pollErrors: number; nextPollAtMs: number }>();
  #polling: Promise<void> | null = null;

  constructor(private readonly deps: PullWatcherDeps) {}

  /** Starts a poll of the due pull requests unless one is running; resolves when it ends. */
  poll(): Promise<void> {
    if (this.#polling !== null) return this.#polling;
    const polling = this.#pollDue().finally(() => {
      this.#polling = null;
    });
    this.#polling = polling;
    return polling;
  }

  /** A new push of the issue's branch: poll it at the next tick. */
  pushed(issueId: string): void {
    this.#timing.delete(issueId);
  }

  async #pollDue(): Promise<void> {
    const config = reactionsConfig(this.deps.config().reactions);
    if (Object.keys(config).length === 0) return;
    let watched: ScmRecord[];
    try {
      watched = this.deps.scm.watched();
    } catch (error) {
      this.deps.storeRefused(error);
      return;
    }
    for (const record of watched) {
      if (record.prNumber === null || this.deps.busy(record.issueId)) continue;
      const timing = this.#timing.get(record.issueId) ?? { pollErrors: 0, nextPollAtMs: 0 };
      if (timing.nextPollAtMs > this.deps.nowMs()) continue;
      try {
        await this.#pollOne(record, record.prNumber, timing, config);
      } catch (error) {
        this.deps.storeRefused(error);
      }
    }
  }

  async #pollOne(
    record: ScmRecord,
    prNumber: number,
    timing: { pollErrors: number; nextPollAtMs: number },
    config: ReactionsConfig,
  ): Promise<void> {
    const { forge, log } = this.deps;
    const fields = { issue_id: record.issueId, issue_identifier: record.identifier, pull_request: prNumber };
    const stored = this.deps.scm.memory(record.issueId);
    const memory: WatchMemory = {};
    for (const kind of FIX_KINDS) if (stored[kind] !== undefined) memory[kind] = stored[kind];
    const watch: PullWatch = {
      issueId: record.issueId,
      identifier: record.identifier,
      branch: record.branch,
      base: record.base,
      headSha: record.headSha,
      prNumber,
      prUrl: record.prUrl ?? '',
      pushedAtMs: record.pushedAtMs,
      memory,
      ...timing,
    };
    let reading: ForgeReading;
    try {
      const pull = await forge.pullRequest(prNumber);
      const wantsCi = config.ci_failure !== undefined || config.auto_merge !== undefined;
      const wantsReviews = config.review_comments !== undefined || config.auto_merge !== undefined;
      const open = pull.state === 'open';
      reading = {
        pull,
        ci: open && wantsCi ? await forge.ciStatus(pull.headSha, config.ci_failure?.maxLogLines ?? 0) : null,
        reviews: open && wantsReviews ? await forge.reviews(prNumber) : null,
      };
    } catch (error) {
      const next = pollFailed(watch, config, this.deps.nowMs());
      this.#timing.set(record.issueId, next);
      log.warn(
        { ...fields, error: describe(error), retry_in_ms: next.nextPollAtMs - this.deps.nowMs() },
        'reading the pull request failed',
      );
      this.deps.observe({ type: 'reaction', kind: 'poll', action: 'error' });
      return;
    }
    const now = this.deps.nowMs();
    if (reading.pull.headSha !== record.headSha) {
      // Someone pushed: the new head is what the reactions judge from now on.
      this.deps.scm.save({ ...record, headSha: reading.pull.headSha, pushedAtMs: now });
    }
    const decision = decideReaction(watch, reading, config, now);
    const nextPoll = { pollErrors: 0, nextPollAtMs: now + watchPollIntervalMs(config) };
    switch (decision.type) {
      case 'wait':
        this.#saveMemory(record.issueId, memory, decision.memory);
        this.#timing.set(record.issueId, { pollErrors: 0, nextPollAtMs: decision.nextPollAtMs });
        return;
      case 'dispatch':
        this.deps.queueFix(record, decision);
        this.#timing.set(record.issueId, nextPoll);
        log.info(
          { ...fields, reaction: decision.kind, attempt: decision.attempt },
          'reaction queued a fix run',
        );
        this.deps.observe({ type: 'reaction', kind: decision.kind, action: 'dispatched' });
        return;
      case 'escalate':
        this.#saveMemory(record.issueId, memory, decision.memory);
        this.#timing.set(record.issueId, nextPoll);
        await this.#escalate(record, decision);
        return;
      case 'merge':
        await this.#merge(record, prNumber, decision, nextPoll);
        return;
      case 'stop':
        this.deps.scm.endWatch(record.issueId, decision.reason);
        this.#timing.delete(record.issueId);
        log.info({ ...fields, reason: decision.reason }, 'stopped watching the pull request');
        this.deps.observe({ type: 'reaction', kind: 'watch', action: decision.reason });
        return;
    }
  }

  #saveMemory(issueId: string, before: WatchMemory, after: WatchMemory): void {
    for (const kind of FIX_KINDS) {
      const next = after[kind];
      if (next === undefined || JSON.stringify(next) === JSON.stringify(before[kind])) continue;
      this.deps.scm.saveMemory(issueId, kind, next);
    }
  }

  async #escalate(
    record: ScmRecord,
    decision: Extract<ReactionDecision, { type: 'escalate' }>,
  ): Promise<void> {
    const { tracker, log } = this.deps;
    const fields = { issue_id: record.issueId, issue_identifier: record.identifier, reaction: decision.kind };
    try {
      if (decision.how === 'label') await tracker.addLabel(record.issueId, decision.label);
      else await tracker.commentIssue(record.issueId, decision.comment);
      log.warn({ ...fields, how: decision.how }, 'reaction escalated to a person');
      this.deps.observe({ type: 'reaction', kind: decision.kind, action: 'escalated' });
    } catch (error) {
      log.warn({ ...fields, error: describe(error) }, 'escalating the reaction failed');
      this.deps.observe({ type: 'reaction', kind: decision.kind, action: 'error' });
    }
  }

  async #merge(
    record: ScmRecord,
    prNumber: number,
    decision: Extract<ReactionDecision, { type: 'merge' }>,
    nextPoll: { pollErrors: number; nextPollAtMs: number },
  ): Promise<void> {
    const { forge, tracker, log } = this.deps;
    const fields = { issue_id: record.issueId, issue_identifier: record.identifier, pull_request: prNumber };
    try {
      await forge.merge(prNumber, decision.method, decision.sha);
    } catch (error) {
      this.#timing.set(record.issueId, nextPoll);
      log.warn({ ...fields, error: describe(error) }, 'auto-merge failed; tried again at the next poll');
      this.deps.observe({ type: 'reaction', kind: 'auto_merge', action: 'error' });
      return;
    }
    this.deps.scm.endWatch(record.issueId, 'merged');
    this.#timing.delete(record.issueId);
    log.info({ ...fields, method: decision.method, head_sha: decision.sha }, 'pull request merged');
    this.deps.observe({ type: 'reaction', kind: 'auto_merge', action: 'merged' });
    const { tracker: settings, reactions } = this.deps.config();
    const done = reactions.auto_merge?.done_state?.trim() || settings.terminalStates[0];
    if (done === undefined) return;
    try {
      await tracker.transitionIssue(record.issueId, done);
      log.info({ ...fields, state: done }, 'issue transitioned');
    } catch (error) {
      log.warn(
        { ...fields, state: done, error: describe(error) },
        'moving the merged issue to its done state failed',
      );
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
