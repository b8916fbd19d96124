import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TrackerError } from '../../../src/domain/errors.js';
import { FileTracker } from '../../../src/tracker/file/adapter.js';
import { applyEdit } from '../../../src/tracker/file/edit.js';
import { IssuesFileError, parseIssues, parseIssuesText } from '../../../src/tracker/file/parse.js';
import { NOW, rawIssue, STATES, tempDir } from './helpers.js';

const bytes = (text: string) => Buffer.from(text, 'utf8');

/** Bytes no tracker could re-encode: a lone continuation byte, an overlong form and 0xff. */
const INVALID_UTF8 = Buffer.from([0x80, 0xc0, 0xaf, 0xff]);

/**
 * A JSON file whose other issues hold what a re-serialising writer changes: invalid UTF-8,
 * an integer beyond 2^53, `1e3`, `-0.0`, a repeated key, escapes JSON.stringify would not
 * write, and hand spacing (tabs, spaces before colons, a one-line issue, CRLF).
 */
function jsonParts(edited: string): { before: Buffer; edited: Buffer; after: Buffer } {
  const before = Buffer.concat([
    bytes('{ "schema" : 1e3 ,\t"big": 12345678901234567890,\r\n  "issues" : [\r\n'),
    bytes('    {"id":"id-0", "identifier" :"T-0","title":"bad bytes: '),
    INVALID_UTF8,
    bytes('", "state":"Todo", "n": -0.0, "dup": 1, "dup": 2, "esc": "\\u0041\\/"},\r\n  '),
  ]);
  const after = Buffer.concat([
    bytes(',\r\n\t{ "id": "id-2",   "identifier": "T-2", "title": "'),
    INVALID_UTF8,
    bytes('", "state": "Done", "estimate": 1E+2, "x": {"x": [1, 1.50]}, "x": null }\r\n  ],\r\n'),
    bytes('  "footer": [ 12345678901234567890.000 ]\r\n}'),
  ]);
  return { before, edited: bytes(edited), after };
}

/** The same idea in YAML: numbers, quoting, flow and block styles, comments and spacing elsewhere. */
function yamlParts(edited: string): { before: Buffer; edited: Buffer; after: Buffer } {
  const before = bytes(
    [
      '# backlog   (hand formatted)',
      'big:   12345678901234567890',
      'ratio: 1e3',
      'issues:',
      '  - {id: id-0, identifier: \'T-0\', title: "t\\x41", state: Todo,  n: 0x1F}',
      '',
    ].join('\n'),
  );
  const after = bytes(
    [
      '  # untouched',
      '  - id:     id-2',
      '    identifier: T-2',
      '    title: >-',
      '      folded',
      '      text',
      '    state: "Done"',
      '    estimate: 1.50',
      '',
    ].join('\n'),
  );
  return { before, edited: bytes(edited), after };
}

async function trackerOverBytes(
  name: string,
  content: Buffer,
): Promise<{ tracker: FileTracker; path: string }> {
  const dir = await tempDir();
  const path = join(dir, name);
  await writeFile(path, content);
  return { tracker: new FileTracker({ path }, STATES, { now: () => NOW }), path };
}

/** Asserts the file still starts with `before` and ends with `after`, byte for byte, and returns what is between. */
async function middle(path: string, before: Buffer, after: Buffer): Promise<string> {
  const now = await readFile(path);
  expect(now.subarray(0, before.length).equals(before)).toBe(true);
  expect(now.subarray(now.length - after.length).equals(after)).toBe(true);
  return now.subarray(before.length, now.length - after.length).toString('utf8');
}

type Write = (tracker: FileTracker) => Promise<void>;

const WRITES: [string, Write][] = [
  ['a transition', (t) => t.transitionIssue('id-1', 'In Progress')],
  ['a comment', (t) => t.commentIssue('id-1', 'line one\nline "two"')],
  ['an added label', (t) => t.addLabel('id-1', 'Needs Review')],
];

