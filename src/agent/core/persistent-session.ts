/**
 * The persistent-session skeleton: one long-lived agent process per session,
 * spoken to over JSON-RPC on its stdin and stdout, many turns over the same
 * process. Adapters supply hooks (the handshake, the request that starts a turn,
 * what each notification means, how to ask the runtime to stop); the skeleton
 * owns what must behave the same for every such runtime: spawning in its own
 * process group, a request from the runtime always answered (an unanswered one
 * would leave the runtime waiting forever), the first-event, stall and turn
 * timers, cancellation (ask the runtime first, kill the group if it does not
 * end the turn in time), the report for a process that dies mid-turn (for a
 * persistent runtime every exit during a turn is premature, even exit 0),
 * cleaning event text, and handing the evidence to the one disposition rule.
 * A runtime build that lacks the protocol can hand the session to a
 * fork-per-turn fallback before any turn ran on it.
 */
import { AgentError, type AgentSettings, type RunTurnParams, type TurnOutcome } from '../../domain/agent.js';
import type { AgentErrorKind } from '../../domain/errors.js';
import type { UsageSources } from '../usage/index.js';
import {
  type FinalizeContext,
  finalizeInterrupted,
  finalizeTurn,
  type Terminal,
  type TurnMeta,
} from './disposition.js';
import type { TurnContext, UsageView } from './fork-per-turn.js';
import {
  type Inbound,
  JsonRpcClient,
  RpcClosedError,
  RpcResponseError,
  RpcTimeoutError,
} from './jsonrpc/client.js';
import { decodeRpcLine, RPC_INTERNAL_ERROR, type RpcErrorObject } from './jsonrpc/messages.js';
import { type LaunchTarget, launchEnv, recheckWorkspace, startAgentProcess } from './launch-target.js';
import { describeExit, isCommandNotFoundExit, type ProcessExit } from './process/exit.js';
import type { AgentProcess, Leftovers } from './process/spawn.js';
import { ABANDONED_MARKER } from './process/stderr.js';
import { TurnTimers } from './process/timers.js';
import { overlongLineMessage } from './stdout-tally.js';
import { openTurnFrame, timerInterrupt } from './turn-frame.js';
import type { WorkReport } from './work-observer.js';

/** What hooks may send to the runtime. Requests carry the session's read timeout unless given one. */
export interface RpcChannel {
  request(method: string, params: unknown, options?: { timeoutMs?: number }): Promise<unknown>;
  notify(method: string, params?: unknown): boolean;
}

/** What a notification means to the turn in progress. */
export type NotificationVerdict =
  /** Part of this turn; `terminal` is the runtime's own report that the turn ended. */
  | { type: 'accepted'; terminal?: unknown }
  /** About something else (another conversation, the runtime itself): no activity of this turn. */
  | { type: 'ignored' };

/** The answer to a request of the runtime. */
export type RpcAnswer = { result: unknown } | { error: RpcErrorObject };

/** What `onFinalize` receives about a turn that ended without a stop from us. */
export interface PersistentFinalizeInput {
  /** The terminal a notification reported, undefined when the process ended the turn by exiting. */
  terminal: unknown;
  /** The process exit when it ended the turn, else null. */
  exit: ProcessExit | null;
}

