/**
 * What an adapter hands the usage ledger: the counts exactly as the runtime reported
 * them. A count the report lacks is `null`, never 0, so a missing figure can never
 * pass for a free turn; the ledger, not the adapter, decides what the counts mean.
 */
import type { ReportedAmount } from '../../domain/agent.js';

/** Four token classes as reported. `null` = the report lacks the count (unknown, never zero). */
export interface SpendCounts {
  input: number | null;
  output: number | null;
  cacheRead: number | null;
  cacheWrite: number | null;
  /**
   * Reasoning tokens the runtime reports apart from `output`. Added to the output class only
   * when the source declares `reasoningInOutput: false`. Absent = not reported apart.
   */
  reasoning?: number | null;
}

/** One usage report of the runtime. */
export interface SpendReading extends SpendCounts {
  /** The model that served the request, as the runtime spells it; null when the report names none. */
  model: string | null;
  /** The request id; null = this reading is a request of its own. */
  identity: string | null;
  /** For a session-cumulative reading: the part the runtime attributes to the request that produced it. */
  own?: SpendCounts;
  /** For a turn's result reading: the turn's counts split by model, as the runtime spells the names. */
  byModel?: Record<string, SpendCounts>;
  /** Amounts (USD or vendor units) the report carries, in millionths of the unit. */
  amounts?: ReportedAmount[];
}

/** What a records source read: the session's journal, one reading per model request. */
export interface RecordsRead {
  readings: SpendReading[];
}

/** A reading with every count unknown and no model or identity, overridden by `fields`. */
export function spendReading(fields: Partial<SpendReading> = {}): SpendReading {
  return {
    input: null,
    output: null,
    cacheRead: null,
    cacheWrite: null,
    model: null,
    identity: null,
    ...fields,
  };
}
