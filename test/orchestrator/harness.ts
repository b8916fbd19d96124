/**
 * The real Orchestrator over a real SQLite store, with a scripted adapter, an in-memory
 * tracker and a clock the test moves: the owner's decisions (retries, budgets, holds,
 * handoffs, recovery) run end to end without processes, and hours of waiting take no time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, vi } from 'vitest';
import '../../src/agent/kinds.js';
import { agentKind } from '../../src/agent/registry.js';
import {
  type AgentAdapter,
  AgentError,
  type RateLimitWindow,
  type TokenCounts,
  type TurnOutcome,
  ZERO_TOKENS,
} from '../../src/domain/agent.js';
import type { AgentErrorKind } from '../../src/domain/errors.js';
import type { Issue } from '../../src/domain/issue.js';
import type { TrackerAdapter } from '../../src/domain/tracker.js';
import { Orchestrator } from '../../src/orchestrator/orchestrator.js';
import type { Clock, OrchestratorStore, RetryEntry, Workspaces } from '../../src/orchestrator/ports.js';
import { openStore, type Store } from '../../src/persistence/index.js';
import { SAMPLE_ISSUE } from '../../src/prompt/variables.js';
import { loadWorkflow } from '../../src/workflow/load.js';
import { notRun } from '../../src/workspace/place.js';

export const T0 = Date.parse('2026-03-01T12:00:00.000Z');

/** Usage of `input` input tokens and nothing else. */
export const inputTokens = (input: number): TokenCounts => ({
  inputTokens: input,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  totalTokens: input,
});

/** A `wrapStore` that calls `before(method)` ahead of every store call; it may throw to fail the call. */
export function interceptStore(before: (method: string) => void) {
  return (store: Store): OrchestratorStore =>
    new Proxy(store, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          before(String(key));
          return value.apply(target, args);
        };
      },
    });
}

/** A clock the test moves; timers fire when it passes them. */
export class TestClock implements Clock {
  now = T0;
  private next = 0;
  readonly timers = new Map<number, { fn: () => void; atMs: number }>();
  nowMs(): number {
    return this.now;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    this.next += 1;
    this.timers.set(this.next, { fn, atMs: this.now + ms });
    return this.next;
  }
  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }
  /** Moves to `atMs` and fires every timer due by then. */
  advanceTo(atMs: number): void {
    this.now = atMs;
    for (const [id, timer] of [...this.timers].sort(([, a], [, b]) => a.atMs - b.atMs)) {
      if (timer.atMs > atMs) continue;
      this.timers.delete(id);
      timer.fn();
    }
  }
}

/** What one run of the scripted adapter does: report rate limits and usage, then end with this error (or succeed). */
export interface Script {
  rateLimits?: { limitId: string; windows: RateLimitWindow[] };
  /** Run-cumulative usage reported as a `token_usage` event and in the result. */
  usage?: TokenCounts;
  /** Run-cumulative usage reported as one `token_usage` event each, before `usage`. */
  usageSteps?: TokenCounts[];
  /** When set, the turn waits for this promise before it ends (to act while it runs). */
  hold?: Promise<void>;
  /** The turn's final message ('' by default); `BLOCKED: …` asks a person. */
  finalMessage?: string;
  error: { kind: AgentErrorKind; resetAtMs?: number | null } | null;
}

export function scriptedAdapter(scripts: Script[]): AgentAdapter & { runs: number } {
  const adapter = {
    runs: 0,
    startSession: async () => ({ sessionId: '', kind: 'mock' }),
    stopSession: async () => undefined,
    runTurn: async (
      _session: unknown,
      params: Parameters<AgentAdapter['runTurn']>[1],
    ): Promise<TurnOutcome> => {
      const script = scripts[adapter.runs] ?? { error: null };
      adapter.runs += 1;
      const base = { at: new Date().toISOString(), agentPid: '' };
      if (script.rateLimits) params.onEvent({ ...base, type: 'rate_limits', ...script.rateLimits });
      const usage = script.usage ?? { ...ZERO_TOKENS };
      for (const step of script.usageSteps ?? []) {
        params.onEvent({ ...base, type: 'token_usage', usage: step, usageByModel: {}, model: null });
      }
      if (script.usage !== undefined) {
        params.onEvent({ ...base, type: 'token_usage', usage, usageByModel: {}, model: null });
      }
      if (script.hold !== undefined) await script.hold;
      const outcome: TurnOutcome = {
        result: {
          sessionId: '',
          exitReason: script.error === null ? 'turn_completed' : 'turn_failed',
          usage,
          usageByModel: {},
          usageMeasured: script.usage !== undefined,
          spendUnaccounted: false,
          spendCoverable: false,
          coversSession: false,
          usageProvenance: script.usage !== undefined ? 'reported' : 'unmeasured',
          reportedAmounts: [],
          finalMessage: script.finalMessage ?? '',
        },
      };
      if (script.error !== null) {
        outcome.error = new AgentError(script.error.kind, 'refused', {
          resetAtMs: script.error.resetAtMs ?? null,
        });
      }
      return outcome;
    },
  };
  return adapter;
}

