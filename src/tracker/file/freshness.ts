/**
 * When a cached read of the issues file can be trusted without reading the file again.
 * Re-reading and re-parsing a large file on every call is what made a 50,000-issue file
 * cost a second per lookup; but a cache must never hide an operator's edit. A stat stamp
 * (device, inode, size, mtime, ctime, in nanoseconds) changes with every write, except
 * when a second write lands in the same timestamp tick as the first (file systems stamp
 * with a coarse clock: a few milliseconds on Linux, 1 s or 2 s on some). So a read taken
 * while the file's ctime was that recent is "racy", like git's racily clean index entries:
 * it is trusted only after the bytes are compared again, until a read finds the stamp old.
 */
import type { BigIntStats } from 'node:fs';

/** What a stat says about one version of the file; ctime cannot be set by tools that restore mtime. */
export interface FileStamp {
  dev: bigint;
  ino: bigint;
  sizeBytes: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
}

/** A cached read: the stamp of the file it came from (null = unknown, e.g. after our own write) and whether it was racy. */
export interface CachedStamp {
  stamp: FileStamp | null;
  racy: boolean;
}

/**
 * A change within this long of a read might share its timestamp with the version read: the
 * coarsest common granularity (FAT's 2 s) plus a margin for the file system's clock lagging ours.
 */
export const RACY_WINDOW_MS = 3_000;

/** The stamp of a `stat(..., { bigint: true })`. */
export function stampOf(stats: BigIntStats): FileStamp {
  return {
    dev: stats.dev,
    ino: stats.ino,
    sizeBytes: stats.size,
    mtimeNs: stats.mtimeNs,
    ctimeNs: stats.ctimeNs,
  };
}

/** Whether a read of a file with `stamp`, begun at `readAtMs` (epoch ms), could miss a same-tick change. */
export function isRacy(stamp: FileStamp, readAtMs: number): boolean {
  const changedMs = Math.max(Number(stamp.ctimeNs / 1_000_000n), Number(stamp.mtimeNs / 1_000_000n));
  return readAtMs - changedMs < RACY_WINDOW_MS;
}

/** Whether the cached read still describes the file whose stamp is now `current`; else read it again. */
export function canReuse(cached: CachedStamp, current: FileStamp): boolean {
  return !cached.racy && cached.stamp !== null && sameStamp(cached.stamp, current);
}

function sameStamp(a: FileStamp, b: FileStamp): boolean {
  return (
    a.dev === b.dev &&
    a.ino === b.ino &&
    a.sizeBytes === b.sizeBytes &&
    a.mtimeNs === b.mtimeNs &&
    a.ctimeNs === b.ctimeNs
  );
}
