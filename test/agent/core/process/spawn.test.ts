import { chmodSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeExit, isCommandNotFoundExit } from '../../../../src/agent/core/process/exit.js';
import { readProcStat } from '../../../../src/agent/core/process/proc-table.js';
import { type AgentProcess, spawnAgentProcess } from '../../../../src/agent/core/process/spawn.js';
import { childEnv, makeScratch, nodeParams, readUntil, stdoutOf } from './child-scripts.js';

const scratch = makeScratch();
const started: AgentProcess[] = [];

async function start(params: Parameters<typeof spawnAgentProcess>[0]): Promise<AgentProcess> {
  const result = await spawnAgentProcess(params);
  if (!result.ok) throw new Error(`spawn failed: ${result.code}: ${result.message}`);
  started.push(result.process);
  return result.process;
}

beforeAll(() => {
  scratch.script(
    'echo-stdin.cjs',
    `let n = 0;
process.stdin.on('data', (c) => { n += c.length; });
process.stdin.on('end', () => { console.log('length ' + n); });`,
  );
  scratch.script(
    'describe-self.cjs',
    `console.log(JSON.stringify({ cwd: process.cwd(), env: Object.keys(process.env).sort() }));`,
  );
  scratch.script('exit127.cjs', 'process.exit(127);');
  scratch.script('exit2.cjs', "process.stderr.write('boom\\n'); process.exit(2);");
  scratch.script('linger.cjs', "console.log('ready'); setInterval(() => {}, 1000);");
  // Prints its own niceness and then a child's, read from /proc (field 19 of stat).
  scratch.script(
    'niceness.cjs',
    `const { readFileSync } = require('node:fs');
const { spawnSync } = require('node:child_process');
const nice = (pid) => Number(readFileSync('/proc/' + pid + '/stat', 'utf8').split(') ')[1].split(' ')[16]);
const child = spawnSync('/bin/sh', ['-c', 'cat /proc/$$/stat'], { encoding: 'utf8' }).stdout;
console.log(JSON.stringify({ own: nice(process.pid), child: Number(child.split(') ')[1].split(' ')[16]) }));`,
  );
});

afterAll(async () => {
  for (const agent of started) agent.killGroup();
  scratch.cleanup();
});

describe('spawnAgentProcess: starting', () => {
  it('a missing binary is a not_found value, not a thrown error', async () => {
    const byPath = await spawnAgentProcess(
      nodeParams('', scratch.dir, { command: path.join(scratch.dir, 'no-such-agent'), args: [] }),
    );
    expect(byPath).toMatchObject({ ok: false, code: 'not_found' });
    const byName = await spawnAgentProcess(
      nodeParams('', scratch.dir, { command: 'no-such-agent-binary-on-path', args: [] }),
    );
    expect(byName).toMatchObject({ ok: false, code: 'not_found' });
    if (!byName.ok) expect(byName.message).toContain('no-such-agent-binary-on-path');
  });

  it('a file without execute permission is not_executable, not not_found', async () => {
    const file = path.join(scratch.dir, 'not-executable');
    writeFileSync(file, '#!/bin/sh\necho hi\n');
    chmodSync(file, 0o644);
    const result = await spawnAgentProcess(nodeParams('', scratch.dir, { command: file, args: [] }));
    expect(result).toMatchObject({ ok: false, code: 'not_executable' });
  });

  it('a missing or non-directory working directory is bad_cwd, not a missing binary', async () => {
    const missing = await spawnAgentProcess(nodeParams('x', path.join(scratch.dir, 'no-such-dir')));
    expect(missing).toMatchObject({ ok: false, code: 'bad_cwd' });
    const file = path.join(scratch.dir, 'a-file');
    writeFileSync(file, '');
    const notDir = await spawnAgentProcess(nodeParams('x', file));
    expect(notDir).toMatchObject({ ok: false, code: 'bad_cwd' });
  });

  it('an argument the OS cannot take (a NUL byte) is spawn_failed, not a throw', async () => {
    const result = await spawnAgentProcess(nodeParams('bad\0arg', scratch.dir));
    expect(result).toMatchObject({ ok: false, code: 'spawn_failed' });
  });

  it('the agent leads its own process group, apart from the orchestrator', async () => {
    const agent = await start(nodeParams(path.join(scratch.dir, 'linger.cjs'), scratch.dir));
    expect(agent.pgid).toBe(agent.pid);
    expect(readProcStat(agent.pid)?.pgid).toBe(agent.pid);
    expect(readProcStat(process.pid)?.pgid).not.toBe(agent.pid);
    await readUntil(stdoutOf(agent), /^ready$/);
    expect(agent.groupAlive()).toBe(true);
    agent.killGroup();
    expect(await agent.exited).toEqual({ exitCode: null, signal: 'SIGKILL' });
    expect(agent.groupAlive()).toBe(false);
  });

  it('the agent and what it starts run at the added niceness; none added leaves the service priority', async () => {
    const own = (await import('node:os')).getPriority(0);
    const niceness = async (added: number | undefined) => {
      const agent = await start({
        ...nodeParams(path.join(scratch.dir, 'niceness.cjs'), scratch.dir),
        niceness: added,
      });
      const [json] = await readUntil(stdoutOf(agent), /^\{.*\}$/);
      return JSON.parse(json) as { own: number; child: number };
    };
    expect(await niceness(7)).toEqual({ own: Math.min(19, own + 7), child: Math.min(19, own + 7) });
    expect(await niceness(undefined)).toEqual({ own, child: own });
    expect(await niceness(0)).toEqual({ own, child: own });
  });

  it("the orchestrator's own environment does not leak into the agent, and cwd is honoured", async () => {
    process.env.ORCHESTRATOR_ONLY_SECRET = 'must-not-leak';
    try {
      const agent = await start(
        nodeParams(path.join(scratch.dir, 'describe-self.cjs'), scratch.dir, {
          env: childEnv({ AGENT_VAR: '1' }),
        }),
      );
      const [json] = await readUntil(stdoutOf(agent), /^\{.*\}$/);
      const seen = JSON.parse(json) as { cwd: string; env: string[] };
      expect(seen.env).toEqual(['AGENT_VAR', 'PATH']);
      expect(seen.cwd).toBe(realpathSync(scratch.dir));
    } finally {
      delete process.env.ORCHESTRATOR_ONLY_SECRET;
    }
  });
});

