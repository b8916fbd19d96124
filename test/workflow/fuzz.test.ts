/**
 * `loadWorkflow` promises never to throw and to turn every problem into a coded, one-line
 * diagnostic positioned inside the file. These properties feed it raw bytes, arbitrary text
 * and, mostly, near-valid workflows built from the schema's own keys, so the YAML, schema,
 * cross-field, adapter-block and template layers are all reached with hostile values.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { kindCatalog } from '../../src/cli/catalog.js';
import type { Diagnostic } from '../../src/domain/diagnostic.js';
import { loadWorkflow } from '../../src/workflow/load.js';
import { knownKeys } from '../../src/workflow/schema.js';

const FILE = '/tmp/x/WORKFLOW.md';
const KINDS = kindCatalog();
const RUNS = 250;

/** Loads `text` hermetically; returns the diagnostics, throwing only if the loader itself threw. */
function loadText(text: string | Uint8Array): { diagnostics: Diagnostic[]; text: string } {
  const result = loadWorkflow(FILE, { env: {}, kinds: KINDS, checkRender: true, text });
  const decoded = typeof text === 'string' ? text : Buffer.from(text).toString('utf8');
  return { diagnostics: result.ok ? result.workflow.diagnostics : result.diagnostics, text: decoded };
}

/** Every diagnostic is coded, readable and placed inside the file (or nowhere). */
function assertWellFormed(text: string | Uint8Array): void {
  const loaded = loadText(text);
  const lineCount = loaded.text.split('\n').length;
  for (const d of loaded.diagnostics) {
    const where = `${JSON.stringify(d)}\nfor input ${JSON.stringify(loaded.text.slice(0, 400))}`;
    expect(d.code, where).toMatch(/\S/);
    expect(d.message.trim(), where).not.toBe('');
    expect(d.message.includes('    at ') || d.message.includes('.ts:'), `stack trace: ${where}`).toBe(false);
    expect(['error', 'warning', 'info'], where).toContain(d.severity);
    if (d.line !== null) {
      expect(Number.isInteger(d.line), where).toBe(true);
      expect(d.line, where).toBeGreaterThanOrEqual(1);
      expect(d.line, where).toBeLessThanOrEqual(lineCount + 1);
    }
    if (d.column !== null) {
      expect(Number.isInteger(d.column) && d.column >= 1, where).toBe(true);
    }
  }
}

/** Scalars an operator (or a typo) might put anywhere: kinds, states, `$VAR`s, bad numbers. */
const scalar = fc.oneof(
  fc.integer({ min: -100_000, max: 100_000 }),
  fc.constantFrom(0, 1, -1, 2.5, 65_535, 70_000, 1e21, Number.NaN, Number.POSITIVE_INFINITY),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 12 }),
  fc.constantFrom(
    '',
    ' ',
    'file',
    'github',
    'mock',
    'echo',
    'claude-code',
    'codex',
    'jira',
    'Todo',
    'Done',
    'In Progress',
    'acme/api',
    'acme',
    '$GITHUB_TOKEN',
    '${GITHUB_TOKEN}',
    '${UNCLOSED',
    '${1BAD}',
    '$$',
    '~',
    '~/work',
    'issues.json',
    '127.0.0.1',
    '::1',
    'localhost',
    'info',
    'verbose',
    'accept-new',
    'default',
    'plan',
    'never',
    'label',
    '20',
    '20.0',
    '-5',
    '1e400',
  ),
);

const value: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', maxDepth: 3 },
    scalar,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(
      fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('path', 'ci_failure', 'mock')),
      tie('value'),
      {
        maxKeys: 4,
      },
    ),
  ),
})).value;

/** A section: usually a map of its real keys (plus a typo), sometimes a wrong shape altogether. */
function section(keys: readonly string[] | null): fc.Arbitrary<unknown> {
  if (keys === null || keys.length === 0) return value;
  const asMap = fc.dictionary(fc.constantFrom(...keys, 'typo_key'), value, { maxKeys: keys.length + 1 });
  return fc.oneof({ weight: 4, arbitrary: asMap }, { weight: 1, arbitrary: value });
}

const TOP_KEYS = knownKeys([]) ?? [];
const BLOCKS = ['file', 'github', 'mock', 'echo', 'claude-code', 'codex'];
const BLOCK_KEYS: Record<string, string[]> = {
  file: ['path'],
  github: ['max_pages', 'etag_cache_size'],
  mock: ['model', 'line_delay_ms'],
  echo: ['delay_ms', 'fail_rate'],
  'claude-code': [
    'permission_mode',
    'model',
    'max_turns',
    'max_budget_usd',
    'effort',
    'allowed_tools',
    'disallowed_tools',
  ],
  codex: ['model', 'effort', 'approval_policy', 'sandbox', 'config', 'credentials_home'],
};

