/**
 * One Copilot CLI session seen through the fork-per-turn skeleton: the hooks that
 * turn its decoded lines into events and evidence, and its usage files into ledger
 * readings. The ledger and the session's usage live for the whole session, so turn
 * 2 adds to turn 1; what describes a single turn (tool calls in flight, the result
 * line, the last error) is reset when a turn begins. The figures settle once the
 * turn's process has exited, from the usage summary it wrote, or from the session's
 * journal when it wrote none; the outcome is left to the shared disposition rule.
 */

import type { ForkPerTurnHooks, LineVerdict, TurnContext } from '../core/fork-per-turn.js';
import type { CommandLineTools } from '../core/tool-config.js';
import {
  mapToolCall,
  qualifiedToolName,
  type ToolMapping,
  ToolTracker,
  toolResultEvent,
} from '../core/tools.js';
import { WorkObserver } from '../core/work-observer.js';
import { type SpendReading, settleSpendNow, TurnEndUsage, UsageLedger } from '../usage/index.js';
import { buildTurnArgs, turnEnv } from './command.js';
import type { CopilotCliConfig } from './config.js';
import {
  type CopilotLine,
  decodeCopilotLine,
  type ResultLine,
  type SessionError,
  turnTerminal,
} from './parse.js';
import type { SessionFiles } from './session-files.js';
import { COPILOT_CLI_USAGE_SOURCES } from './usage.js';

/** Copilot's tool names: their kind and the input member holding the main argument. */
const TOOLS: Readonly<Record<string, ToolMapping>> = {
  bash: { kind: 'shell', key: 'command' },
  view: { kind: 'read', key: 'path' },
  grep: { kind: 'read', key: 'pattern' },
  glob: { kind: 'read', key: 'pattern' },
  create: { kind: 'edit', key: 'path' },
  edit: { kind: 'edit', key: 'path' },
  str_replace_editor: { kind: 'edit', key: 'path' },
  skill: { kind: 'skill', key: 'skill' },
};

const WORK_SIGNALS = { assistantOutput: true, toolCalls: true } as const;

/** The verdict of most lines, shared: the skeleton only reads it. */
const ACCEPTED: LineVerdict = Object.freeze({ type: 'accepted' });

export interface SessionStart {
  config: CopilotCliConfig;
  /** The id the session is created (`--session-id`) or resumed under. */
  sessionId: string;
  /** The session exists already (resumed from an earlier run). */
  resumed: boolean;
  verification: { fullContext: boolean } | null;
  /** The session's files on this machine; null for a session on an SSH host. */
  files: SessionFiles | null;
  /** The session's tool servers (rendered config and names); null = none. */
  tools?: CommandLineTools | null;
  /** Clock for tool durations; Date.now by default. */
  nowMs?: () => number;
}

export class CopilotCliSession {
  private readonly ledger = new UsageLedger(COPILOT_CLI_USAGE_SOURCES);
  private readonly usage = new TurnEndUsage();
  private readonly config: CopilotCliConfig;
  private readonly verification: { fullContext: boolean } | null;
  private readonly files: SessionFiles | null;
  private readonly toolServers: CommandLineTools | null;
  private readonly nowMs: () => number;
  /** The CLI has started this session, so later turns continue it. */
  private resumable: boolean;
  private announced = false;
  sessionId: string;

  private tools: ToolTracker;
  private work = new WorkObserver(WORK_SIGNALS);
  private result: ResultLine | null = null;
  private lastError: SessionError | null = null;
  private notAuthenticated: string | null = null;
  private lastMessage = '';
  private summary: string | null = null;
  /** Messages whose first delta was announced. */
  private streaming = new Set<string>();
  /** The model of the latest call or message. */
  private model: string | null = null;

  constructor(start: SessionStart) {
    this.config = start.config;
    this.sessionId = start.sessionId;
    this.resumable = start.resumed;
    this.verification = start.verification;
    this.files = start.files;
    this.toolServers = start.tools ?? null;
    this.nowMs = start.nowMs ?? Date.now;
    this.tools = new ToolTracker(this.nowMs);
    if (!start.resumed) {
      this.ledger.sessionCreated();
    } else {
      // What the session spent before this run; unknown when its journal is not here,
      // and the ledger then estimates it from the first summary.
      const history = this.files?.readJournal(start.sessionId) ?? null;
      if (history !== null) this.ledger.boundary(history);
    }
  }

  /** The hooks the fork-per-turn skeleton drives. */
  hooks(): ForkPerTurnHooks {
    return {
      promptOnStdin: false,
      beginTurn: () => this.beginTurn(),
      buildArgs: (ctx) =>
        buildTurnArgs(this.config, {
          prompt: ctx.prompt,
          sessionId: this.sessionId,
          resume: this.resumable,
          verification: this.verification,
          usageReport: this.files?.reportPath(ctx.turn) ?? null,
          tools: this.toolServers,
        }),
      turnEnv: (_ctx, base) => turnEnv(base),
      // The id is ours until the CLI says otherwise: announce it before any output.
      emitSessionStartId: () => {
        if (this.announced) return null;
        this.announced = true;
        return this.sessionId;
      },
      parseLine: (line, ctx) => this.parseLine(line, ctx),
      settleUsage: (ctx, end) => this.settleUsage(ctx, end.cancelled),
      getUsage: () => ({
        usage: this.usage.snapshot(),
        byModel: this.usage.byModel(),
        measured: this.usage.measured(),
      }),
      getSessionId: () => this.sessionId,
      finalMessage: () => this.finalMessage(),
      onFinalize: () => ({
        terminal: turnTerminal(this.result, {
          lastError: this.lastError,
          notAuthenticated: this.notAuthenticated,
          finalMessage: this.finalMessage(),
        }),
        work: this.work.report(),
      }),
    };
  }

