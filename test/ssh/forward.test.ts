/**
 * The port forward from a host's loopback back to this machine (how agents on an SSH
 * host reach the tool server), against a real sshd on loopback: since the "host" is this
 * machine, a connection to the remote port from here is a connection through sshd.
 */
import net from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { restartSshd } from '../support/ssh-session.js';
import { type Sshd, startSshd, testUserName } from '../support/sshd.js';
import { freshHost, hostsFor, useTestSshd } from './support.js';

const USER = testUserName('orchssh-fwd');
const ssh = useTestSshd(USER);
const extraServers: Sshd[] = [];
let local: net.Server;
let localPort: number;

beforeAll(async () => {
  // A local service that names itself and echoes a line: a reply proves the bytes went both ways.
  local = net.createServer((socket) => {
    socket.once('data', (data) => socket.end(`local says ${data.toString().trim()}\n`));
  });
  await new Promise<void>((resolve) => local.listen(0, '127.0.0.1', resolve));
  localPort = (local.address() as net.AddressInfo).port;
  return () => new Promise<void>((resolve) => local.close(() => resolve()));
});

afterEach(async () => {
  await Promise.all(extraServers.splice(0).map((server) => server.stop()));
});

/** Sends `word` to 127.0.0.1:`port` and resolves with the whole reply (or the error's code). */
function ask(port: number, word: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let reply = '';
    socket.on('connect', () => socket.write(`${word}\n`));
    socket.on('data', (data) => {
      reply += data.toString();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(`error ${error.code}`));
    socket.on('close', () => resolve(reply));
  });
}

describe('forwardToLocal', () => {
  it('binds a port on the host that reaches the local port, the same port for every caller', async () => {
    const host = freshHost(ssh.sshd);
    const [first, second] = await Promise.all([
      host.forwardToLocal(localPort),
      host.forwardToLocal(localPort),
    ]);
    expect(first.ok).toBe(true);
    if (!first.ok) return;
    expect(second).toEqual(first);
    expect(first.remotePort).not.toBe(localPort);
    expect(await ask(first.remotePort, 'one')).toBe('local says one\n');
    expect(await ask(first.remotePort, 'two')).toBe('local says two\n');
    // The forward rides the connection the commands use: one login in all.
    expect(await host.run({ script: 'echo ran', cwd: null, env: {}, timeoutMs: 10_000 })).toMatchObject({
      ok: true,
      result: { output: 'ran\n' },
    });
    expect(host.connectAttempts).toBe(1);
    expect(await host.forwardToLocal(localPort)).toEqual(first);
  });

  it('ends with the registry: the port is closed once the hosts are closed', async () => {
    const hosts = hostsFor(ssh.sshd);
    const host = hosts.host(ssh.sshd.spec);
    const forwarded = await host.forwardToLocal(localPort);
    if (!forwarded.ok) throw new Error(forwarded.message);
    await hosts.close();
    expect(await ask(forwarded.remotePort, 'late')).toMatch(/^error ECONNREFUSED$|^$/);
    expect(await host.forwardToLocal(localPort)).toMatchObject({ ok: false, reason: 'unreachable' });
  });

  it('is made again on the same port after the connection dropped (sshd restarted)', async () => {
    const server = await startSshd({ user: USER });
    extraServers.push(server);
    const host = freshHost(server);
    const before = await host.forwardToLocal(localPort);
    if (!before.ok) throw new Error(before.message);
    await server.stop();
    expect(await ask(before.remotePort, 'gone')).toMatch(/^error ECONNREFUSED$|^$/);
    const restarted = await restartSshd(server);
    extraServers.push(restarted);
    // The first call after a drop may still see the dying connection; the next one reconnects.
    let after = await host.forwardToLocal(localPort);
    const deadline = Date.now() + 10_000;
    while (
      (!after.ok || (await ask(after.remotePort, 'back')) !== 'local says back\n') &&
      Date.now() < deadline
    ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      after = await host.forwardToLocal(localPort);
    }
    expect(after).toEqual(before);
    expect(await ask(before.remotePort, 'again')).toBe('local says again\n');
  });

  it('fails with a value naming the host when sshd refuses forwarding', async () => {
    const server = await startSshd({ user: USER, extraConfig: ['AllowTcpForwarding no'] });
    extraServers.push(server);
    const host = freshHost(server);
    const forwarded = await host.forwardToLocal(localPort);
    expect(forwarded).toMatchObject({ ok: false, reason: 'failed' });
    if (!forwarded.ok) {
      expect(forwarded.message).toContain(server.spec);
      expect(forwarded.message).toContain('cannot forward');
    }
    // Commands still work: only the forward is refused.
    expect(await host.run({ script: 'echo still', cwd: null, env: {}, timeoutMs: 10_000 })).toMatchObject({
      ok: true,
      result: { output: 'still\n' },
    });
  });
});
