import { describe, expect, it } from 'vitest';
import {
  costMicroUsd,
  formatDollars,
  MONEY_RULE,
  spendMicroUsd,
  type TokenRates,
  toCents,
  usdToMicros,
} from '../../../src/agent/usage/index.js';
import { counts } from './fixtures.js';

const SONNET: TokenRates = {
  inputPerMtok: 3,
  outputPerMtok: 15,
  cacheReadPerMtok: 0.3,
  cacheWritePerMtok: 3.75,
};

describe('costMicroUsd', () => {
  it('a million input tokens at $3/Mtok cost exactly 3,000,000 micro-dollars', () => {
    expect(costMicroUsd(counts(1_000_000, 0), SONNET)).toBe(3_000_000);
  });

  it('one token at $3/Mtok is 3 micro-dollars, not lost to rounding', () => {
    expect(costMicroUsd(counts(1, 0), SONNET)).toBe(3);
  });

  it('cache reads and writes are priced at their own rates, not again as input', () => {
    // 1000 uncached input, 2000 cache read, 400 cache write, 100 output.
    const c = counts(3_400, 100, 2_000, 400);
    expect(costMicroUsd(c, SONNET)).toBe(3_000 + 1_500 + 600 + 1_500);
  });

  it('a decimal price is exact: 7 tokens at $0.3/Mtok are 2.1 µ$, rounded to 2, not 2.0999… floored', () => {
    expect(costMicroUsd(counts(7, 7, 7), { ...SONNET, inputPerMtok: 0, outputPerMtok: 0 })).toBe(2);
    expect(costMicroUsd(counts(1_000, 0), { ...SONNET, inputPerMtok: 1.005 })).toBe(1_005);
  });

  it('rounds half-up once per token class, not per token', () => {
    const half = { inputPerMtok: 0.5, outputPerMtok: 0.5, cacheReadPerMtok: 0, cacheWritePerMtok: 0 };
    expect(costMicroUsd(counts(1, 0), half)).toBe(1);
    expect(costMicroUsd(counts(1, 1), half)).toBe(2);
    expect(costMicroUsd(counts(3, 0), half)).toBe(2);
    expect(costMicroUsd(counts(1, 0), { ...half, inputPerMtok: 0.49 })).toBe(0);
  });

  it('huge counts stay exact beyond floating-point precision', () => {
    expect(costMicroUsd(counts(9_007_199_254_740_991, 0), { ...SONNET, inputPerMtok: 0.1 })).toBe(
      900_719_925_474_099,
    );
  });

  it('a negative or non-numeric rate is refused rather than priced', () => {
    expect(() => costMicroUsd(counts(1, 0), { ...SONNET, inputPerMtok: -1 })).toThrow(RangeError);
    expect(() => costMicroUsd(counts(1, 0), { ...SONNET, inputPerMtok: Number.NaN })).toThrow(RangeError);
  });
});

describe('usdToMicros', () => {
  it.each([
    [1, 1_000_000],
    [0.01, 10_000],
    [1.0000005, 1_000_001],
    [0.0000004, 0],
    [0.0000015, 2],
    [-0.0000015, -2],
    [1e-7, 0],
    [123.456789, 123_456_789],
    [0.1 + 0.2, 300_000],
  ])('%s USD is %s micro-dollars, rounded half away from zero on the decimal written', (usd, micros) => {
    expect(usdToMicros(usd)).toBe(micros);
  });

  it('refuses a non-finite figure', () => {
    expect(() => usdToMicros(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
});

describe('money formatting', () => {
  it.each([
    [12_346, '$0.012346'],
    [1_234_567, '$1.234567'],
    [0, '$0.000000'],
    [-1_500_000, '-$1.500000'],
  ])('%s micro-dollars show as %s', (micros, text) => {
    expect(formatDollars(micros)).toBe(text);
  });

  it.each([
    [1_234_567, 123],
    [5_000, 1],
    [4_999, 0],
    [15_000, 2],
    [-5_000, 0],
  ])('%s micro-dollars are %s cents, rounded half-up', (micros, cents) => {
    expect(toCents(micros)).toBe(cents);
  });

  it('states the rounding rule in one sentence for the README', () => {
    expect(MONEY_RULE.split('. ').length).toBe(1);
    expect(MONEY_RULE).toMatch(/micro-dollars.*half-up.*cents/);
  });
});

describe('spendMicroUsd', () => {
  it('a reported USD amount passes through, unpriced', () => {
    expect(spendMicroUsd([{ unit: 'USD', micros: 77 }], counts(1_000_000, 0), SONNET)).toBe(77);
  });

  it('without a USD amount, the rates price the tokens; vendor units are never taken as dollars', () => {
    expect(spendMicroUsd([{ unit: 'credits', micros: 5 }], counts(1_000_000, 0), SONNET)).toBe(3_000_000);
  });

  it('neither a USD amount nor rates is unknown spend, not zero', () => {
    expect(spendMicroUsd([], counts(1_000_000, 0), null)).toBeNull();
  });
});
