import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_LINE_BYTES, type LineResult } from '../../../../src/agent/core/process/lines.js';
import { type AgentProcess, spawnAgentProcess } from '../../../../src/agent/core/process/spawn.js';
import { ABANDONED_MARKER } from '../../../../src/agent/core/process/stderr.js';
import { makeScratch, nodeParams, peakLiveGrowth, readUntil, stdoutOf, waitFor } from './child-scripts.js';

const MiB = 1024 * 1024;
const scratch = makeScratch();
const started: AgentProcess[] = [];

async function start(
  script: string,
  overrides: Partial<Parameters<typeof spawnAgentProcess>[0]> = {},
): Promise<AgentProcess> {
  const result = await spawnAgentProcess(nodeParams(path.join(scratch.dir, script), scratch.dir, overrides));
  if (!result.ok) throw new Error(`spawn failed: ${result.code}: ${result.message}`);
  started.push(result.process);
  return result.process;
}

beforeAll(() => {
  scratch.script(
    'big-line.cjs',
    `const chunk = 'x'.repeat(1024 * 1024);
for (let i = 0; i < 20; i++) process.stdout.write(chunk);
process.stdout.write('\\nafter 1\\r\\nafter 2\\nno newline at end');`,
  );
  scratch.script(
    'stderr-flood.cjs',
    `const line = (i) => ('line ' + i + ' ').padEnd(1023, '.') + '\\n';
const total = 100 * 1024;
let i = 0;
function pump() {
  while (i < total) {
    let batch = '';
    for (let j = 0; j < 64 && i < total; j++, i++) batch += line(i);
    if (!process.stderr.write(batch)) { process.stderr.once('drain', pump); return; }
  }
  process.stderr.write('the very end\\n');
  console.log('done');
}
pump();`,
  );
  scratch.script(
    'stderr-heir.cjs',
    `const { spawn } = require('node:child_process');
const code = "setTimeout(() => { process.stderr.write('late line\\\\n'); require('node:fs').writeFileSync(process.argv[1], ''); }, 300); setTimeout(() => {}, 30000);";
const g = spawn(process.execPath, ['-e', code, process.argv[2]], { stdio: ['ignore', 'ignore', 'inherit'] });
g.unref();
process.stderr.write('child line\\n');
console.log('heir ' + g.pid);`,
  );
});

afterAll(() => {
  for (const agent of started) agent.killGroup();
  scratch.cleanup();
});

describe('stdout through a real pipe', () => {
  it('a 20 MiB single line is one overlong report, the lines after it still arrive, memory stays bounded', async () => {
    const results: LineResult[] = [];
    const growth = await peakLiveGrowth(async () => {
      const agent = await start('big-line.cjs');
      for await (const result of agent.lines) results.push(result);
      await agent.exited;
    });
    expect(results).toEqual([
      { type: 'overlong', sizeBytes: 20 * MiB, limitBytes: DEFAULT_MAX_LINE_BYTES, head: 'x'.repeat(200) },
      { type: 'line', text: 'after 1' },
      { type: 'line', text: 'after 2' },
      { type: 'line', text: 'no newline at end' },
    ]);
    // The default 10 MiB cap is buffered before the line is known to be over it; the other 10 MiB never are.
    expect(growth).toBeLessThan(15 * MiB);
  });
});

describe('stderr through a real pipe', () => {
  it('100 MiB of stderr keeps head and tail within the caps and memory does not follow the output', {
    timeout: 120_000,
  }, async () => {
    let agent: AgentProcess | undefined;
    const growth = await peakLiveGrowth(async () => {
      agent = await start('stderr-flood.cjs');
      await readUntil(stdoutOf(agent), /^done$/);
      await agent.exited;
      expect(await agent.stderr.drain(5_000)).toBe(true);
    });
    const stderr = agent!.stderr;
    const lines = stderr.lines();
    expect(lines[0]).toMatch(/^line 0 \.+$/);
    expect(lines[199]).toMatch(/^line 199 \.+$/);
    expect(lines[200]).toBe(`… ${stderr.droppedLines} lines dropped …`);
    expect(lines.at(-1)).toBe('the very end');
    expect(lines.at(-2)).toMatch(/^line 102399 \.+$/);
    expect(stderr.droppedLines).toBeGreaterThan(0);
    expect(stderr.droppedLines + lines.length - 1).toBe(100 * 1024 + 1);
    expect(stderr.keptBytes).toBeLessThanOrEqual(MiB);
    expect(growth).toBeLessThan(10 * MiB);
  });

  it('a descendant holding stderr open makes drain give up in time, with the marker as the last line', async () => {
    const lateMarker = path.join(scratch.dir, 'late-written');
    const agent = await start('stderr-heir.cjs', {
      args: [path.join(scratch.dir, 'stderr-heir.cjs'), lateMarker],
    });
    const [, heir] = await readUntil(stdoutOf(agent), /^heir (\d+)$/);
    expect(await agent.exited).toEqual({ exitCode: 0, signal: null });

    const before = Date.now();
    expect(await agent.stderr.drain(200)).toBe(false);
    expect(Date.now() - before).toBeLessThan(1_000);
    expect(agent.stderr.lines()).toEqual(['child line', ABANDONED_MARKER]);

    // Output written after the abandonment is not read, and the marker stays last.
    await waitFor(() => existsSync(lateMarker) || !agent.groupAlive(), 5_000, 'the heir to write again');
    expect(agent.stderr.lines()).toEqual(['child line', ABANDONED_MARKER]);
    expect(await agent.stderr.drain(200)).toBe(false);
    expect(agent.stderr.lines().filter((line) => line === ABANDONED_MARKER)).toHaveLength(1);
    agent.killGroup();
    expect(Number(heir)).toBeGreaterThan(0);
  });
});
