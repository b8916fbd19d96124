import { describe, expect, it } from 'vitest';
import { type SpendReading, spendReading, UsageLedger } from '../../../src/agent/usage/index.js';
import { CANCELLED, COMPLETED, counts, live, RECORDS } from './fixtures.js';

const STREAMING = live({ shape: 'per_request', duringTurn: true, servedModel: true, cacheInInput: true });
const CUMULATIVE = live({ shape: 'session_cumulative', duringTurn: true });
const REPLAYING = live({ shape: 'session_cumulative', duringTurn: true, replay: 'last_figure' });

function req(
  identity: string | null,
  input: number,
  output: number,
  extra: Partial<SpendReading> = {},
): SpendReading {
  return spendReading({ identity, input, output, cacheRead: 0, cacheWrite: 0, model: 'm', ...extra });
}

function cum(input: number, output: number, extra: Partial<SpendReading> = {}): SpendReading {
  return spendReading({ input, output, cacheRead: 0, cacheWrite: 0, ...extra });
}

describe('UsageLedger per-request readings', () => {
  it('a message id repeated across stream lines is counted once, at its largest', () => {
    const ledger = new UsageLedger(STREAMING);
    const seen = [10, 20, 30, 30, 20].map((output) => ledger.observeRequest(req('msg-1', 100, output)));
    expect(seen.map((s) => s.isNew)).toEqual([true, false, false, false, false]);
    expect(seen.at(-1)?.turn).toEqual(counts(100, 30));
  });

  it('a later smaller reading of the same request never lowers its figure', () => {
    const ledger = new UsageLedger(STREAMING);
    ledger.observeRequest(req('a', 500, 50));
    expect(ledger.observeRequest(req('a', 10, 1)).turn).toEqual(counts(500, 50));
  });

  it('two distinct requests are both counted, cache reads included once', () => {
    const ledger = new UsageLedger(STREAMING);
    ledger.observeRequest(req('a', 123, 45, { cacheRead: 7 }));
    const { turn, byModel } = ledger.observeRequest(req('b', 123, 45, { cacheRead: 7 }));
    expect(turn).toEqual(counts(246, 90, 14));
    expect(byModel).toEqual({ m: counts(246, 90, 14) });
  });

  it('readings without a request id are each a request of their own, not merged away', () => {
    const ledger = new UsageLedger(STREAMING);
    ledger.observeRequest(req(null, 10, 1));
    const second = ledger.observeRequest(req(null, 10, 1));
    expect(second).toMatchObject({ turn: counts(20, 2), isNew: true });
  });

  it('a request whose counts arrive on different lines keeps every count it was ever given', () => {
    const ledger = new UsageLedger(STREAMING);
    ledger.observeRequest(
      spendReading({ identity: 'a', input: 100, output: null, cacheRead: 0, cacheWrite: 0 }),
    );
    const { turn } = ledger.observeRequest(
      spendReading({ identity: 'a', input: null, output: 40, cacheRead: 0, cacheWrite: 0 }),
    );
    expect(turn).toEqual(counts(100, 40));
  });

  it('turn 2 adds to turn 1 and never restarts the run at zero', () => {
    const ledger = new UsageLedger(STREAMING);
    ledger.observeRequest(req('a', 100, 10));
    const first = ledger.settle(COMPLETED, req(null, 100, 10));
    expect(first.run).toEqual(counts(100, 10));
    ledger.beginTurn();
    expect(ledger.observeRequest(req('b', 50, 5)).turn).toEqual(counts(50, 5));
    const second = ledger.settle(COMPLETED, req(null, 50, 5));
    expect(second.run).toEqual(counts(150, 15));
    expect(second.turn).toEqual(counts(50, 5));
    expect(second.byModel).toEqual({ m: counts(150, 15) });
  });

  it('a request id that shows up again in a later turn adds only its growth', () => {
    const ledger = new UsageLedger(STREAMING);
    ledger.observeRequest(req('a', 100, 10));
    ledger.settle(COMPLETED, null);
    ledger.beginTurn();
    expect(ledger.observeRequest(req('a', 100, 15)).turn).toEqual(counts(0, 5));
  });

  it('a request id seen again turns later adds only its growth over every earlier turn', () => {
    const ledger = new UsageLedger(STREAMING);
    ledger.observeRequest(req('a', 100, 10));
    ledger.settle(COMPLETED, null);
    // A turn without `a`: its settled figure must carry over untouched.
    ledger.beginTurn();
    ledger.observeRequest(req('b', 50, 5));
    ledger.settle(COMPLETED, null);
    ledger.beginTurn();
    const third = ledger.observeRequest(req('a', 90, 20, { model: 'n' }));
    expect(third.isNew).toBe(true);
    expect(third.turn).toEqual(counts(0, 10));
    expect(third.byModel).toEqual({ n: counts(0, 10) });
    expect(ledger.settle(COMPLETED, null).run).toEqual(counts(150, 25));
    // The fourth sighting is measured against the largest of all three earlier ones.
    ledger.beginTurn();
    expect(ledger.observeRequest(req('a', 120, 20)).turn).toEqual(counts(20, 0));
  });

  it('a result larger than what streamed is taken, split by the models it names', () => {
    const ledger = new UsageLedger(STREAMING);
    ledger.observeRequest(req('a', 100, 10, { model: 'opus' }));
    const result = req(null, 300, 30, {
      model: null,
      byModel: {
        opus: { input: 200, output: 20, cacheRead: 0, cacheWrite: 0 },
        haiku: { input: 100, output: 10, cacheRead: 0, cacheWrite: 0 },
      },
    });
    const s = ledger.settle(COMPLETED, result);
    expect(s.run).toEqual(counts(300, 30));
    expect(s.byModel).toEqual({ opus: counts(200, 20), haiku: counts(100, 10) });
    expect(s.covered).toBe(true);
  });

  it('a result smaller than what streamed does not lower the turn', () => {
    const ledger = new UsageLedger(STREAMING);
    ledger.observeRequest(req('a', 100, 10));
    expect(ledger.settle(COMPLETED, req(null, 50, 5)).run).toEqual(counts(100, 10));
  });

  it('a source that names no model yields no per-model split', () => {
    const ledger = new UsageLedger(live({ shape: 'per_request', duringTurn: true }));
    expect(ledger.observeRequest(req('a', 1, 1)).byModel).toEqual({});
    expect(ledger.settle(COMPLETED, req(null, 1, 1)).byModel).toEqual({});
  });
});

