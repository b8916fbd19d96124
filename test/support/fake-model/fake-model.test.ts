/**
 * The fake model server behaves like the provider the real CLIs expect: an
 * Anthropic event stream with usage split between message_start and
 * message_delta, errors in the API's shape with `retry-after: 0`, held and slow
 * streams, probes answered, and every request recorded.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { answersToolCall, anthropicDialect, offeredTools, toolRoundTrip } from './anthropic.js';
import { FakeModelServer } from './server.js';

let server: FakeModelServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const post = (url: string, body: unknown) =>
  fetch(`${url}/v1/messages?beta=true`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'k' },
    body: JSON.stringify(body),
  });

/** The `data:` payloads of an SSE body, parsed. */
function events(text: string): { type: string; [k: string]: unknown }[] {
  return text
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)));
}

describe('FakeModelServer with the Anthropic dialect', () => {
  it('streams text and a tool call with usage split like the real API, and records the request', async () => {
    server = await FakeModelServer.start([
      anthropicDialect([
        {
          type: 'message',
          text: 'I will run it.',
          toolCall: { name: 'Bash', input: { command: 'echo hi > out.txt' } },
          usage: { input: 123, output: 45, cacheRead: 7 },
        },
      ]),
    ]);
    const res = await post(server.url, {
      model: 'claude-test',
      stream: true,
      messages: [{ role: 'user', content: 'go' }],
      tools: [{ name: 'Bash' }],
    });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const frames = events(await res.text());
    expect(frames.map((f) => f.type)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(frames[0]).toMatchObject({
      message: {
        model: 'claude-test',
        usage: { input_tokens: 123, output_tokens: 1, cache_read_input_tokens: 7 },
      },
    });
    expect(frames[10]).toMatchObject({ delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 45 } });
    const json = frames
      .filter((f) => (f.delta as { type?: string } | undefined)?.type === 'input_json_delta')
      .map((f) => (f.delta as { partial_json: string }).partial_json)
      .join('');
    expect(JSON.parse(json)).toEqual({ command: 'echo hi > out.txt' });
    const [recorded] = server.requestsTo('anthropic');
    expect(recorded).toMatchObject({
      method: 'POST',
      path: '/v1/messages?beta=true',
      headers: { 'x-api-key': 'k' },
    });
    expect(recorded && offeredTools(recorded)).toEqual(['Bash']);
  });

  it('answers an error in the API shape with retry-after 0, then the next scripted reply', async () => {
    server = await FakeModelServer.start([
      anthropicDialect([
        { type: 'error', status: 529, errorType: 'overloaded_error', message: 'Overloaded' },
        { type: 'message', text: 'fine now' },
      ]),
    ]);
    const first = await post(server.url, { stream: true, messages: [] });
    expect(first.status).toBe(529);
    expect(first.headers.get('retry-after')).toBe('0');
    expect(await first.json()).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
    });
    const second = await post(server.url, { stream: false, messages: [] });
    expect(await second.json()).toMatchObject({ content: [{ type: 'text', text: 'fine now' }] });
  });

  it('holds a stream open after the first delta until the server closes', async () => {
    server = await FakeModelServer.start([
      anthropicDialect([{ type: 'message', text: 'Hello friend', holdAt: 'first_delta' }]),
    ]);
    const res = await post(server.url, { stream: true, messages: [] });
    const reader = res.body?.getReader();
    if (reader === undefined) throw new Error('no body');
    let text = '';
    while (!text.includes('text_delta')) {
      const { value } = await reader.read();
      text += new TextDecoder().decode(value);
    }
    const pending = reader.read();
    const raced = await Promise.race([
      pending.then(() => 'data'),
      new Promise((r) => setTimeout(() => r('held'), 300)),
    ]);
    expect(raced).toBe('held');
    await server.close();
    server = null;
    // Closing the server ends the held response: the pending read settles (done or reset).
    await expect(
      pending.then(
        () => 'ended',
        () => 'ended',
      ),
    ).resolves.toBe('ended');
  });

  it('paces a slow stream frame by frame', async () => {
    server = await FakeModelServer.start([
      anthropicDialect([{ type: 'message', text: 'slow', frameDelayMs: 30 }]),
    ]);
    const started = Date.now();
    const res = await post(server.url, { stream: true, messages: [] });
    await res.text();
    // 8 frames, 7 pauses.
    expect(Date.now() - started).toBeGreaterThanOrEqual(7 * 30 - 10);
  });

  it('answers HEAD probes and count_tokens, and picks a round-trip reply by whether the request answers a tool call', async () => {
    const script = toolRoundTrip(
      { type: 'message', toolCall: { name: 'Bash', input: { command: 'true' } } },
      { type: 'message', text: 'done' },
    );
    server = await FakeModelServer.start([anthropicDialect(script)]);
    expect((await fetch(`${server.url}/`, { method: 'HEAD' })).status).toBe(200);
    const counted = await fetch(`${server.url}/v1/messages/count_tokens`, { method: 'POST', body: '{}' });
    expect(await counted.json()).toEqual({ input_tokens: 123 });
    const answer = {
      stream: false,
      messages: [
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_fake_1', content: 'ok' }] },
      ],
    };
    expect(
      await (await post(server.url, { stream: false, messages: [{ role: 'user', content: 'go' }] })).json(),
    ).toMatchObject({
      stop_reason: 'tool_use',
    });
    expect(await (await post(server.url, answer)).json()).toMatchObject({ stop_reason: 'end_turn' });
    const last = server.requestsTo('anthropic').at(-1);
    expect(last && answersToolCall(last)).toBe(true);
    await server.waitFor((requests) => requests.length === 4, 1_000);
  });
});
