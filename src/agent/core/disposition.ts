/**
 * The one rule that decides how a turn ended. Adapters only report evidence; no
 * adapter builds its own outcome event or error. The rule reads the evidence in
 * a fixed order and stops at the first match: a terminal report from the
 * runtime, then a missing exit, then the early-exit report, then a non-zero
 * exit, then the work evidence. An exit code of 0 alone is never a success: a
 * runtime can exit cleanly without having done anything.
 */
import {
  AgentError,
  type AgentEvent,
  type ExitReason,
  type TokenCounts,
  type TurnOutcome,
} from '../../domain/agent.js';
import type { AgentErrorKind } from '../../domain/errors.js';
import { deriveSpendFlags, type TurnSpend, type UsageSources } from '../usage/index.js';
import { capMessageBytes } from './sanitize.js';
import type { WorkReport } from './work-observer.js';

/** What the runtime itself said about the turn's end. */
export type Terminal =
  | {
      type: 'success';
      message: string /** read from stderr, which a cut-off drain can disqualify */;
      fromStderr?: boolean;
    }
  | { type: 'failure'; kind?: AgentErrorKind; message: string; resetAtMs?: number | null }
  | { type: 'input_required'; message: string };

/** Everything an adapter observed about a turn that ended on its own. */
export interface TurnEvidence {
  terminal: Terminal | null;
  /** The process was seen to exit (false when the wait failed or never finished). */
  exitObserved: boolean;
  exitCode: number | null;
  signal: string | null;
  /** The skeleton's report for a process that exited before writing an accepted line. */
  earlyExit: AgentError | null;
  work: WorkReport;
  /** stderr ends with the abandoned marker: what came after the cut is unknown. */
  stderrAbandoned: boolean;
}

export interface Decision {
  exitReason: ExitReason;
  error: AgentError | null;
  message: string;
}

/** The disposition rule itself: pure, so it is a table test. */
export function decideTurn(ev: TurnEvidence): Decision {
  const terminal =
    ev.terminal?.type === 'success' && ev.terminal.fromStderr === true && ev.stderrAbandoned
      ? null
      : ev.terminal;
  if (terminal !== null) {
    // The runtime's own words become the error that is stored and commented: capped like the final message.
    const message = capMessageBytes(terminal.message);
    switch (terminal.type) {
      case 'success':
        return { exitReason: 'turn_completed', error: null, message };
      case 'failure': {
        const kind = terminal.kind ?? 'turn_failed';
        return {
          exitReason: 'turn_failed',
          error: new AgentError(kind, message, { resetAtMs: terminal.resetAtMs ?? null }),
          message,
        };
      }
      case 'input_required':
        return {
          exitReason: 'turn_input_required',
          error: new AgentError('turn_input_required', message),
          message,
        };
    }
  }
  if (!ev.exitObserved) {
    const message = 'the agent process exit was not observed';
    return { exitReason: 'turn_failed', error: new AgentError('port_exit', message), message };
  }
  if (ev.earlyExit !== null) {
    return { exitReason: 'turn_failed', error: ev.earlyExit, message: ev.earlyExit.detail };
  }
  if (ev.signal !== null || (ev.exitCode !== null && ev.exitCode !== 0)) {
    const message =
      ev.signal !== null
        ? `the agent was killed by ${ev.signal}`
        : `the agent exited with code ${ev.exitCode}`;
    return { exitReason: 'turn_failed', error: new AgentError('port_exit', message), message };
  }
  if (ev.work.work === 'observed') {
    return { exitReason: 'turn_completed', error: null, message: `exited 0 and ${ev.work.detail}` };
  }
  const message = `the agent exited 0 without reporting an outcome (${ev.work.detail})`;
  return { exitReason: 'turn_failed', error: new AgentError('turn_failed', message), message };
}

/** The session's figures when the turn ends, supplied by the adapter's usage hooks. */
export interface TurnMeta {
  sessionId: string;
  agentPid: string;
  usage: TokenCounts;
  usageByModel: Record<string, TokenCounts>;
  usageMeasured: boolean;
  finalMessage: string;
}

export interface FinalizeContext {
  emit(event: AgentEvent): void;
  sources: UsageSources;
  spend: TurnSpend;
  now?: () => Date;
}

/** Applies the rule, emits the terminal event and builds the outcome with its spend flags. */
export function finalizeTurn(ctx: FinalizeContext, ev: TurnEvidence, meta: TurnMeta): TurnOutcome {
  return outcomeOf(ctx, decideTurn(ev), meta);
}

/** Ends a turn the core stopped or could not start (cancel, timeouts, spawn failures): the same event and flags path as the rule. */
export function finalizeInterrupted(
  ctx: FinalizeContext,
  kind: AgentErrorKind,
  message: string,
  meta: TurnMeta,
): TurnOutcome {
  const decision: Decision =
    kind === 'turn_cancelled'
      ? { exitReason: 'turn_cancelled', error: new AgentError('turn_cancelled', message), message }
      : { exitReason: 'turn_failed', error: new AgentError(kind, message), message };
  return outcomeOf(ctx, decision, meta);
}

function outcomeOf(ctx: FinalizeContext, decision: Decision, meta: TurnMeta): TurnOutcome {
  const at = (ctx.now?.() ?? new Date()).toISOString();
  const base = { at, agentPid: meta.agentPid };
  switch (decision.exitReason) {
    case 'turn_completed':
      ctx.emit({ ...base, type: 'turn_completed', message: decision.message });
      break;
    case 'turn_cancelled':
      ctx.emit({ ...base, type: 'turn_cancelled', message: decision.message });
      break;
    case 'turn_input_required':
      ctx.emit({ ...base, type: 'turn_input_required', message: decision.message });
      break;
    case 'turn_failed':
      ctx.emit({
        ...base,
        type: 'turn_failed',
        message: decision.message,
        errorKind: decision.error?.kind ?? 'turn_failed',
      });
      break;
  }
  const flags = deriveSpendFlags(ctx.spend, decision.exitReason, ctx.sources, meta.usageMeasured);
  const outcome: TurnOutcome = {
    result: {
      sessionId: meta.sessionId,
      exitReason: decision.exitReason,
      usage: meta.usage,
      usageByModel: meta.usageByModel,
      usageMeasured: meta.usageMeasured,
      ...flags,
      finalMessage: meta.finalMessage,
    },
  };
  if (decision.error !== null) outcome.error = decision.error;
  return outcome;
}