describe('UsageLedger coverage', () => {
  it('a streaming per-request turn is covered by its complete requests once the reply arrives', () => {
    const ledger = new UsageLedger(STREAMING);
    ledger.observeRequest(req('a', 100, 10));
    const s = ledger.settle(COMPLETED, null);
    expect(s).toMatchObject({ covered: true, measured: true, run: counts(100, 10) });
  });

  it('a streaming turn that served output but reported no request is not covered', () => {
    const ledger = new UsageLedger(STREAMING);
    expect(ledger.settle(COMPLETED, null).covered).toBe(false);
    const quiet = new UsageLedger(STREAMING);
    expect(quiet.settle({ ...COMPLETED, modelReached: false }, null).covered).toBe(true);
  });

  it('a streaming turn with an incomplete request and no result reading is not covered', () => {
    const ledger = new UsageLedger(STREAMING);
    ledger.observeRequest(req('a', 100, 10, { cacheRead: null }));
    const s = ledger.settle(COMPLETED, null);
    expect(s).toMatchObject({ covered: false, measured: true, run: counts(100, 10) });
  });

  it('a turn with no result reading is not covered when the source reports only at turn end', () => {
    const ledger = new UsageLedger(live({ shape: 'per_request', servedModel: true, cacheInInput: true }));
    ledger.observeRequest(req('a', 100, 10));
    const s = ledger.settle(COMPLETED, null);
    expect(s).toMatchObject({ covered: false, measured: true, run: counts(100, 10) });
  });

  it('a cancelled turn is not covered even when a result arrived', () => {
    const ledger = new UsageLedger(STREAMING);
    expect(ledger.settle({ ...CANCELLED, replied: true }, req(null, 1, 1)).covered).toBe(false);
  });

  it('a turn that ended without the runtime reply is not covered', () => {
    const ledger = new UsageLedger(STREAMING);
    expect(ledger.settle({ ...COMPLETED, replied: false }, req(null, 1, 1)).covered).toBe(false);
  });

  it('an unknown count never becomes a covering zero', () => {
    const ledger = new UsageLedger(STREAMING);
    const s = ledger.settle(
      COMPLETED,
      spendReading({ input: 100, output: 10, cacheRead: null, cacheWrite: 0 }),
    );
    expect(s.covered).toBe(false);
    expect(s.run).toEqual(counts(100, 10));
  });

  it('a source that may spend more than it reports never covers a turn', () => {
    const ledger = new UsageLedger(live({ shape: 'per_turn', lowerBound: true }));
    expect(ledger.settle(COMPLETED, req(null, 1, 1)).covered).toBe(false);
  });

  it('a turn with no reading at all measures nothing and leaves the run unchanged', () => {
    const ledger = new UsageLedger(STREAMING);
    ledger.settle(COMPLETED, req(null, 10, 1));
    ledger.beginTurn();
    const s = ledger.settle({ replied: false, modelReached: false, cancelled: false }, null);
    expect(s).toMatchObject({ measured: false, covered: false, run: counts(10, 1), turn: counts(0, 0) });
  });

  it('a per-request figure is never a session total', () => {
    const ledger = new UsageLedger(STREAMING);
    expect(ledger.settle(COMPLETED, req(null, 1, 1)).sessionTotal).toBe(false);
  });
});