export interface PersistentHooks {
  /** Resets per-turn state (tool tracker, work observer); the ledger survives. */
  beginTurn?(ctx: TurnContext): void;
  /** Arguments appended to the launch target's own, for the long-lived process. */
  buildArgs(): string[];
  /** The process environment, from the launch environment. */
  processEnv?(base: Record<string, string>): Record<string, string>;
  /** The handshake on a freshly started process; a rejected request fails the turn that started it. */
  open(rpc: RpcChannel, ctx: TurnContext): Promise<void>;
  /** Sends the request that starts the turn. */
  startTurn(rpc: RpcChannel, ctx: TurnContext): Promise<void>;
  /** One notification while a turn runs. */
  onNotification(method: string, params: unknown, ctx: TurnContext): NotificationVerdict;
  /** Notifications between turns (a replayed figure, status changes). */
  onIdleNotification?(method: string, params: unknown): void;
  /** The answer to a request of the runtime, in a turn (ctx) or between turns (null). */
  answerRequest(method: string, params: unknown, ctx: TurnContext | null): RpcAnswer;
  /** Asks the runtime to stop the running turn; it then ends the turn with its terminal notification. */
  interrupt(rpc: RpcChannel, ctx: TurnContext): Promise<void>;
  /** Settles the turn's spend once, when the turn ended. */
  settleUsage(ctx: TurnContext, end: { cancelled: boolean }): void;
  getUsage(): UsageView;
  getSessionId(): string;
  /** The runtime's final message of the turn, "" when none. */
  finalMessage?(): string;
  /** Reports the evidence of a turn that ended on its own; the shared rule decides. */
  onFinalize(
    input: PersistentFinalizeInput,
    ctx: TurnContext,
  ): { terminal: Terminal | null; work: WorkReport };
  /** Time allowed from the turn's start to its first accepted notification; 0 or absent disables. */
  firstEventTimeoutMs?: number;
}

/** A fork-per-turn stand-in for runtime builds that lack the protocol. */
export interface PersistentFallback {
  /**
   * True when the process's exit before the handshake finished means the runtime lacks the
   * protocol (it may run a probe of its own to find out).
   */
  protocolMissing(exit: ProcessExit, stderrLines: readonly string[]): boolean | Promise<boolean>;
  runTurn(params: RunTurnParams): Promise<TurnOutcome>;
  stop(): Promise<void>;
}

export interface PersistentSessionOptions {
  agent: AgentSettings;
  env: Record<string, string>;
  sources: UsageSources;
  /** SIGTERM → SIGKILL grace for the process group, and how long an interrupted turn may take to end. */
  stopGraceMs?: number;
  /** How long stdout may stay open after the process exited. */
  stdoutGraceMs?: number;
  /** Send `"jsonrpc":"2.0"` with every message. */
  jsonrpcVersion?: boolean;
  fallback?: PersistentFallback;
  now?: () => Date;
}

const DEFAULT_STOP_GRACE_MS = 5_000;
const DEFAULT_STDOUT_GRACE_MS = 2_000;
/** A request without a configured read timeout still gets a deadline. */
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
const WARN_STDERR_LINES = 5;

interface Interrupt {
  kind: AgentErrorKind;
  message: string;
}

/** How a turn stopped waiting. */
type TurnEnd =
  | { type: 'terminal'; value: unknown }
  | { type: 'gone' }
  | { type: 'failed'; error: AgentError };

/** One turn in flight: where the reader sends what belongs to it. */
interface ActiveTurn {
  ctx: TurnContext;
  timers: TurnTimers | null;
  stop: Interrupt | null;
  started: boolean;
  end(reason: TurnEnd): void;
  requestStop(i: Interrupt): void;
}

/** The long-lived process and the conversation over it. */
interface Live {
  proc: AgentProcess;
  rpc: JsonRpcClient;
  descendants: Leftovers;
  /** Resolves once the process exited and its stdout ended (or the grace after exit passed). */
  gone: Promise<ProcessExit>;
  exit: ProcessExit | null;
  opened: boolean;
}

export class PersistentSession {
  private turn = 0;
  private live: Live | null = null;
  private active: ActiveTurn | null = null;
  private running: Promise<TurnOutcome> | null = null;
  private fallbackActive = false;
  private stopped = false;

  constructor(
    private readonly target: LaunchTarget,
    private readonly hooks: PersistentHooks,
    private readonly options: PersistentSessionOptions,
  ) {}

  /** Pid of the long-lived process, "" when none runs. */
  get pid(): string {
    return this.live === null || this.live.exit !== null ? '' : String(this.live.proc.pid);
  }

  /** True once the session handed its turns to the fork-per-turn fallback. */
  get usingFallback(): boolean {
    return this.fallbackActive;
  }

