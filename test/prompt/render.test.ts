import { describe, expect, it } from 'vitest';
import { ISSUE_TEMPLATE_KEYS } from '../../src/domain/issue.js';
import { DEFAULT_CONTINUATION_PROMPT, renderPrompt, turnPrompt } from '../../src/prompt/render.js';
import { compilePrompt, type PromptTemplate } from '../../src/prompt/template.js';
import { type PromptVariables, promptVariables, SAMPLE_ISSUE } from '../../src/prompt/variables.js';

const ORIGIN = { file: 'WORKFLOW.md', line: 7, column: 1 };

function compile(source: string): PromptTemplate {
  const result = compilePrompt(source, ORIGIN);
  if (!result.ok)
    throw new Error(`expected ${JSON.stringify(source)} to compile: ${result.diagnostics[0]?.message}`);
  return result.template;
}

function vars(overrides: Partial<Parameters<typeof promptVariables>[0]> = {}): PromptVariables {
  return promptVariables({
    issue: SAMPLE_ISSUE,
    attempt: 1,
    turn: 1,
    maxTurns: 12,
    workspacePath: '/ws/ENG-42',
    ...overrides,
  });
}

function render(source: string, v: PromptVariables = vars()): string {
  const result = renderPrompt(compile(source), v);
  if (!result.ok) throw new Error(`expected a render: ${result.diagnostics[0]?.message}`);
  return result.text;
}

describe('renderPrompt', () => {
  it('an unknown variable is template.unknown_variable naming it, at its line in the original file', () => {
    const result = renderPrompt(compile('Title: {{ issue.title }}\n\n  {{ issue.nope }}'), vars());
    expect(result).toEqual({
      ok: false,
      diagnostics: [
        {
          severity: 'error',
          code: 'template.unknown_variable',
          message: 'unknown template variable issue.nope',
          file: 'WORKFLOW.md',
          line: 9,
          column: 6,
        },
      ],
    });
  });

  it('every unknown variable is reported, including one inside a loop', () => {
    const source = '{{ nope }}\n{% for c in issue.comments %}{{ c.autor }}{% endfor %}\n{{ issue.titel }}';
    const result = renderPrompt(compile(source), vars());
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.diagnostics.map((d) => [d.message, d.line])).toEqual([
      ['unknown template variable nope', 7],
      ['unknown template variable c.autor', 8],
      ['unknown template variable issue.titel', 9],
    ]);
  });

  it('a failing filter call is template.render, not an exception', () => {
    const result = renderPrompt(compile('x\n{{ "a" | append }}'), vars());
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.diagnostics[0]).toMatchObject({ code: 'template.render', line: 8, column: 1 });
  });

  it('include cannot read files from disk', () => {
    const result = renderPrompt(compile('{% include "/etc/hostname" %}'), vars());
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.diagnostics).toEqual([
      expect.objectContaining({
        code: 'template.render',
        message: 'template partials are not supported: cannot include "/etc/hostname"',
        line: 7,
      }),
    ]);
  });

  it('attempt is null on a first run, so `{% if attempt %}` takes the else branch instead of failing', () => {
    const source = '{% if attempt %}attempt {{ attempt }}{% else %}first run{% endif %}';
    expect(render(source, vars({ attempt: 1 }))).toBe('first run');
    expect(render(source, vars({ attempt: 3 }))).toBe('attempt 3');
  });

  it('run.turn, run.max_turns and run.is_continuation reflect the turn', () => {
    const source =
      '{{ run.turn }}/{{ run.max_turns }} {% if run.is_continuation %}cont{% else %}first{% endif %}';
    expect(render(source, vars({ turn: 1, maxTurns: 5 }))).toBe('1/5 first');
    expect(render(source, vars({ turn: 4, maxTurns: 5 }))).toBe('4/5 cont');
  });

  it('workspace.path is the given workspace path', () => {
    expect(render('cd {{ workspace.path }}', vars({ workspacePath: '/srv/ws/ENG-7' }))).toBe(
      'cd /srv/ws/ENG-7',
    );
  });

  it.each(ISSUE_TEMPLATE_KEYS)(
    'issue.%s renders from SAMPLE_ISSUE without an unknown-variable error',
    (key) => {
      const text = render(`[{{ issue.${key} }}]`);
      expect(text).not.toBe('[]');
    },
  );

  it('nested issue fields (parent, comments, blockers, labels) are reachable', () => {
    const source =
      '{{ issue.parent.identifier }}|{% for c in issue.comments %}{{ c.author }}:{{ c.created_at }};{% endfor %}' +
      '|{% for b in issue.blocked_by %}{{ b.identifier }}={{ b.state }}{% endfor %}|{{ issue.labels | join: "," }}';
    expect(render(source)).toBe(
      'ENG-40|lee:2025-03-04T09:15:00Z;dana:2025-03-04T11:02:00Z;|ENG-41=Done|bug,webhooks',
    );
  });

  it('a null parent reads as empty rather than failing the render', () => {
    const v = vars({ issue: { ...SAMPLE_ISSUE, parent: null, comments: null } });
    expect(render('[{{ issue.parent.identifier }}][{% if issue.comments %}c{% endif %}]', v)).toBe('[][]');
  });

  it('HTML in issue text is passed through unescaped (prompts are not HTML)', () => {
    const v = vars({ issue: { ...SAMPLE_ISSUE, title: '<b>Fix</b> & "quote" it\'s' } });
    expect(render('{{ issue.title }}', v)).toBe('<b>Fix</b> & "quote" it\'s');
  });

  it('a template that only reads JS-inherited names (constructor, toString) fails instead of leaking them', () => {
    const result = renderPrompt(compile('{{ issue.constructor }}{{ issue.title.toString }}'), vars());
    expect(result.ok).toBe(false);
  });

  it('one compiled template renders many times with different variables', () => {
    const template = compile('{{ run.turn }}');
    expect([1, 2, 3].map((turn) => renderPrompt(template, vars({ turn })))).toEqual([
      { ok: true, text: '1' },
      { ok: true, text: '2' },
      { ok: true, text: '3' },
    ]);
  });
});

