/**
 * The Chat Completions dialect answers the way OpenCode and Copilot expect:
 * chunks with the role first, text and tool-call deltas, a finish reason, the
 * usage chunk only when the client asked for it, `[DONE]`; errors in the API's
 * shape with `retry-after: 0`; held streams; and plain JSON without `stream`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  chatAnswersToolCall,
  chatDialect,
  chatLastUserText,
  chatOfferedTools,
  chatToolRoundTrip,
} from './chat.js';
import { FakeModelServer } from './server.js';

let server: FakeModelServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function start(script: Parameters<typeof chatDialect>[0]) {
  server = await FakeModelServer.start([chatDialect(script)]);
  return server;
}

const post = (url: string, body: unknown, path = '/v1/chat/completions') =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer k' },
    body: JSON.stringify(body),
  });

/** The `data:` payloads of an SSE body; `[DONE]` is kept as the string. */
function payloads(text: string): unknown[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => l.slice(6))
    .map((d) => (d === '[DONE]' ? d : JSON.parse(d)));
}

type Chunk = {
  choices: { delta: Record<string, unknown>; finish_reason: string | null }[];
  usage?: unknown;
};

const TOOL_REQUEST = {
  model: 'fake-model',
  stream: true,
  stream_options: { include_usage: true },
  messages: [{ role: 'user', content: 'go' }],
  tools: [{ type: 'function', function: { name: 'bash', parameters: {} } }],
};

