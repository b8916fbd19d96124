/**
 * What a turn's stdout amounted to, kept as a few counters (never the lines), so the report
 * of a process that ended without one usable line can say what it did write. "Before writing
 * any output" is true only of a process that wrote nothing: one whose single line was 30 MB
 * long, or whose lines were not its protocol, wrote plenty, and a report claiming silence
 * sends whoever reads it after a crash that never happened.
 */
import type { LineResult } from './process/lines.js';

type Overlong = Extract<LineResult, { type: 'overlong' }>;

/** The `malformed` event text for a stdout line skipped for its size; both skeletons use it. */
export function overlongLineMessage(item: Overlong): string {
  return (
    `a stdout line of ${item.sizeBytes} bytes exceeded the line limit of ${item.limitBytes} bytes ` +
    `and was skipped: ${item.head}`
  );
}

/** Counts of one turn's stdout lines by what became of them. */
export class StdoutTally {
  private acceptedLines = 0;
  private rejectedLines = 0;
  private overlongLines = 0;
  private largestOverlongBytes = 0;
  private limitBytes = 0;

  /** True once a line was accepted by the adapter. */
  get anyAccepted(): boolean {
    return this.acceptedLines > 0;
  }

  /** A line the adapter accepted. */
  accepted(): void {
    this.acceptedLines += 1;
  }

  /** A line the adapter did not understand. */
  rejected(): void {
    this.rejectedLines += 1;
  }

  /** A line over the line-size cap, skipped unread. */
  overlong(item: Overlong): void {
    this.overlongLines += 1;
    this.largestOverlongBytes = Math.max(this.largestOverlongBytes, item.sizeBytes);
    this.limitBytes = item.limitBytes;
  }

  /**
   * How the output fell short, for a process that ended with no accepted line: `before writing
   * any output` only when stdout had no line at all, else what the lines were.
   */
  shortfall(): string {
    const parts: string[] = [];
    if (this.overlongLines === 1) {
      parts.push(
        `one stdout line of ${this.largestOverlongBytes} bytes, over the line limit of ${this.limitBytes} bytes (skipped)`,
      );
    } else if (this.overlongLines > 1) {
      parts.push(
        `${this.overlongLines} stdout lines over the line limit of ${this.limitBytes} bytes ` +
          `(skipped; the longest ${this.largestOverlongBytes} bytes)`,
      );
    }
    if (this.rejectedLines > 0) {
      parts.push(
        `${this.rejectedLines} stdout line${this.rejectedLines === 1 ? '' : 's'} it did not understand`,
      );
    }
    if (parts.length === 0) return 'before writing any output';
    return `without writing a line it understood: it wrote ${parts.join(' and ')}`;
  }
}
