/**
 * Evidence that a turn did work, for runtimes whose last line may not say how
 * the turn ended. A kind declares which signals it can see; a kind that can see
 * none produces no evidence, so its clean exit is still not a success.
 */

/** The signals a kind can observe in its runtime's output. */
export interface WorkSignals {
  assistantOutput?: boolean;
  toolCalls?: boolean;
  usage?: boolean;
}

export type WorkReport =
  | { work: 'observed'; detail: string }
  | { work: 'none'; detail: string }
  | { work: 'undeclared'; detail: string };

/** Records the declared signals during one turn; create a new one per turn. */
export class WorkObserver {
  private readonly seen = new Set<keyof WorkSignals>();
  constructor(private readonly signals: WorkSignals) {}

  observeAssistantOutput(): void {
    this.record('assistantOutput');
  }
  observeToolCall(): void {
    this.record('toolCalls');
  }
  observeUsage(): void {
    this.record('usage');
  }

  /** What the turn showed, in the terms the disposition rule reads. */
  report(): WorkReport {
    const declared = (Object.keys(this.signals) as (keyof WorkSignals)[]).filter(
      (k) => this.signals[k] === true,
    );
    if (declared.length === 0) return { work: 'undeclared', detail: 'the kind observes no work signal' };
    if (this.seen.size === 0) return { work: 'none', detail: `no ${declared.join(', ')} seen` };
    return { work: 'observed', detail: `saw ${[...this.seen].join(', ')}` };
  }

  private record(signal: keyof WorkSignals): void {
    if (this.signals[signal] === true) this.seen.add(signal);
  }
}
