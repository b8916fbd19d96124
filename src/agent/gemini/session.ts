/**
 * One Gemini CLI session seen through the fork-per-turn skeleton: the hooks that
 * turn its decoded lines into events, a ledger reading and evidence. The ledger
 * and the session's usage live for the whole session, so turn 2 adds to turn 1;
 * what describes a single turn (tools in flight, text not yet reported, the result
 * line) is reset when a turn begins. The kind declares no work signal: Gemini CLI
 * exits 0 when it is stopped mid-turn, so a turn without its result line is never
 * a success, whatever it printed before. The outcome itself is left to the shared
 * disposition rule; this file only reports evidence.
 */
import type { ForkPerTurnHooks, LineVerdict, TurnContext } from '../core/fork-per-turn.js';
import { mapToolCall, type ToolMapping, ToolTracker, toolResultEvent } from '../core/tools.js';
import { WorkObserver } from '../core/work-observer.js';
import { type SpendReading, settleTurn, TurnEndUsage, UsageLedger } from '../usage/index.js';
import { buildTurnArgs } from './command.js';
import type { GeminiConfig } from './config.js';
import { decodeGeminiLine, type GeminiLine, type ResultLine, resultTerminal } from './parse.js';
import { GEMINI_USAGE_SOURCES, statsReading, statsShowSpend } from './usage.js';

/** Gemini CLI's tool names: their kind and the parameter holding the main argument. */
const TOOLS: Readonly<Record<string, ToolMapping>> = {
  run_shell_command: { kind: 'shell', key: 'command' },
  read_file: { kind: 'read', key: 'file_path' },
  read_many_files: { kind: 'read', key: 'include' },
  list_directory: { kind: 'read', key: 'dir_path' },
  glob: { kind: 'read', key: 'pattern' },
  grep_search: { kind: 'read', key: 'pattern' },
  search_file_content: { kind: 'read', key: 'pattern' },
  write_file: { kind: 'edit', key: 'file_path' },
  replace: { kind: 'edit', key: 'file_path' },
  activate_skill: { kind: 'skill', key: 'name' },
};

/** The verdict of most lines, shared: the skeleton only reads it. */
const ACCEPTED: LineVerdict = Object.freeze({ type: 'accepted' });

export interface SessionStart {
  config: GeminiConfig;
  /** The id the session is created or resumed under. */
  sessionId: string;
  /** The session exists already (resumed from an earlier run). */
  resumed: boolean;
  /**
   * Whether the CLI's record of a session is where `--resume` will look; null when it
   * cannot be checked from here (a session on an SSH host).
   */
  isStored: ((sessionId: string) => boolean) | null;
  /** Clock for tool durations; Date.now by default. */
  nowMs?: () => number;
}

export class GeminiSession {
  private readonly ledger = new UsageLedger(GEMINI_USAGE_SOURCES);
  private readonly usage = new TurnEndUsage();
  private readonly config: GeminiConfig;
  private readonly isStored: ((sessionId: string) => boolean) | null;
  private readonly nowMs: () => number;
  /** The CLI has started this session, so a later turn continues it. */
  private resumable: boolean;
  private resumeThisTurn = false;
  private announced = false;
  sessionId: string;
  /** The model the init line named (`auto` when the CLI routes). */
  private model: string | null;

  private tools: ToolTracker;
  private result: ResultLine | null = null;
  /** Assistant text received but not yet reported. */
  private pendingText = '';
  /** The assistant's text since its last tool call: the turn's final message. */
  private lastMessage = '';

  constructor(start: SessionStart) {
    this.config = start.config;
    this.sessionId = start.sessionId;
    this.resumable = start.resumed;
    this.isStored = start.isStored;
    this.nowMs = start.nowMs ?? Date.now;
    this.model = start.config.model;
    this.tools = new ToolTracker(this.nowMs);
    // Each process reports only its own turn, so even a resumed session has no history to subtract.
    this.ledger.sessionCreated();
  }

