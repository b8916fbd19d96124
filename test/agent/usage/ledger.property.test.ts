import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  anyBelow,
  RunUsage,
  type SpendReading,
  spendReading,
  UsageLedger,
} from '../../../src/agent/usage/index.js';
import type { TokenCounts } from '../../../src/domain/agent.js';
import { counts, live } from './fixtures.js';

const count = fc.oneof(
  { weight: 4, arbitrary: fc.nat({ max: 100_000 }) },
  { weight: 1, arbitrary: fc.constant(null) },
);
const identity = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('a', 'b', 'c', 'd') },
  { weight: 1, arbitrary: fc.constant(null) },
);
const requestReading = fc
  .record({ identity, input: count, output: count, cacheRead: count, cacheWrite: count })
  .map((r): SpendReading => spendReading({ ...r, model: r.identity === 'a' ? 'big' : 'small' }));

describe('ledger properties', () => {
  it('(a) in any order, the turn total is the sum over request ids of each count’s largest value', () => {
    fc.assert(
      fc.property(fc.array(requestReading, { maxLength: 30 }), (readings) => {
        const ledger = new UsageLedger(live({ shape: 'per_request', duringTurn: true, servedModel: true }));
        let turn: TokenCounts = counts(0, 0);
        for (const r of readings) turn = ledger.observeRequest(r).turn;
        const groups = new Map<string, SpendReading[]>();
        readings.forEach((r, i) => {
          const key = r.identity ?? `#${i}`;
          groups.set(key, [...(groups.get(key) ?? []), r]);
        });
        const largest = (rs: SpendReading[], field: 'input' | 'output' | 'cacheRead' | 'cacheWrite') =>
          Math.max(0, ...rs.map((r) => r[field] ?? 0));
        let input = 0;
        let output = 0;
        let cacheRead = 0;
        let cacheWrite = 0;
        for (const rs of groups.values()) {
          const cr = largest(rs, 'cacheRead');
          const cw = largest(rs, 'cacheWrite');
          input += largest(rs, 'input') + cr + cw;
          output += largest(rs, 'output');
          cacheRead += cr;
          cacheWrite += cw;
        }
        expect(turn).toEqual(counts(input, output, cacheRead, cacheWrite));
      }),
    );
  });

  const end = fc.record({ replied: fc.boolean(), modelReached: fc.boolean(), cancelled: fc.boolean() });
  const requestTurn = fc.record({
    readings: fc.array(requestReading, { maxLength: 8 }),
    result: fc.option(requestReading, { nil: null }),
    end,
  });

  function neverBelow(previous: TokenCounts, next: TokenCounts): void {
    expect(anyBelow(next, previous), `${JSON.stringify(next)} fell below ${JSON.stringify(previous)}`).toBe(
      false,
    );
  }

  it('(b) a per-request run never settles below an earlier settled figure, whatever the turns hold', () => {
    fc.assert(
      fc.property(fc.array(requestTurn, { maxLength: 8 }), (turns) => {
        const ledger = new UsageLedger(live({ shape: 'per_request', duringTurn: true, servedModel: true }));
        const acc = new RunUsage();
        let settled = counts(0, 0);
        let snapshot = counts(0, 0);
        for (const t of turns) {
          ledger.beginTurn();
          for (const r of t.readings) {
            const o = ledger.observeRequest(r);
            const next = acc.setTurnProvisional(o.turn, o.byModel);
            neverBelow(snapshot, next);
            snapshot = next;
          }
          const s = ledger.settle(t.end, t.result);
          neverBelow(settled, s.run);
          settled = s.run;
          const next = acc.setRunCumulative(s.run, s.byModel);
          neverBelow(snapshot, next);
          snapshot = next;
        }
      }),
    );
  });

  const cumulativeReading = fc.record({
    input: fc.nat({ max: 10_000 }),
    output: fc.nat({ max: 10_000 }),
    own: fc.option(fc.record({ input: fc.nat({ max: 500 }), output: fc.nat({ max: 500 }) }), {
      nil: undefined,
    }),
    inTurn: fc.boolean(),
  });
  type CumulativeInput = {
    input: number;
    output: number;
    own?: { input: number; output: number } | undefined;
  };
  const reading = (r: CumulativeInput): SpendReading =>
    spendReading({
      input: r.input,
      output: r.output,
      cacheRead: 0,
      cacheWrite: 0,
      own: r.own === undefined ? undefined : { ...r.own, cacheRead: 0, cacheWrite: 0 },
    });
  const cumulativeTurn = fc.record({
    readings: fc.array(cumulativeReading, { maxLength: 6 }),
    result: fc.option(cumulativeReading, { nil: null }),
    end,
  });

  it('(b) a session-cumulative run never settles below an earlier settled figure, even when the counter jumps back', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('created', 'replay', 'unknown'),
        fc.array(cumulativeTurn, { maxLength: 6 }),
        (start, turns) => {
          const ledger = new UsageLedger(
            live({
              shape: 'session_cumulative',
              duringTurn: true,
              replay: start === 'replay' ? 'last_figure' : undefined,
            }),
          );
          if (start === 'created') ledger.sessionCreated();
          let settled = counts(0, 0);
          for (const t of turns) {
            ledger.beginTurn();
            let observed = settled;
            for (const r of t.readings) {
              const o = ledger.observeCumulative(reading(r), r.inTurn);
              neverBelow(observed, o.run);
              observed = o.run;
            }
            const s = ledger.settle(t.end, t.result === null ? null : reading(t.result));
            neverBelow(settled, s.run);
            neverBelow(observed, s.run);
            settled = s.run;
          }
        },
      ),
    );
  });

  it('a counter that only grows in a session the run created settles exactly its last figure, unestimated', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.tuple(fc.nat(1_000), fc.nat(1_000)), { maxLength: 5 }), { maxLength: 5 }),
        (turns) => {
          const ledger = new UsageLedger(live({ shape: 'session_cumulative', duringTurn: true }));
          ledger.sessionCreated();
          let input = 0;
          let output = 0;
          for (const t of turns) {
            ledger.beginTurn();
            for (const [di, dout] of t) {
              input += di;
              output += dout;
              ledger.observeCumulative(reading({ input, output }), true);
            }
            const s = ledger.settle(
              { replied: true, modelReached: true, cancelled: false },
              reading({ input, output }),
            );
            expect(s).toMatchObject({
              run: counts(input, output),
              estimated: false,
              covered: true,
              sessionTotal: true,
            });
          }
        },
      ),
    );
  });

  it('(b) settled amounts never go below an earlier settled figure', () => {
    const amountReading = fc.record({
      identity,
      micros: fc.nat({ max: 1_000_000 }),
      unit: fc.constantFrom('USD', 'credits'),
    });
    fc.assert(
      fc.property(fc.array(fc.array(amountReading, { maxLength: 5 }), { maxLength: 6 }), (turns) => {
        const ledger = new UsageLedger(
          live({
            shape: 'per_request',
            amounts: [
              { unit: 'USD', shape: 'per_request' },
              { unit: 'credits', shape: 'session_cumulative' },
            ],
          }),
        );
        const last = new Map<string, number>();
        for (const t of turns) {
          ledger.beginTurn();
          for (const a of t) {
            ledger.observeRequest(
              spendReading({ identity: a.identity, amounts: [{ unit: a.unit, micros: a.micros }] }),
            );
          }
          for (const { unit, micros } of ledger.settle(
            { replied: true, modelReached: true, cancelled: false },
            null,
          ).amounts) {
            expect(micros).toBeGreaterThanOrEqual(last.get(unit) ?? 0);
            last.set(unit, micros);
          }
        }
      }),
    );
  });
});
