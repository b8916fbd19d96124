import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  prepareSignalDir,
  readJsonSignal,
  readStatusSignal,
  SIGNAL_DIR,
  writeSignalFile,
} from '../../src/workspace/signals.js';

let workspace: string;
let outside: string;
const dir = () => path.join(workspace, SIGNAL_DIR);

beforeEach(() => {
  workspace = mkdtempSync(path.join(tmpdir(), 'signals-ws-'));
  outside = mkdtempSync(path.join(tmpdir(), 'signals-outside-'));
});
afterEach(() => {
  rmSync(workspace, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

describe('agent signal files', () => {
  it('no folder or no file is absent; a known word on the first line is read, any case and spacing', () => {
    expect(readStatusSignal(workspace)).toEqual({ kind: 'absent' });
    prepareSignalDir(workspace);
    expect(readStatusSignal(workspace)).toEqual({ kind: 'absent' });
    writeFileSync(path.join(dir(), 'status'), '  Needs-Human-Review \nwhy: the schema is unclear\n');
    expect(readStatusSignal(workspace)).toEqual({ kind: 'read', value: 'needs-human-review' });
    writeFileSync(path.join(dir(), 'status'), 'blocked');
    expect(readStatusSignal(workspace)).toEqual({ kind: 'read', value: 'blocked' });
  });

  it('an unknown word, an oversized file and a folder instead of a file are ignored with a reason', () => {
    prepareSignalDir(workspace);
    writeFileSync(path.join(dir(), 'status'), 'done\n');
    expect(readStatusSignal(workspace)).toMatchObject({
      kind: 'ignored',
      reason: expect.stringContaining('"done"'),
    });
    writeFileSync(path.join(dir(), 'status'), `blocked${' '.repeat(2000)}`);
    expect(readStatusSignal(workspace)).toMatchObject({
      kind: 'ignored',
      reason: expect.stringContaining('more than 1024'),
    });
    rmSync(path.join(dir(), 'status'));
    mkdirSync(path.join(dir(), 'status'));
    expect(readStatusSignal(workspace)).toMatchObject({
      kind: 'ignored',
      reason: expect.stringContaining('not a regular file'),
    });
  });

  it('a symlinked file or folder is refused, never followed out of the workspace', () => {
    writeFileSync(path.join(outside, 'status'), 'blocked\n');
    prepareSignalDir(workspace);
    symlinkSync(path.join(outside, 'status'), path.join(dir(), 'status'));
    expect(readStatusSignal(workspace)).toMatchObject({
      kind: 'ignored',
      reason: expect.stringContaining('symlink'),
    });
    rmSync(dir(), { recursive: true });
    symlinkSync(outside, dir());
    expect(readStatusSignal(workspace)).toMatchObject({
      kind: 'ignored',
      reason: expect.stringContaining('never followed'),
    });
    // Preparing replaces the link (not its target) with a folder of our own.
    prepareSignalDir(workspace);
    expect(lstatSync(dir()).isDirectory()).toBe(true);
    expect(readFileSync(path.join(outside, 'status'), 'utf8')).toBe('blocked\n');
  });

  it('preparing a run removes the agent files of the last one, keeps ours and git-ignores the folder', () => {
    prepareSignalDir(workspace);
    writeFileSync(path.join(dir(), 'status'), 'blocked\n');
    writeFileSync(path.join(dir(), 'review_verdict.json'), '{"verdict":"pass"}');
    writeSignalFile(workspace, 'scm.json', '{"branch":"agent/E-1"}\n');
    prepareSignalDir(workspace);
    expect(existsSync(path.join(dir(), 'status'))).toBe(false);
    expect(existsSync(path.join(dir(), 'review_verdict.json'))).toBe(false);
    expect(readJsonSignal(workspace, 'scm.json', 4096)).toEqual({
      kind: 'read',
      value: { branch: 'agent/E-1' },
    });
    expect(readFileSync(path.join(dir(), '.gitignore'), 'utf8')).toBe('*\n');
  });

  it('JSON that does not parse is ignored with the reason', () => {
    writeSignalFile(workspace, 'review_verdict.json', '{"verdict": pass}');
    expect(readJsonSignal(workspace, 'review_verdict.json', 64 * 1024)).toMatchObject({
      kind: 'ignored',
      reason: expect.stringContaining('not JSON'),
    });
  });
});
