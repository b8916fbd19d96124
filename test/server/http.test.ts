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
import { after, fakeDashboard, getJson, harness, openEvents, request, started, waitFor } from './support.js';

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

  it('fails the start-up with server_port_in_use when the chosen port is busy, and says how to choose another', async () => {
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
      message: `cannot listen on 127.0.0.1:${port}: the port is already in use; choose another with --port N, or --port 0 to run without the HTTP server`,
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

/*
 * Until the API has tokens, a server bound beyond loopback is protected only by what is below:
 * a warning that says so, and a Host allowlist that keeps web pages from reaching it through a
 * DNS name rebound to its address. The server binds every interface here and is asked on
 * 127.0.0.1 with the Host header a browser would send.
 */
describe('a server bound beyond loopback', () => {
  const code = (json: Record<string, unknown>) => (json.error as Record<string, unknown>).code;

  it('warns in the log that it has no authentication and answers any Host name when no allowed hosts are set', async () => {
    const s = await started(undefined, { host: '0.0.0.0' });
    const warning = s.lines.find((l) => l.level === 'warn');
    expect(warning?.message).toContain('no authentication');
    expect(warning?.message).toContain('server.allowed_hosts');
    expect(warning?.fields).toMatchObject({ allowed_hosts: [] });
    // The documented default without a list: no Host check (the warning is the safeguard).
    const local = `http://127.0.0.1:${s.server.port}`;
    expect((await request(`${local}/livez`, { headers: { host: 'anything.example' } })).status).toBe(200);
  });

  it('with allowed hosts, a request naming another host is refused 403 host_not_allowed; listed and loopback names are answered', async () => {
    const s = await started(undefined, {
      host: '0.0.0.0',
      allowedHosts: ['orchestrator.internal', '10.0.0.5'],
    });
    const port = s.server.port;
    const local = `http://127.0.0.1:${port}`;
    const refused = await getJson(`${local}/api/v1/state`, { headers: { host: `rebind.example:${port}` } });
    expect(refused.status).toBe(403);
    expect(code(refused.json)).toBe('host_not_allowed');
    for (const host of [
      `orchestrator.internal:${port}`,
      `ORCHESTRATOR.internal.:${port}`,
      `10.0.0.5:${port}`,
      `localhost:${port}`,
      `127.0.0.1:${port}`,
    ]) {
      expect((await request(`${local}/livez`, { headers: { host } })).status, host).toBe(200);
    }
    expect(s.lines.find((l) => l.level === 'warn')?.fields).toMatchObject({
      allowed_hosts: ['orchestrator.internal', '10.0.0.5'],
    });
  });

  it('a refresh from a page on another origin is refused, through a rebound name too; from an allowed origin it is accepted', async () => {
    const s = await started(undefined, { host: '0.0.0.0', allowedHosts: ['orchestrator.internal'] });
    const port = s.server.port;
    const refresh = `http://127.0.0.1:${port}/api/v1/refresh`;
    const foreign = await getJson(refresh, {
      method: 'POST',
      headers: { host: `orchestrator.internal:${port}`, origin: 'https://evil.example' },
    });
    expect(foreign.status).toBe(403);
    expect(code(foreign.json)).toBe('origin_not_allowed');
    // DNS rebinding: the page's own name now points here, so Origin and Host agree.
    const rebound = await getJson(refresh, {
      method: 'POST',
      headers: { host: `evil.example:${port}`, origin: `http://evil.example:${port}` },
    });
    expect(rebound.status).toBe(403);
    expect(code(rebound.json)).toBe('host_not_allowed');
    expect(s.refreshCalls).toBe(0);
    const allowed = await getJson(refresh, {
      method: 'POST',
      headers: { host: `orchestrator.internal:${port}`, origin: `http://orchestrator.internal:${port}` },
    });
    expect(allowed.status).toBe(202);
    expect(s.refreshCalls).toBe(1);
  });

  it('bound to loopback behind a proxy, a listed name is answered as well as loopback ones', async () => {
    const s = await started(undefined, { allowedHosts: ['orchestrator.example.com'] });
    const port = s.server.port;
    expect(s.lines.some((l) => l.level === 'warn')).toBe(false);
    const listed = await request(`${s.url}/livez`, { headers: { host: 'orchestrator.example.com' } });
    expect(listed.status).toBe(200);
    const other = await request(`${s.url}/livez`, { headers: { host: `other.example:${port}` } });
    expect(other.status).toBe(403);
  });
});
