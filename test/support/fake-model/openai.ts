/**
 * The OpenAI Responses dialect of the fake model server: `POST /v1/responses`
 * answered from a script of replies as the server-sent-event stream Codex reads
 * (it accepts no other wire API). A reply is answer text, a function call, or
 * both; an HTTP error with `retry-after: 0` so a client's retries are immediate;
 * a stream held open part way or slowed down; or no answer at all. Codex takes
 * items from `response.output_item.done` and the usage from `response.completed`,
 * where `input_tokens` includes the cached tokens, as the real API counts them.
 */
import {
  type Dialect,
  type FakeResponse,
  type RecordedRequest,
  ReplyScript,
  type SseFrame,
} from './server.js';

export interface OpenAIUsage {
  /** Input tokens, cached ones included (`input_tokens`). */
  input: number;
  output: number;
  /** `input_tokens_details.cached_tokens`. */
  cachedInput?: number;
  /** `output_tokens_details.reasoning_tokens` (inside `output`). */
  reasoningOutput?: number;
}

/** Where a held stream stops: after `response.created`, or after the first text delta. */
export type OpenAIHoldPoint = 'created' | 'first_delta';

export type OpenAIReply =
  | {
      type: 'message';
      /** Answer text, streamed as two deltas. Default: none with a function call, else "OK". */
      text?: string;
      /** A function call after the text (`exec_command` with `{cmd}` is Codex's shell). */
      functionCall?: { name: string; arguments: Record<string, unknown> };
      usage?: OpenAIUsage;
      /** Pause between SSE frames (a slow stream). */
      frameDelayMs?: number;
      /** Stop writing at this point and hold the connection open. */
      holdAt?: OpenAIHoldPoint;
    }
  | {
      type: 'error';
      status: number;
      message: string;
      /** The API's error type and code: `invalid_request_error`/`invalid_api_key`, `server_error`/… */
      errorType?: string;
      code?: string;
      /** Sent as `retry-after`; default 0. */
      retryAfterSeconds?: number;
    }
  /** Never answer. */
  | { type: 'hang' };

/** The figures of one fake call, as the real-CLI recordings used them. */
export const OPENAI_DEFAULT_USAGE: Readonly<Required<OpenAIUsage>> = {
  input: 123,
  output: 45,
  cachedInput: 7,
  reasoningOutput: 0,
};

export interface OpenAIDialect extends Dialect {
  /** Replies handed out so far. */
  readonly served: number;
}

/** The dialect, answering `POST /v1/responses` from `script`. */
export function openaiDialect(
  script: readonly OpenAIReply[] | ((request: RecordedRequest, index: number) => OpenAIReply),
): OpenAIDialect {
  const replies = new ReplyScript(script);
  let ids = 0;
  return {
    name: 'openai',
    get served() {
      return replies.served;
    },
    matches: (method, path) => method === 'POST' && /^\/v1\/responses(\?|$)/.test(path),
    respond(request): FakeResponse {
      const reply = replies.next(request);
      switch (reply.type) {
        case 'hang':
          return { type: 'hang' };
        case 'error':
          return {
            type: 'json',
            status: reply.status,
            body: {
              error: {
                message: reply.message,
                type: reply.errorType ?? (reply.status >= 500 ? 'server_error' : 'invalid_request_error'),
                code: reply.code ?? null,
                param: null,
              },
            },
            headers: { 'retry-after': String(reply.retryAfterSeconds ?? 0) },
          };
        case 'message': {
          ids += 1;
          const built = buildResponse(reply, ids, modelOf(request));
          return {
            type: 'sse',
            frames: built.frames,
            ...(reply.frameDelayMs === undefined ? {} : { frameDelayMs: reply.frameDelayMs }),
            ...(reply.holdAt === undefined ? {} : { holdAfterFrames: built.holdIndex[reply.holdAt] }),
          };
        }
      }
    },
  };
}

/** True when the request's last input item hands back a function call's output (the step after a tool). */
export function hasToolOutput(request: RecordedRequest): boolean {
  const input = (request.body as { input?: unknown } | null)?.input;
  if (!Array.isArray(input) || input.length === 0) return false;
  return (input[input.length - 1] as { type?: unknown } | null)?.type === 'function_call_output';
}

