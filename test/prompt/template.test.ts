import { describe, expect, it } from 'vitest';
import { compilePrompt } from '../../src/prompt/template.js';

const ORIGIN = { file: 'WORKFLOW.md', line: 7, column: 1 };

describe('compilePrompt', () => {
  it('a clean template compiles', () => {
    const result = compilePrompt('Work on {{ issue.title }}.\n', ORIGIN);
    expect(result.ok).toBe(true);
  });

  it('an unclosed tag is a template.syntax error at its line in the original file, not the template', () => {
    const result = compilePrompt('Hello\n\n{% if attempt %}retry', ORIGIN);
    expect(result).toEqual({
      ok: false,
      diagnostics: [
        {
          severity: 'error',
          code: 'template.syntax',
          message: 'template syntax error: tag {% if attempt %} not closed',
          file: 'WORKFLOW.md',
          line: 9,
          column: 1,
        },
      ],
    });
  });

  it('an unknown filter is template.unknown_filter at parse time, naming the filter', () => {
    const result = compilePrompt('a\nb\n  {{ issue.title | shout }}', ORIGIN);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.diagnostics).toEqual([
      expect.objectContaining({
        severity: 'error',
        code: 'template.unknown_filter',
        message: 'unknown template filter shout',
        line: 9,
        column: 3,
      }),
    ]);
  });

  it('a first-line error is shifted by the column the template starts at', () => {
    const result = compilePrompt('ab {{ x | nope }}', { file: 'WORKFLOW.md', line: 4, column: 5 });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.diagnostics[0]).toMatchObject({ line: 4, column: 8 });
  });

  it('an unclosed output is a syntax error, and no message carries a stack trace or source excerpt', () => {
    const result = compilePrompt('line one\n{{ issue.title ', ORIGIN);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.diagnostics).toHaveLength(1);
    const [d] = result.diagnostics;
    expect(d).toMatchObject({ code: 'template.syntax', line: 8, column: 1 });
    expect(d?.message).not.toMatch(/\n| {4}at |line:\d|>>/);
  });

  it('an unknown tag is a syntax error rather than an exception', () => {
    const result = compilePrompt('{% frobnicate %}', ORIGIN);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.diagnostics[0]).toMatchObject({ code: 'template.syntax', line: 7, column: 1 });
    expect(result.diagnostics[0]?.message).toContain('frobnicate');
  });

  it('several unknown filters are all reported, not just the first', () => {
    const result = compilePrompt('{{ a | one }}\n{{ b | two }}', ORIGIN);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.diagnostics.map((d) => [d.code, d.line, d.message])).toEqual([
      ['template.unknown_filter', 7, 'unknown template filter one'],
      ['template.unknown_filter', 8, 'unknown template filter two'],
    ]);
  });
});
