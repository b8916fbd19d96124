/**
 * The run-cumulative figure of one session of an incremental kind: what its token_usage
 * events carry. It is built once per session and never reset between turns, because a
 * turn's figure adds to the turns before it; restarting at zero each turn under-counts
 * every run that takes more than one turn. The snapshot it hands out never decreases.
 */
import type { TokenCounts } from '../../domain/agent.js';
import { addCounts, type CountsByModel, cloneByModel, maxCounts, ZERO } from './counts.js';
import type { Settlement } from './ledger.js';

/**
 * `addByModel(settled, turn)` for the per-reading path: a model the turn has not touched keeps
 * its settled counts object instead of a fresh copy (the same figure: settled counts are
 * already clean, and no counts object is ever mutated).
 */
function withTurn(settled: CountsByModel, turn: CountsByModel): CountsByModel {
  const out: CountsByModel = {};
  for (const name in settled) {
    if (!Object.hasOwn(settled, name)) continue;
    const own = settled[name] as TokenCounts;
    out[name] = Object.hasOwn(turn, name) ? addCounts(own, turn[name] as TokenCounts) : own;
  }
  for (const name in turn) {
    if (Object.hasOwn(turn, name) && !Object.hasOwn(settled, name))
      out[name] = addCounts(ZERO, turn[name] as TokenCounts);
  }
  return out;
}

export class RunUsage {
  #settled: TokenCounts = ZERO;
  #settledByModel: CountsByModel = {};
  #snapshot: TokenCounts = ZERO;
  #byModel: Readonly<CountsByModel> = Object.freeze({});
  #measured = false;

  /**
   * Replaces the in-flight turn's contribution (`turn` and `byModel` as the ledger's
   * observation returned them) and returns the run snapshot to emit.
   */
  setTurnProvisional(turn: TokenCounts, byModel: Record<string, TokenCounts> = {}): TokenCounts {
    this.#snapshot = maxCounts(this.#snapshot, addCounts(this.#settled, turn));
    this.#byModel = Object.freeze(withTurn(this.#settledByModel, byModel));
    this.#measured = true;
    return this.#snapshot;
  }

  /** Replaces the settled figure with the ledger's run-cumulative one and drops the provisional turn. */
  setRunCumulative(run: TokenCounts, byModel: Record<string, TokenCounts> = {}): TokenCounts {
    this.#settled = maxCounts(this.#settled, run);
    this.#settledByModel = cloneByModel(byModel);
    this.#snapshot = maxCounts(this.#snapshot, this.#settled);
    this.#byModel = Object.freeze(cloneByModel(byModel));
    this.#measured = true;
    return this.#snapshot;
  }

  /** Takes a settlement: a measured one replaces the settled figure; the snapshot, or null when nothing was measured. */
  settle(settlement: Settlement): TokenCounts | null {
    if (!settlement.measured) return null;
    return this.setRunCumulative(settlement.run, settlement.byModel);
  }

  /** The run-cumulative counts so far; zeros before any figure. */
  snapshot(): TokenCounts {
    return this.#snapshot;
  }

  /**
   * The run-cumulative counts per model; {} when the runtime names no model. Read-only:
   * every update replaces the (frozen) map, so a caller may keep it without copying.
   */
  byModel(): Readonly<Record<string, TokenCounts>> {
    return this.#byModel;
  }

  /** True once any figure arrived; false means unknown spend, not none. */
  measured(): boolean {
    return this.#measured;
  }
}
