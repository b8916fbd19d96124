import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  isProcessAlive,
  parseProcStat,
  readProcStat,
} from '../../../../src/agent/core/process/proc-table.js';
import {
  DescendantTracker,
  mergeSnapshots,
  reapDescendants,
  snapshotDescendants,
} from '../../../../src/agent/core/process/reap.js';
import { type AgentProcess, spawnAgentProcess } from '../../../../src/agent/core/process/spawn.js';
import { killQuietly, makeScratch, nodeParams, readUntil, stdoutOf, waitFor } from './child-scripts.js';

const scratch = makeScratch();
const started: AgentProcess[] = [];
const strays: number[] = [];

async function start(script: string, args: string[] = []): Promise<AgentProcess> {
  const params = nodeParams(path.join(scratch.dir, script), scratch.dir);
  const result = await spawnAgentProcess({ ...params, args: [...params.args, ...args] });
  if (!result.ok) throw new Error(`spawn failed: ${result.code}: ${result.message}`);
  started.push(result.process);
  return result.process;
}

beforeAll(() => {
  // Leaves the agent's group and session (setsid through detached: true) and starts a child of its own.
  scratch.script(
    'escaper.cjs',
    `const { spawn } = require('node:child_process');
const b = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
console.log(String(b.pid));
setInterval(() => {}, 1000);`,
  );
  scratch.script(
    'double-fork.cjs',
    `const { spawn } = require('node:child_process');
const a = spawn(process.execPath, [process.argv[2]], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
a.stdout.once('data', (d) => { console.log('escaped ' + a.pid + ' ' + String(d).trim()); });
setInterval(() => {}, 1000);`,
  );
  scratch.script(
    'orphan.cjs',
    `const { spawn } = require('node:child_process');
const g = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
g.unref();
console.log('orphan ' + g.pid);`,
  );
});

afterAll(() => {
  for (const agent of started) agent.killGroup();
  killQuietly(strays);
  scratch.cleanup();
});

async function startEscaper(): Promise<{ agent: AgentProcess; escaped: number[] }> {
  const agent = await start('double-fork.cjs', [path.join(scratch.dir, 'escaper.cjs')]);
  const [, a, b] = await readUntil(stdoutOf(agent), /^escaped (\d+) (\d+)$/);
  const escaped = [Number(a), Number(b)];
  strays.push(...escaped);
  return { agent, escaped };
}

describe.runIf(process.platform === 'linux')('reaping leftovers', () => {
  it('a double-forked process that left the group survives the group kill but not the reap with a snapshot', async () => {
    const { agent, escaped } = await startEscaper();
    const snapshot = snapshotDescendants(agent.pid);
    expect(snapshot.map((r) => r.pid)).toEqual(expect.arrayContaining(escaped));

    await agent.terminateGroup(2_000);
    expect(escaped.map(isProcessAlive)).toEqual([true, true]);

    const killed = await reapDescendants({ pgid: agent.pgid, rootPid: agent.pid, snapshot });
    expect(killed).toEqual(expect.arrayContaining(escaped));
    await waitFor(() => !escaped.some(isProcessAlive), 5_000, 'escaped processes to die');
  });

  it('a DescendantTracker sampling while the agent runs records the escapees for the reap', async () => {
    const { agent, escaped } = await startEscaper();
    const tracker = new DescendantTracker(agent.pid, { intervalMs: 20 });
    try {
      await waitFor(
        () => escaped.every((pid) => tracker.snapshot().some((r) => r.pid === pid)),
        5_000,
        'the tracker to record the escapees',
      );
      agent.killGroup();
      await agent.exited;
      const killed = await reapDescendants({
        pgid: agent.pgid,
        rootPid: agent.pid,
        snapshot: tracker.snapshot(),
      });
      expect(killed).toEqual(expect.arrayContaining(escaped));
      await waitFor(() => !escaped.some(isProcessAlive), 5_000, 'escaped processes to die');
    } finally {
      tracker.stop();
    }
  });

  it('a group member orphaned by the agent exiting is killed by the reap without any snapshot', async () => {
    const agent = await start('orphan.cjs');
    const [, pid] = await readUntil(stdoutOf(agent), /^orphan (\d+)$/);
    const orphan = Number(pid);
    strays.push(orphan);
    expect(await agent.exited).toEqual({ exitCode: 0, signal: null });
    expect(isProcessAlive(orphan)).toBe(true);
    expect(agent.groupAlive()).toBe(true);

    const killed = await reapDescendants({ pgid: agent.pgid, rootPid: agent.pid });
    expect(killed).toEqual([orphan]);
    await waitFor(() => !isProcessAlive(orphan), 5_000, 'the orphan to die');
    expect(agent.groupAlive()).toBe(false);
  });

  it('a recorded pid that now names another process (start time differs) is never killed, nor are we', async () => {
    const bystander = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    const bystanderPid = bystander.pid!;
    strays.push(bystanderPid);
    try {
      const own = readProcStat(process.pid)!;
      const agent = await start('orphan.cjs');
      const [, pid] = await readUntil(stdoutOf(agent), /^orphan (\d+)$/);
      strays.push(Number(pid));
      const killed = await reapDescendants({
        pgid: agent.pgid,
        rootPid: agent.pid,
        snapshot: [
          { pid: bystanderPid, startTime: '1' },
          { pid: process.pid, startTime: own.startTime },
        ],
      });
      expect(killed).not.toContain(bystanderPid);
      expect(killed).not.toContain(process.pid);
      expect(isProcessAlive(bystanderPid)).toBe(true);
    } finally {
      bystander.kill('SIGKILL');
    }
  });

  it('a reap with nothing left kills nothing', async () => {
    const agent = await start('orphan.cjs');
    const [, pid] = await readUntil(stdoutOf(agent), /^orphan (\d+)$/);
    strays.push(Number(pid));
    const killed = await reapDescendants({ pgid: agent.pgid, rootPid: agent.pid });
    expect(killed).toContain(Number(pid));
    // A SIGKILLed process can still be listed, not yet dead, for a moment on a loaded machine:
    // the claim is about a reap after the first one's victims are gone.
    await waitFor(() => killed.every((p) => !isProcessAlive(p)), 5_000, 'the first reap to take effect');
    expect(await reapDescendants({ pgid: agent.pgid, rootPid: agent.pid })).toEqual([]);
  });
});

describe('proc table parsing', () => {
  it('a command name with spaces and parentheses does not shift the fields', () => {
    const fields = Array.from({ length: 50 }, (_, i) => String(i + 3));
    fields[0] = 'S';
    fields[1] = '42';
    fields[2] = '77';
    fields[19] = '123456';
    const stat = parseProcStat(`1234 (evil ) (name) ${fields.join(' ')}\n`);
    expect(stat).toEqual({ pid: 1234, ppid: 42, pgid: 77, state: 'S', startTime: '123456' });
  });

  it('garbage is rejected rather than read as pid 0 or NaN', () => {
    expect(parseProcStat('')).toBeNull();
    expect(parseProcStat('12 (x) S')).toBeNull();
  });

  it('merged snapshots keep one record per process', () => {
    const merged = mergeSnapshots(
      [
        { pid: 5, startTime: '10' },
        { pid: 6, startTime: '11' },
      ],
      [
        { pid: 5, startTime: '10' },
        { pid: 5, startTime: '99' },
      ],
    );
    expect(merged).toEqual([
      { pid: 5, startTime: '10' },
      { pid: 6, startTime: '11' },
      { pid: 5, startTime: '99' },
    ]);
  });
});