  /** Runs one turn; events reach `params.onEvent` only until this resolves. */
  async runTurn(params: RunTurnParams): Promise<TurnOutcome> {
    if (this.running !== null) throw new Error('a turn is already running in this session');
    if (this.fallbackActive && this.options.fallback) return this.options.fallback.runTurn(params);
    const run = this.execute(params);
    this.running = run;
    try {
      return await run;
    } finally {
      this.running = null;
    }
  }

  /** Cancels a running turn, then ends the process (EOF on stdin, then the group). Idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.active?.requestStop({ kind: 'turn_cancelled', message: 'the session was stopped' });
    await this.running?.catch(() => undefined);
    await this.options.fallback?.stop();
    await this.shutdown();
  }

  private stopGraceMs(): number {
    return this.options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
  }

  private channel(live: Live): RpcChannel {
    const readTimeoutMs =
      this.options.agent.readTimeoutMs > 0 ? this.options.agent.readTimeoutMs : DEFAULT_REQUEST_TIMEOUT_MS;
    return {
      request: (method, params, opts) =>
        live.rpc.request(method, params, { timeoutMs: opts?.timeoutMs ?? readTimeoutMs }),
      notify: (method, params) => live.rpc.notify(method, params),
    };
  }

  private async execute(params: RunTurnParams): Promise<TurnOutcome> {
    const { hooks, options, target } = this;
    this.turn += 1;
    const now = options.now ?? (() => new Date());
    const { ctx, fctx, meta, close } = openTurnFrame({
      turn: this.turn,
      params,
      workspacePath: target.workspacePath,
      sources: options.sources,
      now,
      pid: () => this.pid,
      hooks,
    });
    const stopped = (i: Interrupt): TurnOutcome => {
      hooks.settleUsage(ctx, { cancelled: true });
      return finalizeInterrupted(fctx, i.kind, i.message, meta());
    };

    try {
      hooks.beginTurn?.(ctx);
      if (params.signal.aborted) {
        return stopped({ kind: 'turn_cancelled', message: 'the turn was cancelled before it started' });
      }
      if (this.stopped) return stopped({ kind: 'turn_cancelled', message: 'the session was stopped' });
      const workspace = recheckWorkspace(target);
      if (workspace !== null) return stopped({ kind: workspace.kind, message: workspace.detail });
      const result = await this.watch(ctx, fctx, params, meta);
      if (result === 'fallback') {
        close();
        await this.shutdown();
        this.fallbackActive = true;
        return await (options.fallback as PersistentFallback).runTurn(params);
      }
      return result;
    } finally {
      close();
    }
  }

  private async watch(
    ctx: TurnContext,
    fctx: FinalizeContext,
    params: RunTurnParams,
    meta: () => TurnMeta,
  ): Promise<TurnOutcome | 'fallback'> {
    const { hooks, options } = this;
    let resolveEnd: (reason: TurnEnd) => void = () => undefined;
    const ended = new Promise<TurnEnd>((resolve) => {
      resolveEnd = resolve;
    });
    let finished = false;
    let killTimer: NodeJS.Timeout | null = null;
    const turn: ActiveTurn = {
      ctx,
      timers: null,
      stop: null,
      started: false,
      end: (reason) => {
        if (finished) return;
        finished = true;
        resolveEnd(reason);
      },
      requestStop: (i) => {
        if (turn.stop !== null || finished) return;
        turn.stop = i;
        const live = this.live;
        if (live === null || live.exit !== null) {
          turn.end({ type: 'gone' });
          return;
        }
        if (turn.started) {
          // Ask the runtime first: it ends the turn cleanly and the process stays usable.
          void hooks.interrupt(this.channel(live), ctx).catch(() => undefined);
          killTimer = setTimeout(() => void this.terminate(live), this.stopGraceMs());
          killTimer.unref?.();
        } else {
          void this.terminate(live);
        }
      },
    };
    this.active = turn;
    turn.timers = new TurnTimers({
      firstEventTimeoutMs: hooks.firstEventTimeoutMs ?? 0,
      stallTimeoutMs: options.agent.stallTimeoutMs,
      turnTimeoutMs: options.agent.turnTimeoutMs,
      onFire: (reason) => turn.requestStop(timerInterrupt(reason, options.agent, hooks.firstEventTimeoutMs)),
    });
    const onAbort = () => turn.requestStop({ kind: 'turn_cancelled', message: 'the turn was cancelled' });
    params.signal.addEventListener('abort', onAbort, { once: true });

    try {
      let live = this.live;
      if (live === null || live.exit !== null) {
        if (live !== null) await this.reap(live);
        const launched = await this.launch();
        if (!launched.ok) {
          if (turn.stop !== null) return this.finishStopped(ctx, fctx, turn.stop, meta);
          return finalizeInterrupted(fctx, launched.kind, launched.message, meta());
        }
        live = launched.live;
        if (turn.stop !== null) {
          await this.terminate(live);
          return this.finishStopped(ctx, fctx, turn.stop, meta);
        }
      }
      const rpc = this.channel(live);
      if (!live.opened) {
        const opening = await this.guard(live, hooks.open(rpc, ctx));
        if (!opening.ok) {
          const exit = opening.exit;
          if (
            exit !== null &&
            turn.stop === null &&
            options.fallback !== undefined &&
            (await options.fallback.protocolMissing(exit, live.proc.stderr.lines()))
          ) {
            return 'fallback';
          }
          return this.finishFailed(ctx, fctx, turn, opening, meta, live);
        }
        live.opened = true;
      }
      if (turn.stop !== null) return this.finishStopped(ctx, fctx, turn.stop, meta);
      const starting = await this.guard(live, hooks.startTurn(rpc, ctx));
      if (!starting.ok) return this.finishFailed(ctx, fctx, turn, starting, meta, live);
      turn.started = true;
      // A cancel that landed while the turn was being started is delivered now.
      if (turn.stop !== null) {
        const pending = turn.stop;
        turn.stop = null;
        turn.requestStop(pending);
      }
      void live.gone.then(() => turn.end({ type: 'gone' }));
      const end = await ended;
      const stop = turn.stop as Interrupt | null;
      if (stop !== null) return this.finishStopped(ctx, fctx, stop, meta);
      if (end.type === 'failed') {
        hooks.settleUsage(ctx, { cancelled: false });
        return finalizeInterrupted(fctx, end.error.kind, end.error.detail, meta());
      }
      hooks.settleUsage(ctx, { cancelled: false });
      if (end.type === 'terminal') {
        const evidence = hooks.onFinalize({ terminal: end.value, exit: null }, ctx);
        return finalizeTurn(
          fctx,
          {
            ...evidence,
            exitObserved: true,
            exitCode: null,
            signal: null,
            earlyExit: null,
            stderrAbandoned: false,
          },
          meta(),
        );
      }
      return this.finishExited(ctx, fctx, live, meta);
    } finally {
      if (killTimer !== null) clearTimeout(killTimer);
      turn.timers?.clear();
      params.signal.removeEventListener('abort', onAbort);
      this.active = null;
    }
  }

  /** Waits for a hook's requests, mapping the client's failures; an exit is waited for so its status is known. */
  private async guard(
    live: Live,
    work: Promise<void>,
  ): Promise<{ ok: true } | { ok: false; error: AgentError | null; exit: ProcessExit | null }> {
    try {
      await work;
      return { ok: true };
    } catch (error) {
      if (error instanceof RpcResponseError) {
        return { ok: false, error: new AgentError('response_error', error.message), exit: null };
      }
      if (error instanceof RpcTimeoutError) {
        return { ok: false, error: new AgentError('response_timeout', error.message), exit: null };
      }
      if (error instanceof RpcClosedError) {
        const exit = await Promise.race([
          live.gone,
          sleep(this.options.stdoutGraceMs ?? DEFAULT_STDOUT_GRACE_MS),
        ]);
        if (exit === undefined) {
          return {
            ok: false,
            error: new AgentError('port_exit', 'the agent closed its output without exiting'),
            exit: null,
          };
        }
        return { ok: false, error: null, exit };
      }
      return {
        ok: false,
        error: new AgentError('response_error', error instanceof Error ? error.message : String(error)),
        exit: null,
      };
    }
  }