describe('UsageLedger turn discipline', () => {
  it('settling a turn twice is a programming error', () => {
    const ledger = new UsageLedger(STREAMING);
    ledger.settle(COMPLETED, null);
    expect(() => ledger.settle(COMPLETED, null)).toThrow(/already settled/);
  });

  it('opening a turn over one that holds unsettled readings is a programming error', () => {
    const ledger = new UsageLedger(STREAMING);
    ledger.beginTurn();
    ledger.observeRequest(req('a', 1, 1));
    expect(() => ledger.beginTurn()).toThrow(/never settled/);
  });

  it('a reading after a settlement opens the next turn instead of amending the settled one', () => {
    const ledger = new UsageLedger(STREAMING);
    ledger.observeRequest(req('a', 1, 1));
    ledger.settle(COMPLETED, null);
    expect(ledger.observeRequest(req('b', 2, 2)).turn).toEqual(counts(2, 2));
    expect(ledger.settle(COMPLETED, null).run).toEqual(counts(3, 3));
  });

  it('a reading of the wrong shape is refused rather than miscounted', () => {
    expect(() => new UsageLedger(STREAMING).observeCumulative(cum(1, 1), true)).toThrow(/session_cumulative/);
    expect(() => new UsageLedger(CUMULATIVE).observeRequest(req('a', 1, 1))).toThrow(/observeCumulative/);
  });

  it('a kind counting no tokens carries no token figure, whatever a reading says', () => {
    const ledger = new UsageLedger(live({ amounts: [{ unit: 'USD', shape: 'per_turn' }] }));
    expect(ledger.observeRequest(req('a', 100, 10)).turn).toEqual(counts(0, 0));
    const s = ledger.settle(COMPLETED, req(null, 100, 10, { amounts: [{ unit: 'USD', micros: 5 }] }));
    expect(s).toMatchObject({
      measured: false,
      run: counts(0, 0),
      covered: true,
      amounts: [{ unit: 'USD', micros: 5 }],
    });
  });
});