  private beginTurn(): void {
    this.tools = new ToolTracker(this.nowMs);
    this.work = new WorkObserver(WORK_SIGNALS);
    this.result = null;
    this.lastError = null;
    this.notAuthenticated = null;
    this.lastMessage = '';
    this.summary = null;
    this.streaming = new Set();
    this.ledger.beginTurn();
  }

  /** The agent's completion summary when it gave one, else its last words. */
  private finalMessage(): string {
    return this.summary || this.lastMessage;
  }

  /** Maps one stdout line to events and evidence. */
  parseLine(text: string, ctx: TurnContext): LineVerdict {
    const decoded = decodeCopilotLine(text);
    if (!decoded.ok) return { type: 'rejected', reason: decoded.reason };
    // Any event of ours means the CLI opened the session: a later turn resumes it.
    if (decoded.line.type !== 'not_authenticated') this.resumable = true;
    return this.apply(decoded.line, ctx);
  }

  private apply(line: CopilotLine, ctx: TurnContext): LineVerdict {
    switch (line.type) {
      case 'result':
        this.result = line;
        if (line.sessionId !== null && line.sessionId !== '' && line.sessionId !== this.sessionId) {
          this.sessionId = line.sessionId;
          ctx.emit({ type: 'session_started', sessionId: line.sessionId });
        }
        return { type: 'accepted', terminal: line };
      case 'message':
        ctx.spend.markModelReached();
        if (line.model !== null) this.model = line.model;
        if (line.content !== '') {
          this.work.observeAssistantOutput();
          this.lastMessage = line.content;
          ctx.emit({ type: 'notification', message: line.content });
        }
        return ACCEPTED;
      case 'delta':
        ctx.spend.markModelReached();
        this.work.observeAssistantOutput();
        // The whole message follows once it is complete; its first words show the model answering.
        if (line.text !== '' && !this.streaming.has(line.messageId ?? '')) {
          this.streaming.add(line.messageId ?? '');
          ctx.emit({ type: 'notification', message: line.text });
        }
        return ACCEPTED;
      case 'reasoning':
        ctx.spend.markModelReached();
        this.work.observeAssistantOutput();
        return ACCEPTED;
      case 'tool_start':
        ctx.spend.markModelReached();
        this.work.observeToolCall();
        // An MCP tool as `server.tool`, as other kinds name it, not Copilot's `server-tool`.
        this.tools.begin(
          line.toolCallId,
          line.mcp === null
            ? mapToolCall(TOOLS, line.toolName, line.arguments)
            : { name: qualifiedToolName(line.mcp.server, line.mcp.tool), kind: null, argument: null },
        );
        return ACCEPTED;
      case 'tool_complete': {
        const ended = this.tools.end(line.toolCallId);
        if (ended !== undefined) {
          ctx.emit(toolResultEvent(ended, !line.success));
        }
        return ACCEPTED;
      }
      case 'call_failure': {
        const status = line.statusCode === null ? 'no status' : `status ${line.statusCode}`;
        const attempt = line.attempt === null ? '' : `, attempt ${line.attempt + 1}`;
        ctx.emit({ type: 'notification', message: `model call failed (${status}${attempt})` });
        return ACCEPTED;
      }
      case 'session_error':
        this.lastError = line;
        if (line.message !== '') ctx.emit({ type: 'notification', message: line.message });
        return ACCEPTED;
      case 'notice':
        // A retry notice repeats the call failure just reported.
        if (line.message !== '' && line.subtype !== 'model_retry') {
          ctx.emit({ type: line.level === 'warning' ? 'warning' : 'notification', message: line.message });
        }
        return ACCEPTED;
      case 'task_complete':
        this.summary = line.summary;
        if (line.summary !== '')
          ctx.emit({ type: 'notification', message: `task complete: ${line.summary}` });
        return ACCEPTED;
      case 'model':
        this.model = line.model;
        return ACCEPTED;
      case 'not_authenticated':
        this.notAuthenticated = line.message;
        return { type: 'accepted', terminal: line };
      case 'ignored':
        return ACCEPTED;
    }
  }

  private settleUsage(ctx: TurnContext, cancelled: boolean): void {
    const files = this.files;
    const reading: SpendReading | null =
      files?.readReport(ctx.turn, this.result?.premiumRequests ?? null) ?? null;
    const end = { replied: this.result !== null, cancelled, modelReached: ctx.spend.modelReached };
    const sessionId = this.sessionId;
    const settlement = settleSpendNow(this.ledger, end, reading, ctx.spend, () =>
      files === null ? null : files.readJournal(sessionId),
    );
    const snapshot = this.usage.settle(settlement);
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
