/**
 * The usage ledger of one session: it turns a kind's raw usage reports into the run's
 * figure. The traps it exists for: a streaming runtime repeats one request's usage on
 * many lines (count it once, at its largest); a session-cumulative counter includes
 * spend from before this run (subtract the history, estimating it when unknown); a turn
 * must add to the turns before it, never restart at zero; and a figure only claims to
 * cover a turn when the runtime replied, nothing stopped it and every count is known.
 */
import type { ReportedAmount, TokenCounts } from '../../domain/agent.js';
import { AmountBook, sumAmountsByIdentity } from './amount-book.js';
import {
  addByModel,
  addCounts,
  type CountsByModel,
  cloneByModel,
  isComplete,
  maxByModel,
  maxCounts,
  normalise,
  sameCounts,
  subtractByModel,
  subtractCounts,
  sumByModel,
  tokenCounts,
  ZERO,
} from './counts.js';
import { CumulativeTrack, type Vec } from './cumulative.js';
import type { RecordsRead, SpendCounts, SpendReading } from './reading.js';
import { assertSources, type SpendDeclaration, type UsageSources } from './sources.js';

/** How a turn ended, as far as usage is concerned. */
export interface TurnEnd {
  /** The runtime's terminal reply for the turn arrived. */
  replied: boolean;
  /** The runtime served the turn output (see `TurnSpend.markModelReached`). */
  modelReached: boolean;
  /** The turn was stopped before it finished. */
  cancelled: boolean;
}

/** A settled turn. */
export interface Settlement {
  /** Run-cumulative counts after this turn; never below an earlier settlement. */
  run: TokenCounts;
  /** Run-cumulative counts per model; {} when the source names no model. */
  byModel: Record<string, TokenCounts>;
  /** What this turn added to `run`. */
  turn: TokenCounts;
  /** The figure covers the whole turn: replied, not cancelled, not a lower bound, every count known. */
  covered: boolean;
  /** The covering figure is the runtime's running session total, so it includes every earlier turn. */
  sessionTotal: boolean;
  /** The figure rests on an estimated history position. */
  estimated: boolean;
  /** This turn produced a token figure (false for a turn with no reading, and for kinds counting no tokens). */
  measured: boolean;
  /** Run-cumulative reported amounts, one per unit, sorted by unit. */
  amounts: ReportedAmount[];
}

/** What `observeRequest` returns. */
export interface RequestObservation {
  /** This turn's requests, each counted once at its largest. */
  turn: TokenCounts;
  /** This turn's counts per model; {} when the source names no model. */
  byModel: Record<string, TokenCounts>;
  /** The first sighting of this request: gate a token_usage emission on it. */
  isNew: boolean;
}

/** What `observeCumulative` returns. */
export interface CumulativeObservation {
  /** The run's counts so far (settled turns plus this one). */
  run: TokenCounts;
  /** What this turn adds to the settled run so far. */
  turn: TokenCounts;
  /** This turn's counts per model; {} when the source names no model. */
  byModel: Record<string, TokenCounts>;
  /** The reading moved the run's figure. */
  isNew: boolean;
}

/** Counts as reported, reasoning included (undefined = not reported apart). */
interface Raw {
  input: number | null;
  output: number | null;
  cacheRead: number | null;
  cacheWrite: number | null;
  reasoning: number | null | undefined;
}

/**
 * One request of the run. Its counts (this turn's, merged in place) sit on the entry itself:
 * one object per request id instead of two, which the run keeps for every id it sees.
 */
interface RequestEntry extends Raw {
  model: string | null;
  /** What an earlier turn already settled for this request id. */
  prior: Raw | null;
  /** The turn (`#turnSeq`) whose figure the counts belong to. */
  turn: number;
}

const ANONYMOUS = '\u0000anonymous:';

function larger(a: number | null | undefined, b: number | null | undefined): number | null | undefined {
  if (typeof a === 'number' && typeof b === 'number') return Math.max(a, b);
  if (typeof a === 'number') return a;
  if (typeof b === 'number') return b;
  return a === null || b === null ? null : undefined;
}

