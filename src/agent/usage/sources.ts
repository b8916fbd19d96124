/**
 * Where a kind's runtime reports usage and what each report counts. Kinds declare the
 * reports as the runtime writes them; the usage module derives everything else (when a
 * figure arrives, what it names, how readings combine), so no consumer branches on a kind
 * name. A declaration that cannot be counted is refused when the kind registers.
 */

/** `USD`: the unit of a reported US dollar figure. */
export const UNIT_USD = 'USD';

/** Where the reports come from. */
export type SourceCategory = 'output' | 'protocol' | 'journal' | 'local';
/** `live`: read as the reports arrive; `records`: read from the runtime's session records. */
export type SourceStrategy = 'live' | 'records';
/** What one report covers: one model request, one turn, or the session so far. */
export type SpendShape = 'per_request' | 'per_turn' | 'session_cumulative';
export type AmountShape = SpendShape;

/** An amount the runtime reports beside or instead of tokens. */
export type AmountDeclaration =
  /** A fixed unit: `USD`, or a vendor unit's plural display name ("credits"). */
  | { unit: string; shape: AmountShape; currency?: never }
  /** Each report names its own unit. */
  | { currency: true; shape: AmountShape; unit?: never };

/** What a source's reports count. */
export interface SpendDeclaration {
  /** Absent = the reports count no tokens (amounts only). */
  shape?: SpendShape;
  /** Cache reads and writes sit inside the input count. */
  cacheInInput: boolean;
  /** Reasoning tokens sit inside the output count. */
  reasoningInOutput: boolean;
  /** Each report names the model that served it. */
  servedModel: boolean;
  /** The runtime reports after each model request while the turn runs. */
  duringTurn: boolean;
  /** The runtime may spend more than it reports. */
  lowerBound: boolean;
  amounts: AmountDeclaration[];
  /** A resumed session's counter repeats its last figure once, outside any turn, before the first turn. */
  replay?: 'last_figure';
}

export interface UsageSource {
  category: SourceCategory;
  strategy: SourceStrategy;
  spend: SpendDeclaration;
}

export interface UsageSources {
  /** Required: the runtime's output or protocol messages (or a local measurement), read as they arrive. */
  live: UsageSource;
  /** Optional: the runtime's own session journal, one entry per model request, read when a turn ends. */
  records?: UsageSource;
}

/** When figures arrive and what they name; derived from the sources, never declared. */
export interface UsageDisposition {
  arrival: 'incremental' | 'turn_end' | 'none';
  attribution: 'per_model' | 'session_total' | 'none';
}

const SHAPES: readonly string[] = ['per_request', 'per_turn', 'session_cumulative'];
const LIVE_CATEGORIES: readonly string[] = ['output', 'protocol', 'local'];
const TOKEN_FLAGS = ['cacheInInput', 'reasoningInOutput', 'servedModel', 'duringTurn'] as const;

/** Every problem with a declaration, each prefixed with its path; empty = the sources can be counted. */
export function checkSources(sources: UsageSources): string[] {
  const problems: string[] = [];
  const { live, records } = sources;
  if (live.strategy !== 'live') {
    problems.push(
      `live.strategy: the live source is read as reports arrive, so it must be 'live', not '${live.strategy}'`,
    );
  }
  if (!LIVE_CATEGORIES.includes(live.category)) {
    problems.push(`live.category: must be output, protocol or local, not '${live.category}'`);
  }
  checkSpend('live', live.spend, problems);
  if (live.spend.shape === undefined && live.spend.amounts.length === 0) {
    problems.push(
      'live.spend: declares neither a token shape nor an amount, so nothing it reports can be counted',
    );
  }
  if (records !== undefined) {
    if (records.category !== 'journal') {
      problems.push(
        `records.category: a records source reads the runtime's journal, so it must be 'journal', not '${records.category}'`,
      );
    }
    if (records.strategy !== 'records') {
      problems.push(`records.strategy: must be 'records', not '${records.strategy}'`);
    }
    if (records.spend.shape !== 'per_request') {
      problems.push(
        `records.spend.shape: journal entries are one per model request, so it must be 'per_request', not '${records.spend.shape ?? 'absent'}'`,
      );
    }
    if (records.spend.duringTurn) {
      problems.push('records.spend.duringTurn: records are read when a turn ends, never during it');
    }
    checkSpend('records', records.spend, problems);
  }
  return problems;
}

function checkSpend(path: string, spend: SpendDeclaration, problems: string[]): void {
  if (spend.shape !== undefined && !SHAPES.includes(spend.shape)) {
    problems.push(`${path}.spend.shape: unknown shape '${spend.shape}'`);
  }
  if (spend.replay !== undefined) {
    if (spend.replay !== 'last_figure') {
      problems.push(`${path}.spend.replay: unknown replay '${spend.replay}'`);
    } else if (spend.shape !== 'session_cumulative') {
      problems.push(`${path}.spend.replay: only a session_cumulative counter replays its last figure`);
    }
  }
  if (spend.shape === undefined) {
    for (const flag of TOKEN_FLAGS) {
      if (spend[flag])
        problems.push(`${path}.spend.${flag}: describes token counts, but the source declares no shape`);
    }
  }
  const units = new Set<string>();
  let currencies = 0;
  spend.amounts.forEach((amount, i) => {
    const at = `${path}.spend.amounts[${i}]`;
    if (!SHAPES.includes(amount.shape)) problems.push(`${at}.shape: unknown shape '${amount.shape}'`);
    const hasUnit = amount.unit !== undefined;
    const hasCurrency = amount.currency !== undefined;
    if (hasUnit && hasCurrency) {
      problems.push(
        `${at}: declares both a unit and currency; a report either has a fixed unit or names its own`,
      );
      return;
    }
    if (hasCurrency) {
      if (amount.currency !== true) problems.push(`${at}.currency: must be true when present`);
      currencies += 1;
      if (currencies === 2) problems.push(`${at}.currency: declared more than once`);
      return;
    }
    const unit = amount.unit;
    if (typeof unit !== 'string' || unit.trim() === '' || unit !== unit.trim()) {
      problems.push(`${at}.unit: must be a non-empty name without surrounding spaces`);
      return;
    }
    if (unit.toUpperCase() === UNIT_USD && unit !== UNIT_USD) {
      problems.push(`${at}.unit: write the US dollar unit as '${UNIT_USD}', not '${unit}'`);
    }
    if (units.has(unit)) problems.push(`${at}.unit: '${unit}' is declared more than once`);
    units.add(unit);
  });
}

/** Thrown when sources that fail `checkSources` are used; lists every problem. */
export class UsageSourcesError extends Error {
  override readonly name = 'UsageSourcesError';
  constructor(readonly problems: string[]) {
    super(`usage sources refused: ${problems.join('; ')}`);
  }
}

/** Throws `UsageSourcesError` unless `checkSources` finds nothing. */
export function assertSources(sources: UsageSources): void {
  const problems = checkSources(sources);
  if (problems.length > 0) throw new UsageSourcesError(problems);
}

/** When a kind's figures arrive and what they name, derived from its live source. */
export function usageDisposition(sources: UsageSources): UsageDisposition {
  const spend = sources.live.spend;
  if (spend.shape === undefined) return { arrival: 'none', attribution: 'none' };
  return {
    arrival: spend.duringTurn ? 'incremental' : 'turn_end',
    attribution: spend.servedModel ? 'per_model' : 'session_total',
  };
}

/** True when a later figure of the live source holds every earlier turn of the session. */
export function reportsSessionTotal(sources: UsageSources): boolean {
  return sources.live.spend.shape === 'session_cumulative';
}
