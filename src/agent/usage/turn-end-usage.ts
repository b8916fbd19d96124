/**
 * The usage state of one session of a kind whose figure settles only after a turn's work
 * is over. Each settled turn yields at most one token_usage event, carrying the run
 * snapshot; a turn that measured nothing yields none, and the session stays unmeasured
 * (unknown spend, not zero) until some turn measures.
 */
import type { TokenCounts } from '../../domain/agent.js';
import type { Settlement } from './ledger.js';
import { RunUsage } from './run-usage.js';

export class TurnEndUsage {
  readonly #acc = new RunUsage();

  /** Records the turn's settlement; returns the run snapshot to emit as its one token_usage event, null when it measured nothing. */
  settle(settlement: Settlement): TokenCounts | null {
    return this.#acc.settle(settlement);
  }

  /** The highest run-cumulative figure any turn settled; zeros before the first. */
  snapshot(): TokenCounts {
    return this.#acc.snapshot();
  }

  byModel(): Record<string, TokenCounts> {
    return this.#acc.byModel();
  }

  /** True once a turn settled a measured figure. */
  measured(): boolean {
    return this.#acc.measured();
  }
}
