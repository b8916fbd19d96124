/**
 * The only token arithmetic in the program. Every sum, difference and maximum of token
 * counts goes through here, so a new class cannot be dropped by one caller's hand-written
 * fold, and no result is ever negative or NaN: an unknown or malformed count contributes 0
 * and the reading is reported incomplete instead.
 */
import { type TokenCounts, ZERO_TOKENS } from '../../domain/agent.js';
import type { SpendCounts } from './reading.js';
import type { SpendDeclaration } from './sources.js';

/** Zero counts. Frozen: callers receive fresh objects from every other function here. */
export const ZERO: Readonly<TokenCounts> = ZERO_TOKENS;

/** The declaration flags normalisation reads. */
export type CountsDeclaration = Pick<SpendDeclaration, 'cacheInInput' | 'reasoningInOutput'>;

/** A count usable in arithmetic: a non-negative safe number, floored; anything else is unknown. */
function known(value: number | null | undefined): number | null {
  if (typeof value !== 'number' || !(value >= 0 && value <= Number.MAX_SAFE_INTEGER)) return null;
  return Math.floor(value);
}

function clean(value: number): number {
  return Number.isFinite(value) && value > 0 ? value : 0;
}

/** Builds counts from four classes; `inputTokens` must already include cache reads and writes. */
export function tokenCounts(
  input: number,
  output: number,
  cacheRead: number,
  cacheWrite: number,
): TokenCounts {
  const inputTokens = clean(input);
  const outputTokens = clean(output);
  return {
    inputTokens,
    outputTokens,
    cacheReadTokens: clean(cacheRead),
    cacheWriteTokens: clean(cacheWrite),
    totalTokens: inputTokens + outputTokens,
  };
}

/**
 * A reading in our classes: `inputTokens` includes cache reads and writes, `outputTokens`
 * includes reasoning, `totalTokens` is input + output. Unknown counts contribute 0; ask
 * `isComplete` whether any was unknown.
 */
export function normalise(reading: SpendCounts, decl: CountsDeclaration): TokenCounts {
  const input = known(reading.input) ?? 0;
  const cacheRead = known(reading.cacheRead) ?? 0;
  const cacheWrite = known(reading.cacheWrite) ?? 0;
  let output = known(reading.output) ?? 0;
  if (!decl.reasoningInOutput) output += known(reading.reasoning) ?? 0;
  // A report whose input is below its own cache classes is inconsistent; never price below them.
  const inputTokens = decl.cacheInInput
    ? Math.max(input, cacheRead + cacheWrite)
    : input + cacheRead + cacheWrite;
  return tokenCounts(inputTokens, output, cacheRead, cacheWrite);
}

/** True when every count the reading needs is known, so its figure can claim to cover what it reports. */
export function isComplete(reading: SpendCounts, decl: CountsDeclaration): boolean {
  if (
    known(reading.input) === null ||
    known(reading.output) === null ||
    known(reading.cacheRead) === null ||
    known(reading.cacheWrite) === null
  ) {
    return false;
  }
  return decl.reasoningInOutput || reading.reasoning === undefined || known(reading.reasoning) !== null;
}

// Written out per operation, not as one fold over an operator callback: these run for
// every usage reading, and a call through a callback per class costs more than the sum.

/** Class-by-class sum. */
export function addCounts(a: TokenCounts, b: TokenCounts): TokenCounts {
  return tokenCounts(
    clean(a.inputTokens) + clean(b.inputTokens),
    clean(a.outputTokens) + clean(b.outputTokens),
    clean(a.cacheReadTokens) + clean(b.cacheReadTokens),
    clean(a.cacheWriteTokens) + clean(b.cacheWriteTokens),
  );
}

/** Class-by-class difference, clamped at 0. */
export function subtractCounts(a: TokenCounts, b: TokenCounts): TokenCounts {
  return tokenCounts(
    Math.max(0, clean(a.inputTokens) - clean(b.inputTokens)),
    Math.max(0, clean(a.outputTokens) - clean(b.outputTokens)),
    Math.max(0, clean(a.cacheReadTokens) - clean(b.cacheReadTokens)),
    Math.max(0, clean(a.cacheWriteTokens) - clean(b.cacheWriteTokens)),
  );
}

/** Class-by-class maximum. */
export function maxCounts(a: TokenCounts, b: TokenCounts): TokenCounts {
  return tokenCounts(
    Math.max(clean(a.inputTokens), clean(b.inputTokens)),
    Math.max(clean(a.outputTokens), clean(b.outputTokens)),
    Math.max(clean(a.cacheReadTokens), clean(b.cacheReadTokens)),
    Math.max(clean(a.cacheWriteTokens), clean(b.cacheWriteTokens)),
  );
}

/** True when every class of `a` equals the one of `b`. */
export function sameCounts(a: TokenCounts, b: TokenCounts): boolean {
  return (
    a.inputTokens === b.inputTokens &&
    a.outputTokens === b.outputTokens &&
    a.cacheReadTokens === b.cacheReadTokens &&
    a.cacheWriteTokens === b.cacheWriteTokens
  );
}

/** True when no class holds a token. */
export function isZero(a: TokenCounts): boolean {
  return sameCounts(a, ZERO);
}

/** True when some class of `a` is below the one of `b`. */
export function anyBelow(a: TokenCounts, b: TokenCounts): boolean {
  return (
    a.inputTokens < b.inputTokens ||
    a.outputTokens < b.outputTokens ||
    a.cacheReadTokens < b.cacheReadTokens ||
    a.cacheWriteTokens < b.cacheWriteTokens
  );
}

/** Counts per model name, as the runtime spells the names. */
export type CountsByModel = Record<string, TokenCounts>;

function mergeByModel(
  a: CountsByModel,
  b: CountsByModel,
  op: (x: TokenCounts, y: TokenCounts) => TokenCounts,
): CountsByModel {
  const out: CountsByModel = {};
  for (const name in a) if (Object.hasOwn(a, name)) out[name] = op(a[name] as TokenCounts, b[name] ?? ZERO);
  for (const name in b)
    if (Object.hasOwn(b, name) && !Object.hasOwn(a, name)) out[name] = op(ZERO, b[name] as TokenCounts);
  return out;
}

/** Model-by-model sum. */
export function addByModel(a: CountsByModel, b: CountsByModel): CountsByModel {
  return mergeByModel(a, b, addCounts);
}

/** Model-by-model difference, clamped at 0; models left with nothing are dropped. */
export function subtractByModel(a: CountsByModel, b: CountsByModel): CountsByModel {
  const out = mergeByModel(a, b, subtractCounts);
  for (const name in out) if (Object.hasOwn(out, name) && isZero(out[name] as TokenCounts)) delete out[name];
  return out;
}

/** Model-by-model maximum. */
export function maxByModel(a: CountsByModel, b: CountsByModel): CountsByModel {
  return mergeByModel(a, b, maxCounts);
}

/** Every model's counts added together. */
export function sumByModel(byModel: CountsByModel): TokenCounts {
  let sum: TokenCounts = ZERO;
  for (const name in byModel)
    if (Object.hasOwn(byModel, name)) sum = addCounts(sum, byModel[name] as TokenCounts);
  return sum;
}

/** A copy that shares no objects with `byModel`. */
export function cloneByModel(byModel: CountsByModel): CountsByModel {
  return addByModel(byModel, {});
}
