/**
 * One OpenCode session seen through the fork-per-turn skeleton: the hooks that
 * turn its decoded lines into events, ledger readings and evidence. The ledger
 * and the run usage live for the whole session, so turn 2 adds to turn 1; what
 * describes a single turn (its last step, its error, its final text) is reset when
 * a turn begins. The session's id is learned from the first line of its first
 * turn (every line names it) and every later turn continues it with `--session`.
 * The kind declares no work signal: a turn whose last step asked for more tools,
 * or that printed nothing but a step start, was cut short, whatever the exit code.
 * The outcome itself is left to the shared disposition rule.
 */
import type { TokenCounts } from '../../domain/agent.js';
import type { ForkPerTurnHooks, LineVerdict, TurnContext } from '../core/fork-per-turn.js';
import { mapToolCall, type ToolMapping, toolResultEvent } from '../core/tools.js';
import { WorkObserver } from '../core/work-observer.js';
import { RunUsage, type SpendReading, sameCounts, settleTurn, UsageLedger } from '../usage/index.js';
import { buildTurnArgs, sessionTitle } from './command.js';
import type { OpencodeConfig } from './config.js';
import type { StoredSession } from './home.js';
import {
  decodeOpencodeLine,
  type ErrorLine,
  type OpencodeLine,
  type StepFinish,
  type ToolUse,
  turnTerminal,
} from './parse.js';
import { OPENCODE_USAGE_SOURCES, stepReading, stepShowsSpend, subAgentReading } from './usage.js';

/** OpenCode's tool names: their kind and the input member holding the main argument. */
const TOOLS: Readonly<Record<string, ToolMapping>> = {
  bash: { kind: 'shell', key: 'command' },
  read: { kind: 'read', key: 'filePath' },
  glob: { kind: 'read', key: 'pattern' },
  grep: { kind: 'read', key: 'pattern' },
  list: { kind: 'read', key: 'path' },
  edit: { kind: 'edit', key: 'filePath' },
  multiedit: { kind: 'edit', key: 'filePath' },
  write: { kind: 'edit', key: 'filePath' },
  patch: { kind: 'edit', key: 'filePath' },
  skill: { kind: 'skill', key: 'name' },
};

/** The tool that runs a sub-agent in a session of its own, whose steps stdout never shows. */
const SUB_AGENT_TOOL = 'task';

/** The verdict of most lines, shared: the skeleton only reads it. */
const ACCEPTED: LineVerdict = Object.freeze({ type: 'accepted' });

export interface SessionStart {
  config: OpencodeConfig;
  /** The session to continue (from an earlier run); null for a new one. */
  resumeSessionId: string | null;
  /** The folder the turns run in, as OpenCode records it for a session. */
  workspacePath: string;
  /** What OpenCode's database holds for a session; null when it cannot be checked from here (an SSH host). */
  lookup: ((sessionId: string) => StoredSession | null) | null;
}

export class OpencodeSession {
  private readonly ledger = new UsageLedger(OPENCODE_USAGE_SOURCES);
  private readonly run = new RunUsage();
  private readonly config: OpencodeConfig;
  private readonly workspacePath: string;
  private readonly lookup: ((sessionId: string) => StoredSession | null) | null;
  /** The CLI has created this session, so a later turn continues it. */
  private resumable: boolean;
  private resumeThisTurn = false;
  private announced = false;
  sessionId: string;

  private lastStep: StepFinish | null = null;
  private lastError: ErrorLine | null = null;
  /** The assistant's text parts since its last tool call: the turn's final message. */
  private finalText: string[] = [];
  private emitted: TokenCounts | null = null;

  constructor(start: SessionStart) {
    this.config = start.config;
    this.sessionId = start.resumeSessionId ?? '';
    this.resumable = start.resumeSessionId !== null;
    this.workspacePath = start.workspacePath;
    this.lookup = start.lookup;
    // Each process prints only its own steps, so even a resumed session has no history to subtract.
    this.ledger.sessionCreated();
  }

  /** The hooks the fork-per-turn skeleton drives. */
  hooks(): ForkPerTurnHooks {
    return {
      promptOnStdin: true,
      beginTurn: (ctx) => this.beginTurn(ctx),
      buildArgs: (ctx) =>
        buildTurnArgs(this.config, {
          resumeSessionId: this.resumeThisTurn ? this.sessionId : null,
          title: sessionTitle(ctx.issue),
        }),
      parseLine: (line, ctx) => this.parseLine(line, ctx),
      settleUsage: (ctx, end) => this.settleUsage(ctx, end.cancelled),
      getUsage: () => ({ usage: this.run.snapshot(), byModel: {}, measured: this.run.measured() }),
      getSessionId: () => this.sessionId,
      finalMessage: () => this.finalMessage(),
      onFinalize: () => ({
        terminal: turnTerminal(this.lastError, this.lastStep, this.finalMessage()),
        work: new WorkObserver({}).report(),
      }),
    };
  }