const tracker = fc.record(
  {
    kind: fc.oneof(fc.constantFrom('file', 'github', 'File', ''), value),
    active_states: fc.oneof(fc.constant(['Todo', 'In Progress']), value),
    terminal_states: fc.oneof(fc.constant(['Done']), value),
    api_key: value,
    project: value,
    endpoint: value,
    handoff_state: value,
    in_progress_state: value,
    blocked_state: value,
    comments: section(knownKeys(['tracker', 'comments'])),
  },
  { requiredKeys: [] },
);

const frontMatter: fc.Arbitrary<Record<string, unknown>> = fc.record(
  {
    ...Object.fromEntries(TOP_KEYS.filter((k) => k !== 'tracker').map((k) => [k, section(knownKeys([k]))])),
    ...Object.fromEntries(BLOCKS.map((k) => [k, section(BLOCK_KEYS[k] ?? null)])),
    tracker: fc.oneof({ weight: 5, arbitrary: tracker }, { weight: 1, arbitrary: value }),
  },
  { requiredKeys: [] },
);

/** Template pieces: good variables, typos, unbalanced tags, unknown filters and tags. */
const body = fc
  .array(
    fc.oneof(
      fc.string({ maxLength: 10 }),
      fc.constantFrom(
        'Work on {{ issue.identifier }}: {{ issue.title }}.',
        '{{ issue.nope }}',
        '{{ nope }}',
        '{{ issue.title | upcase }}',
        '{{ issue.labels | join: ", " }}',
        '{{ issue.title | shout }}',
        '{% if attempt %}',
        '{% if issue.lables %}',
        '{% endif %}',
        '{% for c in issue.comments %}{{ c.body }}',
        '{% endfor %}',
        '{% include "footer" %}',
        '{% shout %}',
        '{% assign t = run.turn | plus: 1 %}{{ t }}',
        '{{ run.turn }} of {{ run.max_turns }}',
        '{{ workspace.path }}',
        '{{',
        '}}',
        '{%',
        '%}',
        '\n',
        '\r\n',
        '\t',
        '---',
      ),
    ),
    { maxLength: 12 },
  )
  .map((parts) => parts.join(''));

/** A local edit that breaks the YAML in a typical way. */
const MUTATIONS = [
  '\t',
  ': ',
  '"',
  "'",
  '[',
  '{',
  '- ',
  '&a ',
  '*a ',
  '\n  ',
  '\n---\n',
  '\r',
  '\uFEFF',
  '#',
  '|\n',
];

const nearValid = fc
  .record({
    fm: frontMatter,
    body,
    mutation: fc.option(fc.record({ at: fc.nat(), token: fc.constantFrom(...MUTATIONS) })),
    bom: fc.boolean(),
    crlf: fc.boolean(),
  })
  .map(({ fm, body: prompt, mutation, bom, crlf }) => {
    let yamlText = stringify(fm, { lineWidth: 0 });
    if (mutation !== null) {
      const at = mutation.at % (yamlText.length + 1);
      yamlText = yamlText.slice(0, at) + mutation.token + yamlText.slice(at);
    }
    const text = `---\n${yamlText}${yamlText.endsWith('\n') ? '' : '\n'}---\n${prompt}\n`;
    return (bom ? '\uFEFF' : '') + (crlf ? text.replace(/\n/g, '\r\n') : text);
  });

describe('loadWorkflow on hostile input', () => {
  it('never throws and reports well-formed diagnostics for arbitrary bytes (invalid UTF-8 included)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), (bytes) => {
        assertWellFormed(bytes);
      }),
      { numRuns: RUNS },
    );
  });

  it('never throws and reports well-formed diagnostics for arbitrary strings', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 2000 }), (text) => {
        assertWellFormed(text);
      }),
      { numRuns: RUNS },
    );
  });

  it('never throws on arbitrary text between front-matter delimiters (the YAML path, not just the body)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme-ascii', maxLength: 600 }),
        fc.string({ maxLength: 200 }),
        (yamlText, prompt) => {
          assertWellFormed(`---\n${yamlText}\n---\n${prompt}`);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('never throws on near-valid workflows built from the schema keys, and places every diagnostic in the file', () => {
    fc.assert(
      fc.property(nearValid, (text) => {
        assertWellFormed(text);
      }),
      { numRuns: 300 },
    );
  });

  it('the near-valid generator reaches the config and template layers, not only YAML errors', () => {
    const codes = new Set<string>();
    for (const text of fc.sample(nearValid, { numRuns: 200, seed: 42 })) {
      for (const d of loadText(text).diagnostics) codes.add(d.code.split('.')[0] ?? '');
    }
    expect(codes).toContain('tracker');
    expect(codes).toContain('template');
    expect(codes).toContain('workflow');
  });
});
