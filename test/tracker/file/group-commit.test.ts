/**
 * Group commit (issue #20): edits that arrive while a write of the issues file is under way
 * share the next write, so the queue of writes does not grow with the handoff rate. Each
 * caller still hears back only once its own edit is on disk; an edit that fails alone fails
 * alone, a write that fails fails its whole batch, and outside edits are never written over.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TrackerError } from '../../../src/domain/errors.js';
import { FileTracker, type IssuesFileAccess, NODE_FILE_ACCESS } from '../../../src/tracker/file/adapter.js';
import type { FileStamp } from '../../../src/tracker/file/freshness.js';
import { GroupCommit } from '../../../src/tracker/file/group-commit.js';
import { IssuesFileError } from '../../../src/tracker/file/parse.js';
import { NOW, rawIssue, STATES, trackerOver } from './helpers.js';

/** A whole second, as a file system with one-second timestamps stamps it. */
const T_MS = Date.UTC(2025, 2, 4, 5, 6, 7);

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** The issues as they are on disk right now (read synchronously, so nothing can land in between). */
function onDisk(path: string): { id: string; state: string; comments?: { body: string }[] }[] {
  return JSON.parse(readFileSync(path, 'utf8'));
}

function stateOnDisk(path: string, id: string): string | undefined {
  return onDisk(path).find((issue) => issue.id === id)?.state;
}

/** The real file system, except that every read of the file waits until the test lets it go. */
function heldReads(): IssuesFileAccess & { nextRead(): Promise<() => void> } {
  const held: (() => void)[] = [];
  let wake: (() => void) | null = null;
  return {
    stamp: (path) => NODE_FILE_ACCESS.stamp(path),
    async read(path) {
      await new Promise<void>((release) => {
        held.push(release);
        wake?.();
      });
      return NODE_FILE_ACCESS.read(path);
    },
    /** The release of the next read asked for, once it is asked for. */
    async nextRead() {
      while (held.length === 0) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
      return held.shift() as () => void;
    },
  };
}

async function heldTracker(issues: unknown[]) {
  const { path } = await trackerOver('issues.json', json(issues));
  const files = heldReads();
  return { tracker: new FileTracker({ path }, STATES, { now: () => NOW, files }), files, path };
}

/** `chattr +i` on the directory: nobody, root included, can create the temp file a write needs. */
function immutable(dir: string, on: boolean): boolean {
  return spawnSync('chattr', [on ? '+i' : '-i', dir]).status === 0;
}
const CAN_CHATTR = process.getuid?.() === 0;
if (!CAN_CHATTR && process.env.CI === undefined)
  console.warn('skipping the failed-write batch test: needs root for chattr');

