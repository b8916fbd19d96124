import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { formatForPath, type ParseResult, parseIssuesText } from '../../../src/tracker/file/parse.js';
import { rawIssue } from './helpers.js';

function ok(result: ParseResult) {
  if (!result.ok) throw new Error(`expected a parse, got ${result.error.message}`);
  return result.value;
}

function failure(result: ParseResult) {
  if (result.ok) throw new Error('expected a parse failure');
  return result.error;
}

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

describe('issues file format', () => {
  it.each([
    ['issues.json', 'json'],
    ['ISSUES.JSON', 'json'],
    ['issues.yaml', 'yaml'],
    ['issues.yml', 'yaml'],
    ['issues.txt', 'auto'],
    ['issues', 'auto'],
  ])('%s is read as %s', (path, format) => {
    expect(formatForPath(path)).toBe(format);
  });

  it('a file of unknown extension is read as JSON first, then YAML', () => {
    expect(ok(parseIssuesText(json([rawIssue(1)]), 'f.txt', 'auto')).format).toBe('json');
    expect(ok(parseIssuesText(stringify([rawIssue(1)]), 'f.txt', 'auto')).format).toBe('yaml');
  });

  it('a YAML-only construct in a .json file is a syntax error, not silently accepted', () => {
    const error = failure(parseIssuesText('- id: x\n', 'f.json', 'json'));
    expect(error.code).toBe('file.syntax');
  });
});

describe('issues file shapes', () => {
  it.each([
    ['JSON list', json([rawIssue(1), rawIssue(2)]), 'json', 'list'],
    ['JSON object with issues', json({ version: 1, issues: [rawIssue(1), rawIssue(2)] }), 'json', 'wrapped'],
    ['YAML list', stringify([rawIssue(1), rawIssue(2)]), 'yaml', 'list'],
    ['YAML object with issues', stringify({ issues: [rawIssue(1), rawIssue(2)] }), 'yaml', 'wrapped'],
  ] as const)('a %s yields its issues in file order', (_label, text, format, shape) => {
    const parsed = ok(parseIssuesText(text, 'f', format));
    expect(parsed.shape).toBe(shape);
    expect(parsed.issues.map((i) => i.id)).toEqual(['id-1', 'id-2']);
  });

  it('an empty list is zero issues, but an empty file is an error (a truncated save must not look like "no work")', () => {
    expect(ok(parseIssuesText('[]', 'f.json', 'json')).issues).toEqual([]);
    expect(ok(parseIssuesText('issues: []\n', 'f.yaml', 'yaml')).issues).toEqual([]);
    expect(failure(parseIssuesText('', 'f.json', 'json')).code).toBe('file.syntax');
    expect(failure(parseIssuesText('\n# nothing\n', 'f.yaml', 'yaml')).code).toBe('file.syntax');
  });

  it('start lines are recorded for every issue', () => {
    const text =
      'issues:\n  - id: a\n    identifier: A\n    title: t\n    state: s\n  - {id: b, identifier: B, title: t, state: s}\n';
    expect(ok(parseIssuesText(text, 'f', 'yaml')).lines).toEqual([2, 6]);
  });

  it('a byte-order mark does not break a JSON file', () => {
    expect(ok(parseIssuesText(`\uFEFF${json([rawIssue(1)])}`, 'f.json', 'json')).issues).toHaveLength(1);
  });
});