describe('UsageLedger session-cumulative counters', () => {
  it('a session the run created counts the whole counter, and turn 2 includes turn 1', () => {
    const ledger = new UsageLedger(CUMULATIVE);
    ledger.sessionCreated();
    ledger.observeCumulative(cum(100, 10), true);
    expect(ledger.observeCumulative(cum(250, 20), true)).toMatchObject({ run: counts(250, 20), isNew: true });
    const first = ledger.settle(COMPLETED, cum(250, 20));
    expect(first).toMatchObject({
      run: counts(250, 20),
      covered: true,
      sessionTotal: true,
      estimated: false,
    });
    ledger.beginTurn();
    expect(ledger.observeCumulative(cum(400, 30), true)).toMatchObject({
      run: counts(400, 30),
      turn: counts(150, 10),
    });
    const second = ledger.settle(COMPLETED, cum(400, 30));
    expect(second).toMatchObject({ run: counts(400, 30), turn: counts(150, 10) });
  });

  it('a repeated counter value is not new spend', () => {
    const ledger = new UsageLedger(CUMULATIVE);
    ledger.sessionCreated();
    ledger.observeCumulative(cum(100, 10), true);
    expect(ledger.observeCumulative(cum(100, 10), true).isNew).toBe(false);
  });

  it('a resumed session with replay takes the replayed figure as history, not as this run’s spend', () => {
    const ledger = new UsageLedger(REPLAYING);
    const replayed = ledger.observeCumulative(cum(1_000, 100), false);
    expect(replayed).toMatchObject({ run: counts(0, 0), isNew: false });
    ledger.beginTurn();
    expect(ledger.observeCumulative(cum(1_200, 120), true).run).toEqual(counts(200, 20));
    expect(ledger.settle(COMPLETED, cum(1_300, 130))).toMatchObject({
      run: counts(300, 30),
      estimated: false,
      covered: true,
    });
  });

  it('a resumed session with records takes what the records hold as history', () => {
    const ledger = new UsageLedger({ ...CUMULATIVE, records: RECORDS });
    ledger.boundary({ readings: [req('r1', 600, 60), req('r2', 400, 40), req('r2', 400, 40)] });
    expect(ledger.observeCumulative(cum(1_300, 130), true).run).toEqual(counts(300, 30));
    expect(ledger.settle(COMPLETED, null)).toMatchObject({ run: counts(300, 30), estimated: false });
  });

  it('an unknown history is estimated as the reading less its own part, and the turn is marked estimated', () => {
    const ledger = new UsageLedger(CUMULATIVE);
    const own = { input: 100, output: 10, cacheRead: 0, cacheWrite: 0 };
    expect(ledger.observeCumulative(cum(1_500, 150, { own }), true).run).toEqual(counts(100, 10));
    expect(ledger.observeCumulative(cum(1_600, 160), true).run).toEqual(counts(200, 20));
    expect(ledger.settle(COMPLETED, null)).toMatchObject({ run: counts(200, 20), estimated: true });
  });

  it('without an own part, an unknown history swallows the first reading rather than over-counting it', () => {
    const ledger = new UsageLedger(CUMULATIVE);
    expect(ledger.observeCumulative(cum(1_500, 150), true).run).toEqual(counts(0, 0));
    expect(ledger.settle(COMPLETED, cum(1_550, 155))).toMatchObject({ run: counts(50, 5), estimated: true });
  });

  it('a replay that never came is estimated from the first reading inside a turn', () => {
    const ledger = new UsageLedger(REPLAYING);
    ledger.observeCumulative(
      cum(900, 90, { own: { input: 100, output: 10, cacheRead: 0, cacheWrite: 0 } }),
      true,
    );
    expect(ledger.settle(COMPLETED, null)).toMatchObject({ run: counts(100, 10), estimated: true });
  });

  it('an estimate that came out zero is not an estimate', () => {
    const ledger = new UsageLedger(CUMULATIVE);
    ledger.observeCumulative(
      cum(100, 10, { own: { input: 100, output: 10, cacheRead: 0, cacheWrite: 0 } }),
      true,
    );
    expect(ledger.settle(COMPLETED, null)).toMatchObject({ run: counts(100, 10), estimated: false });
  });

  it('a counter that falls below its previous reading keeps the run so far and marks the turn estimated', () => {
    const ledger = new UsageLedger(CUMULATIVE);
    ledger.sessionCreated();
    ledger.observeCumulative(cum(500, 50), true);
    ledger.settle(COMPLETED, cum(500, 50));
    ledger.beginTurn();
    const own = { input: 30, output: 3, cacheRead: 0, cacheWrite: 0 };
    expect(ledger.observeCumulative(cum(80, 8, { own }), true).run).toEqual(counts(530, 53));
    const s = ledger.settle(COMPLETED, cum(90, 9));
    expect(s).toMatchObject({ run: counts(540, 54), estimated: true });
  });

  it('the estimate belongs to the turn that saw it; the next turn is not estimated', () => {
    const ledger = new UsageLedger(CUMULATIVE);
    ledger.observeCumulative(cum(1_000, 100), true);
    expect(ledger.settle(COMPLETED, null).estimated).toBe(true);
    ledger.beginTurn();
    ledger.observeCumulative(cum(1_100, 110), true);
    expect(ledger.settle(COMPLETED, cum(1_100, 110))).toMatchObject({
      estimated: false,
      run: counts(100, 10),
    });
  });

  it('per-model counts of a counter follow the model that moved it', () => {
    const ledger = new UsageLedger(live({ shape: 'session_cumulative', servedModel: true }));
    ledger.sessionCreated();
    ledger.observeCumulative(cum(100, 10, { model: 'a' }), true);
    ledger.observeCumulative(cum(150, 15, { model: 'b' }), true);
    expect(ledger.settle(COMPLETED, null).byModel).toEqual({ a: counts(100, 10), b: counts(50, 5) });
  });
});