describe('JSON write-back keeps every byte outside the edited issue', () => {
  it.each(WRITES)(
    '%s leaves invalid UTF-8, big numbers, 1e3, repeated keys and spacing of the rest as they were',
    async (_, write) => {
      const issue =
        '{\r\n    "id": "id-1", "identifier": "T-1",\r\n    "title": "Edit me",\r\n    "state": "Todo",\r\n    "labels": ["Bug"]\r\n  }';
      const { before, edited, after } = jsonParts(issue);
      const { tracker, path } = await trackerOverBytes('issues.json', Buffer.concat([before, edited, after]));
      await write(tracker);
      const changed = await middle(path, before, after);
      expect(changed).not.toBe(issue);
      expect(
        changed.startsWith('{\r\n    "id": "id-1", "identifier": "T-1",\r\n    "title": "Edit me",\r\n'),
      ).toBe(true);
      const other = await tracker.fetchIssueById('id-2');
      expect(other.title).toBe('\uFFFD'.repeat(4));
    },
  );

  it('a transition replaces the bytes of the state value and nothing else, even in the edited issue', async () => {
    const issue = '{"id":"id-1","identifier":"T-1","title":"t","state" :\t"Todo" ,"n":1e3}';
    const { before, edited, after } = jsonParts(issue);
    const { tracker, path } = await trackerOverBytes('issues.json', Buffer.concat([before, edited, after]));
    await tracker.transitionIssue('id-1', 'Done');
    expect(await middle(path, before, after)).toBe(issue.replace('"Todo"', '"Done"'));
  });

  it('a new member or list item copies the spacing, indent and line endings around it', async () => {
    const issue =
      '{\r\n    "id": "id-1",\r\n    "identifier": "T-1",\r\n    "title": "t",\r\n    "state": "Todo"\r\n  }';
    const { before, edited, after } = jsonParts(issue);
    const { tracker, path } = await trackerOverBytes('issues.json', Buffer.concat([before, edited, after]));
    await tracker.addLabel('id-1', 'a');
    await tracker.addLabel('id-1', 'b');
    expect(await middle(path, before, after)).toBe(
      '{\r\n    "id": "id-1",\r\n    "identifier": "T-1",\r\n    "title": "t",\r\n    "state": "Todo",\r\n' +
        '    "labels": [\r\n      "a",\r\n      "b"\r\n    ]\r\n  }',
    );
  });

  it('an issue written on one line gets its comment on that line', async () => {
    const issue = '{"id": "id-1", "identifier": "T-1", "title": "t", "state": "Todo", "comments": null}';
    const { before, edited, after } = jsonParts(issue);
    const { tracker, path } = await trackerOverBytes('issues.json', Buffer.concat([before, edited, after]));
    await tracker.commentIssue('id-1', 'hi');
    expect(await middle(path, before, after)).toBe(
      '{"id": "id-1", "identifier": "T-1", "title": "t", "state": "Todo", "comments": ' +
        `[{"id": "c-1", "author": "orchestrator", "body": "hi", "created_at": "${NOW.toISOString()}"}]}`,
    );
  });

  it('a BOM and a missing final newline stay as they were', async () => {
    const original = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      bytes('[{"id":"id-1","identifier":"T-1","title":"t","state":"Todo"}]'),
    ]);
    const { tracker, path } = await trackerOverBytes('issues.json', original);
    await tracker.transitionIssue('id-1', 'Done');
    const now = await readFile(path);
    expect(now.equals(Buffer.from(original.toString('utf8').replace('Todo', 'Done'), 'utf8'))).toBe(true);
  });
});

