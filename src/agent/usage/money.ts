/**
 * Money arithmetic. Binary floating point cannot hold most decimal prices (0.3 × 7 is
 * 2.0999…), so prices and dollar figures are read as exact decimals and multiplied in
 * integers; a price in USD per million tokens times a token count is micro-dollars
 * exactly, and rounding happens once, at the end of each priced class.
 *
 * Money is kept as integer micro-dollars; figures priced from token_rates are rounded half-up to the micro-dollar per token class, and shown in cents rounded half-up.
 */
import type { ReportedAmount, TokenCounts } from '../../domain/agent.js';
import { UNIT_USD } from './sources.js';

/** The rounding rule, in one sentence, as the README states it. */
export const MONEY_RULE =
  'Money is kept as integer micro-dollars; figures priced from token_rates are rounded half-up to the micro-dollar per token class, and shown in cents rounded half-up.';

/** Prices in USD per million tokens (`token_rates`). */
export interface TokenRates {
  inputPerMtok: number;
  outputPerMtok: number;
  cacheReadPerMtok: number;
  cacheWritePerMtok: number;
}

const MICROS_PER_USD = 1_000_000;
const MICROS_PER_CENT = 10_000;

/** `x` as an exact decimal: `x = units / 10^scale`. Throws for a non-finite number. */
function decimal(x: number): { units: bigint; scale: bigint } {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(x));
  if (match === null) throw new RangeError(`not a finite number: ${x}`);
  const [, sign = '', whole = '0', fraction = '', exponent = '0'] = match;
  let scale = fraction.length - Number(exponent);
  let units = BigInt(`${sign}${whole}${fraction}`);
  if (scale < 0) {
    units *= 10n ** BigInt(-scale);
    scale = 0;
  }
  return { units, scale: BigInt(scale) };
}

/** numerator / denominator (denominator > 0) rounded half away from zero. */
function roundHalfAway(numerator: bigint, denominator: bigint): bigint {
  const magnitude = numerator < 0n ? -numerator : numerator;
  const rounded = (2n * magnitude + denominator) / (2n * denominator);
  return numerator < 0n ? -rounded : rounded;
}

/** A price times a token count, in micro-dollars, rounded half-up. */
function priceClass(tokens: number, perMtok: number): bigint {
  if (!(perMtok >= 0)) throw new RangeError(`a token rate must be a non-negative number, got ${perMtok}`);
  const count = Number.isFinite(tokens) && tokens > 0 ? BigInt(Math.floor(tokens)) : 0n;
  const { units, scale } = decimal(perMtok);
  return roundHalfAway(count * units, 10n ** scale);
}

/**
 * What `counts` cost at `rates`, in micro-dollars: input priced on the tokens that are
 * neither cache reads nor cache writes, each cache class at its own rate.
 */
export function costMicroUsd(counts: TokenCounts, rates: TokenRates): number {
  const uncached = Math.max(0, counts.inputTokens - counts.cacheReadTokens - counts.cacheWriteTokens);
  const total =
    priceClass(uncached, rates.inputPerMtok) +
    priceClass(counts.outputTokens, rates.outputPerMtok) +
    priceClass(counts.cacheReadTokens, rates.cacheReadPerMtok) +
    priceClass(counts.cacheWriteTokens, rates.cacheWritePerMtok);
  return Number(total);
}

/** A dollar figure in micro-dollars, rounded half away from zero. Throws for a non-finite number. */
export function usdToMicros(usd: number): number {
  const { units, scale } = decimal(usd);
  return Number(roundHalfAway(units * BigInt(MICROS_PER_USD), 10n ** scale));
}

/** Micro-dollars as dollars with six decimals: `$0.012346`, `-$1.500000`. */
export function formatDollars(micros: number): string {
  const whole = Math.round(micros);
  const magnitude = Math.abs(whole);
  const dollars = Math.floor(magnitude / MICROS_PER_USD);
  const fraction = String(magnitude % MICROS_PER_USD).padStart(6, '0');
  return `${whole < 0 ? '-' : ''}$${dollars}.${fraction}`;
}

/** Micro-dollars in whole cents, rounded half-up (toward +∞ on a tie). */
export function toCents(micros: number): number {
  return Math.floor((Math.round(micros) + MICROS_PER_CENT / 2) / MICROS_PER_CENT);
}

/**
 * A turn's or run's spend in micro-dollars: reported USD amounts pass through; otherwise
 * `rates` price the tokens; null when there is neither (spend unknown, not zero).
 */
export function spendMicroUsd(
  amounts: readonly ReportedAmount[],
  counts: TokenCounts,
  rates: TokenRates | null,
): number | null {
  const usd = amounts.filter((a) => a.unit === UNIT_USD);
  if (usd.length > 0) return usd.reduce((sum, a) => sum + a.micros, 0);
  if (rates !== null) return costMicroUsd(counts, rates);
  return null;
}