describe('FakeModelServer with the Chat Completions dialect', () => {
  it('streams text and a tool call as chunk deltas, then the finish reason, the usage chunk and [DONE]', async () => {
    const fake = await start([
      {
        type: 'message',
        text: 'I will run it.',
        toolCalls: [{ name: 'bash', arguments: { command: 'echo hi > out.txt' } }],
        usage: { prompt: 123, completion: 45, cachedPrompt: 7 },
      },
    ]);
    const res = await post(fake.url, TOOL_REQUEST);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const frames = payloads(await res.text());
    expect(frames.at(-1)).toBe('[DONE]');
    const chunks = frames.slice(0, -1) as Chunk[];
    expect(chunks[0]).toMatchObject({
      object: 'chat.completion.chunk',
      model: 'fake-model',
      choices: [{ delta: { role: 'assistant' } }],
    });
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('I will run it.');
    const calls = chunks.flatMap(
      (c) =>
        (c.choices[0]?.delta.tool_calls as
          | { index: number; id?: string; function: { name?: string; arguments: string } }[]
          | undefined) ?? [],
    );
    expect(calls[0]).toMatchObject({
      index: 0,
      id: 'call_fake_1_0',
      function: { name: 'bash', arguments: '' },
    });
    expect(JSON.parse(calls.map((c) => c.function.arguments).join(''))).toEqual({
      command: 'echo hi > out.txt',
    });
    const finish = chunks.filter((c) => c.choices[0]?.finish_reason !== null && c.choices.length > 0);
    expect(finish.map((c) => c.choices[0]?.finish_reason)).toEqual(['tool_calls']);
    expect(chunks.at(-1)).toEqual(
      expect.objectContaining({
        choices: [],
        usage: {
          prompt_tokens: 123,
          completion_tokens: 45,
          total_tokens: 168,
          prompt_tokens_details: { cached_tokens: 7 },
          completion_tokens_details: { reasoning_tokens: 0 },
        },
      }),
    );
    const [recorded] = fake.requestsTo('chat');
    expect(recorded && chatOfferedTools(recorded)).toEqual(['bash']);
    expect(recorded && chatLastUserText(recorded)).toBe('go');
  });

  it('sends no usage chunk to a client that did not ask for one', async () => {
    const fake = await start([{ type: 'message', text: 'hello' }]);
    const frames = payloads(await (await post(fake.url, { stream: true, messages: [] })).text());
    expect(frames.at(-1)).toBe('[DONE]');
    for (const chunk of frames.slice(0, -1) as Chunk[]) {
      expect(chunk.choices).toHaveLength(1);
      expect(chunk).not.toHaveProperty('usage');
    }
    expect((frames.at(-2) as Chunk).choices[0]?.finish_reason).toBe('stop');
  });

  it('answers a request without stream as one chat.completion with the tool calls and usage', async () => {
    const fake = await start([
      {
        type: 'message',
        toolCalls: [
          { name: 'read', arguments: { path: 'a' } },
          { name: 'read', arguments: { path: 'b' } },
        ],
      },
    ]);
    const body = await (await post(fake.url, { messages: [] }, '/chat/completions')).json();
    expect(body).toMatchObject({
      object: 'chat.completion',
      choices: [
        {
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'call_fake_1_0',
                type: 'function',
                function: { name: 'read', arguments: '{"path":"a"}' },
              },
              {
                id: 'call_fake_1_1',
                type: 'function',
                function: { name: 'read', arguments: '{"path":"b"}' },
              },
            ],
          },
        },
      ],
      usage: { prompt_tokens: 123, completion_tokens: 45 },
    });
  });

  it.each([
    [401, 'invalid_request_error', 'invalid_api_key'],
    [429, 'invalid_request_error', 'rate_limit_exceeded'],
    [503, 'server_error', 'server_is_overloaded'],
  ])('answers HTTP %i in the API error shape with retry-after 0', async (status, type, code) => {
    const fake = await start([{ type: 'error', status, message: 'nope', code }]);
    const res = await post(fake.url, TOOL_REQUEST);
    expect(res.status).toBe(status);
    expect(res.headers.get('retry-after')).toBe('0');
    expect(await res.json()).toEqual({ error: { message: 'nope', type, code, param: null } });
  });

  it('holds a stream after the first text delta until the server closes', async () => {
    const fake = await start([{ type: 'message', text: 'Hello friend', holdAt: 'first_delta' }]);
    const res = await post(fake.url, { stream: true, messages: [] });
    const reader = res.body?.getReader();
    if (reader === undefined) throw new Error('no body');
    let text = '';
    while (!text.includes('Hello')) text += new TextDecoder().decode((await reader.read()).value);
    const pending = reader.read();
    const raced = await Promise.race([
      pending.then(() => 'data'),
      new Promise((r) => setTimeout(() => r('held'), 300)),
    ]);
    expect(raced).toBe('held');
    expect(text).not.toContain('friend');
    await fake.close();
    server = null;
    await expect(
      pending.then(
        () => 'ended',
        () => 'ended',
      ),
    ).resolves.toBe('ended');
  });

  it('lists the models, and a round-trip script tells side requests, first calls and tool results apart', async () => {
    const dialect = chatDialect(
      chatToolRoundTrip(
        { type: 'message', toolCalls: [{ name: 'bash', arguments: { command: 'true' } }] },
        { type: 'message', text: 'done' },
        { type: 'message', text: 'A title' },
      ),
    );
    server = await FakeModelServer.start([dialect]);
    const fake = server;
    expect(await (await fetch(`${fake.url}/v1/models`)).json()).toMatchObject({
      object: 'list',
      data: [{ id: 'fake-model' }],
    });
    const title = await (await post(fake.url, { messages: [{ role: 'user', content: 'title?' }] })).json();
    expect(title).toMatchObject({ choices: [{ message: { content: 'A title' } }] });
    const first = await (await post(fake.url, { ...TOOL_REQUEST, stream: false })).json();
    expect(first).toMatchObject({ choices: [{ finish_reason: 'tool_calls' }] });
    const answer = {
      ...TOOL_REQUEST,
      stream: false,
      messages: [...TOOL_REQUEST.messages, { role: 'tool', tool_call_id: 'call_fake_2_0', content: '' }],
    };
    expect(await (await post(fake.url, answer)).json()).toMatchObject({
      choices: [{ finish_reason: 'stop', message: { content: 'done' } }],
    });
    const last = fake.requestsTo('chat').at(-1);
    expect(last && chatAnswersToolCall(last)).toBe(true);
    // The model listing is recorded but is not a scripted reply.
    expect(fake.requests).toHaveLength(4);
    expect(dialect.served).toBe(3);
  });
});
