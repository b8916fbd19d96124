/**
 * Session state and hooks for runtimes that write the built-in JSON-lines stream
 * (mock and echo). Usage goes through the ledger (a request repeated on several
 * lines is counted once) and RunUsage (turn 2 adds to turn 1); the outcome is
 * left to the shared disposition rule: this file only reports evidence.
 */
import type { TokenCounts } from '../../domain/agent.js';
import {
  ACCEPTED_LINE,
  type ForkPerTurnHooks,
  type LineVerdict,
  type TurnContext,
} from '../core/fork-per-turn.js';
import { mapToolCall, type ToolMapping, ToolTracker, toolResultEvent } from '../core/tools.js';
import { WorkObserver } from '../core/work-observer.js';
import {
  RunUsage,
  settleTurn,
  spendReading,
  UNIT_USD,
  UsageLedger,
  type UsageSources,
  usdToMicros,
} from '../usage/index.js';
import { decodeLine, type StreamLine } from './stream.js';

const TOOLS: Readonly<Record<string, ToolMapping>> = {
  Bash: { kind: 'shell', key: 'command' },
  Read: { kind: 'read', key: 'file_path' },
  Write: { kind: 'edit', key: 'file_path' },
  Edit: { kind: 'edit', key: 'file_path' },
  Skill: { kind: 'skill', key: 'skill' },
};

type ResultLine = Extract<StreamLine, { type: 'result' }>;

/** Per-session state of a stream runtime; the ledger and run usage live across turns. */
export class StreamSession {
  private readonly ledger: UsageLedger;
  private readonly run = new RunUsage();
  private tools = new ToolTracker();
  private work = new WorkObserver({ assistantOutput: true, toolCalls: true });
  private result: ResultLine | null = null;
  private announced = false;
  sessionId: string;

  constructor(
    private readonly sources: UsageSources,
    sessionId: string,
  ) {
    this.ledger = new UsageLedger(sources);
    this.sessionId = sessionId;
    // The built-in runtimes keep no history: even a resumed session starts counting at zero.
    this.ledger.sessionCreated();
  }

  /** The hooks for a fork-per-turn session, given the kind's argv and environment. */
  hooks(launch: Pick<ForkPerTurnHooks, 'buildArgs' | 'turnEnv'>): ForkPerTurnHooks {
    return {
      ...launch,
      promptOnStdin: true,
      beginTurn: () => {
        this.tools = new ToolTracker();
        this.work = new WorkObserver({ assistantOutput: true, toolCalls: true });
        this.result = null;
        this.ledger.beginTurn();
      },
      parseLine: (line, ctx) => this.parseLine(line, ctx),
      settleUsage: (ctx, end) => {
        settleTurn(
          this.ledger,
          this.run,
          ctx.spend,
          { replied: this.result !== null, cancelled: end.cancelled },
          null,
        );
      },
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
            : this.result.status === 'success'
              ? { type: 'success', message: this.result.text }
              : { type: 'failure', message: this.result.text },
        work: this.work.report(),
      }),
    };
  }

  private parseLine(text: string, ctx: TurnContext): LineVerdict {
    const line = decodeLine(text);
    if (typeof line === 'string') return { type: 'rejected', reason: line };
    switch (line.type) {
      case 'start':
        if (!this.announced || line.sessionId !== this.sessionId) {
          this.sessionId = line.sessionId;
          this.announced = true;
          ctx.emit({ type: 'session_started', sessionId: line.sessionId });
        }
        return ACCEPTED_LINE;
      case 'message': {
        ctx.spend.markModelReached();
        this.work.observeAssistantOutput();
        if (line.usage !== null) {
          const observed = this.ledger.observeRequest(
            spendReading({
              input: line.usage.input,
              output: line.usage.output,
              cacheRead: line.usage.cacheRead,
              cacheWrite: 0,
              model: line.model,
              identity: line.id,
              amounts: line.costUsd === null ? [] : [{ unit: UNIT_USD, micros: usdToMicros(line.costUsd) }],
            }),
          );
          const snapshot: TokenCounts = this.run.setTurnProvisional(observed.turn, observed.byModel);
          if (observed.isNew) {
            ctx.emit({
              type: 'token_usage',
              usage: snapshot,
              usageByModel: this.run.byModel(),
              model: line.model,
            });
          }
        }
        if (line.text !== '') ctx.emit({ type: 'notification', message: line.text });
        return ACCEPTED_LINE;
      }
      case 'tool_call':
        ctx.spend.markModelReached();
        this.work.observeToolCall();
        this.tools.begin(line.id, mapToolCall(TOOLS, line.name, line.input));
        return ACCEPTED_LINE;
      case 'tool_result': {
        const ended = this.tools.end(line.id);
        if (ended !== undefined) {
          ctx.emit(toolResultEvent(ended, !line.ok));
        }
        return ACCEPTED_LINE;
      }
      case 'notice':
        ctx.emit({ type: 'notification', message: line.text });
        return ACCEPTED_LINE;
      case 'result':
        this.result = line;
        return { type: 'accepted', terminal: line };
    }
  }

  /** The sources this session counts with. */
  get usageSources(): UsageSources {
    return this.sources;
  }
}
