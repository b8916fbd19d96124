/**
 * One Codex session over `codex app-server`, seen through the persistent-session
 * skeleton: the hooks that open a thread, start turns, turn notifications into
 * events and ledger readings, answer the server's requests and interrupt a turn.
 * The thread outlives the process: when the process is restarted (it died, or a
 * stop killed it) the next turn resumes the thread, falling back to a new one
 * when Codex refuses the resume. The turn's outcome is `turn/completed`'s status
 * alone (or a `turn/failed`, which ends the turn at once rather than leaving it to
 * the stall timer); an `error` notification the runtime will retry is only a notice.
 */

import type { Terminal } from '../core/disposition.js';
import type { TurnContext } from '../core/fork-per-turn.js';
import { RpcResponseError } from '../core/jsonrpc/client.js';
import type { NotificationVerdict, PersistentHooks, RpcChannel } from '../core/persistent-session.js';
import { WorkObserver } from '../core/work-observer.js';
import { type SpendReading, settleTurn, TurnEndUsage, UsageLedger } from '../usage/index.js';
import { answerServerRequest } from './approvals.js';
import { appServerArgs, CLIENT_INFO, threadParams, turnParams, type Verification } from './command.js';
import type { CodexConfig } from './config.js';
import { type ErrorInfo, failureTerminal } from './errors.js';
import { TurnItems } from './item-events.js';
import { decodeNotification, readThreadResult, readTurnResult, type ServerEvent } from './protocol.js';
import { rateLimitWindows } from './rate-limits.js';
import { ToolServerStartup } from './tool-startup.js';
import { TOOL_SERVER_STARTUP_SEC } from './tool-tables.js';
import { CODEX_USAGE_SOURCES, threadReading } from './usage.js';

type TurnCompleted = Extract<ServerEvent, { type: 'turn_end' }>;

export interface CodexSessionStart {
  config: CodexConfig;
  /** The thread to resume, null for a new one. */
  resumeThreadId: string | null;
  verification: Verification;
  /** The workspace, the thread's working directory. */
  cwd: string;
  /** The session's tool servers, waited for before the first turn of each process; default none. */
  toolServers?: readonly string[];
  nowMs?: () => number;
}

/**
 * How long a first turn waits for the tool servers: past their own start-up allowance, so
 * Codex's verdict on a server arrives before the wait gives up.
 */
const TOOL_SERVER_WAIT_MS = (TOOL_SERVER_STARTUP_SEC + 5) * 1000;

export class AppServerSession {
  private readonly ledger = new UsageLedger(CODEX_USAGE_SOURCES);
  private readonly usage = new TurnEndUsage();
  private readonly config: CodexConfig;
  private readonly verification: Verification;
  private readonly cwd: string;
  private readonly nowMs: () => number;
  private readonly toolStartup: ToolServerStartup;
  /** The thread this session runs on; null until one is opened (or given to resume). */
  threadId: string | null;
  private announced: string | null = null;
  private model: string | null;
  private observedFigure = false;

  private turnId: string | null = null;
  private items: TurnItems;
  private work = new WorkObserver({});
  private reading: SpendReading | null = null;
  private lastError: { message: string; info: ErrorInfo | null } | null = null;
  private completed: TurnCompleted | null = null;

  constructor(start: CodexSessionStart) {
    this.config = start.config;
    this.verification = start.verification;
    this.cwd = start.cwd;
    this.nowMs = start.nowMs ?? Date.now;
    this.toolStartup = new ToolServerStartup(start.toolServers ?? [], TOOL_SERVER_WAIT_MS);
    this.threadId = start.resumeThreadId;
    this.model = start.config.model;
    this.items = new TurnItems(this.nowMs);
    // A thread this run creates has no history; a resumed one's is estimated from its first figure.
    if (start.resumeThreadId === null) this.ledger.sessionCreated();
  }

  /** The hooks the persistent-session skeleton drives. */
  hooks(): PersistentHooks {
    return {
      beginTurn: () => this.beginTurn(),
      buildArgs: () => appServerArgs(this.config, this.verification),
      open: (rpc, ctx) => this.open(rpc, ctx),
      startTurn: (rpc, ctx) => this.startTurn(rpc, ctx),
      onNotification: (method, params, ctx) => this.onNotification(method, params, ctx),
      answerRequest: (method, params, ctx) => {
        const { answer, notice } = answerServerRequest(method, params);
        if (notice !== null) ctx?.emit({ type: 'notification', message: notice });
        return answer;
      },
      interrupt: async (rpc) => {
        if (this.threadId === null || this.turnId === null) return;
        await rpc.request('turn/interrupt', { threadId: this.threadId, turnId: this.turnId });
      },
      settleUsage: (ctx, end) => this.settleUsage(ctx, end.cancelled),
      getUsage: () => ({
        usage: this.usage.snapshot(),
        byModel: this.usage.byModel(),
        measured: this.usage.measured(),
      }),
      getSessionId: () => this.threadId ?? '',
      finalMessage: () => this.items.lastMessage,
      onFinalize: (input) => ({
        terminal: input.terminal === undefined ? null : this.terminalOf(input.terminal as TurnCompleted),
        work: this.work.report(),
      }),
    };
  }

  private beginTurn(): void {
    this.turnId = null;
    this.items = new TurnItems(this.nowMs);
    this.work = new WorkObserver({});
    this.reading = null;
    this.lastError = null;
    this.completed = null;
    this.ledger.beginTurn();
  }

