/**
 * The fork-per-turn skeleton: one agent process per turn, started in its own
 * process group, its stdout read line by line while it runs, and reaped with
 * everything it started when the turn ends. Adapters supply hooks (arguments,
 * line parsing, usage, evidence); the skeleton owns everything that must behave
 * the same for every runtime: timers (first event, stall, and the turn timeout,
 * which the reference never enforced), cancellation, bounded output, exit 127,
 * the early-exit report, cleaning event text, and handing the evidence to the
 * one disposition rule. No adapter runs its own streaming subprocess loop.
 */

import type { TokenCounts } from '../../domain/agent.js';
import {
  AgentError,
  type AgentEvent,
  type AgentSettings,
  type RunTurnParams,
  type TurnOutcome,
} from '../../domain/agent.js';
import type { AgentErrorKind } from '../../domain/errors.js';
import type { Issue } from '../../domain/issue.js';
import type { TurnSpend, UsageSources } from '../usage/index.js';
import {
  type FinalizeContext,
  finalizeInterrupted,
  finalizeTurn,
  type TurnEvidence,
  type TurnMeta,
} from './disposition.js';
import { type LaunchTarget, launchEnv, recheckWorkspace, startAgentProcess } from './launch-target.js';
import { describeExit, isCommandNotFoundExit } from './process/exit.js';
import { InterruptibleReader } from './process/interruptible-reader.js';
import type { AgentProcess } from './process/spawn.js';
import { ABANDONED_MARKER } from './process/stderr.js';
import { TurnTimers } from './process/timers.js';
import { overlongLineMessage, StdoutTally } from './stdout-tally.js';
import { openTurnFrame, timerInterrupt } from './turn-frame.js';

export { cleanEvent } from './turn-frame.js';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event as an adapter emits it; the skeleton stamps the time and pid. */
export type EventInput = DistributiveOmit<AgentEvent, 'at' | 'agentPid'>;

/** What hooks see of the turn in progress. */
export interface TurnContext {
  /** 1-based turn number within this session. */
  readonly turn: number;
  readonly prompt: string;
  readonly issue: Issue;
  readonly spend: TurnSpend;
  /** Emits an event while the turn runs; text is sanitised by the skeleton. */
  emit(event: EventInput): void;
  /** Pid of the agent process, "" before spawn. */
  readonly pid: string;
}

/** What `parseLine` makes of one stdout line. */
export type LineVerdict =
  /** A line of this runtime's protocol; `terminal` is the turn's final report when this line is one. */
  | { type: 'accepted'; terminal?: unknown }
  /** Not a line the adapter understands: becomes a `malformed` event. */
  | { type: 'rejected'; reason: string }
  /** The stream is not this turn's (a foreign session id…): end the turn with this kind. */
  | { type: 'end'; kind: AgentErrorKind; message: string };

/** The verdict of most lines, shared: the skeleton only reads it, and adapters return it for every line. */
export const ACCEPTED_LINE: LineVerdict = Object.freeze({ type: 'accepted' });

/** What `onFinalize` receives about a process that ended on its own. */
export interface FinalizeInput {
  /** The last `terminal` a line reported, undefined when none. */
  lastTerminal: unknown;
  exitCode: number | null;
  signal: string | null;
  /** Bounded stderr, with the abandoned marker last when the drain was cut. */
  stderrLines: string[];
  earlyExit: AgentError | null;
  stderrAbandoned: boolean;
}

export interface UsageView {
  usage: TokenCounts;
  byModel: Record<string, TokenCounts>;
  measured: boolean;
}

/** The per-kind part of a fork-per-turn session. */
export interface ForkPerTurnHooks {
  /** Resets per-turn state (message ids, tool tracker, work observer); the ledger survives. */
  beginTurn?(ctx: TurnContext): void;
  /** Per-turn arguments appended to the launch target's leading arguments. */
  buildArgs(ctx: TurnContext): string[];
  /** Send the prompt on stdin (then close it); otherwise stdin is closed from the start. */
  promptOnStdin: boolean;
  /** The process environment for this turn, from the launch environment. */
  turnEnv?(ctx: TurnContext, base: Record<string, string>): Record<string, string>;
  parseLine(line: string, ctx: TurnContext): LineVerdict;
  /** Settles the turn's spend once, after the process is reaped. */
  settleUsage(ctx: TurnContext, end: { cancelled: boolean }): void;
  getUsage(): UsageView;
  getSessionId(): string;
  /** The runtime's final message of the turn, "" when none. */
  finalMessage?(): string;
  /** Reports the evidence of a turn that ended on its own; the shared rule decides. */
  onFinalize(
    input: FinalizeInput,
    ctx: TurnContext,
  ): Omit<TurnEvidence, 'exitObserved' | 'exitCode' | 'signal' | 'earlyExit' | 'stderrAbandoned'>;
  /** Session id to announce right after spawn, for runtimes that name it before any line. */
  emitSessionStartId?(): string | null;
  /** Time allowed before the first accepted line; 0 or absent disables. */
  firstEventTimeoutMs?: number;
}