describe('turnPrompt', () => {
  const onlyFirst = '{% unless run.is_continuation %}Work on {{ issue.identifier }}.{% endunless %}';

  it('a continuation turn whose render is blank gets the default continuation prompt, never ""', () => {
    expect(turnPrompt(compile(onlyFirst), vars({ turn: 2, attempt: 2 }))).toEqual({
      ok: true,
      text: DEFAULT_CONTINUATION_PROMPT,
    });
    expect(turnPrompt(compile('  \n\t\n'), vars({ turn: 3 }))).toEqual({
      ok: true,
      text: DEFAULT_CONTINUATION_PROMPT,
    });
  });

  it('a blank first turn stays blank instead of being replaced by the continuation prompt', () => {
    expect(turnPrompt(compile('{% if run.is_continuation %}go on{% endif %}  '), vars({ turn: 1 }))).toEqual({
      ok: true,
      text: '  ',
    });
  });

  it('a template that reads run.is_continuation is rendered on a continuation turn, as its author wrote it', () => {
    const branching =
      '{% if run.is_continuation %}go on, turn {{ run.turn }}{% else %}{{ issue.title }}{% endif %}';
    expect(turnPrompt(compile(branching), vars({ turn: 2 }))).toEqual({ ok: true, text: 'go on, turn 2' });
    expect(turnPrompt(compile(branching), vars({ turn: 1 }))).toEqual({ ok: true, text: SAMPLE_ISSUE.title });
  });

  it('a template that does not read run.is_continuation is not resent on a continuation turn: the guidance goes instead', () => {
    const whole = 'Work on {{ issue.identifier }}.\n\n{{ issue.description }}\nTurn {{ run.turn }}.';
    expect(turnPrompt(compile(whole), vars({ turn: 2 }))).toEqual({
      ok: true,
      text: DEFAULT_CONTINUATION_PROMPT,
    });
    const first = turnPrompt(compile(whole), vars({ turn: 1 }));
    expect(first).toEqual({ ok: true, text: expect.stringContaining(SAMPLE_ISSUE.description) });
  });

  it('a continuation render that fails stays a failure, not the default prompt', () => {
    const result = turnPrompt(
      compile('{% if run.is_continuation %}{{ issue.nope }}{% endif %}'),
      vars({ turn: 2 }),
    );
    expect(result.ok).toBe(false);
  });

  it('the default continuation prompt asks to continue and to end with a final message', () => {
    expect(DEFAULT_CONTINUATION_PROMPT).toMatch(/continue/i);
    expect(DEFAULT_CONTINUATION_PROMPT).toMatch(/final message/i);
  });
});
