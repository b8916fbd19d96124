/**
 * Reported amounts (USD or vendor units) of one session, combined per unit by the shape
 * the kind declared for that unit: a per-request amount repeated across stream lines
 * counts once, per-turn amounts add up turn by turn, a session-cumulative amount counts
 * only what it gained after the session's history. Amounts never mix with tokens.
 */
import type { ReportedAmount } from '../../domain/agent.js';
import { CumulativeTrack } from './cumulative.js';
import type { AmountDeclaration, AmountShape } from './sources.js';

function cleanMicros(micros: number): number | null {
  return Number.isFinite(micros) && micros >= 0 ? Math.round(micros) : null;
}

function raise(map: Map<string, number>, unit: string, micros: number): void {
  map.set(unit, Math.max(map.get(unit) ?? 0, micros));
}

/** Per unit: the largest amount each request reported, summed over requests. */
export function sumAmountsByIdentity(
  entries: Iterable<{ key: string; amounts: ReportedAmount[] }>,
): Map<string, number> {
  const perKey = new Map<string, Map<string, number>>();
  for (const { key, amounts } of entries) {
    const units = perKey.get(key) ?? new Map<string, number>();
    perKey.set(key, units);
    for (const a of amounts) {
      const micros = cleanMicros(a.micros);
      if (micros !== null) raise(units, a.unit, micros);
    }
  }
  const totals = new Map<string, number>();
  for (const units of perKey.values()) {
    for (const [unit, micros] of units) totals.set(unit, (totals.get(unit) ?? 0) + micros);
  }
  return totals;
}

export class AmountBook {
  readonly #declared = new Map<string, AmountShape>();
  readonly #currencyShape: AmountShape | null = null;
  /** History of units whose track does not exist yet: null = unknown. */
  #history: Map<string, number> | null = null;
  readonly #tracks = new Map<string, CumulativeTrack>();
  /** This turn: per request key, the largest amount per unit. */
  #requests = new Map<string, Map<string, number>>();
  /** This turn: the largest per-turn figure per unit. */
  #turn = new Map<string, number>();
  /** This turn: the result reading's figure per unit (per-request and per-turn units). */
  #result = new Map<string, number>();
  /** Settled run totals of the per-request and per-turn units. */
  readonly #settled = new Map<string, number>();
  /** The last settled figure per unit, which a later one never goes below. */
  readonly #reported = new Map<string, number>();

  constructor(declarations: readonly AmountDeclaration[]) {
    for (const d of declarations) {
      if (d.currency === true) this.#currencyShape = d.shape;
      else if (d.unit !== undefined) this.#declared.set(d.unit, d.shape);
    }
  }

  /** The shape a unit's reports have; null for a unit the kind never declared (ignored). */
  shapeOf(unit: string): AmountShape | null {
    return this.#declared.get(unit) ?? this.#currencyShape;
  }

  /** The session is new: every cumulative amount starts from nothing. */
  sessionCreated(): void {
    this.#fixHistory(new Map());
  }

  /** A resumed session's history: the amounts its records already hold, per unit. */
  boundary(totals: Map<string, number>): void {
    this.#fixHistory(totals);
  }

  #fixHistory(totals: Map<string, number>): void {
    this.#history = new Map(totals);
    for (const [unit, track] of this.#tracks) track.setHistory([totals.get(unit) ?? 0]);
  }

  #track(unit: string): CumulativeTrack {
    let track = this.#tracks.get(unit);
    if (track === undefined) {
      track = new CumulativeTrack(1, this.#history === null ? null : [this.#history.get(unit) ?? 0]);
      this.#tracks.set(unit, track);
    }
    return track;
  }

  /** Forgets the turn in flight. */
  beginTurn(): void {
    // Replaced only when used: a turn without amounts allocates nothing.
    if (this.#requests.size > 0) this.#requests = new Map();
    if (this.#turn.size > 0) this.#turn = new Map();
    if (this.#result.size > 0) this.#result = new Map();
  }

  /** Takes a reading's amounts; `key` names its request. Returns true when a history was estimated. */
  observe(amounts: readonly ReportedAmount[] | undefined, key: string, replay: boolean): boolean {
    if (amounts === undefined) return false;
    let estimated = false;
    for (const a of amounts) {
      const micros = cleanMicros(a.micros);
      const shape = this.shapeOf(a.unit);
      if (micros === null || shape === null) continue;
      if (shape === 'per_request') {
        const units = this.#requests.get(key) ?? new Map<string, number>();
        this.#requests.set(key, units);
        raise(units, a.unit, micros);
      } else if (shape === 'per_turn') {
        raise(this.#turn, a.unit, micros);
      } else {
        estimated = this.#track(a.unit).observe([micros], null, replay).estimated || estimated;
      }
    }
    return estimated;
  }

  /** Takes the amounts of a turn's result reading: a figure for the whole turn. */
  observeResult(amounts: readonly ReportedAmount[] | undefined): boolean {
    let estimated = false;
    for (const a of amounts ?? []) {
      const micros = cleanMicros(a.micros);
      const shape = this.shapeOf(a.unit);
      if (micros === null || shape === null) continue;
      if (shape === 'session_cumulative') {
        estimated = this.#track(a.unit).observe([micros], null, false).estimated || estimated;
      } else {
        raise(this.#result, a.unit, micros);
      }
    }
    return estimated;
  }

  /** Folds the turn into the run; returns run-cumulative amounts, one per unit, sorted by unit. */
  settle(): ReportedAmount[] {
    const turn = new Map<string, number>(this.#turn);
    for (const units of this.#requests.values()) {
      for (const [unit, micros] of units) turn.set(unit, (turn.get(unit) ?? 0) + micros);
    }
    for (const [unit, micros] of this.#result) raise(turn, unit, micros);
    for (const [unit, micros] of turn) this.#settled.set(unit, (this.#settled.get(unit) ?? 0) + micros);
    for (const [unit, micros] of this.#settled) raise(this.#reported, unit, micros);
    for (const [unit, track] of this.#tracks)
      raise(this.#reported, unit, (this.#settled.get(unit) ?? 0) + (track.run()[0] ?? 0));
    this.beginTurn();
    return this.amounts();
  }

  /** Run-cumulative amounts as last settled, one per unit, sorted by unit. */
  amounts(): ReportedAmount[] {
    return [...this.#reported.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([unit, micros]) => ({ unit, micros }));
  }
}