function rawOf(c: SpendCounts): Raw {
  return {
    input: c.input,
    output: c.output,
    cacheRead: c.cacheRead,
    cacheWrite: c.cacheWrite,
    reasoning: c.reasoning,
  };
}

/** Field by field, the larger known count; unknown only when neither knows it. */
function mergeRaw(a: Raw, b: SpendCounts): Raw {
  const merged = rawOf(a);
  mergeInto(merged, b);
  return merged;
}

/** `mergeRaw` into `into` itself, for an entry's own counts. */
function mergeInto(into: Raw, b: SpendCounts): void {
  into.input = larger(into.input, b.input) ?? null;
  into.output = larger(into.output, b.output) ?? null;
  into.cacheRead = larger(into.cacheRead, b.cacheRead) ?? null;
  into.cacheWrite = larger(into.cacheWrite, b.cacheWrite) ?? null;
  into.reasoning = larger(into.reasoning, b.reasoning);
}

const UNKNOWN: SpendCounts = { input: null, output: null, cacheRead: null, cacheWrite: null };

function toVec(c: TokenCounts): Vec {
  return [c.inputTokens, c.outputTokens, c.cacheReadTokens, c.cacheWriteTokens];
}

function fromVec(v: Vec): TokenCounts {
  return tokenCounts(v[0] ?? 0, v[1] ?? 0, v[2] ?? 0, v[3] ?? 0);
}

/**
 * Per-request readings summed with each request counted once at its largest, field by
 * field; a reading without identity is a request of its own.
 */
export function sumRequests(readings: readonly SpendReading[], decl: SpendDeclaration): TokenCounts {
  const merged = new Map<string, Raw>();
  readings.forEach((r, i) => {
    const key = r.identity ?? `${ANONYMOUS}${i}`;
    const seen = merged.get(key);
    merged.set(key, seen === undefined ? rawOf(r) : mergeRaw(seen, r));
  });
  let sum: TokenCounts = ZERO;
  for (const raw of merged.values()) sum = addCounts(sum, normalise(raw, decl));
  return sum;
}

export class UsageLedger {
  readonly sources: UsageSources;
  readonly #decl: SpendDeclaration;
  readonly #amounts: AmountBook;
  /** The session counter, for a session-cumulative live source. */
  readonly #counter: CumulativeTrack | null;
  /** The replayed last figure may still arrive. */
  #replayOpen: boolean;
  /** What the session's records held before this run; null while unknown. */
  #recordsHistory: TokenCounts | null = null;

  #run: TokenCounts = ZERO;
  #byModel: CountsByModel = {};
  /** Session-cumulative counters: run-cumulative counts per model as observed. */
  #counterByModel: CountsByModel = {};
  /**
   * Every identified request of the run, one entry per id. An entry of an earlier turn holds
   * what that turn settled: its `prior` merged with its `raw` is the id's settled figure, which
   * becomes the `prior` when a later turn sees the id again (folded then, not at every settlement).
   */
  readonly #known = new Map<string, RequestEntry>();
  /** This turn's requests in order of first sighting, anonymous ones included. */
  #turnEntries: RequestEntry[] = [];
  #turnSeq = 0;
  /** This turn's request figure, kept up to date request by request (a long turn stays linear). */
  #figure: { turn: TokenCounts; byModel: CountsByModel } | null = null;
  #anonymous = 0;
  #touched = false;
  #settled = false;
  /** Carried to the next settlement: a history estimate, a counter reading. */
  #estimatedPending = false;
  #counterMeasured = false;
  /** The run figure the last counter observation returned. */
  #lastObservedRun: TokenCounts = ZERO;

  /** Throws `UsageSourcesError` for sources that fail `checkSources`. */
  constructor(sources: UsageSources) {
    assertSources(sources);
    this.sources = sources;
    this.#decl = sources.live.spend;
    this.#amounts = new AmountBook(this.#decl.amounts);
    this.#counter = this.#decl.shape === 'session_cumulative' ? new CumulativeTrack(4) : null;
    this.#replayOpen = this.#decl.replay === 'last_figure';
  }