export const HARNESS_WORKFLOW = `---
tracker:
  kind: file
  active_states: [Todo]
  terminal_states: [Done]
  comments:
    on_failure: true
file:
  path: issues.json
agent:
  kind: mock
  max_turns: 1
---
Work on {{ issue.identifier }}.
`;

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

export interface HarnessOptions {
  scripts: Script[];
  /** WORKFLOW.md text; HARNESS_WORKFLOW by default. */
  workflow?: string;
  /** The database directory (to start a second owner on the same state); a fresh one by default. */
  dir?: string;
  /** Replaces tracker methods (a failing transition, …). */
  tracker?: Partial<TrackerAdapter>;
  /** Wraps the store the owner uses (fault injection); the real store stays reachable as `store`. */
  wrapStore?: (store: Store) => OrchestratorStore;
  /** Replaces the workspace operations (a workspace that cannot be created, …). */
  workspaces?: Partial<Workspaces>;
}

/** One owner on a real store; `firstRun`, `fireRetry` and `retry` drive and read it. */
export function harness(options: HarnessOptions) {
  const dir = options.dir ?? mkdtempSync(path.join(tmpdir(), 'orch-harness-'));
  const store: Store = openStore(path.join(dir, 'state.db'));
  cleanups.push(() => {
    store.close();
    if (options.dir === undefined) rmSync(dir, { recursive: true, force: true });
  });
  const loaded = loadWorkflow(path.join(dir, 'WORKFLOW.md'), {
    env: {},
    text: options.workflow ?? HARNESS_WORKFLOW,
  });
  if (!loaded.ok) throw new Error(`test workflow does not load: ${JSON.stringify(loaded.diagnostics)}`);
  const issue: Issue = { ...SAMPLE_ISSUE, id: 'issue-1', identifier: 'ENG-1', state: 'Todo', blockedBy: [] };
  const comments: string[] = [];
  const transitions: string[] = [];
  const tracker = {
    fetchCandidateIssues: async () => (issue.state === 'Todo' ? [{ ...issue }] : []),
    fetchIssueById: async () => ({ ...issue, comments: [] }),
    fetchIssuesByStates: async () => [],
    fetchIssueStatesByIds: async () => [{ id: issue.id, identifier: issue.identifier, state: issue.state }],
    fetchIssueStatesByIdentifiers: async () => [],
    fetchIssueComments: async () => [],
    transitionIssue: async (_id: string, state: string) => {
      transitions.push(state);
      issue.state = state;
    },
    commentIssue: async (_id: string, body: string) => {
      comments.push(body);
    },
    addLabel: async () => undefined,
    ...options.tracker,
  } satisfies TrackerAdapter;
  const kind = agentKind('mock');
  if (kind === undefined) throw new Error('mock is not registered');
  const clock = new TestClock();
  const adapter = scriptedAdapter(options.scripts);
  const noop = () => undefined;
  const orchestrator = new Orchestrator({
    workflow: { current: () => loaded.workflow, reload: noop },
    tracker,
    agent: { adapter, kind },
    workspaces: { ...fixedWorkspaces(dir), ...options.workspaces },
    store: options.wrapStore === undefined ? store : options.wrapStore(store),
    // Every credential proof is fresh: these tests are about what follows it.
    proofs: { get: () => clock.nowMs(), put: noop },
    agentEnv: {},
    credentialValues: [],
    pricing: () => null,
    log: { debug: noop, info: noop, warn: noop, error: noop },
    clock,
  });
  orchestrator.start({ autoTick: false });
  cleanups.push(() => void orchestrator.stop());

  /** The one queued retry, as the owner holds it and as the store persisted it. */
  const retry = (): RetryEntry => {
    const [queued] = orchestrator.snapshot().retries;
    if (queued === undefined) throw new Error('no retry queued');
    const { attempt, dueAtMs, reason } = queued;
    expect(store.loadRetries()).toMatchObject([{ issueId: queued.issueId, attempt, dueAtMs, reason }]);
    return queued;
  };
  /** Fires the queued retry at its due time and waits until its run has been handled. */
  const fireRetry = async (): Promise<void> => {
    const runsBefore = adapter.runs;
    clock.advanceTo(retry().dueAtMs);
    await vi.waitFor(() => expect(adapter.runs).toBe(runsBefore + 1), { timeout: 10_000, interval: 5 });
    await orchestrator.idle();
  };
  /** The first run: one tick dispatches the issue; its exit is handled before this resolves. */
  const firstRun = async (): Promise<void> => {
    await orchestrator.tick();
    await orchestrator.idle();
  };
  return {
    orchestrator,
    store,
    dir,
    issue,
    clock,
    retry,
    fireRetry,
    firstRun,
    comments,
    transitions,
    adapter,
  };
}

/** Workspaces that are all `dir`, already there, with no hooks or commands to run. */
export function fixedWorkspaces(dir: string): Workspaces {
  return {
    prepare: async () => ({ ok: true, workspace: { path: dir, createdNow: false } }),
    afterRun: async () => null,
    runCommand: async () => notRun('[no commands in this test]'),
    remove: async () => ({ removed: false, error: null }),
    existingKeys: async () => [],
  };
}
