/**
 * The usage module: the one place token and money arithmetic happens. Adapters declare
 * their sources, hand raw readings to a ledger and report through RunUsage or
 * TurnEndUsage; everyone else asks this module rather than adding fields by hand.
 */
export {
  addByModel,
  addCounts,
  anyBelow,
  type CountsByModel,
  type CountsDeclaration,
  cloneByModel,
  isComplete,
  isZero,
  maxByModel,
  maxCounts,
  normalise,
  sameCounts,
  subtractByModel,
  subtractCounts,
  sumByModel,
  tokenCounts,
  ZERO,
} from './counts.js';
export {
  type CumulativeObservation,
  type RequestObservation,
  type Settlement,
  sumRequests,
  type TurnEnd,
  UsageLedger,
} from './ledger.js';
export {
  costMicroUsd,
  formatDollars,
  MONEY_RULE,
  spendMicroUsd,
  type TokenRates,
  toCents,
  usdToMicros,
} from './money.js';
export { type RecordsRead, type SpendCounts, type SpendReading, spendReading } from './reading.js';
export { RunUsage } from './run-usage.js';
export { settleSpend, settleSpendNow, settleTurn } from './settle.js';
export {
  type AmountDeclaration,
  type AmountShape,
  assertSources,
  checkSources,
  reportsSessionTotal,
  type SourceCategory,
  type SourceStrategy,
  type SpendDeclaration,
  type SpendShape,
  UNIT_USD,
  type UsageDisposition,
  type UsageSource,
  type UsageSources,
  UsageSourcesError,
  usageDisposition,
} from './sources.js';
export { TurnEndUsage } from './turn-end-usage.js';
export { deriveSpendFlags, type SpendFlags, TurnSpend } from './turn-spend.js';