  /** The run's settled counts. */
  run(): TokenCounts {
    return this.#run;
  }

  /** Call once, before the first turn, when the run creates the session: it has no history. */
  sessionCreated(): void {
    this.#counter?.setHistory([0, 0, 0, 0]);
    this.#recordsHistory = ZERO;
    this.#amounts.sessionCreated();
    this.#replayOpen = false;
  }

  /** For a resumed session: its history is what its records already hold. */
  boundary(read: RecordsRead): void {
    const decl = this.sources.records?.spend ?? this.#decl;
    const total = sumRequests(read.readings, decl);
    this.#counter?.setHistory(toVec(total));
    this.#recordsHistory = total;
    this.#amounts.boundary(
      sumAmountsByIdentity(
        read.readings.map((r, i) => ({ key: r.identity ?? `${ANONYMOUS}${i}`, amounts: r.amounts ?? [] })),
      ),
    );
    this.#replayOpen = false;
  }

  /**
   * Opens a turn. Observing after a settlement opens one implicitly; opening a turn while
   * the previous one holds readings it never settled is a programming error and throws.
   */
  beginTurn(): void {
    if (!this.#settled && this.#touched) throw new Error('usage ledger: the previous turn was never settled');
    this.#openTurn();
  }

  #openTurn(): void {
    this.#turnEntries = [];
    this.#turnSeq += 1;
    this.#figure = null;
    this.#touched = false;
    this.#settled = false;
    this.#amounts.beginTurn();
  }

  #ensureOpen(): void {
    if (this.#settled) this.#openTurn();
    this.#touched = true;
  }

  /**
   * A per-request (or per-turn) report, and the way an amounts-only kind reports its amounts.
   * Each request id counts once, at the largest value seen for each count; a reading without
   * identity is a request of its own (so a per-turn figure repeated during the turn needs one id).
   */
  observeRequest(reading: SpendReading): RequestObservation {
    const decl = this.#decl;
    if (decl.shape === 'session_cumulative') {
      throw new Error('usage ledger: a session_cumulative source reports through observeCumulative');
    }
    this.#ensureOpen();
    const identity = reading.identity;
    const key = identity ?? `${ANONYMOUS}${this.#anonymous++}`;
    const known = identity === null ? undefined : this.#known.get(identity);
    // An entry of an earlier turn is a first sighting for this turn.
    const entry = known !== undefined && known.turn === this.#turnSeq ? known : undefined;
    const figure = this.#figure;
    // Only a figure kept up to date needs this request's old contribution taken out.
    const before = entry === undefined || figure === null ? null : this.#contribution(entry);
    let current = entry;
    if (entry === undefined) {
      if (decl.shape !== undefined) {
        current = this.#open(known, identity, reading, reading.model, true);
      } else {
        current = this.#open(known, identity, UNKNOWN, null, false);
      }
    } else if (decl.shape !== undefined) {
      mergeInto(entry, reading);
      entry.model ??= reading.model;
    }
    if (reading.amounts !== undefined && reading.amounts.length > 0) {
      this.#estimatedPending = this.#amounts.observe(reading.amounts, key, false) || this.#estimatedPending;
    }
    if (figure !== null && current !== undefined) {
      // Replace this request's old contribution with its new one instead of re-adding every request.
      const after = this.#contribution(current);
      if (before !== null) {
        figure.turn = subtractCounts(figure.turn, before.counts);
        if (before.model !== null) {
          figure.byModel[before.model] = subtractCounts(figure.byModel[before.model] ?? ZERO, before.counts);
        }
      }
      figure.turn = addCounts(figure.turn, after.counts);
      if (after.model !== null)
        figure.byModel[after.model] = addCounts(figure.byModel[after.model] ?? ZERO, after.counts);
      // Views of the live figure: valid until the next observation; callers copy what they keep.
      return { turn: figure.turn, byModel: figure.byModel, isNew: entry === undefined };
    }
    const { turn, byModel } = this.#requestFigure();
    return { turn, byModel, isNew: entry === undefined };
  }

  /**
   * This turn's entry for a request first seen in it: `known` is the id's entry from an earlier
   * turn (its settled figure becomes the prior when `withPrior`), undefined for a new id.
   */
  #open(
    known: RequestEntry | undefined,
    identity: string | null,
    counts: SpendCounts,
    model: string | null,
    withPrior: boolean,
  ): RequestEntry {
    let entry: RequestEntry;
    if (known === undefined) {
      entry = {
        input: counts.input,
        output: counts.output,
        cacheRead: counts.cacheRead,
        cacheWrite: counts.cacheWrite,
        reasoning: counts.reasoning,
        model,
        prior: null,
        turn: this.#turnSeq,
      };
      if (identity !== null) this.#known.set(identity, entry);
    } else {
      const settled = known.prior === null ? rawOf(known) : mergeRaw(known.prior, known);
      entry = known;
      entry.prior = withPrior ? settled : null;
      Object.assign(entry, rawOf(counts));
      entry.model = model;
      entry.turn = this.#turnSeq;
    }
    this.#turnEntries.push(entry);
    return entry;
  }

  /** What one request adds to the turn, and the model it is credited to (null = none). */
  #contribution(entry: RequestEntry): { counts: TokenCounts; model: string | null } {
    if (this.#decl.shape === undefined) return { counts: ZERO, model: null };
    const counts = normalise(entry, this.#decl);
    const added = entry.prior === null ? counts : subtractCounts(counts, normalise(entry.prior, this.#decl));
    return { counts: added, model: this.#decl.servedModel ? entry.model : null };
  }

  #requestFigure(): { turn: TokenCounts; byModel: CountsByModel } {
    if (this.#figure !== null) return this.#figure;
    let turn: TokenCounts = ZERO;
    let byModel: CountsByModel = {};
    for (const entry of this.#turnEntries) {
      const { counts, model } = this.#contribution(entry);
      turn = addCounts(turn, counts);
      if (model !== null) byModel = addByModel(byModel, { [model]: counts });
    }
    this.#figure = { turn, byModel };
    return this.#figure;
  }

  /**
   * A session-cumulative report; `inTurn` when the runtime attributes it to the turn in
   * flight. The first out-of-turn reading of a resumed session is its history when the
   * source declares `replay: 'last_figure'`.
   */
  observeCumulative(reading: SpendReading, inTurn: boolean): CumulativeObservation {
    const replay = this.#observeCounter(reading, inTurn);
    const key = reading.identity ?? `${ANONYMOUS}${this.#anonymous++}`;
    this.#estimatedPending = this.#amounts.observe(reading.amounts, key, replay) || this.#estimatedPending;
    const run = this.#counterRun();
    const before = this.#lastObservedRun;
    this.#lastObservedRun = run;
    return {
      run,
      turn: subtractCounts(run, this.#run),
      byModel: subtractByModel(this.#counterByModel, this.#byModel),
      isNew: !sameCounts(before, run),
    };
  }

  /** Feeds the counter; returns whether the reading was a replayed history. */
  #observeCounter(reading: SpendReading, inTurn: boolean): boolean {
    const counter = this.#counter;
    if (counter === null) {
      throw new Error('usage ledger: observeCumulative needs a session_cumulative live source');
    }
    if (inTurn) this.#ensureOpen();
    const replay = this.#replayOpen && !inTurn && !counter.historyKnown;
    this.#replayOpen = false;
    const before = fromVec(counter.run());
    const own = reading.own === undefined ? null : toVec(normalise(reading.own, this.#decl));
    const step = counter.observe(toVec(normalise(reading, this.#decl)), own, replay);
    this.#estimatedPending ||= step.estimated;
    if (!step.replayed) this.#counterMeasured = true;
    const added = subtractCounts(fromVec(counter.run()), before);
    if (this.#decl.servedModel && reading.model !== null) {
      this.#counterByModel = addByModel(this.#counterByModel, { [reading.model]: added });
    }
    return step.replayed;
  }

  #counterRun(): TokenCounts {
    return maxCounts(this.#run, fromVec(this.#counter?.run() ?? []));
  }

  /** True when settling would read the records source: it exists, knows the history, and the live figure falls short. */
  needsRecords(end: TurnEnd, result: SpendReading | null): boolean {
    return (
      this.sources.records !== undefined &&
      this.#recordsHistory !== null &&
      end.modelReached &&
      !this.#liveCovers(end, result)
    );
  }

  #liveCovers(end: TurnEnd, result: SpendReading | null): boolean {
    if (!end.replied || end.cancelled || this.#decl.lowerBound) return false;
    if (result === null) {
      // A per-request source that reports while the turn runs needs no separate result
      // figure: once the reply arrived, the turn is the requests it saw, if all are complete.
      if (this.#decl.shape !== 'per_request' || !this.#decl.duringTurn) return false;
      // Output was served but no request reported: the figure cannot cover the turn.
      if (end.modelReached && this.#turnEntries.length === 0) return false;
      for (const entry of this.#turnEntries) if (!isComplete(entry, this.#decl)) return false;
      return true;
    }
    return this.#decl.shape === undefined || isComplete(result, this.#decl);
  }

  /**
   * Settles the turn, exactly once: a second call for the same turn throws. `result` is the
   * turn's result reading (its own counts; for a session-cumulative source, the counter at
   * turn end), null when none arrived. `records` is a read of the records source, when
   * `needsRecords` asked for one.
   */
  settle(end: TurnEnd, result: SpendReading | null, records: RecordsRead | null = null): Settlement {
    if (this.#settled) throw new Error('usage ledger: the turn was already settled');
    const previous = this.#run;
    let run = previous;
    let byModel = this.#byModel;
    let measured = false;
    const shape = this.#decl.shape;

    if (shape === 'session_cumulative') {
      if (result !== null) this.#observeCounter(result, true);
      run = this.#counterRun();
      byModel = maxByModel(this.#byModel, this.#counterByModel);
      measured = this.#counterMeasured;
    } else if (shape !== undefined) {
      const figure = this.#requestFigure();
      let turn = figure.turn;
      let turnByModel = figure.byModel;
      if (result !== null) {
        const counts = normalise(result, this.#decl);
        turn = maxCounts(turn, counts);
        if (this.#decl.servedModel) turnByModel = maxByModel(turnByModel, this.#resultSplit(result, counts));
        // Per-model entries never cover more than the total.
        turn = maxCounts(turn, sumByModel(turnByModel));
      }
      run = addCounts(previous, turn);
      byModel = addByModel(this.#byModel, turnByModel);
      measured = result !== null || this.#turnEntries.length > 0;
    }
    if (result !== null) {
      this.#estimatedPending = this.#amounts.observeResult(result.amounts) || this.#estimatedPending;
    }

    if (shape !== undefined && records !== null && this.#recordsHistory !== null) {
      const recorded = subtractCounts(
        sumRequests(records.readings, this.sources.records?.spend ?? this.#decl),
        this.#recordsHistory,
      );
      if (!sameCounts(maxCounts(run, recorded), run)) {
        run = maxCounts(run, recorded);
        measured = true;
      }
    }

    const covered = this.#liveCovers(end, result);
    const settlement: Settlement = {
      run,
      byModel: cloneByModel(byModel),
      turn: subtractCounts(run, previous),
      covered,
      sessionTotal: covered && shape === 'session_cumulative',
      estimated: this.#estimatedPending,
      measured,
      amounts: this.#amounts.settle(),
    };

    // Identified requests need no bookkeeping here: a later turn folds their settled figure on sight.
    this.#run = run;
    this.#byModel = byModel;
    this.#lastObservedRun = run;
    this.#estimatedPending = false;
    this.#counterMeasured = false;
    this.#settled = true;
    return settlement;
  }

  #resultSplit(result: SpendReading, counts: TokenCounts): CountsByModel {
    if (result.byModel !== undefined) {
      const split: CountsByModel = {};
      for (const [name, c] of Object.entries(result.byModel)) split[name] = normalise(c, this.#decl);
      return split;
    }
    return result.model === null ? {} : { [result.model]: counts };
  }
}