describe('YAML write-back keeps every byte outside the edited issue', () => {
  it.each(WRITES)(
    '%s leaves numbers, quoting, comments and spacing of the rest as they were',
    async (_, write) => {
      const issue =
        '  - id: id-1\n    identifier: T-1\n    title:   "Edit me"\n    state: Todo   # moved by the service\n';
      const { before, edited, after } = yamlParts(issue);
      const { tracker, path } = await trackerOverBytes('issues.yaml', Buffer.concat([before, edited, after]));
      await write(tracker);
      const changed = await middle(path, before, after);
      expect(changed).not.toBe(issue);
      expect(changed.startsWith('  - id: id-1\n    identifier: T-1\n    title:   "Edit me"\n')).toBe(true);
      expect((await tracker.fetchIssueById('id-2')).title).toBe('folded text');
    },
  );

  it('a label on a flow-style issue is added inside its braces', async () => {
    const issue = '  - {id: id-1, identifier: T-1, title: t, state: Todo}\n';
    const { before, edited, after } = yamlParts(issue);
    const { tracker, path } = await trackerOverBytes('issues.yaml', Buffer.concat([before, edited, after]));
    await tracker.addLabel('id-1', 'x');
    await tracker.addLabel('id-1', 'y');
    expect(await middle(path, before, after)).toBe(
      '  - {id: id-1, identifier: T-1, title: t, state: Todo, labels: [x, y]}\n',
    );
  });

  it('an empty `comments: null # none yet` becomes the list, and its trailing comment stays on the key line', async () => {
    const issue =
      "  - id: id-1\n    identifier: T-1\n    title: t\n    state: 'Todo'\n    comments: null # none yet\n";
    const { before, edited, after } = yamlParts(issue);
    const { tracker, path } = await trackerOverBytes('issues.yaml', Buffer.concat([before, edited, after]));
    await tracker.commentIssue('id-1', "it's done");
    await tracker.transitionIssue('id-1', 'Human Review');
    expect(await middle(path, before, after)).toBe(
      "  - id: id-1\n    identifier: T-1\n    title: t\n    state: 'Human Review'\n    comments: # none yet\n" +
        `      - id: c-1\n        author: orchestrator\n        body: it's done\n        created_at: ${NOW.toISOString()}\n`,
    );
  });

  it('a state that is not safe unquoted is written double-quoted', async () => {
    const states = { ...STATES, activeStates: ['Todo', 'Waiting: on #ops'] };
    const issue = '  - {id: id-1, identifier: T-1, title: t, state: Todo}\n';
    const { before, edited, after } = yamlParts(issue);
    const dir = await tempDir();
    const path = join(dir, 'issues.yaml');
    await writeFile(path, Buffer.concat([before, edited, after]));
    const tracker = new FileTracker({ path }, states);
    await tracker.transitionIssue('id-1', 'waiting: on #ops');
    expect(await middle(path, before, after)).toBe(
      '  - {id: id-1, identifier: T-1, title: t, state: "Waiting: on #ops"}\n',
    );
    expect((await tracker.fetchIssueById('id-1')).state).toBe('Waiting: on #ops');
  });
});

describe('writes the writer cannot make exactly are refused before writing', () => {
  async function expectRefused(write: Promise<void>, path: string, original: Buffer): Promise<void> {
    const error = await write.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(IssuesFileError);
    expect((error as TrackerError).kind).toBe('tracker_payload_error');
    expect((error as IssuesFileError).code).toBe('file.unpreservable');
    expect((await readFile(path)).equals(original)).toBe(true);
    expect(await readdir(join(path, '..'))).toHaveLength(1);
  }

  it('a YAML file holding invalid UTF-8 is refused as file.unpreservable, not re-encoded', async () => {
    const original = Buffer.concat([
      bytes('- {id: id-1, identifier: T-1, title: t, state: Todo}\n- {id: id-2, identifier: T-2, title: "'),
      INVALID_UTF8,
      bytes('", state: Todo}\n'),
    ]);
    const { tracker, path } = await trackerOverBytes('issues.yaml', original);
    await expectRefused(tracker.transitionIssue('id-1', 'Done'), path, original);
  });

  it('a YAML issue carrying an anchor that other nodes may share is refused', async () => {
    const original = bytes(
      'issues:\n  - &first {id: id-1, identifier: T-1, title: t, state: Todo}\ncopy: *first\n',
    );
    const { tracker, path } = await trackerOverBytes('issues.yaml', original);
    await expectRefused(tracker.addLabel('id-1', 'x'), path, original);
  });

  it('a YAML state written as a block scalar is refused rather than re-laid out', async () => {
    const original = bytes('- id: id-1\n  identifier: T-1\n  title: t\n  state: |-\n    Todo\n');
    const { tracker, path } = await trackerOverBytes('issues.yaml', original);
    await expectRefused(tracker.transitionIssue('id-1', 'Done'), path, original);
  });
});