describe('UsageLedger records source', () => {
  const sources = { ...STREAMING, records: RECORDS };

  it('a stopped turn settles the spend its records hold beyond what streamed, and stays uncovered', () => {
    const ledger = new UsageLedger(sources);
    ledger.sessionCreated();
    ledger.observeRequest(req('a', 100, 10));
    expect(ledger.needsRecords(CANCELLED, null)).toBe(true);
    const s = ledger.settle(CANCELLED, null, { readings: [req('a', 100, 10), req('b', 200, 20)] });
    expect(s).toMatchObject({ run: counts(300, 30), covered: false, measured: true });
  });

  it('records are not needed when the live figure covers the turn', () => {
    const ledger = new UsageLedger(sources);
    ledger.sessionCreated();
    expect(ledger.needsRecords(COMPLETED, req(null, 1, 1))).toBe(false);
  });

  it('records of a resumed session with no boundary are never trusted as this run’s spend', () => {
    const ledger = new UsageLedger(sources);
    expect(ledger.needsRecords(CANCELLED, null)).toBe(false);
    expect(ledger.settle(CANCELLED, null, { readings: [req('old', 5_000, 500)] }).run).toEqual(counts(0, 0));
  });

  it('records after a boundary count only what came after it, without re-counting settled turns', () => {
    const ledger = new UsageLedger(sources);
    ledger.boundary({ readings: [req('old', 1_000, 100)] });
    ledger.observeRequest(req('a', 100, 10));
    ledger.settle(COMPLETED, req(null, 100, 10));
    ledger.beginTurn();
    const records = { readings: [req('old', 1_000, 100), req('a', 100, 10), req('b', 40, 4)] };
    expect(ledger.settle(CANCELLED, null, records).run).toEqual(counts(140, 14));
  });
});

describe('UsageLedger amounts', () => {
  it('a per-request amount repeated on several lines counts once per request, then sums', () => {
    const ledger = new UsageLedger(
      live({ shape: 'per_request', amounts: [{ unit: 'USD', shape: 'per_request' }] }),
    );
    ledger.observeRequest(req('a', 1, 1, { amounts: [{ unit: 'USD', micros: 100 }] }));
    ledger.observeRequest(req('a', 1, 1, { amounts: [{ unit: 'USD', micros: 300 }] }));
    ledger.observeRequest(req('b', 1, 1, { amounts: [{ unit: 'USD', micros: 50 }] }));
    expect(ledger.settle(COMPLETED, null).amounts).toEqual([{ unit: 'USD', micros: 350 }]);
  });

  it('per-turn amounts add up across turns instead of the last turn replacing the run', () => {
    const ledger = new UsageLedger(
      live({ shape: 'per_turn', amounts: [{ unit: 'credits', shape: 'per_turn' }] }),
    );
    ledger.settle(COMPLETED, req(null, 1, 1, { amounts: [{ unit: 'credits', micros: 2_000_000 }] }));
    ledger.beginTurn();
    const s = ledger.settle(
      COMPLETED,
      req(null, 1, 1, { amounts: [{ unit: 'credits', micros: 1_000_000 }] }),
    );
    expect(s.amounts).toEqual([{ unit: 'credits', micros: 3_000_000 }]);
  });

  it('a session-cumulative amount counts only what it gained after the replayed history', () => {
    const ledger = new UsageLedger(
      live({
        shape: 'session_cumulative',
        replay: 'last_figure',
        amounts: [{ unit: 'USD', shape: 'session_cumulative' }],
      }),
    );
    ledger.observeCumulative(cum(1_000, 100, { amounts: [{ unit: 'USD', micros: 9_000 }] }), false);
    ledger.observeCumulative(cum(1_100, 110, { amounts: [{ unit: 'USD', micros: 9_400 }] }), true);
    const s = ledger.settle(COMPLETED, cum(1_200, 120, { amounts: [{ unit: 'USD', micros: 9_500 }] }));
    expect(s).toMatchObject({
      amounts: [{ unit: 'USD', micros: 500 }],
      estimated: false,
      run: counts(200, 20),
    });
  });

  it('an undeclared unit is ignored, and a currency-naming declaration takes any unit', () => {
    const fixed = new UsageLedger(live({ shape: 'per_turn', amounts: [{ unit: 'USD', shape: 'per_turn' }] }));
    expect(
      fixed.settle(COMPLETED, req(null, 1, 1, { amounts: [{ unit: 'EUR', micros: 7 }] })).amounts,
    ).toEqual([]);
    const any = new UsageLedger(
      live({ shape: 'per_turn', amounts: [{ currency: true, shape: 'per_turn' }] }),
    );
    const s = any.settle(
      COMPLETED,
      req(null, 1, 1, {
        amounts: [
          { unit: 'EUR', micros: 7 },
          { unit: 'USD', micros: 3 },
        ],
      }),
    );
    expect(s.amounts).toEqual([
      { unit: 'EUR', micros: 7 },
      { unit: 'USD', micros: 3 },
    ]);
  });
});
