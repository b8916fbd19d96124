/**
 * Crash-safe writes for the issues file. A plain overwrite that dies half-way
 * leaves a truncated file, which the next tick would read as a broken tracker; so a
 * write goes to a temp file beside the target, is flushed to disk, and renamed over
 * it. Writes to one file are also queued, so two concurrent read-modify-write
 * cycles in this process never drop one another's change.
 */
import { randomUUID } from 'node:crypto';
import { open, realpath, rename, rm, stat } from 'node:fs/promises';
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

/** Replaces the file at `path` with `text` atomically (temp file, fsync, rename); a symlink's target is replaced. */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
  const target = await realpath(path).catch(() => path);
  const dir = dirname(target);
  const temp = join(dir, `.${basename(target)}.${process.pid}.${randomUUID().slice(0, 8)}.tmp`);
  const mode = await stat(target).then(
    (s) => s.mode & 0o7777,
    () => null,
  );
  const handle = await open(temp, 'wx', mode ?? 0o644);
  try {
    try {
      if (mode !== null) await handle.chmod(mode);
      await handle.writeFile(text, 'utf8');
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
