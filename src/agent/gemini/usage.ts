/**
 * What Gemini CLI reports about spend, and its `result.stats` as a ledger reading.
 * The CLI reports usage once, on the closing `result` line, for the one process
 * that ran the turn (a resumed session does not bring back earlier turns' counts:
 * checked against the real CLI), split by the models that served it, with no
 * cost. Its counts follow Google's API: `input_tokens` is the whole prompt with
 * the cached part inside it (`cached`; `input` is the uncached rest), and
 * `output_tokens` is the candidates only. Thinking tokens are billed as output but
 * reported nowhere on their own; they are what `total_tokens` holds beyond prompt
 * and candidates, so that remainder is handed to the ledger as the reasoning
 * count, which the declaration below tells it to add to the output. Reading the
 * remainder is the one piece of token arithmetic here: it decodes a count the
 * runtime reports only inside its total. Gemini bills no cache writes.
 */
import { type SpendCounts, type SpendReading, spendReading, type UsageSources } from '../usage/index.js';
import type { ResultStats, StatsCounts } from './parse.js';

export const GEMINI_USAGE_SOURCES: UsageSources = {
  live: {
    category: 'output',
    strategy: 'live',
    spend: {
      shape: 'per_turn',
      // input_tokens includes the cached prompt tokens.
      cacheInInput: true,
      // Thinking tokens are reported apart from output_tokens (inside total_tokens only).
      reasoningInOutput: false,
      servedModel: true,
      duringTurn: false,
      lowerBound: false,
      amounts: [],
    },
  },
};

/** The thinking (and tool-use prompt) tokens a count set holds beyond prompt and candidates; null when unknown. */
export function thoughtsOf(c: StatsCounts): number | null {
  if (c.total === null || c.prompt === null || c.candidates === null) return null;
  return Math.max(0, c.total - c.prompt - c.candidates);
}

function spendCounts(c: StatsCounts, cachedFallback: number | null): SpendCounts {
  return {
    input: c.prompt,
    output: c.candidates,
    cacheRead: c.cached ?? cachedFallback,
    cacheWrite: c.prompt === null ? null : 0,
    reasoning: thoughtsOf(c),
  };
}

/** The turn's reading from `result.stats`, split by model; `initModel` names it when the stats name none. */
export function statsReading(stats: ResultStats, initModel: string | null): SpendReading {
  const names = Object.keys(stats.models);
  const byModel: Record<string, SpendCounts> = {};
  // A model entry without its own cached count is the whole turn's when it is the only one.
  const only = names.length === 1 ? stats.cached : null;
  for (const name of names) byModel[name] = spendCounts(stats.models[name] as StatsCounts, only);
  return spendReading({
    ...spendCounts(stats, null),
    model: names.length === 1 ? (names[0] as string) : initModel,
    ...(names.length > 0 ? { byModel } : {}),
  });
}

/** The stats report spend of their own (a count above zero): the model served this turn. */
export function statsShowSpend(stats: ResultStats): boolean {
  return (stats.total ?? 0) > 0 || (stats.prompt ?? 0) > 0 || (stats.candidates ?? 0) > 0;
}
