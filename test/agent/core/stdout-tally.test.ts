/**
 * The words of the early-exit report about what stdout held: "before writing any output"
 * only for a process that wrote no line at all.
 */
import { describe, expect, it } from 'vitest';
import { overlongLineMessage, StdoutTally } from '../../../src/agent/core/stdout-tally.js';

const overlong = (sizeBytes: number) => ({
  type: 'overlong' as const,
  sizeBytes,
  limitBytes: 100,
  head: 'x',
});

describe('StdoutTally.shortfall', () => {
  it.each([
    { name: 'nothing written', feed: () => undefined, want: 'before writing any output' },
    {
      name: 'one over-long line',
      feed: (t: StdoutTally) => t.overlong(overlong(300)),
      want: 'without writing a line it understood: it wrote one stdout line of 300 bytes, over the line limit of 100 bytes (skipped)',
    },
    {
      name: 'several over-long lines name the longest',
      feed: (t: StdoutTally) => {
        t.overlong(overlong(300));
        t.overlong(overlong(900));
        t.overlong(overlong(200));
      },
      want: 'without writing a line it understood: it wrote 3 stdout lines over the line limit of 100 bytes (skipped; the longest 900 bytes)',
    },
    {
      name: 'lines not understood, and an over-long one',
      feed: (t: StdoutTally) => {
        t.rejected();
        t.overlong(overlong(150));
      },
      want: 'without writing a line it understood: it wrote one stdout line of 150 bytes, over the line limit of 100 bytes (skipped) and 1 stdout line it did not understand',
    },
  ])('$name: the report says what was written, never "no output" after output', ({ feed, want }) => {
    const tally = new StdoutTally();
    feed(tally);
    expect(tally.anyAccepted).toBe(false);
    expect(tally.shortfall()).toBe(want);
  });

  it('an over-long line report names its size and the cap', () => {
    expect(overlongLineMessage(overlong(300))).toBe(
      'a stdout line of 300 bytes exceeded the line limit of 100 bytes and was skipped: x',
    );
  });
});
