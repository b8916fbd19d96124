import { chmod, mkdir, readdir, readFile, readlink, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { serialised, writeFileAtomic } from '../../../src/tracker/file/write.js';
import { tempDir } from './helpers.js';

describe('atomic write', () => {
  it('a write replaces the file by rename (new inode), never by truncating it in place', async () => {
    const dir = await tempDir();
    const path = join(dir, 'issues.json');
    await writeFile(path, '[]\n');
    const before = await stat(path);
    await writeFileAtomic(path, '[1]\n');
    const after = await stat(path);
    expect(after.ino).not.toBe(before.ino);
    expect(await readFile(path, 'utf8')).toBe('[1]\n');
    expect(await readdir(dir)).toEqual(['issues.json']);
  });

  it('a reader polling during writes only ever sees a complete file', async () => {
    const dir = await tempDir();
    const path = join(dir, 'issues.json');
    const version = (n: number) => `${JSON.stringify(Array.from({ length: 2_000 }, () => n))}\n`;
    await writeFile(path, version(0));
    let writing = true;
    const seen: string[] = [];
    const reader = (async () => {
      while (writing) seen.push(await readFile(path, 'utf8'));
    })();
    for (let n = 1; n <= 30; n++) await writeFileAtomic(path, version(n));
    writing = false;
    await reader;
    expect(seen.length).toBeGreaterThan(0);
    for (const text of seen) expect(() => JSON.parse(text)).not.toThrow();
  });

  it('a write keeps the file mode operators set', async () => {
    const dir = await tempDir();
    const path = join(dir, 'issues.json');
    await writeFile(path, '[]');
    await chmod(path, 0o600);
    await writeFileAtomic(path, '[2]');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('a write through a symlink updates the target and keeps the link', async () => {
    const dir = await tempDir();
    const target = join(dir, 'real.json');
    const link = join(dir, 'issues.json');
    await writeFile(target, '[]');
    await symlink(target, link);
    await writeFileAtomic(link, '[3]');
    expect(await readlink(link)).toBe(target);
    expect(await readFile(target, 'utf8')).toBe('[3]');
  });

  it('a failed rename leaves no temp file behind', async () => {
    const dir = await tempDir();
    const path = join(dir, 'issues.json');
    await mkdir(path);
    await expect(writeFileAtomic(path, '[]')).rejects.toThrow();
    expect(await readdir(dir)).toEqual(['issues.json']);
  });
});

describe('write queue', () => {
  it('tasks for one file run one at a time, in order, even when one fails', async () => {
    const log: string[] = [];
    const task =
      (name: string, fail = false) =>
      async () => {
        log.push(`start ${name}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
        log.push(`end ${name}`);
        if (fail) throw new Error(name);
        return name;
      };
    const results = await Promise.allSettled([
      serialised('k', task('a')),
      serialised('k', task('b', true)),
      serialised('k', task('c')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });
});
