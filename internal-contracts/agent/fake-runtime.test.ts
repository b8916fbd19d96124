import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type FakeScenario, fakeGrandchildPids, fakeInvocations, fakeRuntime } from './fake-runtime.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'fake-runtime-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

function run(executable: string, args: string[] = [], input = '') {
  const r = spawnSync(executable, args, {
    input,
    encoding: 'utf8',
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', FAKE_MARK: 'm' },
    timeout: 10_000,
  });
  return { stdout: r.stdout, stderr: r.stderr, status: r.status, signal: r.signal };
}

const build = (scenario: FakeScenario) => fakeRuntime(dir, `fake-${++n}`, scenario);

describe('fakeRuntime', () => {
  it('plays stdout and stderr lines in order and exits with the scripted status (not a default 0)', () => {
    const exe = build({
      steps: [{ stdout: 'a' }, { stderr: 'e' }, { stdout: 'b\n' }, { exit: 3 }, { stdout: 'x' }],
    });
    expect(path.isAbsolute(exe)).toBe(true);
    expect(run(exe)).toMatchObject({ stdout: 'a\nb\n', stderr: 'e\n', status: 3 });
  });

  it('exits 0 when the steps run out, after its pauses', () => {
    const exe = build({ steps: [{ sleepMs: 50 }, { stdout: 'late' }] });
    const started = Date.now();
    expect(run(exe)).toMatchObject({ stdout: 'late\n', status: 0 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);
  });

  it('dies by the scripted signal after its output, instead of exiting normally', () => {
    const exe = build({ steps: [{ stdout: 'before' }, { kill: 'SIGKILL' }, { stdout: 'after' }] });
    expect(run(exe)).toMatchObject({ stdout: 'before\n', status: null, signal: 'SIGKILL' });
  });

  it('hangs until killed instead of exiting', () => {
    const exe = build({ steps: [{ stdout: 'up' }, { hang: true }] });
    // Long enough for node to start and print under load; the hang is what the timeout ends.
    const r = spawnSync(exe, [], { input: '', encoding: 'utf8', timeout: 5_000, killSignal: 'SIGTERM' });
    expect(r.signal).toBe('SIGTERM');
    expect(r.stdout).toBe('up\n');
  });

  it('answers each invocation from its own step list and repeats the last (a per-turn signal cannot leak)', () => {
    const exe = build({ turns: [[{ stdout: 'first' }], [{ stdout: 'second' }, { exit: 1 }]] });
    expect(run(exe)).toMatchObject({ stdout: 'first\n', status: 0 });
    expect(run(exe)).toMatchObject({ stdout: 'second\n', status: 1 });
    expect(run(exe)).toMatchObject({ stdout: 'second\n', status: 1 });
    expect(fakeInvocations(exe).map((i) => i.invocation)).toEqual([0, 1, 2]);
  });

  it('records argv, cwd, env and stdin of every invocation', () => {
    const exe = build({ steps: [] });
    run(exe, ['--flag', 'two words'], 'the prompt\n');
    const [only, ...rest] = fakeInvocations(exe);
    expect(rest).toEqual([]);
    expect(only).toMatchObject({ argv: ['--flag', 'two words'], stdin: 'the prompt\n', invocation: 0 });
    expect(only?.env.FAKE_MARK).toBe('m');
    expect(only?.cwd).toBe(dir);
  });

  it('records to the file the scenario names and copies stdin where a step asks', () => {
    const log = path.join(dir, `custom-${n}.jsonl`);
    const copy = path.join(dir, `stdin-${n}.txt`);
    const exe = build({ recordTo: log, steps: [{ readStdinTo: copy }] });
    run(exe, [], 'hello');
    expect(readFileSync(copy, 'utf8')).toBe('hello');
    expect(readFileSync(log, 'utf8')).toContain('"stdin":"hello"');
    expect(fakeInvocations(exe)).toHaveLength(1);
  });

  it('rebuilding a fake starts its invocation count afresh', () => {
    const name = `fake-rebuilt-${++n}`;
    const exe = fakeRuntime(dir, name, { turns: [[{ stdout: 'one' }], [{ stdout: 'two' }]] });
    run(exe);
    fakeRuntime(dir, name, { turns: [[{ stdout: 'one' }], [{ stdout: 'two' }]] });
    expect(run(exe).stdout).toBe('one\n');
    expect(fakeInvocations(exe)).toHaveLength(1);
  });

  it('leaves a grandchild running and reports its pid', () => {
    const exe = build({ steps: [{ spawnGrandchild: true }, { stdout: 'spawned' }] });
    expect(run(exe)).toMatchObject({ stdout: 'spawned\n', status: 0 });
    const [pid] = fakeGrandchildPids(exe);
    expect(pid).toBeGreaterThan(0);
    try {
      expect(() => process.kill(pid as number, 0)).not.toThrow();
    } finally {
      process.kill(pid as number, 'SIGKILL');
    }
  });

  it('refuses a scenario with both or neither of steps and turns, and a path the command split would break', () => {
    expect(() => fakeRuntime(dir, 'x', {})).toThrow(/exactly one/);
    expect(() => fakeRuntime(dir, 'x', { steps: [], turns: [[]] })).toThrow(/exactly one/);
    expect(() => fakeRuntime(dir, 'has space', { steps: [] })).toThrow(/whitespace/);
  });
});