  private finishStopped(
    ctx: TurnContext,
    fctx: FinalizeContext,
    stop: Interrupt,
    meta: () => TurnMeta,
  ): TurnOutcome {
    this.hooks.settleUsage(ctx, { cancelled: true });
    return finalizeInterrupted(fctx, stop.kind, stop.message, meta());
  }

  private async finishFailed(
    ctx: TurnContext,
    fctx: FinalizeContext,
    turn: ActiveTurn,
    failure: { error: AgentError | null; exit: ProcessExit | null },
    meta: () => TurnMeta,
    live: Live,
  ): Promise<TurnOutcome> {
    if (turn.stop !== null) return this.finishStopped(ctx, fctx, turn.stop, meta);
    if (failure.error === null) {
      this.hooks.settleUsage(ctx, { cancelled: false });
      return this.finishExited(ctx, fctx, live, meta);
    }
    // The conversation is in an unknown state: end the process so the next turn starts afresh.
    await this.terminate(live);
    this.hooks.settleUsage(ctx, { cancelled: false });
    return finalizeInterrupted(fctx, failure.error.kind, failure.error.detail, meta());
  }

  /** The process ended the turn by exiting: the early-exit report decides, whatever the exit status. */
  private async finishExited(
    ctx: TurnContext,
    fctx: FinalizeContext,
    live: Live,
    meta: () => TurnMeta,
  ): Promise<TurnOutcome> {
    const exit = await live.gone;
    await live.proc.stderr.drain(1_000);
    const stderrLines = live.proc.stderr.lines();
    const tail = stderrLines
      .filter((l) => l !== ABANDONED_MARKER)
      .slice(-WARN_STDERR_LINES)
      .join(' | ');
    const kind: AgentErrorKind = isCommandNotFoundExit(exit.exitCode) ? 'agent_not_found' : 'port_exit';
    const report = new AgentError(
      kind,
      `the agent process ended during the turn (${describeExit(exit)})${tail ? `; stderr: ${tail}` : ''}`,
    );
    const evidence = this.hooks.onFinalize({ terminal: undefined, exit }, ctx);
    const outcome = finalizeTurn(
      fctx,
      {
        ...evidence,
        exitObserved: true,
        exitCode: exit.exitCode,
        signal: exit.signal,
        earlyExit: report,
        stderrAbandoned: false,
      },
      meta(),
    );
    if (outcome.error !== undefined) {
      for (const line of stderrLines.slice(-WARN_STDERR_LINES)) ctx.emit({ type: 'warning', message: line });
    }
    await this.reap(live);
    return outcome;
  }

