import { describe, expect, it } from 'vitest';
import { MAX_REVIEW_ISSUES, parseVerdict } from '../../../src/orchestrator/self-review/verdict.js';

describe('review verdicts', () => {
  it('reads pass and iterate in any case, with issues and their places', () => {
    expect(parseVerdict({ verdict: 'PASS', summary: ' looks right ' })).toEqual({
      ok: true,
      verdict: { verdict: 'pass', summary: 'looks right', issues: [] },
    });
    const parsed = parseVerdict({
      verdict: 'Iterate',
      issues: [
        { file: 'src/a.ts', line: 3, end_line: 5, severity: 'HIGH', message: 'off by one' },
        { path: 'b.ts', line: '7', description: 'unused import' },
        'the tests do not cover the empty list',
        { file: 'c.ts' },
        42,
      ],
    });
    expect(parsed).toEqual({
      ok: true,
      verdict: {
        verdict: 'iterate',
        summary: '',
        issues: [
          { file: 'src/a.ts', line: 3, endLine: 5, severity: 'high', message: 'off by one' },
          { file: 'b.ts', line: 7, endLine: 7, severity: null, message: 'unused import' },
          {
            file: null,
            line: null,
            endLine: null,
            severity: null,
            message: 'the tests do not cover the empty list',
          },
        ],
      },
    });
  });

  it('no verdict, another word or not an object is unreadable, with the reason', () => {
    expect(parseVerdict({ summary: 'fine' })).toEqual({
      ok: false,
      reason: '"verdict" must be "pass" or "iterate", not null',
    });
    expect(parseVerdict({ verdict: 'approve' })).toMatchObject({
      ok: false,
      reason: expect.stringContaining('"approve"'),
    });
    expect(parseVerdict(['pass'])).toMatchObject({
      ok: false,
      reason: 'the verdict file is not a JSON object',
    });
    expect(parseVerdict(null)).toMatchObject({ ok: false });
  });

  it('keeps at most the cap of issues and clips long texts', () => {
    const many = Array.from({ length: MAX_REVIEW_ISSUES + 10 }, (_, i) => ({ message: `issue ${i}` }));
    const parsed = parseVerdict({ verdict: 'iterate', summary: 'x'.repeat(5000), issues: many });
    if (!parsed.ok) throw new Error(parsed.reason);
    expect(parsed.verdict.issues).toHaveLength(MAX_REVIEW_ISSUES);
    expect(parsed.verdict.summary.length).toBe(2001);
  });
});
