/** The local stand-in for an SSH worker host keeps the RemoteHost contract the tests rely on. */
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { RemoteScriptParams } from '../../src/domain/remote.js';
import { LocalRemoteHost } from '../support/local-remote-host.js';
import { isAlive, readPid, removeTempDirs, tempDir } from './support.js';

afterAll(removeTempDirs);

const hosts: LocalRemoteHost[] = [];
afterEach(() => {
  for (const host of hosts.splice(0)) host.killAll();
});

async function host(opts: ConstructorParameters<typeof LocalRemoteHost>[0] = {}): Promise<LocalRemoteHost> {
  const made = new LocalRemoteHost({ loginDir: await tempDir('local-host-'), ...opts });
  hosts.push(made);
  return made;
}

const script = (over: Partial<RemoteScriptParams>): RemoteScriptParams => ({
  script: 'true',
  cwd: null,
  env: {},
  timeoutMs: 10_000,
  ...over,
});

describe('LocalRemoteHost.run', () => {
  it('gives the script exactly the env sent (plus the login env), nothing of this process', async () => {
    process.env.LOCAL_HOST_TEST_LEAK = 'leaked';
    try {
      const h = await host({ loginEnv: { HOME: '/home/remote' } });
      const ran = await h.run(script({ script: 'env', env: { ONLY: 'this' } }));
      if (!ran.ok) throw new Error(ran.message);
      const names = ran.result.output
        .split('\n')
        .filter((line) => line.includes('='))
        .map((line) => line.slice(0, line.indexOf('=')));
      expect(names).toContain('ONLY');
      expect(names).toContain('HOME');
      expect(names).not.toContain('LOCAL_HOST_TEST_LEAK');
      expect(ran.result.output).toContain('HOME=/home/remote');
    } finally {
      delete process.env.LOCAL_HOST_TEST_LEAK;
    }
  });

  it('runs in cwd, or in the login directory for null', async () => {
    const h = await host();
    const dir = await tempDir('local-host-cwd-');
    const inCwd = await h.run(script({ script: 'pwd -P', cwd: dir }));
    const inLogin = await h.run(script({ script: 'pwd -P' }));
    expect(inCwd.ok && inCwd.result.output.trim()).toBe(dir);
    expect(inLogin.ok && inLogin.result.output.trim()).not.toBe(dir);
  });

  it('a missing or relative cwd is bad_cwd, not a failed script', async () => {
    const h = await host();
    const dir = await tempDir('local-host-cwd-');
    for (const cwd of [path.join(dir, 'missing'), 'relative']) {
      const ran = await h.run(script({ cwd }));
      expect(ran.ok ? null : ran.reason).toBe('bad_cwd');
    }
  });

  it('reports exit codes and interleaves stderr with stdout', async () => {
    const h = await host();
    const ran = await h.run(script({ script: 'echo one; echo two >&2; echo three; exit 5' }));
    expect(ran.ok && ran.result).toMatchObject({
      exitCode: 5,
      signal: null,
      timedOut: false,
      output: 'one\ntwo\nthree\n',
    });
  });

  it('a timeout kills the whole process group', async () => {
    const h = await host();
    const dir = await tempDir('local-host-pid-');
    const pidFile = path.join(dir, 'pid');
    const ran = await h.run(script({ script: `sleep 30 & echo $! > '${pidFile}'; wait`, timeoutMs: 200 }));
    expect(ran.ok && ran.result).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGKILL' });
    const pid = await readPid(pidFile);
    await expect.poll(() => isAlive(pid)).toBe(false);
  });

  it('aborting kills the script', async () => {
    const h = await host();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const ran = await h.run(script({ script: 'sleep 30', signal: controller.signal }));
    expect(ran.ok && ran.result).toMatchObject({ timedOut: false, exitCode: null, signal: 'SIGKILL' });
  });

  it('keeps the head of the output up to maxOutputBytes', async () => {
    const h = await host();
    const ran = await h.run(script({ script: 'printf 0123456789; printf abcdef', maxOutputBytes: 12 }));
    expect(ran.ok && ran.result.output).toBe('0123456789ab');
  });

  it('is unreachable while told to be', async () => {
    const h = await host({ name: 'me@box' });
    h.unreachable = 'connection refused';
    expect(await h.probe()).toEqual({
      ok: false,
      reason: 'unreachable',
      message: 'me@box: connection refused',
    });
    expect((await h.run(script({}))).ok).toBe(false);
    h.unreachable = null;
    expect(await h.probe()).toEqual({ ok: true });
  });
});

describe('LocalRemoteHost.launch', () => {
  it('starts a group leader with its args and env, and terminateGroup ends it', async () => {
    const h = await host();
    const dir = await tempDir('local-host-launch-');
    const launched = await h.launch({
      cwd: dir,
      command: 'sh -c',
      args: ['echo "$1 $GREETING"; pwd -P; exec sleep 30', 'sh', 'it works'],
      env: { GREETING: 'hello' },
    });
    if (!launched.ok) throw new Error(launched.message);
    const chunks: Buffer[] = [];
    launched.process.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    await expect.poll(() => Buffer.concat(chunks).toString()).toBe(`it works hello\n${dir}\n`);
    await launched.process.terminateGroup(1_000);
    expect(await launched.process.exited).toEqual({
      exitCode: null,
      signal: 'SIGTERM',
      connectionLost: false,
    });
    await fsp.rm(dir, { recursive: true, force: true });
  });
});
