import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TrackerError, type TrackerErrorKind } from '../../../src/domain/errors.js';
import { FileTracker } from '../../../src/tracker/file/adapter.js';
import { NOW, rawIssue, STATES, tempDir, trackerOver } from './helpers.js';

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

async function rejection(promise: Promise<unknown>): Promise<TrackerError> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(error instanceof TrackerError)) throw new Error(`expected a TrackerError, got ${String(error)}`);
  return error;
}

async function expectKind(promise: Promise<unknown>, kind: TrackerErrorKind): Promise<TrackerError> {
  const error = await rejection(promise);
  expect(error.kind).toBe(kind);
  return error;
}

describe('file tracker reads', () => {
  it('an edit made by hand is seen on the very next call (nothing is cached)', async () => {
    const { tracker, path } = await trackerOver('issues.json', json([rawIssue(1)]));
    expect((await tracker.fetchCandidateIssues()).map((i) => i.id)).toEqual(['id-1']);
    await writeFile(path, json([rawIssue(1, { state: 'Done' }), rawIssue(2)]));
    expect((await tracker.fetchCandidateIssues()).map((i) => i.id)).toEqual(['id-2']);
  });

  it('a missing file is a payload error that names the path', async () => {
    const { tracker, path } = await trackerOver('issues.json', '[]');
    await rm(path);
    const error = await expectKind(tracker.fetchCandidateIssues(), 'tracker_payload_error');
    expect(error.message).toContain(path);
    await expectKind(tracker.commentIssue('id-1', 'x'), 'tracker_payload_error');
  });

  it('a broken file is a payload error naming the path and line, never an empty candidate list', async () => {
    const { tracker, path } = await trackerOver('issues.json', '[\n  {"id": "1",\n  ]\n');
    const error = await expectKind(tracker.fetchCandidateIssues(), 'tracker_payload_error');
    expect(error.message).toContain(`${path}:3:`);
  });

  it('with no active states configured every non-terminal issue is a candidate', async () => {
    const issues = [rawIssue(1, { state: 'Anything' }), rawIssue(2, { state: 'done' }), rawIssue(3)];
    const { tracker } = await trackerOver('issues.json', json(issues), { ...STATES, activeStates: [] });
    expect((await tracker.fetchCandidateIssues()).map((i) => i.id)).toEqual(['id-1', 'id-3']);
  });

  it('comments of an unknown issue are tracker_not_found, not []', async () => {
    const { tracker } = await trackerOver('issues.json', json([rawIssue(1)]));
    await expectKind(tracker.fetchIssueComments('nope'), 'tracker_not_found');
  });
});

