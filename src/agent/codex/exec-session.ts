/**
 * One Codex session over `codex exec --json`, one process per turn through the
 * fork-per-turn skeleton: the fallback for Codex builds without `app-server`, and
 * the mode of a command that names `exec`. The thread id arrives only in
 * `thread.started`; every later turn resumes that thread (`exec … resume <id>`).
 * Each turn's `turn.completed` usage is the thread's total so far, which the
 * session-cumulative ledger turns into the run's figure. A stream that ends
 * without `turn.completed` or `turn.failed` is never a success, whatever the
 * exit status: the kind declares no work signal.
 */
import type { Terminal } from '../core/disposition.js';
import type { ForkPerTurnHooks, LineVerdict, TurnContext } from '../core/fork-per-turn.js';
import { WorkObserver } from '../core/work-observer.js';
import { type SpendReading, settleTurn, TurnEndUsage, UsageLedger } from '../usage/index.js';
import type { CodexSessionStart } from './app-server-session.js';
import { execTurnArgs, type Verification } from './command.js';
import type { CodexConfig } from './config.js';
import { failureTerminal } from './errors.js';
import { TurnItems } from './item-events.js';
import { decodeExecLine, type ExecLine } from './parse.js';
import { rateLimitWindows } from './rate-limits.js';
import { CODEX_USAGE_SOURCES, threadReading } from './usage.js';

type TerminalLine = Extract<ExecLine, { type: 'completion' | 'failure' }>;

export class ExecSession {
  private readonly ledger = new UsageLedger(CODEX_USAGE_SOURCES);
  private readonly usage = new TurnEndUsage();
  private readonly config: CodexConfig;
  private readonly verification: Verification;
  private readonly nowMs: () => number;
  /** The thread this session continues; null until the first `thread.started`. */
  threadId: string | null;
  private announced: string | null = null;

  private items: TurnItems;
  private reading: SpendReading | null = null;
  private terminal: TerminalLine | null = null;
  private turnStarted = false;

  constructor(start: CodexSessionStart) {
    this.config = start.config;
    this.verification = start.verification;
    this.nowMs = start.nowMs ?? Date.now;
    this.threadId = start.resumeThreadId;
    this.items = new TurnItems(this.nowMs);
    if (start.resumeThreadId === null) this.ledger.sessionCreated();
  }

  /** The hooks the fork-per-turn skeleton drives. */
  hooks(): ForkPerTurnHooks {
    return {
      promptOnStdin: true,
      beginTurn: () => {
        this.items = new TurnItems(this.nowMs);
        this.reading = null;
        this.terminal = null;
        this.turnStarted = false;
        this.ledger.beginTurn();
      },
      buildArgs: () =>
        execTurnArgs(this.config, { threadId: this.threadId, verification: this.verification }),
      parseLine: (line, ctx) => this.parseLine(line, ctx),
      settleUsage: (ctx, end) => this.settleUsage(ctx, end.cancelled),
      getUsage: () => ({
        usage: this.usage.snapshot(),
        byModel: this.usage.byModel(),
        measured: this.usage.measured(),
      }),
      getSessionId: () => this.threadId ?? '',
      finalMessage: () => this.items.lastMessage,
      onFinalize: () => ({
        terminal: this.terminal === null ? null : this.terminalOf(this.terminal),
        work: new WorkObserver({}).report(),
      }),
    };
  }

  /** Maps one stdout line. */
  parseLine(text: string, ctx: TurnContext): LineVerdict {
    const decoded = decodeExecLine(text);
    if (!decoded.ok) return { type: 'rejected', reason: decoded.reason };
    const line = decoded.line;
    switch (line.type) {
      case 'thread_started':
        this.threadId = line.threadId;
        if (this.announced !== line.threadId) {
          this.announced = line.threadId;
          ctx.emit({ type: 'session_started', sessionId: line.threadId });
        }
        return { type: 'accepted' };
      case 'turn_started':
        this.turnStarted = true;
        return { type: 'accepted' };
      case 'ignored':
        return { type: 'accepted' };
      case 'item':
        if (line.phase === 'started') this.items.started(line.item, ctx);
        else if (line.phase === 'completed') this.items.completed(line.item, ctx);
        return { type: 'accepted' };
      case 'usage':
        this.reading = threadReading(line.usage, null);
        ctx.spend.markModelReached();
        if (line.rateLimits !== null) {
          ctx.emit({
            type: 'rate_limits',
            limitId: line.rateLimits.limitId,
            windows: rateLimitWindows(line.rateLimits, this.nowMs()),
          });
        }
        return { type: 'accepted' };
      case 'error':
        if (line.message !== '') ctx.emit({ type: 'notification', message: line.message });
        return { type: 'accepted' };
      case 'completion':
        if (line.usage !== null) {
          this.reading = threadReading(line.usage, null);
          ctx.spend.markModelReached();
        }
        if (line.lastMessage !== null && this.items.lastMessage === '')
          this.items.lastMessage = line.lastMessage;
        this.terminal = line;
        return { type: 'accepted', terminal: line };
      case 'failure':
        this.terminal = line;
        return { type: 'accepted', terminal: line };
    }
  }

  private terminalOf(line: TerminalLine): Terminal {
    if (line.type === 'completion') {
      return { type: 'success', message: this.items.lastMessage || 'the turn completed' };
    }
    return failureTerminal(line.message, null, this.nowMs());
  }

  private settleUsage(ctx: TurnContext, cancelled: boolean): void {
    // exec shows nothing of a response until an item completes: a turn that started and then
    // ended without its report (stopped, killed) may have been served output we never saw, so
    // it counts as unaccounted rather than as free.
    if (this.turnStarted && this.terminal === null) ctx.spend.markModelReached();
    const end = { replied: this.terminal !== null, cancelled };
    const snapshot = settleTurn(this.ledger, this.usage, ctx.spend, end, this.reading);
    if (snapshot !== null) {
      ctx.emit({
        type: 'token_usage',
        usage: snapshot,
        usageByModel: this.usage.byModel(),
        model: this.config.model,
      });
    }
  }
}
