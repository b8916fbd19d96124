/**
 * The frame every session skeleton opens around a turn (fork-per-turn and persistent alike):
 * events stamped with time and pid and cleaned once, closed when the turn returns; the
 * finalize context; the turn's figures for the disposition rule; and what each turn timer
 * means when it fires. One place, so both skeletons report turns the same way.
 */
import type { AgentEvent, AgentSettings, RunTurnParams } from '../../domain/agent.js';
import { TurnSpend, type UsageSources } from '../usage/index.js';
import type { FinalizeContext, TurnMeta } from './disposition.js';
import type { TurnContext, UsageView } from './fork-per-turn.js';
import type { TurnTimerReason } from './process/timers.js';
import { capMessageBytes, maskSecrets, sanitize } from './sanitize.js';

const MESSAGE_MAX_CHARS = 500;
/** Rate-limit names become metric labels: short, and few windows per limit. */
const RATE_LIMIT_NAME_MAX_CHARS = 64;
const RATE_LIMIT_MAX_WINDOWS = 8;

export interface TurnFrame {
  ctx: TurnContext;
  fctx: FinalizeContext;
  /** The turn's figures as they stand now. */
  meta(): TurnMeta;
  /** Ends event delivery: nothing is emitted after the turn returned. */
  close(): void;
}

/** Opens the frame of turn `turn`; `pid` reads the agent's pid ("" before spawn). */
export function openTurnFrame(input: {
  turn: number;
  params: RunTurnParams;
  workspacePath: string;
  sources: UsageSources;
  now: () => Date;
  pid: () => string;
  hooks: { getUsage(): UsageView; getSessionId(): string; finalMessage?(): string };
}): TurnFrame {
  const { params, workspacePath, now, pid, hooks } = input;
  const spend = new TurnSpend();
  let open = true;
  const emitComplete = (event: AgentEvent) => {
    if (open) params.onEvent(cleanEvent(event, workspacePath));
  };
  const ctx: TurnContext = {
    turn: input.turn,
    prompt: params.prompt,
    issue: params.issue,
    spend,
    emit: (event) => emitComplete({ ...event, at: now().toISOString(), agentPid: pid() } as AgentEvent),
    get pid() {
      return pid();
    },
  };
  return {
    ctx,
    fctx: { emit: emitComplete, sources: input.sources, spend, now },
    meta: () => {
      const usage = hooks.getUsage();
      return {
        sessionId: hooks.getSessionId(),
        agentPid: pid(),
        usage: usage.usage,
        usageByModel: usage.byModel,
        usageMeasured: usage.measured,
        // The final message becomes a tracker comment and a stored row: a secret the agent
        // echoed must not, and neither may megabytes of text.
        finalMessage: capMessageBytes(maskSecrets(hooks.finalMessage?.() ?? '')),
      };
    },
    close: () => {
      open = false;
    },
  };
}

/** What a fired turn timer means: the turn limit, a stall, or no first event. */
export function timerInterrupt(
  reason: TurnTimerReason,
  agent: Pick<AgentSettings, 'turnTimeoutMs' | 'stallTimeoutMs'>,
  firstEventTimeoutMs: number | undefined,
): { kind: 'turn_timeout' | 'response_timeout'; message: string } {
  switch (reason) {
    case 'turn':
      return { kind: 'turn_timeout', message: `the turn ran longer than ${agent.turnTimeoutMs} ms` };
    case 'stall':
      return { kind: 'response_timeout', message: `no output for ${agent.stallTimeoutMs} ms (stalled)` };
    case 'first_event':
      return { kind: 'response_timeout', message: `no first event within ${firstEventTimeoutMs ?? 0} ms` };
  }
}

/** The one place event text is cleaned, for every adapter. */
export function cleanEvent(event: AgentEvent, workspacePath: string): AgentEvent {
  switch (event.type) {
    case 'tool_result':
      return {
        ...event,
        toolArgument:
          event.toolArgument === null
            ? null
            : sanitize(event.toolArgument, { workspacePath, unwrapShell: event.toolKind === 'shell' }),
      };
    case 'notification':
    case 'malformed':
    case 'warning':
    case 'tool_channel_gap':
    case 'turn_completed':
    case 'turn_failed':
    case 'turn_cancelled':
    case 'turn_input_required':
      return { ...event, message: sanitize(event.message, { workspacePath, maxChars: MESSAGE_MAX_CHARS }) };
    case 'rate_limits': {
      const name = (text: string) => sanitize(text, { maxChars: RATE_LIMIT_NAME_MAX_CHARS });
      // A figure no gauge or date can hold (negative, infinite, past year 275760) is unknown.
      const figure = (n: number | null) => (n !== null && Number.isFinite(n) && n >= 0 ? n : null);
      const time = (ms: number | null) =>
        ms !== null && Number.isFinite(new Date(ms).getTime()) ? ms : null;
      return {
        ...event,
        limitId: name(event.limitId),
        windows: event.windows.slice(0, RATE_LIMIT_MAX_WINDOWS).map((w) => ({
          window: name(w.window),
          usedPercent: figure(w.usedPercent),
          windowMinutes: figure(w.windowMinutes),
          resetsAtMs: time(w.resetsAtMs),
        })),
      };
    }
    case 'session_started':
    case 'token_usage':
      return event;
  }
}
