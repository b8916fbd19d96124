/**
 * The Gemini dialect answers the way Gemini CLI expects: CRLF-framed SSE for
 * `streamGenerateContent?alt=sse` with the text first and the function calls,
 * finish reason and usage on the last frame; one JSON object for
 * `generateContent`; a token count; errors in Google's shape with `retry-after: 0`;
 * and streams held after the first frame.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  geminiAnswersFunctionCall,
  geminiDialect,
  geminiModelOf,
  geminiOfferedTools,
  geminiToolRoundTrip,
} from './gemini.js';
import { FakeModelServer } from './server.js';

let server: FakeModelServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function start(script: Parameters<typeof geminiDialect>[0]) {
  server = await FakeModelServer.start([geminiDialect(script)]);
  return server;
}

const STREAM = '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse';

const post = (url: string, path: string, body: unknown) =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-goog-api-key': 'k' },
    body: JSON.stringify(body),
  });

const REQUEST = {
  contents: [{ role: 'user', parts: [{ text: 'go' }] }],
  tools: [{ functionDeclarations: [{ name: 'run_shell_command' }, { name: 'read_file' }] }],
};

type Frame = {
  candidates: { content: { role: string; parts: Record<string, unknown>[] }; finishReason?: string }[];
  usageMetadata?: Record<string, number>;
  modelVersion: string;
};

describe('FakeModelServer with the Gemini dialect', () => {
  it('streams CRLF frames: text first, then the rest of the text, the function call, finishReason and usage', async () => {
    const fake = await start([
      {
        type: 'message',
        text: 'I will run it.',
        functionCalls: [{ name: 'run_shell_command', args: { command: 'echo hi > out.txt' } }],
        usage: { prompt: 123, candidates: 45, cached: 7 },
      },
    ]);
    const res = await post(fake.url, STREAM, REQUEST);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const body = await res.text();
    expect(body.endsWith('\r\n\r\n')).toBe(true);
    const frames = body
      .split('\r\n\r\n')
      .filter(Boolean)
      .map((f) => JSON.parse(f.replace(/^data: /, '')) as Frame);
    expect(frames).toHaveLength(2);
    expect(frames[0]).not.toHaveProperty('usageMetadata');
    expect(frames[0]?.candidates[0]).not.toHaveProperty('finishReason');
    expect(frames[1]).toMatchObject({
      modelVersion: 'gemini-2.5-flash',
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { text: 'run it.' },
              { functionCall: { name: 'run_shell_command', args: { command: 'echo hi > out.txt' } } },
            ],
          },
          finishReason: 'STOP',
        },
      ],
      usageMetadata: {
        promptTokenCount: 123,
        candidatesTokenCount: 45,
        totalTokenCount: 168,
        cachedContentTokenCount: 7,
      },
    });
    const text = frames.flatMap((f) => f.candidates[0]?.content.parts ?? []).map((p) => p.text ?? '');
    expect(text.join('')).toBe('I will run it.');
    const [recorded] = fake.requestsTo('gemini');
    expect(recorded && geminiOfferedTools(recorded)).toEqual(['run_shell_command', 'read_file']);
    expect(recorded && geminiModelOf(recorded)).toBe('gemini-2.5-flash');
  });

  it('answers generateContent as one object from the same script, and countTokens with a fixed count', async () => {
    const fake = await start([{ type: 'message', text: '{"next_speaker":"user"}' }]);
    const path = '/v1beta/models/gemini-2.5-flash:generateContent';
    expect(await (await post(fake.url, path, REQUEST)).json()).toMatchObject({
      candidates: [{ content: { parts: [{ text: '{"next_speaker":"user"}' }] }, finishReason: 'STOP' }],
      usageMetadata: { promptTokenCount: 123 },
    });
    const counted = await post(fake.url, '/v1beta/models/gemini-2.5-flash:countTokens', REQUEST);
    expect(await counted.json()).toEqual({ totalTokens: 123 });
  });

  it.each([
    [401, 'UNAUTHENTICATED'],
    [429, 'RESOURCE_EXHAUSTED'],
    [503, 'UNAVAILABLE'],
  ])('answers HTTP %i in Google error shape (%s) with retry-after 0', async (status, word) => {
    const fake = await start([{ type: 'error', status, message: 'nope' }]);
    const res = await post(fake.url, STREAM, REQUEST);
    expect(res.status).toBe(status);
    expect(res.headers.get('retry-after')).toBe('0');
    expect(await res.json()).toEqual({ error: { code: status, message: 'nope', status: word } });
  });

  it('holds a stream after the first frame until the server closes', async () => {
    const fake = await start([{ type: 'message', text: 'Hello friend', holdAt: 'first_frame' }]);
    const res = await post(fake.url, STREAM, REQUEST);
    const reader = res.body?.getReader();
    if (reader === undefined) throw new Error('no body');
    let text = '';
    while (!text.includes('\r\n\r\n')) text += new TextDecoder().decode((await reader.read()).value);
    const pending = reader.read();
    const raced = await Promise.race([
      pending.then(() => 'data'),
      new Promise((r) => setTimeout(() => r('held'), 300)),
    ]);
    expect(raced).toBe('held');
    expect(text).toContain('Hello');
    await fake.close();
    server = null;
    await expect(
      pending.then(
        () => 'ended',
        () => 'ended',
      ),
    ).resolves.toBe('ended');
  });

  it('a round-trip script answers a functionResponse with the final reply', async () => {
    const fake = await start(
      geminiToolRoundTrip(
        { type: 'message', functionCalls: [{ name: 'run_shell_command', args: { command: 'true' } }] },
        { type: 'message', text: 'done' },
      ),
    );
    const path = '/v1beta/models/gemini-2.5-flash:generateContent';
    const first = await (await post(fake.url, path, REQUEST)).json();
    expect(first).toMatchObject({
      candidates: [{ content: { parts: [{ functionCall: { name: 'run_shell_command' } }] } }],
    });
    const answer = {
      ...REQUEST,
      contents: [
        ...REQUEST.contents,
        {
          role: 'model',
          parts: [{ functionCall: { name: 'run_shell_command', args: { command: 'true' } } }],
        },
        {
          role: 'user',
          parts: [{ functionResponse: { name: 'run_shell_command', response: { output: '' } } }],
        },
      ],
    };
    expect(await (await post(fake.url, path, answer)).json()).toMatchObject({
      candidates: [{ content: { parts: [{ text: 'done' }] } }],
    });
    const last = fake.requestsTo('gemini').at(-1);
    expect(last && geminiAnswersFunctionCall(last)).toBe(true);
  });
});
