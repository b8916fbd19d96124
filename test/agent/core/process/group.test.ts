import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isProcessAlive } from '../../../../src/agent/core/process/proc-table.js';
import { type AgentProcess, spawnAgentProcess } from '../../../../src/agent/core/process/spawn.js';
import {
  childEnv,
  killQuietly,
  makeScratch,
  nodeParams,
  readUntil,
  stdoutOf,
  waitFor,
} from './child-scripts.js';

const SPAWN_MODULE = pathToFileURL(
  path.resolve(import.meta.dirname, '../../../../src/agent/core/process/spawn.ts'),
).href;

const scratch = makeScratch();
const started: AgentProcess[] = [];
const strays: number[] = [];

async function start(script: string): Promise<AgentProcess> {
  const result = await spawnAgentProcess(nodeParams(path.join(scratch.dir, script), scratch.dir));
  if (!result.ok) throw new Error(`spawn failed: ${result.code}: ${result.message}`);
  started.push(result.process);
  return result.process;
}

beforeAll(() => {
  // The grandchild inherits stdout, as a tool an agent runs would: it keeps the pipe open.
  scratch.script(
    'with-grandchild.cjs',
    `const { spawn } = require('node:child_process');
const g = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: ['ignore', 'inherit', 'inherit'] });
console.log('grandchild ' + g.pid);
setInterval(() => {}, 1000);`,
  );
  scratch.script(
    'ignore-term.cjs',
    `process.on('SIGTERM', () => { console.log('ignored SIGTERM'); });
console.log('ready');
setInterval(() => {}, 1000);`,
  );
});

afterAll(() => {
  for (const agent of started) agent.killGroup();
  killQuietly(strays);
  scratch.cleanup();
});

describe('AgentProcess group signalling', () => {
  it('terminateGroup kills the grandchild too, not only the direct child', async () => {
    const agent = await start('with-grandchild.cjs');
    const [, pid] = await readUntil(stdoutOf(agent), /^grandchild (\d+)$/);
    const grandchild = Number(pid);
    strays.push(grandchild);
    expect(isProcessAlive(grandchild)).toBe(true);

    await agent.terminateGroup(2_000);

    expect(isProcessAlive(grandchild)).toBe(false);
    expect(agent.groupAlive()).toBe(false);
    expect(await agent.exited).toEqual({ exitCode: null, signal: 'SIGTERM' });
  });

  it('stdout reaches EOF after terminateGroup even though a grandchild held the pipe (no hang)', async () => {
    const agent = await start('with-grandchild.cjs');
    const stdout = stdoutOf(agent);
    await readUntil(stdout, /^grandchild \d+$/);
    const eof = (async () => {
      for (let next = await stdout.next(); !next.done; next = await stdout.next()) {
        // Drain.
      }
      return 'eof';
    })();
    await agent.terminateGroup(2_000);
    await expect(eof).resolves.toBe('eof');
  });

  it('a child ignoring SIGTERM is SIGKILLed after the grace, not left running', async () => {
    const agent = await start('ignore-term.cjs');
    const stdout = stdoutOf(agent);
    await readUntil(stdout, /^ready$/);
    const graceMs = 300;
    const before = Date.now();
    const terminated = agent.terminateGroup(graceMs);
    await readUntil(stdout, /^ignored SIGTERM$/);
    await terminated;
    expect(Date.now() - before).toBeGreaterThanOrEqual(graceMs - 20);
    expect(await agent.exited).toEqual({ exitCode: null, signal: 'SIGKILL' });
    expect(agent.groupAlive()).toBe(false);
  });

  it('terminateGroup and killGroup on a group already gone neither throw nor wait the grace', async () => {
    const agent = await start('ignore-term.cjs');
    agent.killGroup();
    await agent.exited;
    const before = Date.now();
    await agent.terminateGroup(5_000);
    expect(Date.now() - before).toBeLessThan(1_000);
    expect(() => agent.killGroup()).not.toThrow();
    expect(agent.groupAlive()).toBe(false);
  });

  it('an orchestrator that exits normally takes its running agent groups with it', () => {
    const driver = scratch.script(
      'driver.mts',
      `import { spawnAgentProcess } from ${JSON.stringify(SPAWN_MODULE)};
const result = await spawnAgentProcess({
  command: process.execPath,
  args: [${JSON.stringify(path.join(scratch.dir, 'with-grandchild.cjs'))}],
  cwd: ${JSON.stringify(scratch.dir)},
  env: { PATH: process.env.PATH },
  stdin: 'ignore',
});
if (!result.ok) throw new Error(result.message);
for await (const line of result.process.lines) {
  if (line.type === 'line' && line.text.startsWith('grandchild ')) {
    console.log(result.process.pid + ' ' + line.text.split(' ')[1]);
    process.exit(0);
  }
}`,
    );
    const run = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), driver], {
      env: childEnv(),
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const pids = run.stdout.trim().split(' ').map(Number);
    strays.push(...pids);
    expect(pids).toHaveLength(2);
    return waitFor(() => !pids.some(isProcessAlive), 5_000, 'the agent group to die with the orchestrator');
  });
});