  /** Starts the process and the reader that feeds the conversation. */
  private async launch(): Promise<
    { ok: true; live: Live } | { ok: false; kind: AgentErrorKind; message: string }
  > {
    const base = launchEnv(this.target, this.options.env);
    const env = this.hooks.processEnv ? this.hooks.processEnv(base) : base;
    const spawned = await startAgentProcess(this.target, {
      args: [...this.target.args, ...this.hooks.buildArgs()],
      env,
      stdin: 'pipe',
      niceness: this.options.agent.niceness,
    });
    if (!spawned.ok) return spawned;
    const proc = spawned.process;
    const input = proc.input;
    const rpc = new JsonRpcClient(
      (line) => {
        if (input === null || input.destroyed || !input.writable) return false;
        input.write(`${line}\n`);
        return true;
      },
      { version: this.options.jsonrpcVersion === true },
    );
    const stdoutDone = this.pump(proc, rpc);
    const stdoutGraceMs = this.options.stdoutGraceMs ?? DEFAULT_STDOUT_GRACE_MS;
    const live: Live = {
      proc,
      rpc,
      descendants: proc.trackLeftovers(),
      gone: proc.exited.then(async (exit) => {
        await Promise.race([stdoutDone, sleep(stdoutGraceMs)]);
        return exit;
      }),
      exit: null,
      opened: false,
    };
    void proc.exited.then((exit) => {
      live.exit = exit;
      rpc.close(`the agent process ended (${describeExit(exit)})`);
    });
    void live.gone.then(() => {
      live.descendants.stop();
    });
    this.live = live;
    return { ok: true, live };
  }

