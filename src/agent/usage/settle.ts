/**
 * Settling a turn: the ledger settles once and the turn's evidence is marked from what it
 * settled, so the covered/session-total/estimated marks can only come from the ledger.
 * A records source is read only when the live figure falls short, and a failed read
 * leaves the live figure in place: the turn then stays unaccounted rather than free.
 */
import type { TokenCounts } from '../../domain/agent.js';
import type { Settlement, TurnEnd, UsageLedger } from './ledger.js';
import type { RecordsRead, SpendReading } from './reading.js';
import type { TurnSpend } from './turn-spend.js';

/** Settles the turn and marks `spend` from the settlement. */
export function settleSpend(
  ledger: UsageLedger,
  end: TurnEnd,
  result: SpendReading | null,
  spend: TurnSpend,
): Settlement;
/** As above, reading the records source first when the ledger needs it. */
export function settleSpend(
  ledger: UsageLedger,
  end: TurnEnd,
  result: SpendReading | null,
  spend: TurnSpend,
  readRecords: () => Promise<RecordsRead>,
): Promise<Settlement>;
export function settleSpend(
  ledger: UsageLedger,
  end: TurnEnd,
  result: SpendReading | null,
  spend: TurnSpend,
  readRecords?: () => Promise<RecordsRead>,
): Settlement | Promise<Settlement> {
  if (readRecords === undefined || !ledger.needsRecords(end, result)) {
    const settlement = ledger.settle(end, result);
    return readRecords === undefined ? mark(settlement, spend) : Promise.resolve(mark(settlement, spend));
  }
  return readRecords().then(
    (records) => mark(ledger.settle(end, result, records), spend),
    () => mark(ledger.settle(end, result), spend),
  );
}

/**
 * As `settleSpend` with a records source the adapter can read on the spot (a local
 * file): `readRecords` runs only when the ledger needs the records, and a null read
 * settles on the live figure alone, leaving the turn uncovered rather than free.
 */
export function settleSpendNow(
  ledger: UsageLedger,
  end: TurnEnd,
  result: SpendReading | null,
  spend: TurnSpend,
  readRecords: () => RecordsRead | null,
): Settlement {
  const records = ledger.needsRecords(end, result) ? readRecords() : null;
  return mark(ledger.settle(end, result, records), spend);
}

/**
 * Settles a turn whose evidence is all live (no records source) into the session's
 * usage (a `RunUsage` or `TurnEndUsage`); whether the model was reached is read from
 * `spend`. The session usage's new snapshot, or null when the settlement changed nothing.
 */
export function settleTurn(
  ledger: UsageLedger,
  into: { settle(settlement: Settlement): TokenCounts | null },
  spend: TurnSpend,
  end: Omit<TurnEnd, 'modelReached'>,
  reading: SpendReading | null,
): TokenCounts | null {
  return into.settle(settleSpend(ledger, { ...end, modelReached: spend.modelReached }, reading, spend));
}

function mark(settlement: Settlement, spend: TurnSpend): Settlement {
  if (settlement.covered) spend.markSettled();
  if (settlement.sessionTotal) spend.markSessionTotal();
  if (settlement.estimated) spend.markEstimated();
  spend.setAmounts(settlement.amounts);
  return settlement;
}
