import { describe, expect, it } from 'vitest';
import { RunUsage, spendReading, TurnEndUsage, UsageLedger } from '../../../src/agent/usage/index.js';
import { COMPLETED, counts, live } from './fixtures.js';

describe('RunUsage', () => {
  it('a new session is unmeasured with zero usage, so its spend reads as unknown rather than none', () => {
    const acc = new RunUsage();
    expect(acc.measured()).toBe(false);
    expect(acc.snapshot()).toEqual(counts(0, 0));
  });

  it('the provisional turn adds to the settled run instead of replacing it', () => {
    const acc = new RunUsage();
    acc.setRunCumulative(counts(100, 10), { m: counts(100, 10) });
    expect(acc.setTurnProvisional(counts(20, 2), { m: counts(20, 2) })).toEqual(counts(120, 12));
    expect(acc.byModel()).toEqual({ m: counts(120, 12) });
    expect(acc.setTurnProvisional(counts(30, 3))).toEqual(counts(130, 13));
    expect(acc.measured()).toBe(true);
  });

  it('the snapshot never decreases, even when a settled figure is below what streamed', () => {
    const acc = new RunUsage();
    acc.setTurnProvisional(counts(200, 20));
    expect(acc.setRunCumulative(counts(150, 15))).toEqual(counts(200, 20));
    expect(acc.setTurnProvisional(counts(10, 1))).toEqual(counts(200, 20));
    expect(acc.setTurnProvisional(counts(60, 6))).toEqual(counts(210, 21));
  });

  it('settling drops the provisional turn so it is not counted twice', () => {
    const acc = new RunUsage();
    acc.setTurnProvisional(counts(50, 5));
    acc.setRunCumulative(counts(50, 5));
    expect(acc.setTurnProvisional(counts(10, 1))).toEqual(counts(60, 6));
  });

  it('a settlement that measured nothing does not mark the session measured', () => {
    const ledger = new UsageLedger(live({ shape: 'per_request', duringTurn: true }));
    const acc = new RunUsage();
    expect(acc.settle(ledger.settle(COMPLETED, null))).toBeNull();
    expect(acc.measured()).toBe(false);
  });

  it('the per-model map handed out cannot be corrupted by the caller', () => {
    const acc = new RunUsage();
    acc.setRunCumulative(counts(1, 1), { m: counts(1, 1) });
    const view = acc.byModel() as Record<string, unknown>;
    expect(() => {
      delete view.m;
    }).toThrow(TypeError);
    expect(acc.byModel()).toEqual({ m: counts(1, 1) });
  });
});

describe('TurnEndUsage', () => {
  const sources = live({ shape: 'per_turn' });
  const result = (input: number, output: number) =>
    spendReading({ input, output, cacheRead: 0, cacheWrite: 0 });

  it('each measured turn yields the run snapshot once, and turn 2 includes turn 1', () => {
    const ledger = new UsageLedger(sources);
    const usage = new TurnEndUsage();
    expect(usage.settle(ledger.settle(COMPLETED, result(100, 10)))).toEqual(counts(100, 10));
    ledger.beginTurn();
    expect(usage.settle(ledger.settle(COMPLETED, result(40, 4)))).toEqual(counts(140, 14));
    expect(usage.snapshot()).toEqual(counts(140, 14));
    expect(usage.measured()).toBe(true);
  });

  it('a turn without its summary emits nothing and leaves a new session unmeasured', () => {
    const ledger = new UsageLedger(sources);
    const usage = new TurnEndUsage();
    expect(usage.settle(ledger.settle(COMPLETED, null))).toBeNull();
    expect(usage.measured()).toBe(false);
    expect(usage.snapshot()).toEqual(counts(0, 0));
  });

  it('a later turn without a figure keeps the earlier measured snapshot', () => {
    const ledger = new UsageLedger(sources);
    const usage = new TurnEndUsage();
    usage.settle(ledger.settle(COMPLETED, result(10, 1)));
    ledger.beginTurn();
    expect(usage.settle(ledger.settle(COMPLETED, null))).toBeNull();
    expect(usage.snapshot()).toEqual(counts(10, 1));
    expect(usage.measured()).toBe(true);
  });

  it('a kind counting no tokens never emits a token figure', () => {
    const ledger = new UsageLedger(live({ amounts: [{ unit: 'credits', shape: 'per_turn' }] }));
    const usage = new TurnEndUsage();
    expect(usage.settle(ledger.settle(COMPLETED, result(10, 1)))).toBeNull();
    expect(usage.measured()).toBe(false);
  });
});
