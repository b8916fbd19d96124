import { describe, expect, it } from 'vitest';
import {
  deriveSpendFlags,
  type RecordsRead,
  RunUsage,
  type SpendReading,
  settleSpend,
  settleTurn,
  spendReading,
  TurnSpend,
  UsageLedger,
  type UsageSources,
} from '../../../src/agent/usage/index.js';
import type { ExitReason } from '../../../src/domain/agent.js';
import { CANCELLED, COMPLETED, counts, live, RECORDS } from './fixtures.js';

const STREAMING = live({ shape: 'per_request', duringTurn: true });
const CUMULATIVE = live({ shape: 'session_cumulative', duringTurn: true });
const PER_TURN = live({ shape: 'per_turn' });
const LOCAL = live({ shape: 'per_turn' }, 'local');

type Marks = Partial<Record<'modelReached' | 'settled' | 'sessionTotal' | 'estimated', boolean>>;

function spendWith(marks: Marks): TurnSpend {
  const spend = new TurnSpend();
  if (marks.modelReached) spend.markModelReached();
  if (marks.settled) spend.markSettled();
  if (marks.sessionTotal) spend.markSessionTotal();
  if (marks.estimated) spend.markEstimated();
  return spend;
}

function result(input: number, output: number): SpendReading {
  return spendReading({ input, output, cacheRead: 0, cacheWrite: 0 });
}

describe('deriveSpendFlags', () => {
  it.each<[string, Marks, ExitReason, UsageSources, boolean, Partial<ReturnType<typeof deriveSpendFlags>>]>([
    [
      'a settled turn is accounted',
      { modelReached: true, settled: true },
      'turn_completed',
      STREAMING,
      true,
      { spendUnaccounted: false, spendCoverable: false, coversSession: false, usageProvenance: 'reported' },
    ],
    [
      'a turn the model served but nothing settled is unaccounted',
      { modelReached: true },
      'turn_completed',
      STREAMING,
      true,
      { spendUnaccounted: true, spendCoverable: false },
    ],
    [
      'a turn stopped before any output is not unaccounted',
      {},
      'turn_cancelled',
      STREAMING,
      false,
      { spendUnaccounted: false, usageProvenance: 'unmeasured' },
    ],
    [
      'an estimated history is unaccounted even when settled, and never coverable',
      { modelReached: true, settled: true, sessionTotal: true, estimated: true },
      'turn_completed',
      CUMULATIVE,
      true,
      {
        spendUnaccounted: true,
        spendCoverable: false,
        coversSession: true,
        usageProvenance: 'token_estimate',
      },
    ],
    [
      'a completed turn lacking a figure is coverable by a later session total',
      { modelReached: true },
      'turn_completed',
      CUMULATIVE,
      true,
      { spendUnaccounted: true, spendCoverable: true },
    ],
    [
      'a failed turn lacking a figure keeps counting: not coverable',
      { modelReached: true },
      'turn_failed',
      CUMULATIVE,
      true,
      { spendUnaccounted: true, spendCoverable: false },
    ],
    [
      'a per-turn figure never includes an earlier turn, so nothing can cover a gap',
      { modelReached: true },
      'turn_completed',
      PER_TURN,
      true,
      { spendUnaccounted: true, spendCoverable: false },
    ],
    [
      'a settled session total covers the session',
      { modelReached: true, settled: true, sessionTotal: true },
      'turn_completed',
      CUMULATIVE,
      true,
      { spendUnaccounted: false, coversSession: true },
    ],
    [
      'a session-total mark without settling covers nothing',
      { modelReached: true, sessionTotal: true },
      'turn_completed',
      CUMULATIVE,
      true,
      { coversSession: false },
    ],
    [
      'a local measurement is local, not reported',
      { modelReached: true, settled: true },
      'turn_completed',
      LOCAL,
      true,
      { usageProvenance: 'local' },
    ],
  ])('%s', (_, marks, exitReason, sources, measured, want) => {
    expect(deriveSpendFlags(spendWith(marks), exitReason, sources, measured)).toMatchObject(want);
  });

  it('an unaccounted turn does not latch: a later covered turn reports false again', () => {
    const ledger = new UsageLedger(STREAMING);
    const first = new TurnSpend();
    first.markModelReached();
    settleSpend(ledger, CANCELLED, null, first);
    expect(deriveSpendFlags(first, 'turn_cancelled', STREAMING, true).spendUnaccounted).toBe(true);
    ledger.beginTurn();
    const second = new TurnSpend();
    second.markModelReached();
    settleSpend(ledger, COMPLETED, result(1, 1), second);
    expect(deriveSpendFlags(second, 'turn_completed', STREAMING, true).spendUnaccounted).toBe(false);
  });
});

