/**
 * One Claude Code session seen through the fork-per-turn skeleton: the hooks that
 * turn its decoded lines into events, ledger readings and evidence. The ledger and
 * run usage live for the whole session, so turn 2 adds to turn 1; everything that
 * describes a single turn (tool calls in flight, the result line, what a failure
 * looked like before its result) is reset when a turn begins. The outcome itself
 * is left to the shared disposition rule: this file only reports evidence.
 */

import type { RateLimitWindow, TokenCounts } from '../../domain/agent.js';
import {
  ACCEPTED_LINE,
  type ForkPerTurnHooks,
  type LineVerdict,
  type TurnContext,
} from '../core/fork-per-turn.js';
import type { CommandLineTools } from '../core/tool-config.js';
import {
  mapToolCall,
  qualifiedToolName,
  type ToolCall,
  type ToolMapping,
  ToolTracker,
  toolResultEvent,
} from '../core/tools.js';
import { WorkObserver } from '../core/work-observer.js';
import { RunUsage, sameCounts, settleTurn, UsageLedger } from '../usage/index.js';
import { buildTurnArgs } from './command.js';
import type { ClaudeCodeConfig } from './config.js';
import {
  type ApiRetry,
  type ClaudeLine,
  decodeClaudeLine,
  type LineCounts,
  type ResultLine,
  resultTerminal,
} from './parse.js';
import { CLAUDE_CODE_USAGE_SOURCES, messageReading, resultReading, resultShowsSpend } from './usage.js';

/** The one limit Claude Code reports: the account's unified subscription limit. */
const LIMIT_ID = 'unified';
/** Lengths of the windows the CLI names; a name not listed has no known length. */
const WINDOW_MINUTES: Readonly<Record<string, number>> = { five_hour: 5 * 60, seven_day: 7 * 24 * 60 };

/** Claude Code's tool names: their kind and the input member holding the main argument. */
const TOOLS: Readonly<Record<string, ToolMapping>> = {
  Bash: { kind: 'shell', key: 'command' },
  Read: { kind: 'read', key: 'file_path' },
  Glob: { kind: 'read', key: 'pattern' },
  Grep: { kind: 'read', key: 'pattern' },
  Write: { kind: 'edit', key: 'file_path' },
  Edit: { kind: 'edit', key: 'file_path' },
  MultiEdit: { kind: 'edit', key: 'file_path' },
  NotebookEdit: { kind: 'edit', key: 'notebook_path' },
  Skill: { kind: 'skill', key: 'skill' },
};

/** `mcp__<server>__<tool>`: a tool an MCP server serves. */
const MCP_TOOL = /^mcp__(.+?)__(.+)$/;

function toolCall(name: string, input: unknown): ToolCall {
  const mcp = MCP_TOOL.exec(name);
  if (mcp !== null)
    return { name: qualifiedToolName(mcp[1] as string, mcp[2] as string), kind: null, argument: null };
  return mapToolCall(TOOLS, name, input);
}

const WORK_SIGNALS = { assistantOutput: true, toolCalls: true } as const;

export interface SessionStart {
  config: ClaudeCodeConfig;
  /** The id the session is created or resumed under. */
  sessionId: string;
  /** The session exists already (resumed from an earlier run). */
  resumed: boolean;
  verification: { fullContext: boolean } | null;
  /** The session's tool servers (rendered config and names); null = none. */
  tools?: CommandLineTools | null;
  /** Clock for tool durations; Date.now by default. */
  nowMs?: () => number;
}

export class ClaudeCodeSession {
  private readonly ledger = new UsageLedger(CLAUDE_CODE_USAGE_SOURCES);
  private readonly run = new RunUsage();
  private readonly config: ClaudeCodeConfig;
  private readonly verification: { fullContext: boolean } | null;
  private readonly toolServers: CommandLineTools | null;
  private readonly nowMs: () => number;
  /** The CLI has started this session, so later turns continue it. */
  private resumable: boolean;
  private announced = false;
  sessionId: string;

  private tools: ToolTracker;
  private work = new WorkObserver(WORK_SIGNALS);
  private result: ResultLine | null = null;
  private lastRetry: ApiRetry | null = null;
  private syntheticError: string | null = null;
  private rejectedResetMs: number | null = null;
  /** Every rate-limit window the session has heard of, latest report each: one line may name only one. */
  private readonly limitWindows = new Map<string, RateLimitWindow>();
  /** The model of the latest served message (or of the init line). */
  private model: string | null = null;
  /** The message id and usage of the last assistant line, to skip a block repeating them. */
  private lastMessageId: string | null = null;
  private lastUsage: LineCounts | null = null;
  private emitted: { usage: TokenCounts; byModel: Readonly<Record<string, TokenCounts>> } | null = null;

