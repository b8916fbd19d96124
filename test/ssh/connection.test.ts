/**
 * Connections against a real sshd: host key policies on the managed known_hosts file,
 * reconnect after the server restarts, fail-fast backoff, shared connect attempts and
 * clear failures for a missing or unreadable key.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureTestUser, pollUntil, type Sshd, startSshd } from '../support/sshd.js';
import { closeAll, hostsFor } from './support.js';

const USER = 'orchssh-conn';
let sshd: Sshd;
const extraServers: Sshd[] = [];

beforeAll(async () => {
  ensureTestUser(USER);
  sshd = await startSshd({ user: USER });
});
afterEach(async () => {
  await closeAll();
  await Promise.all(extraServers.splice(0).map((server) => server.stop()));
});
afterAll(async () => {
  await sshd?.stop();
});

function knownHostsPath(): string {
  return path.join(mkdtempSync(path.join(os.tmpdir(), 'ssh-kh-')), 'dir', 'known_hosts');
}

describe('host key policy', () => {
  it('accept-new records an unknown host as "[host]:port type base64" in a 0600 file', async () => {
    const file = knownHostsPath();
    const host = hostsFor(sshd, { knownHostsFile: file, strictHostKeyChecking: 'accept-new' }).host(
      sshd.spec,
    );
    expect(await host.probe()).toEqual({ ok: true });
    expect(readFileSync(file, 'utf8')).toBe(`[127.0.0.1]:${sshd.port} ${sshd.hostPublicKey}\n`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('yes refuses a host that is not in the file, naming the file', async () => {
    const file = knownHostsPath();
    const host = hostsFor(sshd, { knownHostsFile: file, strictHostKeyChecking: 'yes' }).host(sshd.spec);
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
        sshd.knownHostsLine(),
      ].join('\n'),
    );
    const warnings: string[] = [];
    const host = hostsFor(sshd, {
      knownHostsFile: file,
      strictHostKeyChecking: 'yes',
      onWarn: (message) => warnings.push(message),
    }).host(sshd.spec);
    expect(await host.probe()).toEqual({ ok: true });
    expect(warnings).toContain('ignored a known_hosts line');
  });

  it('accept-new refuses a host whose key changed (another server on the same port)', async () => {
    const file = knownHostsPath();
    const first = await startSshd({ user: USER });
    extraServers.push(first);
    const before = hostsFor(first, { knownHostsFile: file }).host(first.spec);
    expect(await before.probe()).toEqual({ ok: true });
    await closeAll();
    await first.stop();
    const impostor = await startSshd({ user: USER, port: first.port, clientKeyPath: first.clientKeyPath });
    extraServers.push(impostor);
    expect(impostor.hostPublicKey).not.toBe(first.hostPublicKey);
    const after = hostsFor(impostor, { knownHostsFile: file }).host(impostor.spec);
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
    const host = hostsFor(sshd, { knownHostsFile: file, strictHostKeyChecking: 'no' }).host(sshd.spec);
    expect(await host.probe()).toEqual({ ok: true });
    expect(() => statSync(file)).toThrow();
  });
});

describe('connection lifecycle', () => {
  it('reconnects on the next call after the server restarted', async () => {
    const server = await startSshd({ user: USER });
    extraServers.push(server);
    const host = hostsFor(server).host(server.spec);
    const first = await host.run({ script: 'echo one', cwd: null, env: {}, timeoutMs: 10_000 });
    expect(first).toMatchObject({ ok: true, result: { output: 'one\n' } });
    await server.stop();
    expect(await pollUntil(() => host.connectionCount === 0, 5_000)).toBe(true);
    const restarted = await startSshd({
      user: USER,
      port: server.port,
      hostKeyPath: server.hostKeyPath,
      clientKeyPath: server.clientKeyPath,
    });
    extraServers.push(restarted);
    const second = await host.run({ script: 'echo two', cwd: null, env: {}, timeoutMs: 10_000 });
    expect(second).toMatchObject({ ok: true, result: { output: 'two\n' } });
    expect(host.connectAttempts).toBe(2);
  });

  it('after a refused connect, calls within the backoff window fail fast without a new attempt', async () => {
    const server = await startSshd({ user: USER });
    extraServers.push(server);
    await server.stop();
    const host = hostsFor(server, { reconnectBackoff: { baseMs: 60_000, maxMs: 60_000 } }).host(server.spec);
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
    const host = hostsFor(server, { reconnectBackoff: { baseMs: 300, maxMs: 300 } }).host(server.spec);
    expect(await host.probe()).toMatchObject({ ok: false });
    const back = await startSshd({
      user: USER,
      port: server.port,
      hostKeyPath: server.hostKeyPath,
      clientKeyPath: server.clientKeyPath,
    });
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
    const host = hostsFor(sshd).host(sshd.spec);
    const results = await Promise.all(Array.from({ length: 5 }, () => host.probe()));
    expect(results).toEqual(Array.from({ length: 5 }, () => ({ ok: true })));
    expect(host.connectAttempts).toBe(1);
    expect(host.connectionCount).toBe(1);
  });

  it('the same spec string gives the same host', () => {
    const hosts = hostsFor(sshd);
    expect(hosts.host(sshd.spec)).toBe(hosts.host(sshd.spec));
    expect(() => hosts.host('bad host')).toThrow(/whitespace/);
  });
});

describe('key source', () => {
  it('no identity file and no agent is unreachable with a clear message, without a network attempt', async () => {
    const host = hostsFor(sshd, { identityFile: null, agentSocket: null }).host(sshd.spec);
    const probed = await host.probe();
    expect(probed).toMatchObject({ ok: false, reason: 'unreachable' });
    if (!probed.ok) expect(probed.message).toMatch(/no SSH key source/);
    const ran = await host.run({ script: 'true', cwd: null, env: {}, timeoutMs: 1_000 });
    expect(ran).toMatchObject({ ok: false, reason: 'unreachable' });
    expect(host.connectAttempts).toBe(0);
  });

  it('an unreadable identity file is unreachable and the message names the file', async () => {
    const missing = path.join(os.tmpdir(), 'no-such-dir', 'id_ed25519');
    const host = hostsFor(sshd, { identityFile: missing }).host(sshd.spec);
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
      execFileSync('/usr/bin/ssh-add', [sshd.clientKeyPath], {
        env: { SSH_AUTH_SOCK: socket },
        stdio: 'pipe',
      });
      const host = hostsFor(sshd, { identityFile: null, agentSocket: socket }).host(sshd.spec);
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
      const host = hostsFor(sshd, { identityFile: null, agentSocket: socket }).host(sshd.spec);
      const probed = await host.probe();
      expect(probed).toMatchObject({ ok: false, reason: 'unreachable' });
    } finally {
      agent.kill('SIGKILL');
    }
  });

  it('a key the server does not accept is unreachable (authentication failed)', async () => {
    const other = await startSshd({ user: USER });
    extraServers.push(other);
    const host = hostsFor(sshd, { identityFile: other.clientKeyPath }).host(sshd.spec);
    const probed = await host.probe();
    expect(probed).toMatchObject({ ok: false, reason: 'unreachable' });
    if (!probed.ok) expect(probed.message).toContain('authentication');
  });
});
