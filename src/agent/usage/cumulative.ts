/**
 * One session-cumulative counter seen from one run. A runtime whose counter spans the
 * whole session, earlier runs included, reports more than this run spent once a run
 * resumes the session; the run's share is the reading less the session's history. The
 * trap is a counter that starts over or a history nobody told us: then the history is
 * estimated, the run keeps what it had counted so far, and the caller learns it guessed.
 */

/** Counter classes as plain numbers; tokens use four, an amount uses one. */
export type Vec = readonly number[];

export interface TrackStep {
  /** The history now rests on a non-zero estimate. */
  estimated: boolean;
  /** The reading was taken as the session's history, not as spend. */
  replayed: boolean;
}

function cleanVec(v: Vec, width: number): number[] {
  return Array.from({ length: width }, (_, i) => {
    const x = v[i] ?? 0;
    return Number.isFinite(x) && x > 0 ? x : 0;
  });
}

export class CumulativeTrack {
  /** Counter position before the run; null while unknown. */
  #history: number[] | null;
  /** What the run had counted when the history was last (re)estimated. */
  #base: number[];
  /** The latest reading; null before the first. */
  #last: number[] | null = null;

  constructor(
    readonly width: number,
    history: Vec | null = null,
  ) {
    this.#history = history === null ? null : cleanVec(history, width);
    this.#base = cleanVec([], width);
  }

  get historyKnown(): boolean {
    return this.#history !== null;
  }

  /** Fixes the history (a new session: zero; a resumed one: what its records hold). */
  setHistory(history: Vec): void {
    this.#history = cleanVec(history, this.width);
    this.#base = cleanVec([], this.width);
    this.#last = null;
  }

  /** The run's share of the counter so far. */
  run(): number[] {
    const history = this.#history;
    if (history === null) return [...this.#base];
    const at = this.#last ?? history;
    return this.#base.map((b, i) => b + Math.max(0, (at[i] ?? 0) - (history[i] ?? 0)));
  }

  /**
   * Takes one reading. `own` is the part the runtime attributes to the request behind it,
   * null when it names none. With `replay`, an unknown history is taken from this reading.
   */
  observe(reading: Vec, own: Vec | null, replay: boolean): TrackStep {
    const now = cleanVec(reading, this.width);
    if (this.#history === null) {
      if (replay) {
        this.#history = now;
        this.#last = now;
        return { estimated: false, replayed: true };
      }
      return this.#rebase(now, own);
    }
    const previous = this.#last ?? this.#history;
    if (now.some((x, i) => x < (previous[i] ?? 0))) return this.#rebase(now, own);
    this.#last = now;
    return { estimated: false, replayed: false };
  }

  /** History estimated as reading less own; the run keeps its total so far. */
  #rebase(now: number[], own: Vec | null): TrackStep {
    const kept = this.run();
    const ownPart = cleanVec(own ?? [], this.width);
    this.#history = now.map((x, i) => x - Math.min(x, ownPart[i] ?? 0));
    this.#base = kept;
    this.#last = now;
    return { estimated: this.#history.some((x) => x > 0), replayed: false };
  }
}
