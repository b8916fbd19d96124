/**
 * The evidence one turn gathers about its spend, and the one rule that turns it into the
 * spend flags of the turn's result. Adapters mark what they saw (the model served
 * output); the settlement marks the rest. No adapter assigns a flag itself, so a turn
 * that was served output but never got a covering figure cannot pass as fully counted.
 */
import type { ExitReason, ReportedAmount, UsageProvenance } from '../../domain/agent.js';
import { reportsSessionTotal, type UsageSources } from './sources.js';

export class TurnSpend {
  #modelReached = false;
  #settled = false;
  #sessionTotal = false;
  #estimated = false;
  #amounts: ReportedAmount[] = [];

  /** The runtime served this turn output: a message or delta, reasoning, a tool call, a usage figure. */
  markModelReached(): void {
    this.#modelReached = true;
  }

  /** The settled figure covers the whole turn. */
  markSettled(): void {
    this.#settled = true;
  }

  /** The covering figure is the runtime's running session total. */
  markSessionTotal(): void {
    this.#sessionTotal = true;
  }

  /** The figure rests on an estimated history position. */
  markEstimated(): void {
    this.#estimated = true;
  }

  /** Run-cumulative amounts the settlement reported. */
  setAmounts(amounts: readonly ReportedAmount[]): void {
    this.#amounts = amounts.map((a) => ({ ...a }));
  }

  get modelReached(): boolean {
    return this.#modelReached;
  }
  get settled(): boolean {
    return this.#settled;
  }
  get sessionTotal(): boolean {
    return this.#sessionTotal;
  }
  get estimated(): boolean {
    return this.#estimated;
  }
  get amounts(): ReportedAmount[] {
    return this.#amounts.map((a) => ({ ...a }));
  }
}

/** The spend fields of a turn's result. */
export interface SpendFlags {
  /** The turn reached the model and its figure cannot be proven complete. */
  spendUnaccounted: boolean;
  /** Unaccounted only for lack of a figure, so a later session total can cover it. */
  spendCoverable: boolean;
  /** The turn's figure is a session total covering every earlier turn. */
  coversSession: boolean;
  usageProvenance: UsageProvenance;
  /** Run-cumulative amounts, one per unit. */
  reportedAmounts: ReportedAmount[];
}

/** The spend flags of a turn from its evidence; the only place they are decided. */
export function deriveSpendFlags(
  spend: TurnSpend,
  exitReason: ExitReason,
  sources: UsageSources,
  usageMeasured: boolean,
): SpendFlags {
  const spendUnaccounted = spend.estimated || (spend.modelReached && !spend.settled);
  const spendCoverable =
    spendUnaccounted && !spend.estimated && exitReason === 'turn_completed' && reportsSessionTotal(sources);
  let usageProvenance: UsageProvenance;
  if (sources.live.category === 'local') usageProvenance = 'local';
  else if (spend.estimated) usageProvenance = 'token_estimate';
  else if (usageMeasured) usageProvenance = 'reported';
  else usageProvenance = 'unmeasured';
  return {
    spendUnaccounted,
    spendCoverable,
    coversSession: spend.settled && spend.sessionTotal,
    usageProvenance,
    reportedAmounts: spend.amounts,
  };
}
