/** `run` against a real sshd: merged output, caps, timeouts and aborts that kill the whole remote group. */
import { describe, expect, it } from 'vitest';
import { userProcesses } from '../support/ssh-session.js';
import { pollUntil, testUserName } from '../support/sshd.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

import { freshHost, hostsFor, useTestSshd } from './support.js';

const USER = testUserName('orchssh-run');
const ssh = useTestSshd(USER);

describe('run', () => {
  it('interleaves stdout and stderr in arrival order and reports the exit code', async () => {
    const host = freshHost(ssh.sshd);
    const ran = await host.run({
      script: 'echo one; echo two >&2; echo three; pwd; exit 4',
      cwd: '/tmp',
      env: {},
      timeoutMs: 10_000,
    });
    if (!ran.ok) throw new Error(ran.message);
    expect(ran.result).toMatchObject({
      exitCode: 4,
      signal: null,
      timedOut: false,
      output: 'one\ntwo\nthree\n/tmp\n',
      connectionLost: false,
    });
  });

  it('a connection closed mid-run is a result marked connectionLost, with the output so far', async () => {
    const hosts = hostsFor(ssh.sshd);
    const host = hosts.host(ssh.sshd.spec);
    const running = host.run({ script: 'echo started; sleep 30', cwd: null, env: {}, timeoutMs: 60_000 });
    // Once the script runs, drop the connection under it.
    expect(await pollUntil(() => userProcesses(ssh.user.name, /^sleep 30/).length > 0, 10_000)).toBe(true);
    await hosts.close();
    const ran = await running;
    if (!ran.ok) throw new Error(ran.message);
    expect(ran.result).toMatchObject({ exitCode: null, timedOut: false, connectionLost: true });
    expect(ran.result.output).toContain('started');
    // Cut off from its session, the script is killed by the wrapper's watcher (as a killed orchestrator's hook is).
    expect(await pollUntil(() => userProcesses(ssh.user.name, /^sleep 30/).length === 0, 5_000)).toBe(true);
    const finished = await host.run({ script: 'true', cwd: null, env: {}, timeoutMs: 5_000 });
    expect(finished).toMatchObject({ ok: false, reason: 'unreachable' });
  });

  it('runs in the login directory when cwd is null, with the environment from stdin', async () => {
    const host = freshHost(ssh.sshd);
    const ran = await host.run({
      script: 'pwd; printf "%s" "$VALUE"; read -r line || echo stdin-eof',
      cwd: null,
      env: { VALUE: "a 'quoted'\nvalue\n" },
      timeoutMs: 10_000,
    });
    if (!ran.ok) throw new Error(ran.message);
    expect(ran.result.output).toBe(`${ssh.user.home}\na 'quoted'\nvalue\nstdin-eof\n`);
    expect(ran.result.exitCode).toBe(0);
  });

  it('a timeout kills the whole remote group, children included, and says timedOut', async () => {
    const host = freshHost(ssh.sshd);
    const ran = await host.run({
      script: 'sleep 300 & echo started; sleep 300',
      cwd: ssh.user.home,
      env: {},
      timeoutMs: 800,
    });
    if (!ran.ok) throw new Error(ran.message);
    expect(ran.result.timedOut).toBe(true);
    expect(ran.result.signal).toBe('SIGKILL');
    expect(ran.result.exitCode).toBeNull();
    expect(ran.result.output).toContain('started');
    expect(ran.result.durationMs).toBeLessThan(10_000);
    expect(await pollUntil(() => userProcesses(USER).length === 0, 5_000)).toBe(true);
  });

  it('an abort kills the remote group', async () => {
    const host = freshHost(ssh.sshd);
    const controller = new AbortController();
    const pending = host.run({
      script: 'echo up; sleep 300',
      cwd: ssh.user.home,
      env: {},
      timeoutMs: 0,
      signal: controller.signal,
    });
    expect(await pollUntil(() => userProcesses(USER).some((p) => p.cmdline === 'sleep 300'), 5_000)).toBe(
      true,
    );
    controller.abort();
    const ran = await pending;
    if (!ran.ok) throw new Error(ran.message);
    expect(ran.result).toMatchObject({ timedOut: false, signal: 'SIGKILL', exitCode: null });
    expect(ran.result.output).toContain('aborted');
    expect(await pollUntil(() => userProcesses(USER).length === 0, 5_000)).toBe(true);
  });

  it('a background child holding the channel cannot keep a finished script from returning, and is killed', async () => {
    const host = freshHost(ssh.sshd);
    const ran = await Promise.race([
      host.run({ script: 'sleep 300 & echo done', cwd: ssh.user.home, env: {}, timeoutMs: 60_000 }),
      sleep(10_000).then(() => 'still waiting' as const),
    ]);
    expect(ran).not.toBe('still waiting');
    if (ran === 'still waiting' || !ran.ok) throw new Error(`no result: ${JSON.stringify(ran)}`);
    expect(ran.result).toMatchObject({ exitCode: 0, timedOut: false, output: 'done\n' });
    // Its channel closes once the killed child drops its files, a moment before it is a zombie.
    expect(await pollUntil(() => userProcesses(USER, /^sleep 300/).length === 0, 2_000)).toBe(true);
  });

  it('a background child that let go of the channel does not outlive the script that started it', async () => {
    const host = freshHost(ssh.sshd);
    const ran = await host.run({
      script: 'sleep 300 </dev/null >/dev/null 2>&1 & echo done',
      cwd: ssh.user.home,
      env: {},
      timeoutMs: 60_000,
    });
    if (!ran.ok) throw new Error(ran.message);
    expect(ran.result).toMatchObject({ exitCode: 0, output: 'done\n' });
    // The kill was sent before the result came back; dying takes the host a moment.
    expect(await pollUntil(() => userProcesses(USER, /^sleep 300/).length === 0, 2_000)).toBe(true);
  });

  it('keeps only the head of the output up to maxOutputBytes', async () => {
    const host = freshHost(ssh.sshd);
    const ran = await host.run({
      script: 'i=0; while [ $i -lt 2000 ]; do echo "line $i"; i=$((i+1)); done',
      cwd: ssh.user.home,
      env: {},
      timeoutMs: 10_000,
      maxOutputBytes: 100,
    });
    if (!ran.ok) throw new Error(ran.message);
    const [head, note] = ran.result.output.split('\n[output truncated');
    expect(Buffer.byteLength(head ?? '')).toBe(100);
    expect(head?.startsWith('line 0\nline 1\n')).toBe(true);
    expect(note).toContain('at 100 bytes');
    expect(ran.result.exitCode).toBe(0);
  });

  it('a missing working directory is the bad_cwd failure', async () => {
    const host = freshHost(ssh.sshd);
    const ran = await host.run({ script: 'echo never', cwd: '/nonexistent/ws', env: {}, timeoutMs: 10_000 });
    expect(ran).toMatchObject({ ok: false, reason: 'bad_cwd' });
    if (!ran.ok) expect(ran.message).toContain('/nonexistent/ws');
  });
});
