import { readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { FileTracker, type IssuesFileAccess } from '../../../src/tracker/file/adapter.js';
import { canReuse, type FileStamp, isRacy, RACY_WINDOW_MS } from '../../../src/tracker/file/freshness.js';
import { rawIssue, STATES, trackerOver } from './helpers.js';

const SECOND_NS = 1_000_000_000n;
/** 2025-03-04T05:06:07Z, on a whole second as a coarse file system would stamp it. */
const T_MS = Date.UTC(2025, 2, 4, 5, 6, 7);
const T_NS = BigInt(T_MS) * 1_000_000n;

function stamp(changes: Partial<FileStamp> = {}): FileStamp {
  return { dev: 1n, ino: 2n, sizeBytes: 300n, mtimeNs: T_NS, ctimeNs: T_NS, ...changes };
}

describe('change detection rule', () => {
  it('a read long after the last change is trusted while the stamp is unchanged', () => {
    const read = stamp();
    expect(isRacy(read, T_MS + RACY_WINDOW_MS + 1)).toBe(false);
    expect(canReuse({ stamp: read, racy: false }, stamp())).toBe(true);
  });

  it('a write within the same second as the read is seen: such a read is racy and never trusted on the stamp alone', () => {
    // One-second timestamps: a second write in the same second leaves size, inode and times unchanged.
    const read = stamp();
    expect(isRacy(read, T_MS + 900)).toBe(true);
    expect(canReuse({ stamp: read, racy: true }, stamp())).toBe(false);
  });

  it('a file stamped on FAT two-second ticks is racy for the whole tick', () => {
    expect(isRacy(stamp(), T_MS + 1_999)).toBe(true);
  });

  it('a timestamp ahead of our clock (a skewed or touched file) counts as racy', () => {
    expect(isRacy(stamp({ mtimeNs: T_NS + 3_600n * SECOND_NS }), T_MS + 10_000)).toBe(true);
  });

  it.each<[string, Partial<FileStamp>]>([
    ['size', { sizeBytes: 301n }],
    ['inode (replaced by rename)', { ino: 3n }],
    ['device', { dev: 9n }],
    ['mtime, by one nanosecond', { mtimeNs: T_NS + 1n }],
    ['ctime alone (mtime restored by a tool)', { ctimeNs: T_NS + SECOND_NS }],
  ])('a change of %s makes the file read again', (_, change) => {
    expect(canReuse({ stamp: stamp(), racy: false }, stamp(change))).toBe(false);
  });

  it('after a write of our own (stamp unknown) the file is read again, never trusted', () => {
    expect(canReuse({ stamp: null, racy: false }, stamp())).toBe(false);
  });
});

/**
 * File access that stamps like a file system with one-second timestamps and no ctime:
 * rewriting the file in place with the same size leaves the stamp exactly as it was.
 */
function coarseAccess(): IssuesFileAccess & { reads: number } {
  const access = {
    reads: 0,
    async stamp(path: string): Promise<FileStamp> {
      return stamp({ sizeBytes: BigInt((await readFile(path)).length) });
    },
    async read(path: string) {
      access.reads++;
      const bytes = await readFile(path);
      return { bytes, stamp: stamp({ sizeBytes: BigInt(bytes.length) }) };
    },
  };
  return access;
}

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

describe('file tracker change detection', () => {
  it('an in-place rewrite of the same size in the same second is seen on the next call', async () => {
    const { path } = await trackerOver('issues.json', json([rawIssue(1, { state: 'Todo' })]));
    const files = coarseAccess();
    const tracker = new FileTracker({ path }, STATES, { now: () => new Date(T_MS + 400), files });
    expect((await tracker.fetchIssueById('id-1')).state).toBe('Todo');
    await writeFile(path, json([rawIssue(1, { state: 'Done' })]));
    expect((await tracker.fetchIssueById('id-1')).state).toBe('Done');
  });

  it('an unchanged file whose stamp is old is not read again', async () => {
    const { path } = await trackerOver('issues.json', json([rawIssue(1), rawIssue(2)]));
    const files = coarseAccess();
    const tracker = new FileTracker({ path }, STATES, { now: () => new Date(T_MS + 60_000), files });
    await tracker.fetchCandidateIssues();
    await tracker.fetchIssueById('id-2');
    await tracker.fetchIssueStatesByIds(['id-1']);
    expect(files.reads).toBe(1);
  });

  it('right after a write of its own the tracker checks the bytes, so an outside edit in the same tick is seen', async () => {
    const { path } = await trackerOver('issues.json', json([rawIssue(1), rawIssue(2)]));
    const files = coarseAccess();
    const tracker = new FileTracker({ path }, STATES, { now: () => new Date(T_MS + 60_000), files });
    await tracker.transitionIssue('id-1', 'Done');
    // Same size, so the coarse stamp cannot tell; only the bytes can.
    const written = await readFile(path, 'utf8');
    await writeFile(path, written.replace('"Done"', '"Todo"'));
    expect((await tracker.fetchIssueById('id-1')).state).toBe('Todo');
  });

  it('concurrent reads of a changed file share one read', async () => {
    const { path } = await trackerOver('issues.json', json([rawIssue(1)]));
    const files = coarseAccess();
    const tracker = new FileTracker({ path }, STATES, { now: () => new Date(T_MS + 60_000), files });
    await Promise.all(Array.from({ length: 20 }, () => tracker.fetchIssueById('id-1')));
    expect(files.reads).toBe(1);
  });
});