describe('file tracker transitions', () => {
  it('a transition keeps fields the tracker does not know, key order and layout, byte for byte', async () => {
    const original = json({
      schema: 3,
      issues: [
        {
          custom: { z: 1, a: [1, 2, { deep: 'yes' }] },
          state: 'Todo',
          id: 'id-1',
          title: 'Keep me',
          identifier: 'T-1',
          estimate: 2.5,
          labels: ['Bug'],
          x_unknown: null,
        },
        rawIssue(2),
      ],
      footer: 'kept',
    });
    const { tracker, path } = await trackerOver('issues.json', original);
    await tracker.transitionIssue('id-1', 'In Progress');
    const expected = original.replace('"state": "Todo"', '"state": "In Progress"');
    expect(expected).not.toBe(original);
    expect(await readFile(path, 'utf8')).toBe(expected);
  });

  it('a transition keeps tab indentation and CRLF line endings of a JSON file', async () => {
    const original = JSON.stringify([rawIssue(1)], null, '\t').replace(/\n/g, '\r\n');
    const { tracker, path } = await trackerOver('issues.json', original);
    await tracker.transitionIssue('id-1', 'Done');
    expect(await readFile(path, 'utf8')).toBe(original.replace('"Todo"', '"Done"'));
  });

  it('a transition keeps comments, unknown fields and key order of a YAML file', async () => {
    const original = [
      '# Team backlog: edit freely, the orchestrator re-reads it on every tick',
      'owner: platform # who to ask',
      'issues:',
      '  - identifier: T-1',
      '    id: "id-1"',
      '    state: Todo # moved by the orchestrator',
      '    title: First',
      '    estimate: {points: 3, confidence: low}',
      '    labels: [bug, backend]',
      '  # the next one is blocked',
      '  - id: id-2',
      '    identifier: T-2',
      '    title: Second',
      '    state: Todo',
      '    blocked_by:',
      '      - identifier: T-1',
      '',
    ].join('\n');
    const { tracker, path } = await trackerOver('issues.yaml', original);
    await tracker.transitionIssue('id-1', 'human review');
    expect(await readFile(path, 'utf8')).toBe(original.replace('state: Todo #', 'state: Human Review #'));
  });

  it('a transition writes the configured spelling of the state, whatever casing was asked for', async () => {
    const { tracker } = await trackerOver('issues.json', json([rawIssue(1)]));
    await tracker.transitionIssue('id-1', 'IN PROGRESS');
    expect(await tracker.fetchIssueStatesByIds(['id-1'])).toEqual([
      { id: 'id-1', identifier: 'T-1', state: 'In Progress' },
    ]);
  });

  it('handoff, in-progress and blocked states are valid targets even outside active and terminal', async () => {
    const states = { ...STATES, activeStates: ['Todo'], blockedState: 'Blocked' };
    const { tracker } = await trackerOver('issues.json', json([rawIssue(1)]), states);
    for (const state of ['Human Review', 'In Progress', 'Blocked']) {
      await tracker.transitionIssue('id-1', state);
      expect((await tracker.fetchIssueById('id-1')).state).toBe(state);
    }
  });

  it('a transition to an unconfigured state is a payload error and does not touch the file', async () => {
    const original = json([rawIssue(1)]);
    const { tracker, path } = await trackerOver('issues.json', original);
    const error = await expectKind(tracker.transitionIssue('id-1', 'Limbo'), 'tracker_payload_error');
    expect(error.message).toContain('Limbo');
    expect(await readFile(path, 'utf8')).toBe(original);
  });

  it('with no active or terminal states any non-empty state is accepted, but never an empty one', async () => {
    const states = { ...STATES, activeStates: [], terminalStates: [] };
    const { tracker } = await trackerOver('issues.json', json([rawIssue(1)]), states);
    await tracker.transitionIssue('id-1', 'Whatever Works');
    expect((await tracker.fetchIssueById('id-1')).state).toBe('Whatever Works');
    await expectKind(tracker.transitionIssue('id-1', '  '), 'tracker_payload_error');
  });

  it('a transition to the current state does not rewrite the file', async () => {
    const { tracker, path } = await trackerOver('issues.json', json([rawIssue(1)]));
    const before = await stat(path);
    await tracker.transitionIssue('id-1', 'todo');
    expect((await stat(path)).ino).toBe(before.ino);
  });

  it('a write to a corrupt file is a payload error and leaves the file as it was', async () => {
    const broken = '[{"id": "id-1", "identifier": "T-1", "title": "t", "state": "Todo"},]\n';
    const { tracker, path } = await trackerOver('issues.json', broken);
    await expectKind(tracker.transitionIssue('id-1', 'Done'), 'tracker_payload_error');
    expect(await readFile(path, 'utf8')).toBe(broken);
  });
});