export interface ForkPerTurnOptions {
  agent: AgentSettings;
  /** Environment the session starts from. */
  env: Record<string, string>;
  sources: UsageSources;
  /** SIGTERM → SIGKILL grace for the process group. */
  stopGraceMs?: number;
  /** How long stdout may stay open after the agent exited (a descendant holding it). */
  stdoutGraceMs?: number;
  /** How long the stderr drain may take after exit. */
  stderrDrainMs?: number;
  now?: () => Date;
}

const DEFAULT_STOP_GRACE_MS = 5_000;
const DEFAULT_STDOUT_GRACE_MS = 2_000;
const DEFAULT_STDERR_DRAIN_MS = 1_000;
const WARN_STDERR_LINES = 5;

interface Interrupt {
  kind: 'turn_cancelled' | 'response_timeout' | 'turn_timeout' | AgentErrorKind;
  message: string;
}

/** One session of a fork-per-turn kind: a new process per turn. */
export class ForkPerTurnSession {
  private turn = 0;
  private active: { requestStop(i: Interrupt): void; done: Promise<unknown> } | null = null;
  /** A stop that arrived while the process was still being spawned. */
  private pendingStop: Interrupt | null = null;

  constructor(
    private readonly target: LaunchTarget,
    private readonly hooks: ForkPerTurnHooks,
    private readonly options: ForkPerTurnOptions,
  ) {}

  /** Runs one turn; events reach `params.onEvent` only until this resolves. */
  async runTurn(params: RunTurnParams): Promise<TurnOutcome> {
    if (this.active !== null) throw new Error('a turn is already running in this session');
    this.pendingStop = null;
    const run = this.execute(params);
    this.active = {
      requestStop: (i) => {
        this.pendingStop = i;
      },
      done: run,
    };
    try {
      return await run;
    } finally {
      this.active = null;
    }
  }

  /** Cancels a running turn (if any) and waits for it to end. Idempotent. */
  async stop(): Promise<void> {
    const active = this.active;
    if (active === null) return;
    active.requestStop({ kind: 'turn_cancelled', message: 'the session was stopped' });
    await active.done.catch(() => undefined);
  }

  private async execute(params: RunTurnParams): Promise<TurnOutcome> {
    const { hooks, options, target } = this;
    this.turn += 1;
    const now = options.now ?? (() => new Date());
    let pid = '';
    const { ctx, fctx, meta, close } = openTurnFrame({
      turn: this.turn,
      params,
      workspacePath: target.workspacePath,
      sources: options.sources,
      now,
      pid: () => pid,
      hooks,
    });
    const stopped = (kind: Interrupt['kind'], message: string): TurnOutcome => {
      hooks.settleUsage(ctx, { cancelled: true });
      return finalizeStopped(fctx, kind, message, meta());
    };

    try {
      hooks.beginTurn?.(ctx);
      if (params.signal.aborted) return stopped('turn_cancelled', 'the turn was cancelled before it started');
      // Before the adapter builds anything for this turn.
      const workspace = recheckWorkspace(target);
      if (workspace !== null) return stopped(workspace.kind, workspace.detail);
      const base = launchEnv(target, options.env);
      const env = hooks.turnEnv ? hooks.turnEnv(ctx, base) : base;
      const spawned = await startAgentProcess(target, {
        args: [...target.args, ...hooks.buildArgs(ctx)],
        env,
        stdin: hooks.promptOnStdin ? { text: params.prompt } : 'ignore',
        niceness: options.agent.niceness,
      });
      if (!spawned.ok) return stopped(spawned.kind, spawned.message);
      const proc = spawned.process;
      pid = String(proc.pid);
      return await this.watch(proc, ctx, fctx, params.signal, meta);
    } finally {
      close();
    }
  }