describe('issue normalisation', () => {
  it('every field maps to the normalised issue, with displayId equal to identifier', () => {
    const raw = {
      id: '42',
      identifier: 'PRJ-42',
      title: 'Fix it',
      state: 'In Progress',
      description: 'details',
      priority: 2,
      branch_name: 'fix/42',
      url: 'https://example.test/42',
      labels: ['Bug', 'UI'],
      assignee: 'sam',
      issue_type: 'bug',
      parent: { id: '40', identifier: 'PRJ-40' },
      comments: [{ id: 'c1', author: 'ann', body: 'hi', created_at: '2024-05-01T00:00:00Z' }],
      blocked_by: [{ id: '9', identifier: 'PRJ-9', state: 'Todo' }],
      created_at: '2024-04-01T00:00:00Z',
      updated_at: '2024-04-02T00:00:00Z',
      custom: { anything: true },
    };
    expect(ok(parseIssuesText(json([raw]), 'f', 'json')).issues[0]).toEqual({
      id: '42',
      identifier: 'PRJ-42',
      displayId: 'PRJ-42',
      title: 'Fix it',
      description: 'details',
      priority: 2,
      state: 'In Progress',
      branchName: 'fix/42',
      url: 'https://example.test/42',
      labels: ['bug', 'ui'],
      assignee: 'sam',
      issueType: 'bug',
      parent: { id: '40', identifier: 'PRJ-40' },
      comments: [{ id: 'c1', author: 'ann', body: 'hi', createdAt: '2024-05-01T00:00:00Z' }],
      blockedBy: [{ id: '9', identifier: 'PRJ-9', state: 'Todo' }],
      createdAt: '2024-04-01T00:00:00Z',
      updatedAt: '2024-04-02T00:00:00Z',
    });
  });

  it('absent optional fields get their empty defaults, never undefined', () => {
    expect(ok(parseIssuesText(json([rawIssue(1)]), 'f', 'json')).issues[0]).toEqual({
      id: 'id-1',
      identifier: 'T-1',
      displayId: 'T-1',
      title: 'Issue 1',
      description: '',
      priority: null,
      state: 'Todo',
      branchName: '',
      url: '',
      labels: [],
      assignee: '',
      issueType: '',
      parent: null,
      comments: null,
      blockedBy: [],
      createdAt: '',
      updatedAt: '',
    });
  });

  it.each([
    [1, 1],
    [0, 0],
    [-3, -3],
    [2.5, null],
    ['1', null],
    ['high', null],
    [true, null],
    [null, null],
    [[1], null],
    [1e300, null],
  ])('priority %j is read as %j', (priority, expected) => {
    const parsed = ok(parseIssuesText(json([rawIssue(1, { priority })]), 'f', 'json'));
    expect(parsed.issues[0]?.priority).toBe(expected);
  });

  it('a YAML integer priority counts and a quoted one does not', () => {
    const text =
      '- {id: a, identifier: A, title: t, state: s, priority: 3}\n- {id: b, identifier: B, title: t, state: s, priority: "3"}\n';
    expect(ok(parseIssuesText(text, 'f', 'yaml')).issues.map((i) => i.priority)).toEqual([3, null]);
  });

  it('labels are lowercased so label rules never depend on casing', () => {
    const parsed = ok(
      parseIssuesText(json([rawIssue(1, { labels: ['Needs-Review', 'BUG', 'ok'] })]), 'f', 'json'),
    );
    expect(parsed.issues[0]?.labels).toEqual(['needs-review', 'bug', 'ok']);
  });

  it.each([
    ['absent', undefined, null],
    ['null', null, null],
    ['an empty list', [], []],
  ])('comments that are %s keep that meaning (null = not given, [] = none)', (_label, comments, expected) => {
    const issue = comments === undefined ? rawIssue(1) : rawIssue(1, { comments });
    expect(ok(parseIssuesText(json([issue]), 'f', 'json')).issues[0]?.comments).toEqual(expected);
  });

  it('camelCase spellings are accepted where the snake_case key is absent', () => {
    const raw = rawIssue(1, {
      branchName: 'b',
      issueType: 'task',
      blockedBy: [{ id: 'x', identifier: 'X-1', state: 'Todo' }],
      createdAt: 'c',
      updatedAt: 'u',
      comments: [{ body: 'b', createdAt: 'then' }],
    });
    const issue = ok(parseIssuesText(json([raw]), 'f', 'json')).issues[0];
    expect(issue).toMatchObject({ branchName: 'b', issueType: 'task', createdAt: 'c', updatedAt: 'u' });
    expect(issue?.blockedBy).toEqual([{ id: 'x', identifier: 'X-1', state: 'Todo' }]);
    expect(issue?.comments).toEqual([{ id: '', author: '', body: 'b', createdAt: 'then' }]);
  });

  it('a blocker in the same file reports that issue’s live state, so finishing it unblocks dependants', () => {
    const text = json([
      rawIssue(1, { state: 'Done' }),
      rawIssue(2, {
        blocked_by: [
          { identifier: 'T-1', state: 'Todo' },
          { id: 'elsewhere', state: 'Open' },
        ],
      }),
    ]);
    expect(ok(parseIssuesText(text, 'f', 'json')).issues[1]?.blockedBy).toEqual([
      { id: 'id-1', identifier: 'T-1', state: 'Done' },
      { id: 'elsewhere', identifier: '', state: 'Open' },
    ]);
  });
});

