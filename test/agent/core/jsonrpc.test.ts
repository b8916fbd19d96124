/**
 * The JSON-RPC client of persistent sessions: messages classified by their
 * members (never by id ranges), responses matched to requests, deadlines, and a
 * closed conversation rejecting everything still waiting.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  JsonRpcClient,
  RpcClosedError,
  RpcResponseError,
  RpcTimeoutError,
} from '../../../src/agent/core/jsonrpc/client.js';
import { decodeRpcLine, encodeRpc } from '../../../src/agent/core/jsonrpc/messages.js';

describe('decodeRpcLine', () => {
  it.each([
    [
      'a request from the runtime (id and method), even with id 0',
      '{"id":0,"method":"x/approve","params":{"a":1}}',
      { type: 'request', id: 0, method: 'x/approve', params: { a: 1 } },
    ],
    [
      'a notification (method, no id)',
      '{"method":"turn/done","params":{"s":"ok"}}',
      { type: 'notification', method: 'turn/done', params: { s: 'ok' } },
    ],
    [
      'a notification with a null id',
      '{"id":null,"method":"n"}',
      { type: 'notification', method: 'n', params: null },
    ],
    [
      'a response without the jsonrpc member',
      '{"id":3,"result":{"turn":{"id":"t"}}}',
      { type: 'response', id: 3, result: { turn: { id: 't' } } },
    ],
    [
      'a response whose result is null',
      '{"id":"a","result":null}',
      { type: 'response', id: 'a', result: null },
    ],
    [
      'an error response',
      '{"jsonrpc":"2.0","id":4,"error":{"code":-32001,"message":"Server overloaded; retry later."}}',
      { type: 'error_response', id: 4, error: { code: -32001, message: 'Server overloaded; retry later.' } },
    ],
    [
      'an error response the runtime could not match to a request',
      '{"id":null,"error":{"code":-32700,"message":"parse error"}}',
      { type: 'error_response', id: null, error: { code: -32700, message: 'parse error' } },
    ],
  ])('reads %s', (_name, line, want) => {
    expect(decodeRpcLine(line)).toEqual({ ok: true, message: want });
  });

  it.each([
    ['text that is not JSON', 'Reading additional input from stdin...'],
    ['a JSON array', '[1,2]'],
    ['an object that is none of the three', '{"hello":1}'],
    ['a request whose id is an object', '{"id":{},"method":"m"}'],
  ])('refuses %s with a reason instead of throwing', (_name, line) => {
    const decoded = decodeRpcLine(line);
    expect(decoded.ok).toBe(false);
  });

  it('never throws, whatever the line', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (line) => {
        const decoded = decodeRpcLine(line);
        expect(typeof decoded.ok).toBe('boolean');
      }),
    );
  });

  it('encodes with or without the version member', () => {
    expect(encodeRpc({ id: 1, method: 'm' }, false)).toBe('{"id":1,"method":"m"}');
    expect(encodeRpc({ id: 1, method: 'm' }, true)).toBe('{"jsonrpc":"2.0","id":1,"method":"m"}');
  });
});

/** A client whose writes are kept, with the runtime's side played by `reply`. */
function harness() {
  const sent: Record<string, unknown>[] = [];
  let writable = true;
  const client = new JsonRpcClient((line) => {
    if (!writable) return false;
    sent.push(JSON.parse(line) as Record<string, unknown>);
    return true;
  });
  const reply = (line: string) => {
    const decoded = decodeRpcLine(line);
    if (!decoded.ok) throw new Error(decoded.reason);
    return client.receive(decoded.message);
  };
  return { client, sent, reply, closePipe: () => (writable = false) };
}

describe('JsonRpcClient', () => {
  afterEach(() => vi.useRealTimers());

  it('numbers its requests and resolves each with the response carrying its id, in any order', async () => {
    const { client, sent, reply } = harness();
    const a = client.request('initialize', { clientInfo: { name: 'x' } });
    const b = client.request('thread/start', {});
    expect(sent).toEqual([
      { id: 1, method: 'initialize', params: { clientInfo: { name: 'x' } } },
      { id: 2, method: 'thread/start', params: {} },
    ]);
    expect(reply('{"id":2,"result":{"thread":{"id":"t"}}}')).toEqual({ type: 'handled' });
    expect(reply('{"id":1,"result":{"userAgent":"u"}}')).toEqual({ type: 'handled' });
    await expect(a).resolves.toEqual({ userAgent: 'u' });
    await expect(b).resolves.toEqual({ thread: { id: 't' } });
    expect(client.pendingCount).toBe(0);
  });

  it("hands back the runtime's own request with id 0 rather than taking it for a response", () => {
    const { client, reply } = harness();
    void client.request('turn/start', {});
    expect(
      reply('{"id":0,"method":"item/commandExecution/requestApproval","params":{"command":"rm -rf /"}}'),
    ).toEqual({
      type: 'request',
      id: 0,
      method: 'item/commandExecution/requestApproval',
      params: { command: 'rm -rf /' },
    });
    expect(client.pendingCount).toBe(1);
  });

  it('answers requests of the runtime with a result or an error object', () => {
    const { client, sent } = harness();
    client.respond(0, { decision: 'decline' });
    client.respondError('r1', { code: -32601, message: 'unknown' });
    client.notify('initialized');
    expect(sent).toEqual([
      { id: 0, result: { decision: 'decline' } },
      { id: 'r1', error: { code: -32601, message: 'unknown' } },
      { method: 'initialized' },
    ]);
  });

  it('rejects with the error object of an error response', async () => {
    const { client, reply } = harness();
    const pending = client.request('thread/resume', { threadId: 'gone' });
    reply('{"id":1,"error":{"code":-32600,"message":"no rollout found"}}');
    const error = await pending.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcResponseError);
    expect((error as RpcResponseError).error).toEqual({ code: -32600, message: 'no rollout found' });
    expect((error as RpcResponseError).method).toBe('thread/resume');
  });

  it('a request with no response by its deadline rejects with a timeout, and a late response is ignored', async () => {
    vi.useFakeTimers();
    const { client, reply } = harness();
    const pending = client.request('initialize', {}, { timeoutMs: 500 });
    const caught = pending.catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(500);
    expect(await caught).toBeInstanceOf(RpcTimeoutError);
    expect(reply('{"id":1,"result":{}}')).toEqual({ type: 'handled' });
    expect(client.pendingCount).toBe(0);
  });

  it('closing rejects every waiting request at once, and later requests fail immediately', async () => {
    const { client } = harness();
    const a = client.request('initialize', {}).catch((e: unknown) => e);
    const b = client.request('turn/start', {}).catch((e: unknown) => e);
    client.close('the agent process ended (exit 0)');
    for (const error of [await a, await b]) {
      expect(error).toBeInstanceOf(RpcClosedError);
      expect((error as Error).message).toMatch(/the agent process ended/);
    }
    await expect(client.request('turn/interrupt', {})).rejects.toBeInstanceOf(RpcClosedError);
    expect(client.notify('initialized')).toBe(false);
  });

  it('a request that cannot be written rejects at once instead of waiting for its deadline', async () => {
    const { client, closePipe } = harness();
    closePipe();
    await expect(client.request('initialize', {})).rejects.toBeInstanceOf(RpcClosedError);
    expect(client.pendingCount).toBe(0);
  });
});
