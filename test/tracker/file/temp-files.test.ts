import { type ChildProcess, spawn } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileTracker } from '../../../src/tracker/file/adapter.js';
import { removeStaleTemps } from '../../../src/tracker/file/write.js';
import { rawIssue, STATES, tempDir } from './helpers.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const CHILD = join(import.meta.dirname, 'write-loop-child.ts');
const TEMP = /^\.issues\.json\.\d+\.[0-9a-f]{8}\.tmp$/;

function startWriter(path: string): {
  child: ChildProcess;
  writing: Promise<void>;
  exited: Promise<unknown>;
} {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, path], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const writing = new Promise<void>((resolve, reject) => {
    child.stdout?.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`the writer exited (${code}) before writing`)));
  });
  return { child, writing, exited };
}

/** A process that has already exited: its pid names no live process. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0']);
  await new Promise((resolve) => child.once('exit', resolve));
  if (child.pid === undefined) throw new Error('no pid');
  return child.pid;
}

describe('temp files of interrupted writes', () => {
  it('a writer SIGKILLed mid-write, again and again, never leaves a torn file, and the next tracker removes its temp files', async () => {
    const dir = await tempDir();
    const path = join(dir, 'issues.json');
    // Big enough (about 2 MB) that most of a write is spent between creating the temp file and renaming it.
    const issues = Array.from({ length: 4_000 }, (_, i) => rawIssue(i + 1, { description: 'x'.repeat(400) }));
    await writeFile(path, `${JSON.stringify(issues, null, 2)}\n`);
    // Each new writer removes the temp files of the one before it, so only the last round's can be
    // left: go on until a few rounds are done and the last one was killed mid-write.
    let leftovers: string[] = [];
    for (let round = 0; round < 20 && (round < 4 || leftovers.length === 0); round++) {
      const writer = startWriter(path);
      await writer.writing;
      // Past the first slow (not yet optimised) rounds, at a random point of a write cycle.
      await new Promise((resolve) => setTimeout(resolve, 200 + Math.random() * 300));
      writer.child.kill('SIGKILL');
      await writer.exited;
      const text = await readFile(path, 'utf8');
      expect(() => JSON.parse(text)).not.toThrow();
      leftovers = (await readdir(dir)).filter((name) => TEMP.test(name));
    }
    // The kills did land mid-write: otherwise this test proves nothing.
    expect(leftovers.length).toBeGreaterThan(0);
    const tracker = new FileTracker({ path }, STATES);
    await tracker.transitionIssue('id-2', 'Done');
    expect(await readdir(dir)).toEqual(['issues.json']);
  }, 180_000);

  it('only temp files of writers that are gone are removed; a live writer and other files are left alone', async () => {
    const dir = await tempDir();
    const path = join(dir, 'issues.json');
    const dead = await deadPid();
    const names = {
      dead: `.issues.json.${dead}.0badc0de.tmp`,
      ours: `.issues.json.${process.pid}.deadbeef.tmp`,
      otherFile: `.other.json.${dead}.0badc0de.tmp`,
      backup: '.issues.json.bak',
    };
    await writeFile(path, '[]');
    for (const name of Object.values(names)) await writeFile(join(dir, name), 'partial');
    expect(await removeStaleTemps(path)).toBe(1);
    expect((await readdir(dir)).sort()).toEqual(
      [names.backup, names.otherFile, names.ours, 'issues.json'].sort(),
    );
  });
});