  /** The hooks the fork-per-turn skeleton drives. */
  hooks(): ForkPerTurnHooks {
    return {
      promptOnStdin: true,
      beginTurn: (ctx) => this.beginTurn(ctx),
      buildArgs: () => buildTurnArgs(this.config, { sessionId: this.sessionId, resume: this.resumeThisTurn }),
      parseLine: (line, ctx) => this.parseLine(line, ctx),
      settleUsage: (ctx, end) => this.settleUsage(ctx, end.cancelled),
      getUsage: () => ({
        usage: this.usage.snapshot(),
        byModel: this.usage.byModel(),
        measured: this.usage.measured(),
      }),
      getSessionId: () => this.sessionId,
      finalMessage: () => this.lastMessage.trim(),
      onFinalize: (input) => ({
        terminal:
          this.result === null ? null : resultTerminal(this.result, input.exitCode, this.lastMessage.trim()),
        work: new WorkObserver({}).report(),
      }),
    };
  }

  private beginTurn(ctx: TurnContext): void {
    this.tools = new ToolTracker(this.nowMs);
    this.result = null;
    this.pendingText = '';
    this.lastMessage = '';
    this.ledger.beginTurn();
    this.resumeThisTurn = this.resumable;
    if (this.resumable && this.isStored !== null && !this.isStored(this.sessionId)) {
      // `--resume` of a session without its record fails every turn; start it again instead.
      this.resumeThisTurn = false;
      ctx.emit({
        type: 'warning',
        message: `no record of session ${this.sessionId} in the managed home; this turn starts it afresh without the earlier conversation`,
      });
    }
  }

  /** Maps one stdout line to events, a ledger reading and evidence. */
  parseLine(text: string, ctx: TurnContext): LineVerdict {
    const decoded = decodeGeminiLine(text);
    if (!decoded.ok) return { type: 'rejected', reason: decoded.reason };
    return this.apply(decoded.line, ctx);
  }

  private apply(line: GeminiLine, ctx: TurnContext): LineVerdict {
    if (line.type !== 'assistant_text') this.flushText(ctx, true);
    switch (line.type) {
      case 'init':
        if (line.model !== null && this.config.model === null) this.model = line.model;
        this.resumable = true;
        if (!this.announced || line.sessionId !== this.sessionId) {
          this.sessionId = line.sessionId;
          this.announced = true;
          ctx.emit({ type: 'session_started', sessionId: line.sessionId });
        }
        return ACCEPTED;
      case 'assistant_text':
        ctx.spend.markModelReached();
        this.pendingText += line.text;
        this.lastMessage += line.text;
        this.flushText(ctx, false);
        return ACCEPTED;
      case 'tool_use':
        ctx.spend.markModelReached();
        this.lastMessage = '';
        this.tools.begin(line.toolId, mapToolCall(TOOLS, line.toolName, line.parameters));
        return ACCEPTED;
      case 'tool_result': {
        const ended = this.tools.end(line.toolId);
        if (ended !== undefined) {
          ctx.emit(toolResultEvent(ended, line.failed));
        }
        return ACCEPTED;
      }
      case 'error':
        if (line.message !== '') ctx.emit({ type: 'warning', message: `${line.severity}: ${line.message}` });
        return ACCEPTED;
      case 'result':
        // One process per turn: its result covers the whole turn.
        this.result = line;
        if (line.stats !== null && statsShowSpend(line.stats)) ctx.spend.markModelReached();
        return { type: 'accepted', terminal: line };
      case 'user_message':
      case 'ignored':
        return ACCEPTED;
    }
  }

  /**
   * Reports pending assistant text as a notification: all of it when `all` (another
   * kind of line came, or the turn is over), else up to its last line break, so a long
   * answer is reported as it streams without one event per fragment.
   */
  private flushText(ctx: TurnContext, all: boolean): void {
    const cut = all ? this.pendingText.length : this.pendingText.lastIndexOf('\n') + 1;
    if (cut <= 0) return;
    const text = this.pendingText.slice(0, cut).trim();
    this.pendingText = this.pendingText.slice(cut);
    if (text !== '') ctx.emit({ type: 'notification', message: text });
  }

  private settleUsage(ctx: TurnContext, cancelled: boolean): void {
    this.flushText(ctx, true);
    const stats = this.result?.stats ?? null;
    const reading: SpendReading | null = stats === null ? null : statsReading(stats, this.model);
    const end = { replied: this.result !== null, cancelled };
    const snapshot = settleTurn(this.ledger, this.usage, ctx.spend, end, reading);
    if (snapshot !== null) {
      ctx.emit({
        type: 'token_usage',
        usage: snapshot,
        usageByModel: this.usage.byModel(),
        model: reading?.model ?? this.model,
      });
    }
  }
}
