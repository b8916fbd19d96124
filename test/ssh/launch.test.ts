/**
 * `launch` against a real sshd as a non-root user (and once as root): what reaches the
 * command, what never appears in a command line, and that no process outlives a kill
 * or a dropped connection.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { userProcesses } from '../support/ssh-session.js';
import { allCommandLines, pollUntil, testUserName } from '../support/sshd.js';
import { collect, finish, firstOutput, freshHost, hostsFor, useTestSshd } from './support.js';

const USER = testUserName('orchssh-launch');
const ssh = useTestSshd(USER);

describe('launch', () => {
  it('hands out the command output without the start line, and its exit code', async () => {
    const host = freshHost(ssh.sshd);
    const launched = await host.launch({
      cwd: '/tmp',
      command: 'sh',
      args: ['-c', 'pwd; echo out; echo err >&2; exit 3'],
      env: {},
    });
    if (!launched.ok) throw new Error(launched.message);
    const { stdout, stderr, exit } = await finish(launched.process);
    expect(stdout).toBe('/tmp\nout\n');
    expect(stderr).toBe('err\n');
    expect(exit).toEqual({ exitCode: 3, signal: null, connectionLost: false });
  });

  it('reports a pid that leads its own process group and session on the host', async () => {
    const host = freshHost(ssh.sshd);
    const launched = await host.launch({
      cwd: ssh.user.home,
      command: 'sh',
      args: ['-c', 'exec ps -o pid=,pgid=,sid= -p $$'],
      env: {},
    });
    if (!launched.ok) throw new Error(launched.message);
    const { stdout } = await finish(launched.process);
    const [pid, pgid, sid] = stdout.trim().split(/\s+/).map(Number);
    expect(pid).toBe(launched.process.pid);
    expect(pgid).toBe(launched.process.pid);
    expect(sid).toBe(launched.process.pid);
  });

  it('passes arguments with quotes, spaces, $, backquotes and newlines through exactly', async () => {
    const host = freshHost(ssh.sshd);
    const args = [
      "it's",
      'two words',
      '$HOME and ${PATH}',
      '`id`',
      'line1\nline2',
      '',
      '"double"',
      '\\back\\slash',
      '*',
    ];
    const launched = await host.launch({
      cwd: ssh.user.home,
      command: 'printf',
      args: ['[%s]\\n', ...args],
      env: {},
    });
    if (!launched.ok) throw new Error(launched.message);
    const { stdout, exit } = await finish(launched.process);
    expect(exit.exitCode).toBe(0);
    expect(stdout).toBe(args.map((arg) => `[${arg}]\n`).join(''));
  });

  it('delivers the environment, including values with newlines and single quotes', async () => {
    const host = freshHost(ssh.sshd);
    const env = { PLAIN: 'x', TRICKY: "it's\nmulti 'line' $HOME `id`\n", EMPTY: '' };
    const launched = await host.launch({
      cwd: ssh.user.home,
      command: 'sh',
      args: ['-c', 'printf "%s|" "$PLAIN" "$TRICKY" "${EMPTY-unset}"'],
      env,
    });
    if (!launched.ok) throw new Error(launched.message);
    const { stdout } = await finish(launched.process);
    expect(stdout).toBe(`x|${env.TRICKY}||`);
  });

  it('refuses an environment name that is not a shell name before sending anything', async () => {
    const host = freshHost(ssh.sshd);
    const launched = await host.launch({
      cwd: ssh.user.home,
      command: 'true',
      args: [],
      env: { 'BAD-NAME': 'x' },
    });
    expect(launched).toMatchObject({ ok: false, reason: 'failed' });
    if (!launched.ok) expect(launched.message).toContain('BAD-NAME');
  });

  it('keeps stdin open for the command after the environment preamble', async () => {
    const host = freshHost(ssh.sshd);
    const launched = await host.launch({ cwd: ssh.user.home, command: 'cat', args: [], env: { A: 'b' } });
    if (!launched.ok) throw new Error(launched.message);
    const done = finish(launched.process);
    launched.process.stdin.write('hello\n');
    launched.process.stdin.end('world\n');
    const { stdout, exit } = await done;
    expect(stdout).toBe('hello\nworld\n');
    expect(exit.exitCode).toBe(0);
  });

  it('never shows an environment value in any command line on the host', async () => {
    const secret = `sk-test-${Math.random().toString(36).slice(2)}-secret`;
    const host = freshHost(ssh.sshd);
    const launched = await host.launch({
      cwd: ssh.user.home,
      command: 'sh',
      args: ['-c', 'echo started; sleep 300'],
      env: { API_KEY: secret },
    });
    if (!launched.ok) throw new Error(launched.message);
    launched.process.stderr.resume();
    await firstOutput(launched.process, 'started');
    // The command runs: its environment holds the secret, but no command line does.
    const environ = readFileSync(`/proc/${launched.process.pid}/environ`, 'utf8');
    expect(environ).toContain(`API_KEY=${secret}`);
    const leaks = allCommandLines().filter((p) => p.cmdline.includes(secret));
    expect(leaks).toEqual([]);
    await launched.process.terminateGroup(2_000);
  });

  it('terminateGroup leaves no process of the group, children included', async () => {
    const host = freshHost(ssh.sshd);
    const launched = await host.launch({
      cwd: ssh.user.home,
      command: 'sh',
      args: ['-c', 'sleep 300 & sleep 300 & echo ready; wait'],
      env: {},
    });
    if (!launched.ok) throw new Error(launched.message);
    launched.process.stderr.resume();
    await firstOutput(launched.process, 'ready');
    expect(
      await pollUntil(() => userProcesses(USER).filter((p) => p.cmdline === 'sleep 300').length === 2, 5_000),
    ).toBe(true);
    await launched.process.terminateGroup(2_000);
    expect(await pollUntil(() => userProcesses(USER).length === 0, 5_000)).toBe(true);
    const exit = await launched.process.exited;
    expect(exit.signal).toBe('SIGTERM');
  });

  it('terminateGroup escalates to SIGKILL when the group ignores SIGTERM', async () => {
    const host = freshHost(ssh.sshd);
    const launched = await host.launch({
      cwd: ssh.user.home,
      command: 'sh',
      args: ['-c', "trap '' TERM; echo ready; while :; do sleep 1; done"],
      env: {},
    });
    if (!launched.ok) throw new Error(launched.message);
    launched.process.stderr.resume();
    await firstOutput(launched.process, 'ready');
    await launched.process.terminateGroup(500);
    expect(await pollUntil(() => userProcesses(USER).length === 0, 5_000)).toBe(true);
    expect((await launched.process.exited).signal).toBe('SIGKILL');
  });

  it('killGroup kills the whole group', async () => {
    const host = freshHost(ssh.sshd);
    const launched = await host.launch({
      cwd: ssh.user.home,
      command: 'sh',
      args: ['-c', 'sleep 300 & echo ready; wait'],
      env: {},
    });
    if (!launched.ok) throw new Error(launched.message);
    launched.process.stderr.resume();
    await firstOutput(launched.process, 'ready');
    await launched.process.killGroup();
    expect(await pollUntil(() => userProcesses(USER).length === 0, 5_000)).toBe(true);
    expect((await launched.process.exited).signal).toBe('SIGKILL');
  });

  it('a dropped connection (hosts closed mid-run) leaves nothing running: the watcher kills the group', async () => {
    const hosts = hostsFor(ssh.sshd);
    const launched = await hosts.host(ssh.sshd.spec).launch({
      cwd: ssh.user.home,
      command: 'sh',
      args: ['-c', 'sleep 300 & echo ready; sleep 300'],
      env: {},
    });
    if (!launched.ok) throw new Error(launched.message);
    launched.process.stderr.resume();
    await firstOutput(launched.process, 'ready');
    expect(userProcesses(USER).length).toBeGreaterThanOrEqual(3);
    await hosts.close();
    const exit = await launched.process.exited;
    expect(exit.connectionLost).toBe(true);
    expect(await pollUntil(() => userProcesses(USER).length === 0, 8_000)).toBe(true);
  }, 20_000);

  it('a working directory that does not exist is bad_cwd', async () => {
    const host = freshHost(ssh.sshd);
    const launched = await host.launch({ cwd: '/nonexistent/dir', command: 'true', args: [], env: {} });
    expect(launched).toMatchObject({ ok: false, reason: 'bad_cwd' });
    if (!launched.ok) expect(launched.message).toContain('/nonexistent/dir');
  });

  it('five launches share one connection (one login in the sshd log)', async () => {
    const before = acceptedLogins();
    const host = freshHost(ssh.sshd);
    const launches = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        host.launch({ cwd: ssh.user.home, command: 'echo', args: [`n${i}`], env: {} }),
      ),
    );
    const outputs = await Promise.all(
      launches.map((launched) => {
        if (!launched.ok) throw new Error(launched.message);
        launched.process.stderr.resume();
        return collect(launched.process.stdout);
      }),
    );
    expect(outputs.sort()).toEqual(['n0\n', 'n1\n', 'n2\n', 'n3\n', 'n4\n']);
    expect(acceptedLogins() - before).toBe(1);
    expect(host.connectAttempts).toBe(1);
  });

  it('opens a second connection instead of exceeding the channels one connection may carry', async () => {
    const host = freshHost(ssh.sshd, { maxChannelsPerConnection: 2 });
    const launches = await Promise.all(
      Array.from({ length: 3 }, () =>
        host.launch({ cwd: ssh.user.home, command: 'sh', args: ['-c', 'echo up; sleep 300'], env: {} }),
      ),
    );
    for (const launched of launches) {
      if (!launched.ok) throw new Error(launched.message);
      launched.process.stderr.resume();
      await firstOutput(launched.process, 'up');
    }
    expect(host.connectionCount).toBe(2);
    for (const launched of launches) if (launched.ok) await launched.process.killGroup();
    expect(await pollUntil(() => userProcesses(USER).length === 0, 5_000)).toBe(true);
  });
});

describe('launch as root', () => {
  it('kills the group with kill from a second channel, since sshd refuses channel signals for root', async () => {
    const hosts = hostsFor(ssh.sshd, { defaultUser: 'root' });
    const host = hosts.host(`root@127.0.0.1:${ssh.sshd.port}`);
    const marker = `root-marker-${Date.now()}`;
    const launched = await host.launch({
      cwd: '/',
      command: 'sh',
      args: ['-c', `sleep 300 & echo ${marker}; wait`, marker],
      env: {},
    });
    if (!launched.ok) throw new Error(launched.message);
    launched.process.stderr.resume();
    await firstOutput(launched.process, marker);
    const group = () =>
      allCommandLines().filter((p) => p.cmdline.includes(marker) || isInGroup(p.pid, launched.process.pid));
    expect(group().length).toBeGreaterThanOrEqual(2);
    await launched.process.terminateGroup(2_000);
    expect(await pollUntil(() => group().length === 0, 5_000)).toBe(true);
  });
});

function acceptedLogins(): number {
  return readFileSync(ssh.sshd.logPath, 'utf8')
    .split('\n')
    .filter((line) => line.includes('Accepted publickey')).length;
}

function isInGroup(pid: number, pgid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[2]) === pgid && fields[0] !== 'Z';
  } catch {
    return false;
  }
}