/** The prompt text of the request's last user message, "" when none. */
export function lastUserText(request: RecordedRequest): string {
  const input = (request.body as { input?: unknown } | null)?.input;
  if (!Array.isArray(input)) return '';
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i] as { role?: unknown; content?: unknown } | null;
    if (item?.role !== 'user' || !Array.isArray(item.content)) continue;
    return item.content
      .map((c) => ((c as { text?: unknown }).text as string | undefined) ?? '')
      .join('')
      .trim();
  }
  return '';
}

/** A script for one shell tool turn: call `exec_command` with `cmd`, then answer `text` once the output is back. */
export function shellThenAnswer(
  cmd: string,
  text: string,
  usage: OpenAIUsage = OPENAI_DEFAULT_USAGE,
): (request: RecordedRequest) => OpenAIReply {
  return (request) =>
    hasToolOutput(request)
      ? { type: 'message', text, usage }
      : { type: 'message', functionCall: { name: 'exec_command', arguments: { cmd } }, usage };
}

function modelOf(request: RecordedRequest): string {
  const model = (request.body as { model?: unknown } | null)?.model;
  return typeof model === 'string' ? model : 'gpt-fake';
}

interface BuiltResponse {
  frames: SseFrame[];
  /** Frames to write before holding, per hold point. */
  holdIndex: Record<OpenAIHoldPoint, number>;
}

function buildResponse(
  reply: Extract<OpenAIReply, { type: 'message' }>,
  n: number,
  model: string,
): BuiltResponse {
  const usage = { ...OPENAI_DEFAULT_USAGE, ...reply.usage };
  const text = reply.text ?? (reply.functionCall === undefined ? 'OK' : undefined);
  const responseId = `resp_fake_${n}`;
  const frames: SseFrame[] = [];
  const frame = (type: string, data: Record<string, unknown>) =>
    frames.push({ event: type, data: { type, ...data } });
  const base = { id: responseId, object: 'response', model, created_at: 0 };
  frame('response.created', { response: { ...base, status: 'in_progress', output: [] } });
  frame('response.in_progress', { response: { ...base, status: 'in_progress', output: [] } });
  const holdIndex: Record<OpenAIHoldPoint, number> = { created: 1, first_delta: 0 };
  const output: unknown[] = [];
  let index = 0;
  if (text !== undefined) {
    const itemId = `msg_fake_${n}`;
    const cut = Math.max(1, Math.floor(text.length / 2));
    const parts = text.length > 1 ? [text.slice(0, cut), text.slice(cut)] : [text];
    const done = {
      type: 'message',
      id: itemId,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text, annotations: [] }],
    };
    frame('response.output_item.added', {
      output_index: index,
      item: { ...done, status: 'in_progress', content: [] },
    });
    frame('response.content_part.added', {
      item_id: itemId,
      output_index: index,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    });
    parts.forEach((delta, i) => {
      frame('response.output_text.delta', { item_id: itemId, output_index: index, content_index: 0, delta });
      if (i === 0) holdIndex.first_delta = frames.length;
    });
    frame('response.output_text.done', { item_id: itemId, output_index: index, content_index: 0, text });
    frame('response.content_part.done', {
      item_id: itemId,
      output_index: index,
      content_index: 0,
      part: { type: 'output_text', text, annotations: [] },
    });
    frame('response.output_item.done', { output_index: index, item: done });
    output.push(done);
    index += 1;
  }
  if (reply.functionCall !== undefined) {
    const itemId = `fc_fake_${n}`;
    const args = JSON.stringify(reply.functionCall.arguments);
    const done = {
      type: 'function_call',
      id: itemId,
      call_id: `call_fake_${n}`,
      name: reply.functionCall.name,
      arguments: args,
      status: 'completed',
    };
    frame('response.output_item.added', {
      output_index: index,
      item: { ...done, arguments: '', status: 'in_progress' },
    });
    frame('response.function_call_arguments.delta', { item_id: itemId, output_index: index, delta: args });
    frame('response.function_call_arguments.done', { item_id: itemId, output_index: index, arguments: args });
    frame('response.output_item.done', { output_index: index, item: done });
    output.push(done);
  }
  if (holdIndex.first_delta === 0) holdIndex.first_delta = frames.length;
  frame('response.completed', {
    response: {
      ...base,
      status: 'completed',
      output,
      usage: {
        input_tokens: usage.input,
        input_tokens_details: { cached_tokens: usage.cachedInput },
        output_tokens: usage.output,
        output_tokens_details: { reasoning_tokens: usage.reasoningOutput },
        total_tokens: usage.input + usage.output,
      },
    },
  });
  return { frames, holdIndex };
}
