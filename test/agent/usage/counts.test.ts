import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  addByModel,
  addCounts,
  isComplete,
  maxCounts,
  normalise,
  spendReading,
  subtractByModel,
  subtractCounts,
  sumByModel,
  ZERO,
} from '../../../src/agent/usage/index.js';
import type { TokenCounts } from '../../../src/domain/agent.js';
import { counts } from './fixtures.js';

const APART = { cacheInInput: false, reasoningInOutput: true };
const INSIDE = { cacheInInput: true, reasoningInOutput: true };

describe('normalise', () => {
  it('cache reported apart from input is added into inputTokens, so cached spend is not dropped', () => {
    const r = spendReading({ input: 100, output: 20, cacheRead: 30, cacheWrite: 5 });
    expect(normalise(r, APART)).toEqual(counts(135, 20, 30, 5));
  });

  it('cache already inside input is not counted twice', () => {
    const r = spendReading({ input: 100, output: 20, cacheRead: 30, cacheWrite: 5 });
    expect(normalise(r, INSIDE)).toEqual(counts(100, 20, 30, 5));
  });

  it('an input below its own cache classes never prices below them', () => {
    const r = spendReading({ input: 10, output: 0, cacheRead: 30, cacheWrite: 5 });
    expect(normalise(r, INSIDE).inputTokens).toBe(35);
  });

  it('reasoning reported apart is added to output when the runtime keeps it out of output', () => {
    const r = spendReading({ input: 1, output: 10, cacheRead: 0, cacheWrite: 0, reasoning: 7 });
    expect(normalise(r, { cacheInInput: false, reasoningInOutput: false }).outputTokens).toBe(17);
    expect(normalise(r, APART).outputTokens).toBe(10);
  });

  it('an unknown count contributes nothing but marks the reading incomplete, never a complete zero', () => {
    const r = spendReading({ input: 100, output: null, cacheRead: 0, cacheWrite: 0 });
    expect(normalise(r, APART)).toEqual(counts(100, 0));
    expect(isComplete(r, APART)).toBe(false);
    expect(isComplete({ ...r, output: 0 }, APART)).toBe(true);
  });

  it('a negative, fractional or non-finite count is not taken at face value', () => {
    const r = spendReading({
      input: -5,
      output: Number.NaN,
      cacheRead: 2.7,
      cacheWrite: Number.POSITIVE_INFINITY,
    });
    expect(normalise(r, APART)).toEqual(counts(2, 0, 2, 0));
    expect(isComplete(r, APART)).toBe(false);
  });

  it('reasoning reported as unknown leaves a reading incomplete only when it belongs outside output', () => {
    const r = spendReading({ input: 1, output: 1, cacheRead: 0, cacheWrite: 0, reasoning: null });
    expect(isComplete(r, { cacheInInput: false, reasoningInOutput: false })).toBe(false);
    expect(isComplete(r, APART)).toBe(true);
  });
});

describe('count arithmetic', () => {
  it('subtracting more than there is stops at zero instead of going negative', () => {
    expect(subtractCounts(counts(10, 5), counts(20, 1))).toEqual(counts(0, 4));
  });

  it('totalTokens is recomputed from input and output, never summed separately', () => {
    const skewed = { ...counts(10, 5), totalTokens: 999 };
    expect(addCounts(skewed, ZERO).totalTokens).toBe(15);
  });

  it('per-model maps add and subtract by model name and drop emptied models', () => {
    const a = { opus: counts(10, 1), haiku: counts(5, 5) };
    const b = { opus: counts(10, 1) };
    expect(addByModel(a, b)).toEqual({ opus: counts(20, 2), haiku: counts(5, 5) });
    expect(subtractByModel(a, b)).toEqual({ haiku: counts(5, 5) });
    expect(sumByModel(a)).toEqual(counts(15, 6));
  });
});

const count = fc.oneof(
  fc.constant(null),
  fc.nat(),
  fc.integer({ min: -1_000, max: -1 }),
  fc.double(),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.MAX_SAFE_INTEGER),
);
const reading = fc.record({
  input: count,
  output: count,
  cacheRead: count,
  cacheWrite: count,
  reasoning: count,
});
const decl = fc.record({ cacheInInput: fc.boolean(), reasoningInOutput: fc.boolean() });

function sane(c: TokenCounts): boolean {
  const fields = [c.inputTokens, c.outputTokens, c.cacheReadTokens, c.cacheWriteTokens, c.totalTokens];
  return (
    fields.every((x) => Number.isFinite(x) && x >= 0) && c.totalTokens === c.inputTokens + c.outputTokens
  );
}

describe('count arithmetic properties', () => {
  it('normalise, add, subtract and max never produce a negative, NaN or inconsistent total', () => {
    fc.assert(
      fc.property(reading, reading, decl, (r1, r2, d) => {
        const a = normalise(r1, d);
        const b = normalise(r2, d);
        for (const c of [
          a,
          b,
          addCounts(a, b),
          subtractCounts(a, b),
          subtractCounts(b, a),
          maxCounts(a, b),
        ]) {
          if (!sane(c)) return false;
        }
        return true;
      }),
    );
  });

  it('normalised input always holds both cache classes', () => {
    fc.assert(
      fc.property(reading, decl, (r, d) => {
        const c = normalise(r, d);
        return c.inputTokens >= c.cacheReadTokens + c.cacheWriteTokens;
      }),
    );
  });
});
