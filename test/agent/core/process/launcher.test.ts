/**
 * Agents start from the launcher process, not from the service: their pipes are handed over
 * whole (not a byte lost between the spawn and the hand-over), the launcher carries none of the
 * service's environment, a launcher that dies is replaced on the next start and the agents it
 * started still report their end, and an idle launcher never keeps the service running.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readProcStat } from '../../../../src/agent/core/process/proc-table.js';
import { spawnAgentProcess } from '../../../../src/agent/core/process/spawn.js';
import { makeScratch, nodeParams, waitFor } from './child-scripts.js';

const scratch = makeScratch();
afterAll(() => scratch.cleanup());

const REPO = path.resolve(import.meta.dirname, '../../../..');

/** Writes its lines to stdout and to stderr at once, before anything could read them. */
const burst = scratch.script(
  'burst.cjs',
  `const n = Number(process.argv[2]);
process.stdout.write(('o'.repeat(99) + '\\n').repeat(n));
process.stderr.write(('e'.repeat(99) + '\\n').repeat(n));`,
);
/** Answers each stdin line with its length, until stdin ends. */
const echo = scratch.script(
  'echo.cjs',
  `require('node:readline').createInterface({ input: process.stdin }).on('line', (l) => console.log(l.length));`,
);

/** The launcher: the parent of an agent it started. */
function launcherOf(pid: number): number {
  const stat = readProcStat(pid);
  if (!stat) throw new Error(`no process ${pid}`);
  return stat.ppid;
}