  /** Reads the process's stdout for its whole life and routes each message. */
  private async pump(proc: AgentProcess, rpc: JsonRpcClient): Promise<void> {
    try {
      for await (const item of proc.lines) {
        const turn = this.active;
        turn?.timers?.touch();
        if (item.type === 'overlong') {
          turn?.ctx.emit({ type: 'malformed', message: overlongLineMessage(item) });
          continue;
        }
        if (item.text.trim() === '') continue;
        const decoded = decodeRpcLine(item.text);
        if (!decoded.ok) {
          turn?.ctx.emit({ type: 'malformed', message: `${decoded.reason}: ${item.text}` });
          continue;
        }
        this.route(rpc.receive(decoded.message), rpc, turn);
      }
    } catch {
      // A read error ends the conversation like EOF does.
    }
    rpc.close('the agent closed its output');
  }

  private route(inbound: Inbound, rpc: JsonRpcClient, turn: ActiveTurn | null): void {
    switch (inbound.type) {
      case 'handled':
        return;
      case 'request': {
        let answer: RpcAnswer;
        try {
          answer = this.hooks.answerRequest(inbound.method, inbound.params, turn?.ctx ?? null);
        } catch (error) {
          answer = {
            error: {
              code: RPC_INTERNAL_ERROR,
              message: error instanceof Error ? error.message : String(error),
            },
          };
        }
        if ('result' in answer) rpc.respond(inbound.id, answer.result);
        else rpc.respondError(inbound.id, answer.error);
        return;
      }
      case 'notification': {
        if (turn === null) {
          this.hooks.onIdleNotification?.(inbound.method, inbound.params);
          return;
        }
        let verdict: NotificationVerdict;
        try {
          verdict = this.hooks.onNotification(inbound.method, inbound.params, turn.ctx);
        } catch (error) {
          turn.ctx.emit({
            type: 'malformed',
            message: `parser error on ${inbound.method}: ${error instanceof Error ? error.message : String(error)}`,
          });
          return;
        }
        if (verdict.type === 'ignored') return;
        turn.timers?.markFirstEvent();
        if (verdict.terminal !== undefined) turn.end({ type: 'terminal', value: verdict.terminal });
        return;
      }
    }
  }

  /** SIGTERM then SIGKILL to the process group, and reaping what escaped it. */
  private async terminate(live: Live): Promise<void> {
    live.descendants.sample();
    await live.proc.terminateGroup(this.stopGraceMs());
    await this.reap(live);
  }

  private async reap(live: Live): Promise<void> {
    await live.descendants.reap();
  }

  /** Ends the process: EOF on stdin first (a clean exit), then the group after the grace. */
  private async shutdown(): Promise<void> {
    const live = this.live;
    this.live = null;
    if (live === null) return;
    live.rpc.close('the session was stopped');
    if (live.exit === null) {
      live.proc.input?.end();
      const exited = await Promise.race([live.proc.exited.then(() => true), sleep(this.stopGraceMs())]);
      if (exited !== true) live.descendants.sample();
      if (exited !== true || live.proc.groupAlive()) await live.proc.terminateGroup(this.stopGraceMs());
    }
    await this.reap(live);
  }
}

const sleep = (ms: number) =>
  new Promise<undefined>((resolve) => {
    const t = setTimeout(() => resolve(undefined), ms);
    t.unref?.();
  });
