import http from 'node:http';
import { PassThrough } from 'node:stream';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listenToolEndpoint, type ToolEndpoint } from '../../src/tools/http.js';
import { relayStdio } from '../../src/tools/relay.js';
import { ToolSessions } from '../../src/tools/sessions.js';
import { type FakeBackend, fakeBackend, POLICY, SESSION_A, SESSION_B } from './fake-backend.js';

let sessions: ToolSessions;
let endpoint: ToolEndpoint;
let backend: FakeBackend;
const clients: Client[] = [];

beforeEach(async () => {
  sessions = new ToolSessions();
  endpoint = await listenToolEndpoint(sessions);
  backend = fakeBackend();
});

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  await endpoint.close();
});

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(endpoint.url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(client);
  return client;
}

function text(result: { content?: unknown }): string {
  return (result.content as { text: string }[])[0]?.text ?? '';
}

const post = (token: string | null, init: { path?: string } = {}) =>
  fetch(endpoint.url.replace('/mcp', init.path ?? '/mcp'), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });

describe('the tool endpoint over streamable HTTP', () => {
  it('serves each token its own session: a comment lands on that session’s issue only', async () => {
    const tokenA = sessions.open({ session: SESSION_A, backend, policy: POLICY });
    const tokenB = sessions.open({ session: SESSION_B, backend, policy: POLICY });
    expect(tokenA).not.toBe(tokenB);
    expect(sessions.size).toBe(2);

    const a = await connect(tokenA);
    expect((await a.listTools()).tools).toHaveLength(7);
    const ok = await a.callTool({ name: 'tracker_comment', arguments: { body: 'from A' } });
    expect(ok.isError).toBeFalsy();

    // Session B names A's issue: refused, and nothing is written to A's issue.
    const b = await connect(tokenB);
    const refused = await b.callTool({
      name: 'tracker_comment',
      arguments: { body: 'hi', issue_id: 'id-a' },
    });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/^tool_forbidden: .*PRJ-2/);
    expect(backend.writes).toEqual([{ op: 'comment', issueId: 'id-a', body: 'from A' }]);
  });

  it('refuses a token once its session is closed, and never knew a made-up one', async () => {
    const token = sessions.open({ session: SESSION_A, backend, policy: POLICY });
    expect((await post(token)).status).toBe(200);
    sessions.close(token);
    sessions.close(token);
    expect(sessions.size).toBe(0);
    const ended = await post(token);
    expect(ended.status).toBe(401);
    expect(ended.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await ended.json()).toMatchObject({
      error: { message: expect.stringMatching(/no live tool session/) },
    });
    expect((await post('made-up')).status).toBe(401);
    expect((await post(null)).status).toBe(401);
    expect(backend.writes).toEqual([]);
  });

  it('answers 404 off its path and refuses a non-loopback Host (a rebinding page)', async () => {
    const token = sessions.open({ session: SESSION_A, backend, policy: POLICY });
    expect((await post(token, { path: '/other' })).status).toBe(404);
    // fetch drops a Host header; node:http sends it as given.
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = http.request(endpoint.url, {
        method: 'POST',
        headers: {
          host: 'evil.example',
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
        },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on('error', reject);
      req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }));
    });
    expect(status).toBe(403);
  });

  it('listens on loopback only', () => {
    expect(endpoint.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });
});

describe('the stdio relay (`orchestrator mcp-server`)', () => {
  /** Runs the relay over in-memory pipes; `send` writes a line, `next` reads the next answer. */
  function relay(token: string) {
    const input = new PassThrough();
    const output = new PassThrough();
    const answers: unknown[] = [];
    let buffered = '';
    let wake: (() => void) | null = null;
    output.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      let nl = buffered.indexOf('\n');
      while (nl >= 0) {
        answers.push(JSON.parse(buffered.slice(0, nl)));
        buffered = buffered.slice(nl + 1);
        nl = buffered.indexOf('\n');
      }
      wake?.();
    });
    const done = relayStdio({ url: endpoint.url, token, input, output });
    return {
      done,
      send: (message: unknown) => input.write(`${JSON.stringify(message)}\n`),
      sendRaw: (line: string) => input.write(`${line}\n`),
      end: () => input.end(),
      next: async (): Promise<Record<string, unknown>> => {
        while (answers.length === 0) await new Promise<void>((resolve) => (wake = resolve));
        return answers.shift() as Record<string, unknown>;
      },
    };
  }

  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'cli', version: '1' } },
  };

  it('carries a runtime’s handshake, listing and call to the session and back, one line each', async () => {
    const token = sessions.open({ session: SESSION_A, backend, policy: POLICY });
    const r = relay(token);
    r.send(initialize);
    expect(await r.next()).toMatchObject({ id: 1, result: { protocolVersion: '2025-06-18' } });
    r.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    r.send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    const listed = await r.next();
    expect(listed).toMatchObject({ id: 2 });
    expect((listed.result as { tools: unknown[] }).tools).toHaveLength(7);
    r.send({
      jsonrpc: '2.0',
      id: 'c',
      method: 'tools/call',
      params: { name: 'tracker_comment', arguments: { body: 'relayed' } },
    });
    expect(await r.next()).toMatchObject({ id: 'c', result: { content: [{ type: 'text' }] } });
    r.end();
    await r.done;
    expect(backend.writes).toEqual([{ op: 'comment', issueId: 'id-a', body: 'relayed' }]);
  });

  it('answers with the request’s own id when the token is refused, and when the endpoint is gone', async () => {
    const token = sessions.open({ session: SESSION_A, backend, policy: POLICY });
    sessions.close(token);
    const r = relay(token);
    r.send(initialize);
    expect(await r.next()).toMatchObject({
      id: 1,
      error: { message: expect.stringMatching(/no live tool session/) },
    });
    await endpoint.close();
    r.send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    expect(await r.next()).toMatchObject({
      id: 2,
      error: { code: -32603, message: expect.stringMatching(/unreachable/) },
    });
    r.end();
    await r.done;
  });

  it('answers a line that is not JSON with a parse error, and skips blank lines', async () => {
    const r = relay('x');
    r.sendRaw('');
    r.sendRaw('{not json');
    expect(await r.next()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'the line is not JSON' },
    });
    r.end();
    await r.done;
  });
});