describe('the launcher process', () => {
  it('hands over output written before the pipes reach the service, to the last byte', async () => {
    // A shell writes at once, while the launcher still waits for the service to take the first
    // pipe: without reading stopped on the pipes not yet handed over, lines go missing here.
    const shell = "printf 'e%.0s\\n' 1 2 3 4 5 6 7 8 9 10 >&2; printf 'o%.0s\\n' 1 2 3 4 5 6 7 8 9 10";
    for (let round = 0; round < 30; round++) {
      const result = await spawnAgentProcess({
        ...nodeParams(burst, scratch.dir),
        command: '/bin/sh',
        args: ['-c', shell],
      });
      if (!result.ok) throw new Error(result.message);
      const lines: string[] = [];
      for await (const line of result.process.lines) lines.push(line.type === 'line' ? line.text : '?');
      await result.process.exited;
      expect(lines).toEqual(Array(10).fill('o'));
      expect(await result.process.stderr.drain(5_000)).toBe(true);
      expect(result.process.stderr.lines()).toEqual(Array(10).fill('e'));
    }
    // And a large burst on both pipes: 1,000 stderr lines is what the bounded stderr keeps by default.
    const count = 1_000;
    const result = await spawnAgentProcess({
      ...nodeParams(burst, scratch.dir),
      args: [burst, String(count)],
    });
    if (!result.ok) throw new Error(result.message);
    const lengths: number[] = [];
    for await (const line of result.process.lines) lengths.push(line.type === 'line' ? line.text.length : -1);
    await result.process.exited;
    expect(lengths).toEqual(Array(count).fill(99));
    expect(await result.process.stderr.drain(5_000)).toBe(true);
    expect(result.process.stderr.lines()).toEqual(Array(count).fill('e'.repeat(99)));
  });

  it('a piped stdin carries a conversation both ways, and its end ends the agent', async () => {
    const result = await spawnAgentProcess({ ...nodeParams(echo, scratch.dir), stdin: 'pipe' });
    expect(result.ok).toBe(true);
    if (!result.ok || !result.process.input) throw new Error('no stdin');
    const { input } = result.process;
    const answers = result.process.lines[Symbol.asyncIterator]();
    for (const text of ['a', 'bb', 'x'.repeat(100_000)]) {
      input.write(`${text}\n`);
      const next = await answers.next();
      expect(next.value).toMatchObject({ type: 'line', text: String(text.length) });
    }
    input.end();
    expect(await result.process.exited).toEqual({ exitCode: 0, signal: null });
  });

  it("runs with none of the service's environment and is not the service: the agent is its child", async () => {
    const previous = process.env.LAUNCHER_TEST_SECRET;
    process.env.LAUNCHER_TEST_SECRET = 'do-not-leak';
    try {
      const result = await spawnAgentProcess({ ...nodeParams(echo, scratch.dir), stdin: 'pipe' });
      if (!result.ok || !result.process.input) throw new Error('no start');
      const launcher = launcherOf(result.process.pid);
      expect(launcher).not.toBe(process.pid);
      expect(readProcStat(launcher)?.ppid).toBe(process.pid);
      // Node's own IPC channel variables, and nothing else.
      const names = readFileSync(`/proc/${launcher}/environ`, 'utf8')
        .split('\0')
        .filter(Boolean)
        .map((v) => v.slice(0, v.indexOf('=')));
      expect(names.length).toBeGreaterThan(0);
      expect(names.filter((name) => !name.startsWith('NODE_CHANNEL_'))).toEqual([]);
      result.process.input.end();
      await result.process.exited;
    } finally {
      if (previous === undefined) delete process.env.LAUNCHER_TEST_SECRET;
      else process.env.LAUNCHER_TEST_SECRET = previous;
    }
  });

  it('a launcher killed under a running agent: the agent still reports its end, and the next start gets a new launcher', async () => {
    const first = await spawnAgentProcess({ ...nodeParams(echo, scratch.dir), stdin: 'pipe' });
    if (!first.ok || !first.process.input) throw new Error('no start');
    const launcher = launcherOf(first.process.pid);
    process.kill(launcher, 'SIGKILL');
    await waitFor(
      () => readProcStat(launcher) === null || readProcStat(launcher)?.state === 'Z',
      5_000,
      'the launcher gone',
    );
    // The agent lives on (its own group); its end is still seen, without an exit status.
    first.process.input.end();
    expect(await first.process.exited).toEqual({ exitCode: null, signal: null });

    const second = await spawnAgentProcess({ ...nodeParams(echo, scratch.dir), stdin: 'pipe' });
    if (!second.ok || !second.process.input) throw new Error('no start after the launcher died');
    expect(launcherOf(second.process.pid)).not.toBe(launcher);
    second.process.input.end();
    expect(await second.process.exited).toEqual({ exitCode: 0, signal: null });
  });

  it("a Ctrl-C or SIGTERM to the service's process group does not end the launcher: it ends with the service", async () => {
    const first = await spawnAgentProcess({ ...nodeParams(echo, scratch.dir), stdin: 'pipe' });
    if (!first.ok || !first.process.input) throw new Error('no start');
    const launcher = launcherOf(first.process.pid);
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.kill(launcher, signal);
    await new Promise((resolve) => setTimeout(resolve, 300));
    first.process.input.end();
    // Its exit status still arrives through the same launcher.
    expect(await first.process.exited).toEqual({ exitCode: 0, signal: null });
    const second = await spawnAgentProcess({ ...nodeParams(echo, scratch.dir), stdin: 'pipe' });
    if (!second.ok || !second.process.input) throw new Error('no start');
    expect(launcherOf(second.process.pid)).toBe(launcher);
    second.process.input.end();
    await second.process.exited;
  });

  it('a program whose agents have ended exits by itself: the idle launcher holds nothing open', () => {
    const program = `
      const { spawnAgentProcess } = await import(${JSON.stringify(path.join(REPO, 'src/agent/core/process/spawn.ts'))});
      const r = await spawnAgentProcess({ command: process.execPath, args: ['-e', 'console.log(1)'], cwd: process.cwd(), env: { PATH: process.env.PATH }, stdin: 'ignore' });
      for await (const line of r.process.lines) console.log('agent said', line.text);
      console.log('exit', JSON.stringify(await r.process.exited));`;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], {
      cwd: REPO,
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.error).toBeUndefined();
    expect(run.stdout).toContain('agent said 1');
    expect(run.stdout).toContain('exit {"exitCode":0,"signal":null}');
    expect(run.status).toBe(0);
  });
});
