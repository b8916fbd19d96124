import { describe, expect, it } from 'vitest';
import {
  type AmountDeclaration,
  checkSources,
  UsageLedger,
  type UsageSources,
  UsageSourcesError,
  usageDisposition,
} from '../../../src/agent/usage/index.js';
import { live, RECORDS, spend } from './fixtures.js';

const TOKENS = live({ shape: 'per_request', duringTurn: true, servedModel: true });

describe('checkSources', () => {
  it.each<[string, UsageSources]>([
    ['a per-request streaming source', TOKENS],
    ['an amounts-only source', live({ amounts: [{ unit: 'USD', shape: 'per_turn' }] })],
    ['a local measurement', live({ shape: 'per_turn' }, 'local')],
    [
      'a protocol counter that replays its last figure',
      {
        live: {
          category: 'protocol',
          strategy: 'live',
          spend: spend({ shape: 'session_cumulative', replay: 'last_figure' }),
        },
      },
    ],
    ['a live source backed by a journal', { ...TOKENS, records: RECORDS }],
    [
      'a fixed unit beside a currency-naming report',
      live({
        shape: 'per_turn',
        amounts: [
          { unit: 'credits', shape: 'per_turn' },
          { currency: true, shape: 'per_request' },
        ],
      }),
    ],
  ])('accepts %s', (_, sources) => {
    expect(checkSources(sources)).toEqual([]);
  });

  const bad = (amounts: AmountDeclaration[]) => live({ shape: 'per_turn', amounts });

  it.each<[string, UsageSources, string]>([
    ['a kind reporting neither tokens nor amounts cannot register', live(), 'live.spend: declares neither'],
    [
      'a live source read from records is refused',
      {
        live: { category: 'output', strategy: 'records', spend: spend({ shape: 'per_turn' }) },
      },
      'live.strategy',
    ],
    [
      'a journal cannot stand in for the live source',
      {
        live: { category: 'journal', strategy: 'live', spend: spend({ shape: 'per_turn' }) },
      },
      'live.category',
    ],
    [
      'a records source outside the journal is refused',
      {
        ...TOKENS,
        records: { ...RECORDS, category: 'output' },
      },
      'records.category',
    ],
    [
      'a records source read live is refused',
      { ...TOKENS, records: { ...RECORDS, strategy: 'live' } },
      'records.strategy',
    ],
    [
      'a records source that is not one entry per request is refused',
      {
        ...TOKENS,
        records: { ...RECORDS, spend: spend({ shape: 'session_cumulative' }) },
      },
      'records.spend.shape',
    ],
    [
      'a records source without a shape is refused',
      { ...TOKENS, records: { ...RECORDS, spend: spend() } },
      'records.spend.shape',
    ],
    [
      'records cannot report during a turn',
      {
        ...TOKENS,
        records: { ...RECORDS, spend: spend({ shape: 'per_request', duringTurn: true }) },
      },
      'records.spend.duringTurn',
    ],
    [
      'replay on a per-turn figure is refused',
      live({ shape: 'per_turn', replay: 'last_figure' }),
      'live.spend.replay',
    ],
    [
      'replay without a token shape is refused',
      live({
        replay: 'last_figure',
        amounts: [{ unit: 'USD', shape: 'session_cumulative' }],
      }),
      'live.spend.replay',
    ],
    ['an unknown shape is refused', live({ shape: 'per_minute' as never }), 'live.spend.shape'],
    [
      'token flags without a token shape are refused',
      live({
        servedModel: true,
        amounts: [{ unit: 'USD', shape: 'per_turn' }],
      }),
      'live.spend.servedModel',
    ],
    [
      'a unit declared twice is refused',
      bad([
        { unit: 'USD', shape: 'per_turn' },
        { unit: 'USD', shape: 'per_request' },
      ]),
      "'USD' is declared more than once",
    ],
    [
      'currency declared twice is refused',
      bad([
        { currency: true, shape: 'per_turn' },
        { currency: true, shape: 'per_request' },
      ]),
      'currency: declared more than once',
    ],
    ['an empty unit is refused', bad([{ unit: '', shape: 'per_turn' }]), 'amounts[0].unit'],
    [
      'a unit with surrounding spaces is refused',
      bad([{ unit: ' credits', shape: 'per_turn' }]),
      'amounts[0].unit',
    ],
    [
      'a lower-case dollar unit is refused',
      bad([{ unit: 'usd', shape: 'per_turn' }]),
      "write the US dollar unit as 'USD'",
    ],
    [
      'a unit and currency together are refused',
      bad([{ unit: 'USD', currency: true, shape: 'per_turn' } as never]),
      'both a unit and currency',
    ],
    [
      'an amount with an unknown shape is refused',
      bad([{ unit: 'USD', shape: 'hourly' as never }]),
      'amounts[0].shape',
    ],
  ])('%s', (_, sources, problem) => {
    const problems = checkSources(sources);
    expect(
      problems.some((p) => p.includes(problem)),
      problems.join('\n'),
    ).toBe(true);
  });

  it('reports every problem at once, not only the first', () => {
    const problems = checkSources({
      live: { category: 'journal', strategy: 'records', spend: spend() },
      records: { category: 'output', strategy: 'live', spend: spend() },
    });
    expect(problems.length).toBeGreaterThanOrEqual(5);
  });

  it('a ledger refuses sources that fail the check, naming the problems', () => {
    expect(() => new UsageLedger(live())).toThrow(UsageSourcesError);
    expect(() => new UsageLedger(live())).toThrow(/declares neither/);
  });
});

describe('usageDisposition', () => {
  it.each<[string, UsageSources, ReturnType<typeof usageDisposition>]>([
    ['streaming per-model', TOKENS, { arrival: 'incremental', attribution: 'per_model' }],
    [
      'closing summary line',
      live({ shape: 'per_turn' }),
      { arrival: 'turn_end', attribution: 'session_total' },
    ],
    [
      'turn-end figure naming its model',
      live({ shape: 'per_turn', servedModel: true }),
      { arrival: 'turn_end', attribution: 'per_model' },
    ],
    [
      'cumulative counter during the turn',
      live({ shape: 'session_cumulative', duringTurn: true }),
      { arrival: 'incremental', attribution: 'session_total' },
    ],
    [
      'amounts only: the kind carries no token figure',
      live({ amounts: [{ unit: 'credits', shape: 'per_turn' }] }),
      { arrival: 'none', attribution: 'none' },
    ],
  ])('a %s source is derived, never declared', (_, sources, want) => {
    expect(usageDisposition(sources)).toEqual(want);
  });
});
