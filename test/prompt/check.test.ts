import { describe, expect, it } from 'vitest';
import { checkTemplate } from '../../src/prompt/check.js';
import { PATIENT_RENDER_LIMITS } from '../../src/prompt/render.js';

const ORIGIN = { file: 'WORKFLOW.md', line: 7, column: 1 };

describe('checkTemplate', () => {
  it('a clean template using every variable has no diagnostics', () => {
    const source = [
      'Issue {{ issue.identifier }}: {{ issue.title }} ({{ issue.state }})',
      '{% if attempt %}Retry {{ attempt }}.{% endif %}',
      'Turn {{ run.turn }} of {{ run.max_turns }}{% if run.is_continuation %} (continuing){% endif %}',
      'Workspace {{ workspace.path }}',
      '{% for c in issue.comments %}- {{ c.author }}: {{ c.body }}{% endfor %}',
    ].join('\n');
    expect(checkTemplate(source, ORIGIN)).toEqual([]);
  });

  it('an unknown variable is an error at validate time with its WORKFLOW.md line', () => {
    expect(checkTemplate('ok\n\n{{ issue.nope }}', ORIGIN)).toEqual([
      {
        severity: 'error',
        code: 'template.unknown_variable',
        message: 'unknown template variable issue.nope',
        file: 'WORKFLOW.md',
        line: 9,
        column: 4,
      },
    ]);
  });

  it('an unknown variable only reached on a retry (attempt set) is still caught', () => {
    const result = checkTemplate('{% if attempt %}\n{{ atempt }}{% endif %}', ORIGIN);
    expect(result).toEqual([
      expect.objectContaining({ code: 'template.unknown_variable', line: 8, severity: 'error' }),
    ]);
  });

  it('the same error seen on both sample turns is reported once', () => {
    expect(checkTemplate('{{ nope }}', ORIGIN)).toHaveLength(1);
  });

  it('an unknown filter and a syntax error are reported without rendering', () => {
    expect(checkTemplate('{{ issue.title | shout }}', ORIGIN)).toEqual([
      expect.objectContaining({ code: 'template.unknown_filter', line: 7 }),
    ]);
    expect(checkTemplate('a\n{% for c in issue.comments %}', ORIGIN)).toEqual([
      expect.objectContaining({ code: 'template.syntax', line: 8 }),
    ]);
  });

  it('every unknown variable is listed, not only the first', () => {
    const result = checkTemplate('{{ a }}\n{{ b }}\n{{ issue.c }}', ORIGIN);
    expect(result.map((d) => d.message)).toEqual([
      'unknown template variable a',
      'unknown template variable b',
      'unknown template variable issue.c',
    ]);
  });

  it('a misspelt name in a condition (silently false at run time) is a warning, not missed', () => {
    const result = checkTemplate('{% if issue.lables contains "bug" %}fix{% endif %}', ORIGIN);
    expect(result).toEqual([
      expect.objectContaining({ severity: 'warning', code: 'template.unknown_variable', line: 7 }),
    ]);
    expect(result[0]?.message).toContain('issue.lables');
  });

  it('a render that only outran the loop’s time (a busy machine) is tried again with more time, not reported', () => {
    // About a few milliseconds of work: over a 1 ms limit, far under the retry's.
    const slow = '{% for i in (1..20000) %}{{ i | plus: 1 }}{% endfor %}';
    const tight = { ...PATIENT_RENDER_LIMITS.first, timeMs: 1 };
    expect(checkTemplate(slow, ORIGIN, { first: tight, retry: PATIENT_RENDER_LIMITS.retry })).toEqual([]);
    // With no more time on the retry, the same render is reported: the retry is what saves it.
    expect(checkTemplate(slow, ORIGIN, { first: tight, retry: tight })).toEqual([
      expect.objectContaining({ code: 'template.render_limit', severity: 'error' }),
    ]);
  });

  it('checking never throws on a template that would loop for a very long time', () => {
    const result = checkTemplate('{% for i in (1..100000000) %}{{ i }}{% endfor %}', ORIGIN);
    expect(result[0]).toMatchObject({ code: 'template.render_limit', severity: 'error' });
  });
});
