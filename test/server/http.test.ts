/**
 * Where the server listens and how it stops: the port rules (0 disables, a busy default
 * port is a warning, a busy chosen port is a start-up error), the listening log line, and a
 * close that ends event streams and frees the port.
 */
import http from 'node:http';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { startServer } from '../../src/server/http.js';
import { freePort } from '../support/ports.js';
import { after, fakeDashboard, harness, openEvents, request, started, waitFor } from './support.js';

/** Holds a loopback port with a plain TCP listener until the test ends. */
async function occupy(): Promise<number> {
  const port = await freePort();
  const blocker = net.createServer();
  await new Promise<void>((resolve, reject) => {
    blocker.once('error', reject);
    blocker.listen(port, '127.0.0.1', resolve);
  });
  after(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
  return port;
}

describe('startServer', () => {
  it('listens on the host and port and logs the address', async () => {
    const s = await started();
    expect(s.url).toBe(`http://127.0.0.1:${s.server.port}`);
    expect(s.lines).toContainEqual({
      level: 'info',
      fields: { addr: s.url },
      message: 'http server listening',
    });
    expect((await request(`${s.url}/livez`)).status).toBe(200);
  });

  it('starts no server for port 0', async () => {
    const h = harness();
    const result = await startServer(h.sources, {
      host: '127.0.0.1',
      port: 0,
      portExplicit: true,
      log: h.log,
      dashboard: fakeDashboard,
    });
    expect(result).toEqual({ ok: true, server: null });
    expect(h.listeners.size).toBe(0);
  });

  it('runs on without a server, warning, when the default port is busy', async () => {
    const port = await occupy();
    const h = harness();
    const result = await startServer(h.sources, {
      host: '127.0.0.1',
      port,
      portExplicit: false,
      log: h.log,
      dashboard: fakeDashboard,
    });
    expect(result).toEqual({ ok: true, server: null });
    const warning = h.lines.find((l) => l.level === 'warn');
    expect(warning?.message).toContain('default port is in use');
    expect(warning?.fields).toMatchObject({ addr: `127.0.0.1:${port}`, port });
    // Nothing keeps listening to the orchestrator for a server that does not exist.
    expect(h.listeners.size).toBe(0);
  });

  it('fails the start-up with server_port_in_use when the chosen port is busy', async () => {
    const port = await occupy();
    const h = harness();
    const result = await startServer(h.sources, {
      host: '127.0.0.1',
      port,
      portExplicit: true,
      log: h.log,
      dashboard: fakeDashboard,
    });
    expect(result).toEqual({
      ok: false,
      code: 'server_port_in_use',
      message: `cannot listen on 127.0.0.1:${port}: the port is already in use`,
    });
    expect(h.listeners.size).toBe(0);
  });

  it('fails with server_listen_failed for an address this machine does not have', async () => {
    const h = harness();
    const port = await freePort();
    // 192.0.2.0/24 is TEST-NET-1: never assigned to a local interface.
    const result = await startServer(h.sources, {
      host: '192.0.2.1',
      port,
      portExplicit: false,
      log: h.log,
      dashboard: fakeDashboard,
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.code).toBe('server_listen_failed');
    expect(result.message).toContain(`192.0.2.1:${port}`);
  });

  it('close ends the event streams, frees the port and can be called twice', async () => {
    const s = await started();
    const stream = await openEvents(`${s.url}/api/v1/events`);
    await stream.next((e) => e.event === 'runs');
    await Promise.all([s.server.close(), s.server.close()]);
    await waitFor('the stream to end', () => stream.ended);
    expect(s.listeners.size).toBe(0);
    await expect(request(`${s.url}/livez`)).rejects.toThrow();
    // The port is free again: a new server binds it.
    const again = await startServer(s.sources, {
      host: '127.0.0.1',
      port: s.server.port,
      portExplicit: true,
      log: s.log,
      dashboard: fakeDashboard,
    });
    expect(again.ok && again.server !== null).toBe(true);
    if (again.ok) await again.server?.close();
  });

  it('close does not wait for idle keep-alive connections', async () => {
    const s = await started();
    const agent = new http.Agent({ keepAlive: true });
    after(() => agent.destroy());
    await new Promise<void>((resolve, reject) => {
      http
        .get(`${s.url}/livez`, { agent }, (res) => {
          res.resume();
          res.on('end', resolve);
        })
        .on('error', reject);
    });
    const closingAt = Date.now();
    await s.server.close();
    expect(Date.now() - closingAt).toBeLessThan(1_000);
  });
});