  constructor(start: SessionStart) {
    this.config = start.config;
    this.sessionId = start.sessionId;
    this.resumable = start.resumed;
    this.verification = start.verification;
    this.toolServers = start.tools ?? null;
    this.nowMs = start.nowMs ?? Date.now;
    this.tools = new ToolTracker(this.nowMs);
    // Each process reports only its own spend, so even a resumed session has no history to subtract.
    this.ledger.sessionCreated();
  }

  /** The hooks the fork-per-turn skeleton drives. */
  hooks(): ForkPerTurnHooks {
    return {
      promptOnStdin: true,
      beginTurn: () => this.beginTurn(),
      buildArgs: () =>
        buildTurnArgs(this.config, {
          sessionId: this.sessionId,
          resume: this.resumable,
          verification: this.verification,
          tools: this.toolServers,
        }),
      parseLine: (line, ctx) => this.parseLine(line, ctx),
      settleUsage: (ctx, end) => this.settleUsage(ctx, end.cancelled),
      getUsage: () => ({
        usage: this.run.snapshot(),
        byModel: this.run.byModel(),
        measured: this.run.measured(),
      }),
      getSessionId: () => this.sessionId,
      finalMessage: () => this.result?.text ?? '',
      onFinalize: () => ({
        terminal:
          this.result === null
            ? null
            : resultTerminal(this.result, {
                lastRetry: this.lastRetry,
                syntheticError: this.syntheticError,
                rejectedResetMs: this.rejectedResetMs,
              }),
        work: this.work.report(),
      }),
    };
  }

  /** Emits the account's windows as one limit, the windows this line names updated. */
  private reportLimits(line: Extract<ClaudeLine, { type: 'rate_limit' }>, ctx: TurnContext): void {
    if (line.windows.length === 0) return;
    for (const w of line.windows) {
      // A refusal without a figure means the named window is used up.
      const refused = line.status === 'rejected' && w.name === line.limitType;
      this.limitWindows.set(w.name, {
        window: w.name,
        usedPercent: w.utilization !== null ? Math.round(w.utilization * 10_000) / 100 : refused ? 100 : null,
        windowMinutes: Object.hasOwn(WINDOW_MINUTES, w.name) ? (WINDOW_MINUTES[w.name] ?? null) : null,
        resetsAtMs: w.resetsAtMs,
      });
    }
    ctx.emit({ type: 'rate_limits', limitId: LIMIT_ID, windows: [...this.limitWindows.values()] });
  }

  private beginTurn(): void {
    this.tools = new ToolTracker(this.nowMs);
    this.work = new WorkObserver(WORK_SIGNALS);
    this.result = null;
    this.lastRetry = null;
    this.syntheticError = null;
    this.rejectedResetMs = null;
    this.lastMessageId = null;
    this.lastUsage = null;
    this.ledger.beginTurn();
  }

  /** Maps one stdout line to events, ledger readings and evidence. */
  parseLine(text: string, ctx: TurnContext): LineVerdict {
    const decoded = decodeClaudeLine(text);
    if (!decoded.ok) return { type: 'rejected', reason: decoded.reason };
    return this.apply(decoded.line, ctx);
  }