describe('JSON edit properties', () => {
  const extras = fc.dictionary(
    fc
      .string({ minLength: 1, maxLength: 6 })
      .filter(
        (k) =>
          ![
            'id',
            'identifier',
            'title',
            'state',
            'labels',
            'comments',
            'blocked_by',
            'blockedBy',
            'parent',
            'priority',
            'description',
            'branch_name',
            'branchName',
            'url',
            'assignee',
            'issue_type',
            'issueType',
            'created_at',
            'createdAt',
            'updated_at',
            'updatedAt',
          ].includes(k),
      ),
    fc.jsonValue({ maxDepth: 2 }),
    { maxKeys: 3 },
  );
  const file = fc.record({
    issues: fc.array(
      fc.record({
        extra: extras,
        labels: fc.option(fc.array(fc.constantFrom('a', 'b', 'ü'), { maxLength: 2 }), { nil: undefined }),
        comments: fc.constantFrom(undefined, null, [], [{ id: 'c-1', body: 'x' }]),
      }),
      { minLength: 1, maxLength: 4 },
    ),
    indent: fc.constantFrom(0, 2, '\t'),
    crlf: fc.boolean(),
    wrapped: fc.boolean(),
  });
  const edit = fc.oneof(
    fc.record({ type: fc.constant('state' as const), state: fc.constantFrom('Done', 'x"y', 'ünï\u2028') }),
    fc.record({ type: fc.constant('label' as const), label: fc.constantFrom('new', 'with space', '"q"') }),
    fc.record({
      type: fc.constant('comment' as const),
      comment: fc.record({
        id: fc.constant('c-9'),
        author: fc.constant('orchestrator'),
        body: fc.string({ maxLength: 8 }),
        created_at: fc.constant('2025-01-01T00:00:00.000Z'),
      }),
    }),
  );

  it('any edit of any issue is made (never refused) and changes no byte outside that issue', () => {
    fc.assert(
      fc.property(file, edit, fc.nat(), (shape, change, pick) => {
        const issues = shape.issues.map((issue, i) => {
          const raw: Record<string, unknown> = { ...issue.extra, ...rawIssue(i) };
          if (issue.labels !== undefined) raw.labels = issue.labels;
          if (issue.comments !== undefined) raw.comments = issue.comments;
          return raw;
        });
        let text = JSON.stringify(shape.wrapped ? { head: 1e21, issues } : issues, null, shape.indent);
        if (shape.crlf) text = text.replace(/\n/g, '\r\n');
        const parsed = parseIssuesText(text, 'f.json', 'json');
        if (!parsed.ok) throw parsed.error;
        const index = pick % issues.length;
        if (change.type === 'label' && parsed.value.issues[index]?.labels.includes(change.label)) return;
        const result = applyEdit(parsed.value, index, change, 'f.json');
        if (!result.ok) throw result.error;
        const spans = parsed.value.spans as Float64Array;
        const before = parsed.value.bytes;
        const after = result.parsed.bytes;
        const start = spans[2 * index] as number;
        const tail = before.length - (spans[2 * index + 1] as number);
        expect(Buffer.from(after.subarray(0, start)).equals(before.subarray(0, start))).toBe(true);
        expect(
          Buffer.from(after.subarray(after.length - tail)).equals(before.subarray(before.length - tail)),
        ).toBe(true);
        const reread = parseIssues(after, 'f.json', 'json');
        if (!reread.ok) throw reread.error;
        expect(reread.value.issues).toEqual(result.parsed.issues);
        expect(reread.value.lines).toEqual(result.parsed.lines);
        expect(Array.from(reread.value.spans ?? [])).toEqual(Array.from(result.parsed.spans ?? []));
      }),
      { numRuns: 400 },
    );
  });
});
