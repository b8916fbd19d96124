import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TrackerError } from '../../../src/domain/errors.js';
import { lineAt, lineIndex, scanJson } from '../../../src/tracker/file/json-scan.js';
import { parseIssuesText } from '../../../src/tracker/file/parse.js';

const FORMATS = ['json', 'yaml', 'auto'] as const;

const utf8 = (text: string) => new TextEncoder().encode(text);

function jsonParses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Text that looks like an issues file often enough to reach the deeper checks. */
const issueish = fc
  .array(
    fc.record(
      {
        id: fc.oneof(fc.string(), fc.integer()),
        identifier: fc.string(),
        title: fc.oneof(fc.string(), fc.constant(null)),
        state: fc.constantFrom('Todo', 'Done', '', 'x'),
        priority: fc.jsonValue({ maxDepth: 2 }),
        labels: fc.oneof(fc.array(fc.string()), fc.string()),
        comments: fc.oneof(fc.constant(null), fc.array(fc.record({ body: fc.jsonValue({ maxDepth: 2 }) }))),
        blocked_by: fc.jsonValue({ maxDepth: 2 }),
      },
      { requiredKeys: [] },
    ),
    { maxLength: 4 },
  )
  .map((issues) => JSON.stringify(issues, null, 2));

describe('issues file parser properties', () => {
  it('never throws on arbitrary text: it returns issues or a TrackerError', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.string({ unit: 'binary' }), issueish),
        fc.constantFrom(...FORMATS),
        (text, format) => {
          const result = parseIssuesText(text, 'f', format);
          if (!result.ok) {
            expect(result.error).toBeInstanceOf(TrackerError);
            expect(result.error.kind).toBe('tracker_payload_error');
            expect(result.error.line).toBeGreaterThanOrEqual(1);
            expect(result.error.line).toBeLessThanOrEqual(lineAt(utf8(text), Number.POSITIVE_INFINITY));
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('a mutated valid file never throws either', () => {
    fc.assert(
      fc.property(
        issueish,
        fc.nat(),
        fc.string({ maxLength: 3 }),
        fc.constantFrom(...FORMATS),
        (text, at, insert, format) => {
          const cut = at % (text.length + 1);
          const mutated = text.slice(0, cut) + insert + text.slice(cut + 1);
          const result = parseIssuesText(mutated, 'f', format);
          if (!result.ok) expect(result.error).toBeInstanceOf(TrackerError);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('the JSON scanner accepts exactly what JSON.parse accepts', () => {
    const jsonText = fc
      .jsonValue({ maxDepth: 2 })
      .chain((value) =>
        fc.constantFrom(
          JSON.stringify(value),
          JSON.stringify(value, null, 2),
          JSON.stringify(value, null, '\t'),
        ),
      );
    const mutatedJson = fc
      .tuple(
        jsonText,
        fc.nat(),
        fc.constantFrom('', ',', ']', '}', '"', '\\', ' ', '\n', 'x', '0', '-', '.', 'e'),
      )
      .map(([text, at, insert]) => {
        const cut = at % (text.length + 1);
        return text.slice(0, cut) + insert + text.slice(cut + 1);
      });
    fc.assert(
      fc.property(fc.oneof(fc.string(), jsonText, mutatedJson), (text) => {
        expect(scanJson(utf8(text)).ok).toBe(jsonParses(text));
      }),
      { numRuns: 3_000 },
    );
  });

  it('the line index gives the same line as counting from the top, for any offset', () => {
    const text = fc.string({ unit: fc.constantFrom('a', '\n', '\r', ' ', '{', '\u2028') });
    fc.assert(
      fc.property(text, fc.array(fc.integer({ min: -2, max: 80 }), { maxLength: 20 }), (body, offsets) => {
        const bytes = utf8(body);
        const lineOf = lineIndex(bytes);
        for (const offset of [...offsets, 0, bytes.length, bytes.length + 1]) {
          expect(lineOf(offset)).toBe(lineAt(bytes, offset));
        }
      }),
      { numRuns: 1_000 },
    );
  });
});