  private apply(line: ClaudeLine, ctx: TurnContext): LineVerdict {
    switch (line.type) {
      case 'init':
        this.model ??= line.model;
        this.resumable = true;
        if (!this.announced || line.sessionId !== this.sessionId) {
          this.sessionId = line.sessionId;
          this.announced = true;
          ctx.emit({ type: 'session_started', sessionId: line.sessionId });
        }
        return ACCEPTED_LINE;
      case 'api_retry': {
        this.lastRetry = line.retry;
        const r = line.retry;
        const what = [r.status === null ? null : `status ${r.status}`, r.error]
          .filter((x) => x !== null)
          .join(' ');
        const delay = r.delayMs === null ? '' : ` in ${Math.round(r.delayMs)} ms`;
        ctx.emit({
          type: 'notification',
          message: `API request failed (${what || 'no status'}); retry ${r.attempt ?? '?'} of ${r.maxRetries ?? '?'}${delay}`,
        });
        return ACCEPTED_LINE;
      }
      case 'task':
        ctx.spend.markModelReached();
        this.work.observeAssistantOutput();
        if (line.subtype === 'task_started' && line.description !== '') {
          ctx.emit({ type: 'notification', message: `sub-agent started: ${line.description}` });
        }
        return ACCEPTED_LINE;
      case 'thinking':
        ctx.spend.markModelReached();
        return ACCEPTED_LINE;
      case 'assistant':
        this.assistant(line, ctx);
        return ACCEPTED_LINE;
      case 'user':
        for (const result of line.toolResults) {
          const ended = this.tools.end(result.toolUseId);
          if (ended === undefined) continue;
          ctx.emit(toolResultEvent(ended, result.isError));
        }
        return ACCEPTED_LINE;
      case 'rate_limit':
        if (line.status === 'rejected') this.rejectedResetMs = line.resetsAtMs;
        this.reportLimits(line, ctx);
        if (line.status !== 'allowed') {
          const window = line.limitType ?? 'rate limit';
          const used = line.utilization === null ? '' : ` at ${Math.round(line.utilization * 100)}%`;
          const resets =
            line.resetsAtMs === null ? '' : `, resets ${new Date(line.resetsAtMs).toISOString()}`;
          ctx.emit({ type: 'notification', message: `${window} window ${line.status}${used}${resets}` });
        }
        return ACCEPTED_LINE;
      case 'result':
        // With one process per turn its last result covers the whole process.
        this.result = line;
        if (resultShowsSpend(line)) ctx.spend.markModelReached();
        return { type: 'accepted', terminal: line };
      case 'system':
      case 'ignored':
        return ACCEPTED_LINE;
    }
  }

  private assistant(line: Extract<ClaudeLine, { type: 'assistant' }>, ctx: TurnContext): void {
    if (line.synthetic) {
      // The CLI's own words (an API error), not model output: keep the code for classification.
      if (line.error !== null) this.syntheticError = line.error;
      for (const block of line.blocks) {
        if (block.type === 'text' && block.text !== '')
          ctx.emit({ type: 'notification', message: block.text });
      }
      return;
    }
    ctx.spend.markModelReached();
    if (line.model !== null) this.model = line.model;
    // Every content block of a message repeats its usage: a line that repeats the last one adds nothing.
    if (line.usage !== null && !this.repeatsLastReading(line.messageId, line.usage)) {
      const observed = this.ledger.observeRequest(messageReading(line.messageId, line.model, line.usage));
      if (observed.isNew) {
        this.run.setTurnProvisional(observed.turn, observed.byModel);
        this.emitUsage(ctx);
      }
    }
    for (const block of line.blocks) {
      switch (block.type) {
        case 'text':
          this.work.observeAssistantOutput();
          if (block.text !== '') ctx.emit({ type: 'notification', message: block.text });
          break;
        case 'tool_use':
          this.work.observeToolCall();
          this.tools.begin(block.id, toolCall(block.name, block.input));
          break;
        case 'thinking':
          this.work.observeAssistantOutput();
          break;
      }
    }
  }

  private repeatsLastReading(messageId: string | null, usage: LineCounts): boolean {
    const last = this.lastUsage;
    const repeats =
      messageId !== null &&
      last !== null &&
      this.lastMessageId === messageId &&
      last.input === usage.input &&
      last.output === usage.output &&
      last.cacheRead === usage.cacheRead &&
      last.cacheWrite === usage.cacheWrite;
    this.lastMessageId = messageId;
    this.lastUsage = usage;
    return repeats;
  }

  private settleUsage(ctx: TurnContext, cancelled: boolean): void {
    const reading = this.result === null ? null : resultReading(this.result, this.model);
    const end = { replied: this.result !== null, cancelled };
    if (settleTurn(this.ledger, this.run, ctx.spend, end, reading) !== null) this.emitUsage(ctx);
  }

  /** Emits the run snapshot unless it is the one last emitted. */
  private emitUsage(ctx: TurnContext): void {
    const usage = this.run.snapshot();
    const byModel = this.run.byModel();
    const last = this.emitted;
    if (last !== null && sameCounts(last.usage, usage) && sameModels(last.byModel, byModel)) return;
    this.emitted = { usage, byModel };
    ctx.emit({ type: 'token_usage', usage, usageByModel: byModel, model: this.model });
  }
}

function sameModels(
  a: Readonly<Record<string, TokenCounts>>,
  b: Readonly<Record<string, TokenCounts>>,
): boolean {
  if (a === b) return true;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => {
    const x = a[k];
    const y = b[k];
    return x !== undefined && y !== undefined && sameCounts(x, y);
  });
}