describe('spawnAgentProcess: stdin', () => {
  it('the prompt on stdin arrives whole (past the pipe buffer) and stdin is closed after it', async () => {
    const prompt = `${'prompt ✓ 😀 '.repeat(20_000)}end`;
    const agent = await start(
      nodeParams(path.join(scratch.dir, 'echo-stdin.cjs'), scratch.dir, { stdin: { text: prompt } }),
    );
    const [, length] = await readUntil(stdoutOf(agent), /^length (\d+)$/);
    expect(Number(length)).toBe(Buffer.byteLength(prompt));
    expect(await agent.exited).toEqual({ exitCode: 0, signal: null });
  });

  it("stdin 'ignore' gives a reading agent EOF at once instead of hanging", async () => {
    const agent = await start(nodeParams(path.join(scratch.dir, 'echo-stdin.cjs'), scratch.dir));
    const [, length] = await readUntil(stdoutOf(agent), /^length (\d+)$/);
    expect(length).toBe('0');
    expect(await agent.exited).toEqual({ exitCode: 0, signal: null });
  });

  it('an agent that exits without reading its prompt does not crash the orchestrator (EPIPE)', async () => {
    const agent = await start(
      nodeParams(path.join(scratch.dir, 'exit2.cjs'), scratch.dir, { stdin: { text: 'x'.repeat(1 << 20) } }),
    );
    expect(await agent.exited).toEqual({ exitCode: 2, signal: null });
    expect(await agent.stderr.drain(2_000)).toBe(true);
    expect(agent.stderr.lines()).toEqual(['boom']);
  });
});

describe('exit helpers on real exits', () => {
  it('exit 127 is recognised as command-not-found', async () => {
    const agent = await start(nodeParams(path.join(scratch.dir, 'exit127.cjs'), scratch.dir));
    const exit = await agent.exited;
    expect(exit).toEqual({ exitCode: 127, signal: null });
    expect(isCommandNotFoundExit(exit.exitCode)).toBe(true);
    expect(describeExit(exit)).toBe('exit 127');
  });

  it.each([
    [{ exitCode: 2, signal: null }, 'exit 2', false],
    [{ exitCode: 0, signal: null }, 'exit 0', false],
    [{ exitCode: null, signal: 'SIGKILL' }, 'signal SIGKILL', false],
    [{ exitCode: null, signal: null }, 'exit unknown', false],
  ])('describeExit(%o) is %s and is not mistaken for command-not-found', (exit, text, notFound) => {
    expect(describeExit(exit)).toBe(text);
    expect(isCommandNotFoundExit(exit.exitCode)).toBe(notFound);
  });
});