  private finalMessage(): string {
    return this.finalText.join('\n\n').trim();
  }

  private beginTurn(ctx: TurnContext): void {
    this.lastStep = null;
    this.lastError = null;
    this.finalText = [];
    this.ledger.beginTurn();
    this.resumeThisTurn = this.resumable;
    // Only an id from an earlier run is looked up: one this run's CLI has named exists.
    if (!this.resumable || this.announced || this.lookup === null) return;
    const found = this.lookup(this.sessionId);
    if (found === null) return;
    // Resuming a session the database lacks fails the turn; one made for another folder
    // makes the CLI wait forever. Either way this turn starts the session afresh.
    const why = !found.stored
      ? `no record of session ${this.sessionId} in the managed home`
      : found.directory !== this.workspacePath
        ? `session ${this.sessionId} was made in ${found.directory}, not in this workspace`
        : null;
    if (why === null) return;
    this.resumeThisTurn = false;
    ctx.emit({
      type: 'warning',
      message: `${why}; this turn starts a new session without the earlier conversation`,
    });
  }

  /** Maps one stdout line to events, ledger readings and evidence. */
  parseLine(text: string, ctx: TurnContext): LineVerdict {
    const decoded = decodeOpencodeLine(text);
    if (!decoded.ok) return { type: 'rejected', reason: decoded.reason };
    if ('plain' in decoded) {
      ctx.emit({
        type: 'warning',
        message: `a permission rule asked about ${decoded.plain.request}; opencode rejected the call (nobody can answer in a run)`,
      });
      return ACCEPTED;
    }
    return this.apply(decoded.line, ctx);
  }

  private apply(line: OpencodeLine, ctx: TurnContext): LineVerdict {
    if (line.sessionId !== null && line.sessionId !== '') this.learnSession(line.sessionId, ctx);
    switch (line.type) {
      case 'step_start':
      case 'ignored':
        return ACCEPTED;
      case 'text':
        ctx.spend.markModelReached();
        if (line.text.trim() !== '') {
          this.finalText.push(line.text);
          ctx.emit({ type: 'notification', message: line.text });
        }
        return ACCEPTED;
      case 'reasoning':
        ctx.spend.markModelReached();
        return ACCEPTED;
      case 'tool_use':
        this.toolUse(line, ctx);
        return ACCEPTED;
      case 'step_finish':
        this.stepFinish(line, ctx);
        return { type: 'accepted', terminal: line };
      case 'error':
        this.lastError = line;
        return { type: 'accepted', terminal: line };
    }
  }

  private learnSession(sessionId: string, ctx: TurnContext): void {
    // The session exists in the CLI's database from its first line on, even if the turn fails.
    this.resumable = true;
    if (this.announced && sessionId === this.sessionId) return;
    this.sessionId = sessionId;
    this.announced = true;
    ctx.emit({ type: 'session_started', sessionId });
  }

  private toolUse(line: ToolUse, ctx: TurnContext): void {
    ctx.spend.markModelReached();
    this.finalText = [];
    const call = mapToolCall(TOOLS, line.tool, line.input);
    const durationMs =
      line.startMs !== null && line.endMs !== null ? Math.max(0, line.endMs - line.startMs) : 0;
    ctx.emit(toolResultEvent({ call, durationMs }, line.status !== 'completed'));
    if (line.tool === SUB_AGENT_TOOL) this.observe(subAgentReading(line.callId), ctx);
  }

  private stepFinish(line: StepFinish, ctx: TurnContext): void {
    this.lastStep = line;
    if (stepShowsSpend(line)) ctx.spend.markModelReached();
    const reading = stepReading(line);
    if (reading !== null) this.observe(reading, ctx);
  }

  private observe(reading: SpendReading, ctx: TurnContext): void {
    const observed = this.ledger.observeRequest(reading);
    if (!observed.isNew) return;
    this.run.setTurnProvisional(observed.turn);
    this.emitUsage(ctx);
  }

  private settleUsage(ctx: TurnContext, cancelled: boolean): void {
    // No result line: the steps are the turn's figure once the runtime said it is done.
    const replied = turnTerminal(this.lastError, this.lastStep, '')?.type === 'success';
    if (settleTurn(this.ledger, this.run, ctx.spend, { replied, cancelled }, null) !== null) {
      this.emitUsage(ctx);
    }
  }

  /** Emits the run snapshot unless it is the one last emitted. */
  private emitUsage(ctx: TurnContext): void {
    const usage = this.run.snapshot();
    if (this.emitted !== null && sameCounts(this.emitted, usage)) return;
    this.emitted = usage;
    ctx.emit({ type: 'token_usage', usage, usageByModel: {}, model: this.config.model });
  }
}
