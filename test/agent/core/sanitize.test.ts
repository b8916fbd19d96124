/**
 * The byte cap on a turn's final message: whatever the runtime wrote, what leaves the turn
 * fits the cap, keeps the message's head intact (no half characters) and says it was cut.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { capMessageBytes, FINAL_MESSAGE_MAX_BYTES } from '../../../src/agent/core/sanitize.js';

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

describe('capMessageBytes', () => {
  it('a message within the cap is returned unchanged, however close to it', () => {
    const exact = 'x'.repeat(FINAL_MESSAGE_MAX_BYTES);
    expect(capMessageBytes(exact)).toBe(exact);
    expect(capMessageBytes('')).toBe('');
  });

  it('an 8 MiB message keeps its head within the cap and the cut note names the size and the cap', () => {
    const message = `Summary: all done.\n${'z'.repeat(8 * 1024 * 1024)}`;
    const capped = capMessageBytes(message);
    expect(bytes(capped)).toBeLessThanOrEqual(FINAL_MESSAGE_MAX_BYTES);
    expect(capped.startsWith('Summary: all done.\nzzz')).toBe(true);
    expect(capped).toMatch(
      new RegExp(
        `\\[message cut: it had ${bytes(message)} bytes, over the cap of ${FINAL_MESSAGE_MAX_BYTES}\\]$`,
      ),
    );
  });

  it('a cut never leaves half a character or half a surrogate pair, and never exceeds the cap', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 400 }),
        fc.integer({ min: 60, max: 300 }),
        (text, cap) => {
          const capped = capMessageBytes(text, cap);
          if (bytes(text) <= cap) {
            expect(capped).toBe(text);
            return;
          }
          expect(bytes(capped)).toBeLessThanOrEqual(cap);
          const head = capped.slice(0, capped.lastIndexOf('\n… [message cut'));
          // The head re-encodes to a prefix of the original's bytes: nothing was split or replaced.
          expect(Buffer.from(text, 'utf8').subarray(0, bytes(head)).toString('utf8')).toBe(head);
        },
      ),
    );
  });
});
