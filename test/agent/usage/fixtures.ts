import type { SpendDeclaration, UsageSource, UsageSources } from '../../../src/agent/usage/index.js';
import type { TokenCounts } from '../../../src/domain/agent.js';

/** A spend declaration with every flag off and no amounts, overridden by `fields`. */
export function spend(fields: Partial<SpendDeclaration> = {}): SpendDeclaration {
  return {
    cacheInInput: false,
    reasoningInOutput: false,
    servedModel: false,
    duringTurn: false,
    lowerBound: false,
    amounts: [],
    ...fields,
  };
}

/** A live output source with `fields` in its spend declaration. */
export function live(
  fields: Partial<SpendDeclaration> = {},
  category: UsageSource['category'] = 'output',
): UsageSources {
  return { live: { category, strategy: 'live', spend: spend(fields) } };
}

/** A journal records source, one entry per request. */
export const RECORDS: UsageSource = {
  category: 'journal',
  strategy: 'records',
  spend: spend({ shape: 'per_request', cacheInInput: false }),
};

/** Counts with total = input + output. */
export function counts(input: number, output: number, cacheRead = 0, cacheWrite = 0): TokenCounts {
  return {
    inputTokens: input,
    outputTokens: output,
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    totalTokens: input + output,
  };
}

export const COMPLETED = { replied: true, modelReached: true, cancelled: false } as const;
export const CANCELLED = { replied: false, modelReached: true, cancelled: true } as const;