describe('file tracker comments and labels', () => {
  it('a comment creates the comments list when the issue had none and records author and time', async () => {
    const { tracker, path } = await trackerOver('issues.json', json([rawIssue(1, { comments: null })]));
    await tracker.commentIssue('id-1', 'Started work');
    const stored = JSON.parse(await readFile(path, 'utf8'));
    expect(stored[0].comments).toEqual([
      { id: 'c-1', author: 'orchestrator', body: 'Started work', created_at: NOW.toISOString() },
    ]);
    expect(Object.keys(stored[0])).toEqual(['id', 'identifier', 'title', 'state', 'comments']);
  });

  it('a new comment id never repeats an existing one', async () => {
    const existing = [
      { id: 'c-2', author: 'a', body: 'x' },
      { id: 'free-form', author: 'b', body: 'y' },
    ];
    const { tracker } = await trackerOver('issues.json', json([rawIssue(1, { comments: existing })]));
    await tracker.commentIssue('id-1', 'new');
    const ids = (await tracker.fetchIssueComments('id-1')).map((c) => c.id);
    expect(ids).toEqual(['c-2', 'free-form', 'c-3']);
  });

  it('twenty comments fired at once all land (no write loses another)', async () => {
    const { tracker } = await trackerOver(
      'issues.yaml',
      'issues:\n  - {id: id-1, identifier: T-1, title: t, state: Todo}\n',
    );
    const bodies = Array.from({ length: 20 }, (_, i) => `comment ${i}`);
    await Promise.all(bodies.map((body) => tracker.commentIssue('id-1', body)));
    const comments = await tracker.fetchIssueComments('id-1');
    expect(comments.map((c) => c.body).sort()).toEqual([...bodies].sort());
    expect(new Set(comments.map((c) => c.id)).size).toBe(20);
  });

  it('writes from two tracker instances over one file in one process do not lose each other', async () => {
    const { tracker, path } = await trackerOver('issues.json', json([rawIssue(1), rawIssue(2)]));
    const other = new FileTracker({ path }, STATES);
    await Promise.all([
      tracker.transitionIssue('id-1', 'Done'),
      other.addLabel('id-2', 'a'),
      tracker.commentIssue('id-2', 'one'),
      other.commentIssue('id-1', 'two'),
      other.transitionIssue('id-2', 'In Progress'),
      tracker.addLabel('id-1', 'b'),
    ]);
    const one = await tracker.fetchIssueById('id-1');
    const two = await tracker.fetchIssueById('id-2');
    expect([one.state, one.labels, one.comments?.map((c) => c.body)]).toEqual(['Done', ['b'], ['two']]);
    expect([two.state, two.labels, two.comments?.map((c) => c.body)]).toEqual([
      'In Progress',
      ['a'],
      ['one'],
    ]);
  });

  it('an added label is lowercased, appended in place and never duplicated', async () => {
    const { tracker, path } = await trackerOver('issues.json', json([rawIssue(1, { labels: ['Bug'] })]));
    await tracker.addLabel('id-1', 'Needs-Review');
    const afterFirst = await readFile(path, 'utf8');
    await tracker.addLabel('id-1', 'needs-review');
    await tracker.addLabel('id-1', 'BUG');
    expect(await readFile(path, 'utf8')).toBe(afterFirst);
    expect(JSON.parse(afterFirst)[0].labels).toEqual(['Bug', 'needs-review']);
    await expectKind(tracker.addLabel('id-1', ' '), 'tracker_payload_error');
  });

  it('a YAML comment is appended to the existing block list in its style', async () => {
    const original =
      'issues:\n  - id: id-1\n    identifier: T-1\n    title: t\n    state: Todo\n    comments:\n      - id: c-1\n        author: ann\n        body: hi\n';
    const { tracker, path } = await trackerOver('issues.yaml', original);
    await tracker.commentIssue('id-1', 'next');
    expect(await readFile(path, 'utf8')).toBe(
      `${original}      - id: c-2\n        author: orchestrator\n        body: next\n        created_at: ${NOW.toISOString()}\n`,
    );
  });

  it('every write to an unknown id is tracker_not_found and leaves the file alone', async () => {
    const original = json([rawIssue(1)]);
    const { tracker, path } = await trackerOver('issues.json', original);
    await expectKind(tracker.transitionIssue('nope', 'Done'), 'tracker_not_found');
    await expectKind(tracker.commentIssue('nope', 'x'), 'tracker_not_found');
    await expectKind(tracker.addLabel('nope', 'x'), 'tracker_not_found');
    expect(await readFile(path, 'utf8')).toBe(original);
  });

  it('an issues file of another extension is written back in the format it was read in', async () => {
    const dir = await tempDir();
    const path = join(dir, 'issues.list');
    await writeFile(path, '- {id: id-1, identifier: T-1, title: t, state: Todo}\n');
    const tracker = new FileTracker({ path }, STATES);
    await tracker.addLabel('id-1', 'x');
    expect(await readFile(path, 'utf8')).toBe(
      '- {id: id-1, identifier: T-1, title: t, state: Todo, labels: [x]}\n',
    );
  });
});