  private async watch(
    proc: AgentProcess,
    ctx: TurnContext,
    fctx: FinalizeContext,
    signal: AbortSignal,
    meta: () => TurnMeta,
  ): Promise<TurnOutcome> {
    const { hooks, options } = this;
    const descendants = proc.trackLeftovers();
    let exited = false;
    void proc.exited.then(() => {
      exited = true;
    });
    let interrupt: Interrupt | null = null;
    let stopping: Promise<void> = Promise.resolve();
    let wake: () => void = () => undefined;
    const interrupted = new Promise<void>((resolve) => {
      wake = resolve;
    });
    // A stop counts only if it began while the process still ran; one that exited
    // on its own keeps its own exit status.
    const requestStop = (i: Interrupt) => {
      if (interrupt !== null || exited) return;
      interrupt = i;
      descendants.sample();
      stopping = proc.terminateGroup(options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS);
      wake();
    };
    if (this.active !== null) this.active.requestStop = requestStop;
    // A cancel or stop that landed while the process was being spawned applies now.
    if (this.pendingStop !== null) requestStop(this.pendingStop);
    const timers = new TurnTimers({
      firstEventTimeoutMs: hooks.firstEventTimeoutMs ?? 0,
      stallTimeoutMs: options.agent.stallTimeoutMs,
      turnTimeoutMs: options.agent.turnTimeoutMs,
      onFire: (reason) => requestStop(timerInterrupt(reason, options.agent, hooks.firstEventTimeoutMs)),
    });
    const onAbort = () => requestStop({ kind: 'turn_cancelled', message: 'the turn was cancelled' });
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();

    const sessionStartId = hooks.emitSessionStartId?.() ?? null;
    if (sessionStartId !== null) ctx.emit({ type: 'session_started', sessionId: sessionStartId });

    const output = new StdoutTally();
    let lastTerminal: unknown;
    let ended = false;
    const lines = proc.lines[Symbol.asyncIterator]();
    const reader = new InterruptibleReader(lines);
    // The agent exited but something it started still holds stdout: stop reading after a grace.
    const stdoutGraceMs = options.stdoutGraceMs ?? DEFAULT_STDOUT_GRACE_MS;
    void proc.exited.then(() => sleep(stdoutGraceMs)).then(() => reader.interrupt());
    let stdoutHeld = false;
    try {
      for (;;) {
        const next = await reader.next();
        if ('interrupted' in next) {
          stdoutHeld = true;
          break;
        }
        if (next.done === true) break;
        const item = next.value;
        descendants.sampleRecent();
        timers.touch();
        if (ended) continue;
        if (item.type === 'overlong') {
          output.overlong(item);
          ctx.emit({ type: 'malformed', message: overlongLineMessage(item) });
          continue;
        }
        const verdict = safeParse(hooks, item.text, ctx);
        switch (verdict.type) {
          case 'accepted':
            output.accepted();
            timers.markFirstEvent();
            if (verdict.terminal !== undefined) lastTerminal = verdict.terminal;
            break;
          case 'rejected':
            output.rejected();
            ctx.emit({ type: 'malformed', message: `${verdict.reason}: ${item.text}` });
            break;
          case 'end':
            ended = true;
            requestStop({ kind: verdict.kind, message: verdict.message });
            break;
        }
      }
      // With a read still pending, return() would queue behind it and wait for the
      // holder of stdout forever: reap first (that closes the pipe), and do not wait.
      if (stdoutHeld) {
        await descendants.reap();
        void lines.return?.();
      } else {
        await lines.return?.();
      }
      // stdout closed while the process may still run: keep the timers and cancel armed.
      await Promise.race([proc.exited, interrupted]);
      await stopping;
      await proc.exited;
    } finally {
      timers.clear();
      signal.removeEventListener('abort', onAbort);
    }
    const stderrComplete = await proc.stderr.drain(options.stderrDrainMs ?? DEFAULT_STDERR_DRAIN_MS);
    await descendants.reap();

    const stop = interrupt as Interrupt | null;
    if (stop !== null) {
      hooks.settleUsage(ctx, { cancelled: true });
      return finalizeStopped(fctx, stop.kind, stop.message, meta());
    }
    const exit = await proc.exited;
    const stderrLines = proc.stderr.lines();
    const accepted = output.anyAccepted;
    let earlyExit: AgentError | null = null;
    if (!accepted || isCommandNotFoundExit(exit.exitCode)) {
      const tail = stderrLines
        .filter((l) => l !== ABANDONED_MARKER)
        .slice(-WARN_STDERR_LINES)
        .join(' | ');
      const kind: AgentErrorKind = isCommandNotFoundExit(exit.exitCode) ? 'agent_not_found' : 'port_exit';
      const when = accepted ? '' : ` ${output.shortfall()}`;
      earlyExit = new AgentError(
        kind,
        `the agent ${describeExit(exit)}${when}${tail ? `; stderr: ${tail}` : ''}`,
      );
    }
    hooks.settleUsage(ctx, { cancelled: false });
    const evidence = hooks.onFinalize(
      {
        lastTerminal,
        exitCode: exit.exitCode,
        signal: exit.signal,
        stderrLines,
        earlyExit,
        stderrAbandoned: !stderrComplete,
      },
      ctx,
    );
    const outcome = finalizeTurn(
      fctx,
      {
        ...evidence,
        exitObserved: true,
        exitCode: exit.exitCode,
        signal: exit.signal,
        earlyExit: isCommandNotFoundExit(exit.exitCode) || !accepted ? earlyExit : null,
        stderrAbandoned: !stderrComplete,
      },
      meta(),
    );
    if (outcome.error !== undefined) {
      for (const line of stderrLines.slice(-WARN_STDERR_LINES)) ctx.emit({ type: 'warning', message: line });
    }
    return outcome;
  }
}

function finalizeStopped(
  fctx: FinalizeContext,
  kind: Interrupt['kind'],
  message: string,
  meta: TurnMeta,
): TurnOutcome {
  return finalizeInterrupted(fctx, kind, message, meta);
}

function safeParse(hooks: ForkPerTurnHooks, line: string, ctx: TurnContext): LineVerdict {
  try {
    return hooks.parseLine(line, ctx);
  } catch (error) {
    return {
      type: 'rejected',
      reason: `parser error: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    t.unref?.();
  });
