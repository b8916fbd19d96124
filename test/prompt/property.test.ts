import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkTemplate } from '../../src/prompt/check.js';
import { renderPrompt } from '../../src/prompt/render.js';
import { compilePrompt } from '../../src/prompt/template.js';
import { promptVariables, SAMPLE_ISSUE } from '../../src/prompt/variables.js';

const VARS = promptVariables({
  issue: SAMPLE_ISSUE,
  attempt: 1,
  turn: 1,
  maxTurns: 3,
  workspacePath: '/ws',
});

/** Strings biased towards Liquid syntax so the parser's error paths are actually reached. */
const liquidish = fc
  .array(
    fc.oneof(
      fc.string(),
      fc.constantFrom(
        '{{',
        '}}',
        '{%',
        '%}',
        '{%-',
        '-%}',
        ' if ',
        ' for ',
        ' endif ',
        ' endfor ',
        ' in ',
        '|',
        ':',
        'issue',
        '.title',
        '.nope',
        'attempt',
        'run.turn',
        ' upcase ',
        ' nope ',
        '"',
        "'",
        '(1..3)',
        '\n',
        '\r\n',
        'raw',
        'endraw',
        'comment',
        'assign x = ',
      ),
    ),
    { maxLength: 30 },
  )
  .map((parts) => parts.join(''));

describe('prompt properties', () => {
  it('compilePrompt + renderPrompt never throw, and every diagnostic lies inside the file', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), liquidish),
        fc.integer({ min: 1, max: 500 }),
        fc.integer({ min: 1, max: 80 }),
        (source, line, column) => {
          const origin = { file: 'WORKFLOW.md', line, column };
          const compiled = compilePrompt(source, origin);
          const diagnostics = compiled.ok
            ? (() => {
                const rendered = renderPrompt(compiled.template, VARS);
                return rendered.ok ? [] : rendered.diagnostics;
              })()
            : compiled.diagnostics;
          const lastLine = line + source.split('\n').length - 1;
          for (const d of diagnostics) {
            expect(d.file).toBe('WORKFLOW.md');
            expect(d.line).toBeGreaterThanOrEqual(line);
            expect(d.line).toBeLessThanOrEqual(lastLine);
            expect(d.column).toBeGreaterThanOrEqual(1);
            expect(d.message).not.toContain('\n');
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('checkTemplate never throws on arbitrary input', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), liquidish), (source) => {
        expect(Array.isArray(checkTemplate(source, { file: 'WORKFLOW.md', line: 1, column: 1 }))).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});
