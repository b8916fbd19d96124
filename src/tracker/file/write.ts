/**
 * Crash-safe writes for the issues file. A plain overwrite that dies half-way
 * leaves a truncated file, which the next tick would read as a broken tracker; so a
 * write goes to a temp file beside the target, is flushed to disk, and renamed over
 * it. A process killed before the rename leaves its temp file behind; the names carry
 * the writer's pid, so the next tracker over the file removes those of dead writers.
 * Writes to one file are also queued, so two concurrent read-modify-write cycles in
 * this process never drop one another's change.
 */
import { randomBytes } from 'node:crypto';
import { open, readdir, realpath, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

const queues = new Map<string, Promise<void>>();

/** Runs `task` once every earlier task queued for the same `key` (a file path) has settled. */
export function serialised<T>(key: string, task: () => Promise<T>): Promise<T> {
  const previous = queues.get(key) ?? Promise.resolve();
  const run = previous.then(task);
  const tail = run.then(
    () => undefined,
    () => undefined,
  );
  queues.set(key, tail);
  void tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  return run;
}

/** The temp file name a write to `target` uses: `.<name>.<pid>.<8 hex>.tmp`, beside it. */
export function tempNameFor(target: string, pid: number): string {
  return `.${basename(target)}.${pid}.${randomBytes(4).toString('hex')}.tmp`;
}

/** Replaces the file at `path` with `data` atomically (temp file, fsync, rename); a symlink's target is replaced. */
export async function writeFileAtomic(path: string, data: Uint8Array | string): Promise<void> {
  const target = await realpath(path).catch(() => path);
  const dir = dirname(target);
  const temp = join(dir, tempNameFor(target, process.pid));
  const mode = await stat(target).then(
    (s) => s.mode & 0o7777,
    () => null,
  );
  const handle = await open(temp, 'wx', mode ?? 0o644);
  try {
    try {
      if (mode !== null) await handle.chmod(mode);
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, target);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  await syncDirectory(dir);
}

/** Flushes the directory entry so the rename itself survives a power cut; best effort where unsupported. */
async function syncDirectory(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Some platforms and file systems cannot fsync a directory; the rename is still atomic.
  }
}

/**
 * Removes temp files that writes to `path` left behind when their process died before the
 * rename; a temp file whose writer is still alive (this process included) is left alone.
 * Returns how many were removed. Best effort: a file that cannot be removed is skipped.
 */
export async function removeStaleTemps(path: string): Promise<number> {
  const target = await realpath(path).catch(() => path);
  const dir = dirname(target);
  const name = basename(target);
  let removed = 0;
  for (const entry of await readdir(dir).catch(() => [])) {
    const pid = writerPid(entry, name);
    if (pid === null || pid === process.pid || isAlive(pid)) continue;
    try {
      await rm(join(dir, entry));
      removed++;
    } catch {
      // Another tracker removed it first, or the directory refuses: the next start tries again.
    }
  }
  return removed;
}

/** The pid in a temp file name of ours for `name`, or null when `entry` is not one. */
function writerPid(entry: string, name: string): number | null {
  const prefix = `.${name}.`;
  if (!entry.startsWith(prefix)) return null;
  const match = /^(\d+)\.[0-9a-f]{8}\.tmp$/.exec(entry.slice(prefix.length));
  return match?.[1] === undefined ? null : Number(match[1]);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