describe('settleSpend', () => {
  it('a cancelled turn that reached the model is unaccounted, with its partial figure kept', () => {
    const ledger = new UsageLedger(STREAMING);
    const spend = new TurnSpend();
    spend.markModelReached();
    ledger.observeRequest(spendReading({ identity: 'a', input: 10, output: 1, cacheRead: 0, cacheWrite: 0 }));
    const s = settleSpend(ledger, CANCELLED, null, spend);
    expect(s.run).toEqual(counts(10, 1));
    expect(spend.settled).toBe(false);
    expect(deriveSpendFlags(spend, 'turn_cancelled', STREAMING, true).spendUnaccounted).toBe(true);
  });

  it('marks settled, session total and amounts only from what the ledger settled', () => {
    const sources = live({
      shape: 'session_cumulative',
      amounts: [{ unit: 'USD', shape: 'session_cumulative' }],
    });
    const ledger = new UsageLedger(sources);
    ledger.sessionCreated();
    const spend = new TurnSpend();
    settleSpend(ledger, COMPLETED, { ...result(5, 5), amounts: [{ unit: 'USD', micros: 42 }] }, spend);
    expect(spend).toMatchObject({ settled: true, sessionTotal: true, estimated: false });
    expect(spend.amounts).toEqual([{ unit: 'USD', micros: 42 }]);
    expect(deriveSpendFlags(spend, 'turn_completed', sources, true).reportedAmounts).toEqual([
      { unit: 'USD', micros: 42 },
    ]);
  });

  it('marks an estimated turn estimated', () => {
    const ledger = new UsageLedger(CUMULATIVE);
    const spend = new TurnSpend();
    settleSpend(ledger, COMPLETED, result(500, 50), spend);
    expect(spend.estimated).toBe(true);
    expect(deriveSpendFlags(spend, 'turn_completed', CUMULATIVE, true).usageProvenance).toBe(
      'token_estimate',
    );
  });

  it('reads the records only when the live figure falls short, and settles what they hold', async () => {
    const sources = { ...STREAMING, records: RECORDS };
    const reads: string[] = [];
    const readRecords = async (): Promise<RecordsRead> => {
      reads.push('read');
      return {
        readings: [spendReading({ identity: 'x', input: 70, output: 7, cacheRead: 0, cacheWrite: 0 })],
      };
    };
    const ledger = new UsageLedger(sources);
    ledger.sessionCreated();
    const covered = await settleSpend(ledger, COMPLETED, result(1, 1), new TurnSpend(), readRecords);
    expect(reads).toEqual([]);
    expect(covered.run).toEqual(counts(1, 1));
    ledger.beginTurn();
    const stopped = await settleSpend(ledger, CANCELLED, null, new TurnSpend(), readRecords);
    expect(reads).toEqual(['read']);
    expect(stopped).toMatchObject({ run: counts(70, 7), covered: false });
  });

  it('a records read that fails keeps the live figure and leaves the turn uncovered rather than lost', async () => {
    const ledger = new UsageLedger({ ...STREAMING, records: RECORDS });
    ledger.sessionCreated();
    ledger.observeRequest(spendReading({ identity: 'a', input: 5, output: 1, cacheRead: 0, cacheWrite: 0 }));
    const spend = new TurnSpend();
    spend.markModelReached();
    const s = await settleSpend(ledger, CANCELLED, null, spend, () =>
      Promise.reject(new Error('journal gone')),
    );
    expect(s).toMatchObject({ run: counts(5, 1), covered: false });
    expect(deriveSpendFlags(spend, 'turn_cancelled', STREAMING, true).spendUnaccounted).toBe(true);
  });
});

describe('settleTurn', () => {
  it('reads whether the model was reached from the spend and settles into the session usage', () => {
    const ledger = new UsageLedger(STREAMING);
    const run = new RunUsage();
    const reached = new TurnSpend();
    reached.markModelReached();
    ledger.observeRequest(spendReading({ identity: 'a', input: 10, output: 1, cacheRead: 0, cacheWrite: 0 }));
    // Cancelled after reaching the model: its partial figure counts, and the turn is unaccounted.
    expect(settleTurn(ledger, run, reached, { replied: false, cancelled: true }, null)).toEqual(
      counts(10, 1),
    );
    expect(reached.settled).toBe(false);
    expect(deriveSpendFlags(reached, 'turn_cancelled', STREAMING, true).spendUnaccounted).toBe(true);

    // A turn that never reached the model changes nothing and stays accounted as free.
    ledger.beginTurn();
    const silent = new TurnSpend();
    expect(settleTurn(ledger, run, silent, { replied: false, cancelled: true }, null)).toBeNull();
    expect(deriveSpendFlags(silent, 'turn_cancelled', STREAMING, true).spendUnaccounted).toBe(false);
  });
});