  private async open(rpc: RpcChannel, ctx: TurnContext): Promise<void> {
    this.toolStartup.reset();
    await rpc.request('initialize', { clientInfo: CLIENT_INFO, capabilities: null });
    rpc.notify('initialized');
    const params = threadParams(this.config, this.cwd, this.verification);
    let result: unknown = null;
    const resuming = this.threadId;
    if (resuming !== null) {
      try {
        // The history itself is not needed: only the thread's continuation.
        result = await rpc.request('thread/resume', { ...params, threadId: resuming, excludeTurns: true });
      } catch (error) {
        if (!(error instanceof RpcResponseError)) throw error;
        ctx.emit({
          type: 'warning',
          message: `could not resume thread ${resuming} (${error.error.message}); starting a new thread`,
        });
      }
    }
    const resumed = result !== null;
    if (!resumed) result = await rpc.request('thread/start', params);
    const thread = readThreadResult(result);
    if (thread === null) throw new Error('the app-server answered the thread request without a thread');
    // A thread started afresh before any figure arrived has no history to subtract.
    if (!resumed && resuming !== null && !this.observedFigure) this.ledger.sessionCreated();
    this.threadId = thread.threadId;
    if (thread.model !== null) this.model = thread.model;
    if (this.announced !== thread.threadId) {
      this.announced = thread.threadId;
      ctx.emit({ type: 'session_started', sessionId: thread.threadId });
    }
    const starting = await this.toolStartup.settled();
    if (starting.length > 0) {
      ctx.emit({
        type: 'notification',
        message: `tool server ${starting.join(', ')} still starting after ${TOOL_SERVER_WAIT_MS} ms; the turn starts without it`,
      });
    }
  }

  private async startTurn(rpc: RpcChannel, ctx: TurnContext): Promise<void> {
    if (this.threadId === null) throw new Error('no thread to start a turn on');
    if (this.announced !== this.threadId) {
      this.announced = this.threadId;
      ctx.emit({ type: 'session_started', sessionId: this.threadId });
    }
    const result = await rpc.request('turn/start', turnParams(this.config, this.threadId, ctx.prompt));
    this.turnId ??= readTurnResult(result);
  }

  private onNotification(method: string, params: unknown, ctx: TurnContext): NotificationVerdict {
    if (method === 'mcpServer/startupStatus/updated') {
      const failed = this.toolStartup.observe(params);
      if (failed !== null) ctx.emit({ type: 'warning', message: failed });
      return { type: 'ignored' };
    }
    const ev = decodeNotification(method, params);
    if (ev.threadId !== null && this.threadId !== null && ev.threadId !== this.threadId)
      return { type: 'ignored' };
    if (ev.turnId !== null && this.turnId !== null && ev.turnId !== this.turnId) return { type: 'ignored' };
    switch (ev.type) {
      case 'turn_started':
        this.turnId ??= ev.turnId;
        return { type: 'accepted' };
      case 'item':
        if (ev.phase === 'started') this.items.started(ev.item, ctx);
        else this.items.completed(ev.item, ctx);
        return { type: 'accepted' };
      case 'delta':
        if (ev.of !== 'other') ctx.spend.markModelReached();
        return { type: 'accepted' };
      case 'token_usage': {
        const reading = threadReading(ev.total, ev.last);
        this.reading = reading;
        this.observedFigure = true;
        this.ledger.observeCumulative(reading, true);
        ctx.spend.markModelReached();
        return { type: 'accepted' };
      }
      case 'error':
        if (!ev.willRetry) this.lastError = { message: ev.message, info: ev.info };
        ctx.emit({
          type: 'notification',
          message: ev.willRetry ? `${ev.message} (the runtime retries)` : ev.message,
        });
        return { type: 'accepted' };
      case 'turn_end':
        // Another turn's completion (our id not yet known and the runtime names another) is not ours.
        if (this.turnId === null && ev.turnId !== null) this.turnId = ev.turnId;
        this.completed = ev;
        return { type: 'accepted', terminal: ev };
      case 'warning':
        if (ev.message !== '') ctx.emit({ type: 'notification', message: ev.message });
        return { type: 'accepted' };
      case 'rate_limits':
        // The account's state, not this turn's activity: reported, but not the turn's first event.
        ctx.emit({
          type: 'rate_limits',
          limitId: ev.limits.limitId,
          windows: rateLimitWindows(ev.limits, this.nowMs()),
        });
        return { type: 'ignored' };
      case 'thread_started':
      case 'other':
        return { type: 'ignored' };
    }
  }

  private terminalOf(done: TurnCompleted): Terminal {
    switch (done.status) {
      case 'completed':
        return { type: 'success', message: this.items.lastMessage || 'the turn completed' };
      case 'failed': {
        const error = done.error ?? this.lastError;
        return failureTerminal(error?.message ?? 'the turn failed', error?.info ?? null, this.nowMs());
      }
      case 'interrupted':
        return { type: 'failure', kind: 'turn_failed', message: 'the runtime interrupted the turn' };
      default:
        return {
          type: 'failure',
          kind: 'turn_failed',
          message: `the turn ended with status "${done.status}"`,
        };
    }
  }

  private settleUsage(ctx: TurnContext, cancelled: boolean): void {
    const end = { replied: this.completed !== null, cancelled };
    const snapshot = settleTurn(this.ledger, this.usage, ctx.spend, end, this.reading);
    if (snapshot !== null) {
      ctx.emit({
        type: 'token_usage',
        usage: snapshot,
        usageByModel: this.usage.byModel(),
        model: this.model,
      });
    }
  }
}
