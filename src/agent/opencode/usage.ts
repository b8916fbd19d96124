/**
 * What OpenCode reports about spend, and its `step_finish` lines as ledger readings.
 * Each model call of a turn ends with one `step_finish` carrying that call's own
 * figures while the turn goes on, so the figures arrive per request, during the
 * turn. OpenCode splits the counts further than the provider does: `input` is the
 * prompt less its cache reads and writes, and `output` the answer less its
 * reasoning tokens, which it reports apart; the declaration below tells the ledger
 * to add both back. No call names its model on the line.
 *
 * Two kinds of spend never reach stdout. The session-title request OpenCode sends
 * before a new session's first turn is not made at all: every new session is
 * given a title on its command line. A sub-agent (`task` tool) runs in a session
 * of its own whose steps the CLI does not print; such a call is handed to the
 * ledger as a request whose figures are unknown, so the turn is never claimed as
 * fully counted. The `cost` OpenCode prints is its own price for the call, and 0
 * when it has no price for the model (any custom provider): only a cost above zero
 * is reported as an amount, so `token_rates` still price the rest.
 */
import type { ReportedAmount } from '../../domain/agent.js';
import { type SpendReading, spendReading, UNIT_USD, type UsageSources, usdToMicros } from '../usage/index.js';
import type { StepFinish } from './parse.js';

export const OPENCODE_USAGE_SOURCES: UsageSources = {
  live: {
    category: 'output',
    strategy: 'live',
    spend: {
      shape: 'per_request',
      // tokens.input excludes the cache reads and writes.
      cacheInInput: false,
      // tokens.output excludes tokens.reasoning.
      reasoningInOutput: false,
      servedModel: false,
      duringTurn: true,
      lowerBound: false,
      amounts: [{ unit: UNIT_USD, shape: 'per_request' }],
    },
  },
};

/** One step's reading, identified by its part id; null when the line has neither figures nor a cost. */
export function stepReading(step: StepFinish): SpendReading | null {
  const amounts: ReportedAmount[] =
    step.costUsd !== null && step.costUsd > 0 ? [{ unit: UNIT_USD, micros: usdToMicros(step.costUsd) }] : [];
  const t = step.tokens;
  if (t === null && amounts.length === 0) return null;
  return spendReading({
    input: t?.input ?? null,
    output: t?.output ?? null,
    cacheRead: t?.cacheRead ?? null,
    cacheWrite: t?.cacheWrite ?? null,
    ...(t === null || t.reasoning === undefined ? {} : { reasoning: t.reasoning }),
    identity: step.partId,
    amounts,
  });
}

/** A sub-agent call: spend the CLI never prints, as a request whose figures are unknown. */
export function subAgentReading(callId: string): SpendReading {
  return spendReading({ identity: `sub-agent ${callId}` });
}

/** The step reports spend of its own (a count or a cost above zero): the model served it. */
export function stepShowsSpend(step: StepFinish): boolean {
  const t = step.tokens;
  if ((step.costUsd ?? 0) > 0) return true;
  if (t === null) return false;
  return [t.input, t.output, t.reasoning, t.cacheRead, t.cacheWrite].some((n) => (n ?? 0) > 0);
}