describe('group commit of file tracker edits', () => {
  it('fifty transitions at once take one write, and each resolves only once its edit is on disk', async () => {
    const issues = Array.from({ length: 50 }, (_, i) => rawIssue(i + 1));
    const { tracker, path } = await trackerOver('issues.json', json(issues));
    const seenAtResolve: (string | undefined)[] = [];
    await Promise.all(
      issues.map((_, i) =>
        tracker.transitionIssue(`id-${i + 1}`, 'Done').then(() => {
          seenAtResolve[i] = stateOnDisk(path, `id-${i + 1}`);
        }),
      ),
    );
    expect(seenAtResolve).toEqual(issues.map(() => 'Done'));
    expect(onDisk(path).map((issue) => issue.state)).toEqual(issues.map(() => 'Done'));
    // One write per edit (50) was the queue that grew with the handoff rate.
    expect(tracker.stats).toEqual({ writes: 1, edits: 50 });
  });

  it('edits that arrive while a write is under way all go in the next write, and wait for it', async () => {
    const issues = Array.from({ length: 31 }, (_, i) => rawIssue(i + 1));
    const { tracker, files, path } = await heldTracker(issues);
    const first = tracker.transitionIssue('id-1', 'Done');
    const releaseFirst = await files.nextRead();
    const resolved = new Set<string>();
    const later = issues.slice(1).map((_, i) => {
      const id = `id-${i + 2}`;
      return tracker.transitionIssue(id, 'In Progress').then(() => {
        expect(stateOnDisk(path, id)).toBe('In Progress');
        resolved.add(id);
      });
    });
    releaseFirst();
    await first;
    expect(stateOnDisk(path, 'id-1')).toBe('Done');
    // The second batch is reading the file: none of its edits is written, so none has resolved.
    const releaseSecond = await files.nextRead();
    expect(resolved.size).toBe(0);
    expect(onDisk(path).filter((issue) => issue.state === 'In Progress')).toEqual([]);
    releaseSecond();
    await Promise.all(later);
    expect(resolved.size).toBe(30);
    expect(tracker.stats).toEqual({ writes: 2, edits: 31 });
  });

  it('edits of one issue are written in the order they were asked for', async () => {
    const { tracker, path } = await trackerOver('issues.json', json([rawIssue(1)]));
    const bodies = Array.from({ length: 20 }, (_, i) => `comment ${i}`);
    await Promise.all([
      tracker.transitionIssue('id-1', 'In Progress'),
      ...bodies.map((body) => tracker.commentIssue('id-1', body)),
      tracker.transitionIssue('id-1', 'Human Review'),
    ]);
    const [issue] = onDisk(path);
    expect(issue?.state).toBe('Human Review');
    expect(issue?.comments?.map((c) => c.body)).toEqual(bodies);
    expect((await tracker.fetchIssueComments('id-1')).map((c) => c.id)).toEqual(
      bodies.map((_, i) => `c-${i + 1}`),
    );
    expect(tracker.stats.writes).toBe(1);
  });

  it('an edit of an unknown issue fails alone, with the error it always had; the rest of its batch is written', async () => {
    const issues = Array.from({ length: 5 }, (_, i) => rawIssue(i + 1));
    const { tracker, path } = await trackerOver('issues.json', json(issues));
    const results = await Promise.allSettled([
      tracker.transitionIssue('id-1', 'Done'),
      tracker.transitionIssue('nope', 'Done'),
      tracker.transitionIssue('id-2', 'Done'),
      tracker.commentIssue('nope', 'x'),
      tracker.addLabel('id-3', 'bug'),
      tracker.transitionIssue('id-4', 'Done'),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    for (const r of [results[1], results[3]]) {
      const reason = (r as PromiseRejectedResult).reason;
      expect(reason).toBeInstanceOf(TrackerError);
      expect((reason as TrackerError).kind).toBe('tracker_not_found');
      expect((reason as TrackerError).message).toContain('"nope"');
    }
    expect(onDisk(path).map((issue) => issue.state)).toEqual(['Done', 'Done', 'Todo', 'Done', 'Todo']);
    expect(JSON.parse(await readFile(path, 'utf8'))[2].labels).toEqual(['bug']);
    expect(tracker.stats).toEqual({ writes: 1, edits: 4 });
  });

  it('an edit refused as unpreservable fails alone; the others of its batch are written', async () => {
    const original = [
      '- id: id-1\n  identifier: T-1\n  title: t\n  state: |-\n    Todo\n',
      '- {id: id-2, identifier: T-2, title: t, state: Todo}\n',
      '- {id: id-3, identifier: T-3, title: t, state: Todo}\n',
    ].join('');
    const { tracker, path } = await trackerOver('issues.yaml', original);
    const results = await Promise.allSettled([
      tracker.transitionIssue('id-2', 'Done'),
      tracker.transitionIssue('id-1', 'Done'),
      tracker.transitionIssue('id-3', 'Done'),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const reason = (results[1] as PromiseRejectedResult).reason;
    expect(reason).toBeInstanceOf(IssuesFileError);
    expect((reason as IssuesFileError).code).toBe('file.unpreservable');
    expect(await readFile(path, 'utf8')).toBe(original.replaceAll('state: Todo}', 'state: Done}'));
    expect(tracker.stats).toEqual({ writes: 1, edits: 2 });
  });

  it.skipIf(!CAN_CHATTR && process.env.CI === undefined)(
    'a write that fails rejects every caller of its batch and leaves the file as it was; the next batch writes once it can',
    async () => {
      const issues = Array.from({ length: 6 }, (_, i) => rawIssue(i + 1));
      const { tracker, files, path } = await heldTracker(issues);
      const dir = dirname(path);
      const original = await readFile(path, 'utf8');
      const batch = issues.slice(0, 3).map((_, i) => tracker.transitionIssue(`id-${i + 1}`, 'Done'));
      const releaseFirst = await files.nextRead();
      // Queued behind the failing batch: they go in the next write.
      const next = issues.slice(3).map((_, i) => tracker.transitionIssue(`id-${i + 4}`, 'Done'));
      expect(immutable(dir, true)).toBe(true);
      try {
        releaseFirst();
        const results = await Promise.allSettled(batch);
        for (const r of results) {
          expect(r.status).toBe('rejected');
          const reason = (r as PromiseRejectedResult).reason as TrackerError;
          expect(reason.kind).toBe('tracker_transport_error');
          expect(reason.message).toContain(`cannot write ${path}`);
        }
        expect(await readFile(path, 'utf8')).toBe(original);
        expect(await readdir(dir)).toEqual(['issues.json']);
      } finally {
        expect(immutable(dir, false)).toBe(true);
      }
      (await files.nextRead())();
      await Promise.all(next);
      expect(onDisk(path).map((issue) => issue.state)).toEqual([
        'Todo',
        'Todo',
        'Todo',
        'Done',
        'Done',
        'Done',
      ]);
      expect(tracker.stats).toEqual({ writes: 1, edits: 3 });
    },
  );

  it('a file edited by someone else between two batches is read again, and the edit is kept', async () => {
    const issues = [rawIssue(1), rawIssue(2), rawIssue(3)];
    const { tracker, files, path } = await heldTracker(issues);
    const first = tracker.transitionIssue('id-1', 'Done');
    (await files.nextRead())();
    await first;
    const second = tracker.transitionIssue('id-3', 'Done');
    const releaseSecond = await files.nextRead();
    // After our write, before the next batch reads: an operator renames issue 2.
    await writeFile(path, (await readFile(path, 'utf8')).replace('"Issue 2"', '"Renamed"'));
    releaseSecond();
    await second;
    const after = JSON.parse(await readFile(path, 'utf8'));
    expect(after.map((i: { state: string }) => i.state)).toEqual(['Done', 'Todo', 'Done']);
    expect(after[1].title).toBe('Renamed');
  });

  it('a same-size outside edit in the same coarse timestamp tick as our write is kept by the next batch', async () => {
    const { path } = await trackerOver('issues.json', json([rawIssue(1), rawIssue(2), rawIssue(3)]));
    // A file system with one-second timestamps and no ctime: the stamp cannot tell, only the bytes can.
    const coarse: IssuesFileAccess = {
      async stamp(file) {
        return coarseStamp((await readFile(file)).length);
      },
      async read(file) {
        const bytes = await readFile(file);
        return { bytes, stamp: coarseStamp(bytes.length) };
      },
    };
    const tracker = new FileTracker({ path }, STATES, { now: () => new Date(T_MS + 60_000), files: coarse });
    await Promise.all([tracker.transitionIssue('id-1', 'Done'), tracker.addLabel('id-1', 'x')]);
    await writeFile(path, (await readFile(path, 'utf8')).replace('"Issue 2"', '"Issue X"'));
    await Promise.all([tracker.transitionIssue('id-3', 'Done'), tracker.commentIssue('id-3', 'hi')]);
    const after = JSON.parse(await readFile(path, 'utf8'));
    expect(after[1].title).toBe('Issue X');
    expect(after.map((i: { state: string }) => i.state)).toEqual(['Done', 'Todo', 'Done']);
    expect(tracker.stats).toEqual({ writes: 2, edits: 4 });
  });

  it('a read waits for the edits asked for before it, so it never misses one of its own writes', async () => {
    const { tracker } = await trackerOver('issues.json', json([rawIssue(1), rawIssue(2)]));
    const transition = tracker.transitionIssue('id-1', 'Done');
    const candidates = tracker.fetchCandidateIssues();
    expect((await candidates).map((issue) => issue.id)).toEqual(['id-2']);
    await transition;
  });
});

function coarseStamp(size: number): FileStamp {
  const ns = BigInt(T_MS) * 1_000_000n;
  return { dev: 1n, ino: 2n, sizeBytes: BigInt(size), mtimeNs: ns, ctimeNs: ns };
}

describe('GroupCommit', () => {
  it('one batch at a time, in arrival order; a failed batch fails only its own callers', async () => {
    const batches: string[][] = [];
    let failNext = true;
    const commits = new GroupCommit<string>(async (edits) => {
      batches.push([...edits]);
      await new Promise((resolve) => setTimeout(resolve, 5));
      if (failNext) {
        failNext = false;
        throw new Error('disk full');
      }
      return edits.map((edit) => (edit === 'bad' ? new Error(`refused ${edit}`) : undefined));
    });
    const first = commits.submit('a');
    await Promise.resolve();
    await Promise.resolve();
    const rest = ['b', 'bad', 'c'].map((edit) => commits.submit(edit));
    const settled = commits.settled();
    const results = await Promise.allSettled([first, ...rest]);
    await settled;
    expect(batches).toEqual([['a'], ['b', 'bad', 'c']]);
    expect(results.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : 'ok'))).toEqual([
      'disk full',
      'ok',
      'refused bad',
      'ok',
    ]);
  });
});
