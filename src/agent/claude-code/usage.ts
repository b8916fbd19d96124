/**
 * What Claude Code reports about spend, and its lines as ledger readings. Each
 * `assistant` line carries its API message's opening usage (the final output count
 * never reaches stdout without partial messages), so those readings arrive while
 * the turn works and are provisional; the `result` line then gives the turn's own
 * figure, its split by model (sub-agents included, which the main-thread `usage`
 * leaves out) and the dollar cost. Cost and `modelUsage` are cumulative over one
 * process, and the adapter runs one process per turn, so both are per turn here:
 * a resumed session does not restore them (checked against the real CLI).
 */
import {
  type SpendCounts,
  type SpendReading,
  UNIT_USD,
  type UsageSources,
  usdToMicros,
} from '../usage/index.js';
import type { LineCounts, ResultLine } from './parse.js';

export const CLAUDE_CODE_USAGE_SOURCES: UsageSources = {
  live: {
    category: 'output',
    strategy: 'live',
    spend: {
      shape: 'per_request',
      // The Messages API's input_tokens excludes cache reads and writes.
      cacheInInput: false,
      reasoningInOutput: true,
      servedModel: true,
      duringTurn: true,
      lowerBound: false,
      amounts: [{ unit: UNIT_USD, shape: 'per_turn' }],
    },
  },
};

function spendCounts(c: LineCounts): SpendCounts {
  return { input: c.input, output: c.output, cacheRead: c.cacheRead, cacheWrite: c.cacheWrite };
}

/** One API message's reading, identified by its message id so repeated lines count once. */
export function messageReading(
  messageId: string | null,
  model: string | null,
  usage: LineCounts,
): SpendReading {
  // A literal, not spendReading({...}): this runs for every assistant line.
  return {
    input: usage.input,
    output: usage.output,
    cacheRead: usage.cacheRead,
    cacheWrite: usage.cacheWrite,
    model,
    identity: messageId,
  };
}

/** The turn's result as a reading: its counts, its per-model split when given, its cost. */
export function resultReading(result: ResultLine, model: string | null): SpendReading | null {
  // Once per turn, but a turn can be a few lines long: no entries arrays or spreads.
  let count = 0;
  let only: string | null = null;
  for (const name in result.modelUsage) {
    if (!Object.hasOwn(result.modelUsage, name)) continue;
    if (count === 0) only = name;
    count += 1;
  }
  if (result.usage === null && count === 0 && result.costUsd === null) return null;
  const counts = result.usage ?? { input: null, output: null, cacheRead: null, cacheWrite: null };
  const reading: SpendReading = {
    ...spendCounts(counts),
    model: count === 1 ? (only ?? model) : model,
    identity: null,
    amounts: result.costUsd === null ? [] : [{ unit: UNIT_USD, micros: usdToMicros(result.costUsd) }],
  };
  if (count > 0) {
    const byModel: Record<string, SpendCounts> = {};
    for (const name in result.modelUsage) {
      const c = result.modelUsage[name];
      if (Object.hasOwn(result.modelUsage, name) && c !== undefined) byModel[name] = spendCounts(c);
    }
    reading.byModel = byModel;
  }
  return reading;
}

function positive(c: LineCounts | null): boolean {
  if (c === null) return false;
  return (c.input ?? 0) > 0 || (c.output ?? 0) > 0 || (c.cacheRead ?? 0) > 0 || (c.cacheWrite ?? 0) > 0;
}

/** The result reports spend of its own (a count or a cost above zero): the model served this turn. */
export function resultShowsSpend(result: ResultLine): boolean {
  if ((result.costUsd ?? 0) > 0 || positive(result.usage)) return true;
  for (const name in result.modelUsage) if (positive(result.modelUsage[name] ?? null)) return true;
  return false;
}