describe('issue validation', () => {
  it.each(['id', 'identifier', 'title', 'state'])('an issue without %s is rejected at its line', (field) => {
    const broken = rawIssue(2);
    delete broken[field];
    const error = failure(parseIssuesText(json([rawIssue(1), broken]), 'issues.json', 'json'));
    expect(error.kind).toBe('tracker_payload_error');
    expect(error.code).toBe('file.issue.invalid');
    expect(error.line).toBe(8);
    expect(error.message).toContain('issues.json:8');
    expect(error.message).toContain(`"${field}"`);
  });

  it.each([
    ['title', 42],
    ['state', ''],
    ['description', ['x']],
    ['labels', 'bug'],
    ['labels', ['ok', 3]],
    ['parent', 'PRJ-1'],
    ['parent', {}],
    ['comments', 'none'],
    ['comments', [{ author: 'a' }]],
    ['blocked_by', [{ state: 'Todo' }]],
    ['blocked_by', {}],
  ])('a wrong-typed %s (%j) is rejected rather than half-read', (field, value) => {
    const error = failure(parseIssuesText(json([rawIssue(1, { [field]: value })]), 'f', 'json'));
    expect(error.code).toBe('file.issue.invalid');
    expect(error.line).toBe(2);
  });

  it('a repeated id is rejected at the second occurrence', () => {
    const error = failure(parseIssuesText(json([rawIssue(1), rawIssue(2), rawIssue(1)]), 'f', 'json'));
    expect(error.code).toBe('file.issue.duplicate');
    expect(error.message).toContain('"id-1"');
    expect(error.line).toBe(14);
  });

  it('a repeated identifier is rejected even when the ids differ', () => {
    const text = stringify([rawIssue(1), rawIssue(2, { identifier: 'T-1' })]);
    const error = failure(parseIssuesText(text, 'f.yaml', 'yaml'));
    expect(error.code).toBe('file.issue.duplicate');
    expect(error.message).toContain('"T-1"');
    expect(error.line).toBe(5);
  });
});

describe('large issues files', () => {
  /** The 1-based lines on which a pretty-printed list's items open (`{` alone at `indent`). */
  function openingLines(text: string, indent: string): number[] {
    return text.split('\n').flatMap((line, i) => (line === `${indent}{` ? [i + 1] : []));
  }

  it('a 5,000-issue file gets every line right without counting from the top for each issue', () => {
    const issues = Array.from({ length: 5_000 }, (_, i) =>
      rawIssue(i + 1, i % 7 === 0 ? { description: 'two\nlines', labels: ['a', 'b'] } : {}),
    );
    for (const [text, indent] of [
      [json(issues), '  '],
      [json({ issues }), '    '],
      [JSON.stringify(issues, null, 2).replaceAll('\n', '\r\n'), '  '],
    ] as const) {
      const startedMs = performance.now();
      const parsed = ok(parseIssuesText(text, 'f.json', 'json'));
      const elapsedMs = performance.now() - startedMs;
      expect(parsed.issues).toHaveLength(5_000);
      expect(parsed.lines).toEqual(openingLines(text.replaceAll('\r\n', '\n'), indent));
      // Counting newlines from the top for every issue took over 5 s here; one pass takes tens of ms
      // (the bound leaves room for a first, unoptimised run on a loaded machine).
      expect(elapsedMs).toBeLessThan(4_000);
    }
  });

  it('a late bad issue in a large file is reported at its own line', () => {
    const issues = Array.from({ length: 3_000 }, (_, i) => rawIssue(i + 1));
    issues[2_999] = rawIssue(1);
    const error = failure(parseIssuesText(json(issues), 'f.json', 'json'));
    expect(error.code).toBe('file.issue.duplicate');
    expect(error.line).toBe(2 + 2_999 * 6);
    expect(error.message).toContain('first used at line 2)');
  });

  it('an escaped "issues" key still names the list of a wrapped file', () => {
    const text = `{\n  "issu\\u0065s": [\n    ${JSON.stringify(rawIssue(1))}\n  ]\n}\n`;
    const parsed = ok(parseIssuesText(text, 'f.json', 'json'));
    expect(parsed.shape).toBe('wrapped');
    expect(parsed.lines).toEqual([3]);
  });
});
