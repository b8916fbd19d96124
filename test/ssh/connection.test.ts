/**
 * Connections against a real sshd: host key policies on the managed known_hosts file,
 * reconnect after the server restarts, fail-fast backoff, shared connect attempts and
 * clear failures for a missing or unreadable key.
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { restartSshd, useSshHost } from '../support/ssh-session.js';
import { pollUntil, type Sshd, startSshd, testUserName } from '../support/sshd.js';
import { closeAll, freshHost, hostsFor } from './support.js';

const USER = testUserName('orchssh-conn');
const ssh = useSshHost(USER);
const extraServers: Sshd[] = [];

afterEach(async () => {
  await closeAll();
  await Promise.all(extraServers.splice(0).map((server) => server.stop()));
});

function knownHostsPath(): string {
  return path.join(mkdtempSync(path.join(os.tmpdir(), 'ssh-kh-')), 'dir', 'known_hosts');
}

describe('host key policy', () => {
  it('accept-new records an unknown host as "[host]:port type base64" in a 0600 file', async () => {
    const file = knownHostsPath();
    const host = freshHost(ssh.sshd, { knownHostsFile: file, strictHostKeyChecking: 'accept-new' });
    expect(await host.probe()).toEqual({ ok: true });
    expect(readFileSync(file, 'utf8')).toBe(`[127.0.0.1]:${ssh.sshd.port} ${ssh.sshd.hostPublicKey}\n`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('yes refuses a host that is not in the file, naming the file', async () => {
    const file = knownHostsPath();
    const host = freshHost(ssh.sshd, { knownHostsFile: file, strictHostKeyChecking: 'yes' });
    const probed = await host.probe();
    expect(probed).toMatchObject({ ok: false, reason: 'unreachable' });
    if (!probed.ok) {
      expect(probed.message).toContain('host key');
      expect(probed.message).toContain('unknown');
      expect(probed.message).toContain(file);
    }
  });

  it('yes accepts a host listed with its key (among comments, other hosts and odd lines)', async () => {
    const file = knownHostsPath();
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(
      file,
      [
        '# managed by tests',
        '@cert-authority *.example ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB0gkQ3vOBZqDZAT0sH3lXYsn0B5j1QNGXeDZ3yzAAAA',
        'other.example ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIB0gkQ3vOBZqDZAT0sH3lXYsn0B5j1QNGXeDZ3yzAAAA',
        'garbage',
        ssh.sshd.knownHostsLine(),
      ].join('\n'),
    );
    const warnings: string[] = [];
    const host = freshHost(ssh.sshd, {
      knownHostsFile: file,
      strictHostKeyChecking: 'yes',
      onWarn: (message) => warnings.push(message),
    });
    expect(await host.probe()).toEqual({ ok: true });
    expect(warnings).toContain('ignored a known_hosts line');
  });

  it('accept-new refuses a host whose key changed (another server on the same port)', async () => {
    const file = knownHostsPath();
    const first = await startSshd({ user: USER });
    extraServers.push(first);
    const before = freshHost(first, { knownHostsFile: file });
    expect(await before.probe()).toEqual({ ok: true });
    await closeAll();
    await first.stop();
    const impostor = await startSshd({ user: USER, port: first.port, clientKeyPath: first.clientKeyPath });
    extraServers.push(impostor);
    expect(impostor.hostPublicKey).not.toBe(first.hostPublicKey);
    const after = freshHost(impostor, { knownHostsFile: file });
    const probed = await after.probe();
    expect(probed).toMatchObject({ ok: false, reason: 'unreachable' });
    if (!probed.ok) {
      expect(probed.message).toContain('host key changed');
      expect(probed.message).toContain(file);
    }
    // The old key stays; nothing about the impostor was recorded.
    expect(readFileSync(file, 'utf8')).toBe(`[127.0.0.1]:${first.port} ${first.hostPublicKey}\n`);
  });

  it('no accepts any key and records nothing', async () => {
    const file = knownHostsPath();
    const host = freshHost(ssh.sshd, { knownHostsFile: file, strictHostKeyChecking: 'no' });
    expect(await host.probe()).toEqual({ ok: true });
    expect(() => statSync(file)).toThrow();
  });
});

describe('connection lifecycle', () => {
  it('reconnects on the next call after the server restarted', async () => {
    const server = await startSshd({ user: USER });
    extraServers.push(server);
    const host = freshHost(server);
    const first = await host.run({ script: 'echo one', cwd: null, env: {}, timeoutMs: 10_000 });
    expect(first).toMatchObject({ ok: true, result: { output: 'one\n' } });
    await server.stop();
    expect(await pollUntil(() => host.connectionCount === 0, 5_000)).toBe(true);
    const restarted = await restartSshd(server);
    extraServers.push(restarted);
    const second = await host.run({ script: 'echo two', cwd: null, env: {}, timeoutMs: 10_000 });
    expect(second).toMatchObject({ ok: true, result: { output: 'two\n' } });
    expect(host.connectAttempts).toBe(2);
  });

  it('after a refused connect, calls within the backoff window fail fast without a new attempt', async () => {
    const server = await startSshd({ user: USER });
    extraServers.push(server);
    await server.stop();
    const host = freshHost(server, { reconnectBackoff: { baseMs: 60_000, maxMs: 60_000 } });
    const firstProbe = await host.probe();
    expect(firstProbe).toMatchObject({ ok: false, reason: 'unreachable' });
    expect(host.connectAttempts).toBe(1);
    const secondProbe = await host.probe();
    expect(secondProbe).toMatchObject({ ok: false, reason: 'unreachable' });
    if (!secondProbe.ok && !firstProbe.ok) {
      expect(secondProbe.message).toContain('next attempt allowed at');
      expect(secondProbe.message).toContain('ECONNREFUSED');
    }
    expect(host.connectAttempts).toBe(1);
    const launched = await host.launch({ cwd: '/', command: 'true', args: [], env: {} });
    expect(launched).toMatchObject({ ok: false, reason: 'unreachable' });
    expect(host.connectAttempts).toBe(1);
  });

  it('the backoff ends: once the window passed and the server is back, a call connects', async () => {
    const server = await startSshd({ user: USER });
    extraServers.push(server);
    await server.stop();
    const host = freshHost(server, { reconnectBackoff: { baseMs: 300, maxMs: 300 } });
    expect(await host.probe()).toMatchObject({ ok: false });
    const back = await restartSshd(server);
    extraServers.push(back);
    let probed = await host.probe();
    const deadline = Date.now() + 5_000;
    while (!probed.ok && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      probed = await host.probe();
    }
    expect(probed).toEqual({ ok: true });
    expect(host.connectAttempts).toBe(2);
  });

  it('concurrent callers share one connect attempt', async () => {
    const host = freshHost(ssh.sshd);
    const results = await Promise.all(Array.from({ length: 5 }, () => host.probe()));
    expect(results).toEqual(Array.from({ length: 5 }, () => ({ ok: true })));
    expect(host.connectAttempts).toBe(1);
    expect(host.connectionCount).toBe(1);
  });

  it('the same spec string gives the same host', () => {
    const hosts = hostsFor(ssh.sshd);
    expect(hosts.host(ssh.sshd.spec)).toBe(hosts.host(ssh.sshd.spec));
    expect(() => hosts.host('bad host')).toThrow(/whitespace/);
  });
});

describe('key source', () => {
  it('no identity file and no agent is unreachable with a clear message, without a network attempt', async () => {
    const host = freshHost(ssh.sshd, { identityFile: null, agentSocket: null });
    const probed = await host.probe();
    expect(probed).toMatchObject({ ok: false, reason: 'unreachable' });
    if (!probed.ok) expect(probed.message).toMatch(/no SSH key source/);
    const ran = await host.run({ script: 'true', cwd: null, env: {}, timeoutMs: 1_000 });
    expect(ran).toMatchObject({ ok: false, reason: 'unreachable' });
    expect(host.connectAttempts).toBe(0);
  });

  it('an unreadable identity file is unreachable and the message names the file', async () => {
    const missing = path.join(os.tmpdir(), 'no-such-dir', 'id_ed25519');
    const host = freshHost(ssh.sshd, { identityFile: missing });
    const launched = await host.launch({ cwd: '/', command: 'true', args: [], env: {} });
    expect(launched).toMatchObject({ ok: false, reason: 'unreachable' });
    if (!launched.ok) expect(launched.message).toContain(missing);
  });

  it('with no identity file, the key held by a real ssh-agent at the agent socket logs in', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ssh-agent-'));
    const socket = path.join(dir, 'agent.sock');
    const agent = spawn('/usr/bin/ssh-agent', ['-D', '-a', socket], { stdio: 'ignore' });
    try {
      expect(await pollUntil(() => existsSync(socket), 5_000)).toBe(true);
      execFileSync('/usr/bin/ssh-add', [ssh.sshd.clientKeyPath], {
        env: { SSH_AUTH_SOCK: socket },
        stdio: 'pipe',
      });
      const host = freshHost(ssh.sshd, { identityFile: null, agentSocket: socket });
      expect(await host.probe()).toEqual({ ok: true });
      const ran = await host.run({ script: 'id -un', cwd: null, env: {}, timeoutMs: 5_000 });
      expect(ran.ok && ran.result.output.trim()).toBe(USER);
    } finally {
      agent.kill('SIGKILL');
    }
  });

  it('an agent socket without the right key is unreachable (authentication failed)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ssh-agent-'));
    const socket = path.join(dir, 'agent.sock');
    const agent = spawn('/usr/bin/ssh-agent', ['-D', '-a', socket], { stdio: 'ignore' });
    try {
      expect(await pollUntil(() => existsSync(socket), 5_000)).toBe(true);
      const host = freshHost(ssh.sshd, { identityFile: null, agentSocket: socket });
      const probed = await host.probe();
      expect(probed).toMatchObject({ ok: false, reason: 'unreachable' });
    } finally {
      agent.kill('SIGKILL');
    }
  });

  it('a key the server does not accept is unreachable (authentication failed)', async () => {
    const other = await startSshd({ user: USER });
    extraServers.push(other);
    const host = freshHost(ssh.sshd, { identityFile: other.clientKeyPath });
    const probed = await host.probe();
    expect(probed).toMatchObject({ ok: false, reason: 'unreachable' });
    if (!probed.ok) expect(probed.message).toContain('authentication');
  });
});

/** The server's per-connection processes: every descendant of the listener. */
function connectionProcesses(listenerPid: number): number[] {
  const parentOf = (pid: number) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      return -1;
    }
  };
  const pids = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
  const found = new Set<number>([listenerPid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const pid of pids) {
      if (!found.has(pid) && found.has(parentOf(pid))) {
        found.add(pid);
        grew = true;
      }
    }
  }
  found.delete(listenerPid);
  return [...found];
}

describe('keepalive', () => {
  it('a server that stops answering is dropped once the keepalives go unanswered: a running command ends as connectionLost', async () => {
    const host = freshHost(ssh.sshd, { keepaliveIntervalMs: 200, keepaliveCountMax: 2 });
    const launched = await host.launch({ cwd: '/', command: 'sleep', args: ['30'], env: {} });
    if (!launched.ok) throw new Error(launched.message);
    launched.process.stdout.resume();
    launched.process.stderr.resume();
    // Freeze the server side of the connection: TCP stays open, nothing answers.
    const frozen = connectionProcesses(ssh.sshd.pid);
    expect(frozen.length).toBeGreaterThan(0);
    for (const pid of frozen) process.kill(pid, 'SIGSTOP');
    try {
      const timeout = new Promise<'still connected'>((resolve) =>
        setTimeout(() => resolve('still connected'), 10_000),
      );
      const exit = await Promise.race([launched.process.exited, timeout]);
      expect(exit).toMatchObject({ connectionLost: true });
    } finally {
      for (const pid of frozen) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    }
  });
});
