/** Shared fixtures for the file tracker tests: temp directories and tracker construction. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { FileTracker, type FileTrackerStates } from '../../../src/tracker/file/adapter.js';

/** States used unless a test says otherwise. */
export const STATES: FileTrackerStates = {
  activeStates: ['Todo', 'In Progress'],
  terminalStates: ['Done', 'Cancelled'],
  handoffState: 'Human Review',
  inProgressState: 'In Progress',
  blockedState: null,
};

/** A fixed clock for comment timestamps. */
export const NOW = new Date('2025-03-04T05:06:07.000Z');

const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A fresh temp directory, removed after the test. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'file-tracker-'));
  dirs.push(dir);
  return dir;
}

/** Writes `text` to `name` in a fresh temp directory and returns a tracker over it with its path. */
export async function trackerOver(
  name: string,
  text: string,
  states: FileTrackerStates = STATES,
): Promise<{ tracker: FileTracker; path: string; dir: string }> {
  const dir = await tempDir();
  const path = join(dir, name);
  await writeFile(path, text);
  return { tracker: new FileTracker({ path }, states, { now: () => NOW }), path, dir };
}

/** A minimal valid raw issue with `extra` fields merged in. */
export function rawIssue(n: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id: `id-${n}`, identifier: `T-${n}`, title: `Issue ${n}`, state: 'Todo', ...extra };
}
