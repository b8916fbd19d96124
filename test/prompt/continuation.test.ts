import { describe, expect, it } from 'vitest';
import type { ContinuationSource } from '../../src/prompt/continuation.js';
import { compilePrompt } from '../../src/prompt/template.js';

const ORIGIN = { file: 'WORKFLOW.md', line: 5, column: 1 };

function sourceOf(template: string): ContinuationSource {
  const compiled = compilePrompt(template, ORIGIN);
  if (!compiled.ok) throw new Error(`expected ${JSON.stringify(template)} to compile`);
  return compiled.template.continuation;
}

interface Row {
  name: string;
  template: string;
  expected: ContinuationSource;
}

const ROWS: Row[] = [
  {
    name: 'an if/else on the flag',
    template: '{% if run.is_continuation %}go on{% else %}{{ issue.title }}{% endif %}',
    expected: 'template',
  },
  {
    name: 'an unless on the flag',
    template: '{% unless run.is_continuation %}{{ issue.description }}{% endunless %}',
    expected: 'template',
  },
  { name: 'the flag printed', template: 'continuation: {{ run.is_continuation }}', expected: 'template' },
  { name: 'bracket access', template: '{{ run["is_continuation"] }}', expected: 'template' },
  {
    name: 'the flag in a case',
    template: '{% case run.is_continuation %}{% when true %}go on{% endcase %}',
    expected: 'template',
  },
  {
    name: 'run aliased by assign',
    template: '{% assign r = run %}{% if r.is_continuation %}go on{% endif %}',
    expected: 'template',
  },
  {
    name: 'a computed member of run',
    template: '{% assign k = "is_continuation" %}{{ run[k] }}',
    expected: 'template',
  },
  {
    name: 'the flag inside a nested block',
    template: '{% for l in issue.labels %}{% if run.is_continuation %}x{% endif %}{% endfor %}',
    expected: 'template',
  },
  {
    name: 'no run variable at all',
    template: 'Work on {{ issue.identifier }}: {{ issue.title }}\n\n{{ issue.description }}',
    expected: 'guidance',
  },
  {
    name: 'run.turn and run.max_turns only',
    template: 'Turn {{ run.turn }} of {{ run.max_turns }}.',
    expected: 'guidance',
  },
  {
    name: 'the flag only inside raw',
    template: '{% raw %}{{ run.is_continuation }}{% endraw %}',
    expected: 'guidance',
  },
  {
    name: 'the flag only inside a comment',
    template: '{% comment %}{% if run.is_continuation %}{% endcomment %}hello',
    expected: 'guidance',
  },
];

describe('continuation source detection', () => {
  it.each(ROWS)('$name: continuation turns use the $expected', ({ template, expected }) => {
    expect(sourceOf(template)).toBe(expected);
  });

  it('an empty template leaves continuations to the built-in guidance', () => {
    expect(sourceOf('')).toBe('guidance');
  });
});
