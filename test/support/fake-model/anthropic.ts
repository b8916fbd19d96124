/**
 * The Anthropic Messages dialect of the fake model server: `POST /v1/messages`
 * (any query string) answered from a script of replies, as a server-sent-event
 * stream when the request asks for one (the CLIs always do) and as one JSON
 * message otherwise; `POST /v1/messages/count_tokens` answers a fixed count.
 *
 * Usage follows the real API's split, which a parser must not double count:
 * `message_start` carries the input and cache counts with an output count of 1,
 * and `message_delta` carries the final output count. Input here excludes the
 * cache classes, as the API's `input_tokens` does.
 */
import {
  type Dialect,
  type FakeResponse,
  type RecordedRequest,
  ReplyScript,
  type SseFrame,
} from './server.js';

export interface AnthropicUsage {
  /** Uncached input tokens (`input_tokens`). */
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

/** Where a held stream stops: after `message_start`, after the first text delta, or after the whole text block. */
export type HoldPoint = 'message_start' | 'first_delta' | 'text_block';

export type AnthropicReply =
  | {
      type: 'message';
      /** Assistant text; split into two deltas. Default: none when a tool call is given, else "OK". */
      text?: string;
      /** A tool_use block after the text. */
      toolCall?: { name: string; input: Record<string, unknown> };
      usage?: AnthropicUsage;
      /** Pause between SSE frames (a slow stream). */
      frameDelayMs?: number;
      /** Stop writing at this point and hold the connection open. */
      holdAt?: HoldPoint;
    }
  | {
      type: 'error';
      status: number;
      /** The API's error type: `authentication_error`, `overloaded_error`, `rate_limit_error`, … */
      errorType: string;
      message: string;
      /** Sent as `retry-after`; default 0 so a client's retries are immediate. */
      retryAfterSeconds?: number;
      headers?: Record<string, string>;
    }
  /** Never answer. */
  | { type: 'hang' };

/** The figures of one fake call, as the real-CLI recordings used them. */
export const DEFAULT_USAGE: Readonly<Required<AnthropicUsage>> = {
  input: 123,
  output: 45,
  cacheRead: 7,
  cacheWrite: 0,
};

export interface AnthropicDialect extends Dialect {
  /** Replies handed out so far. */
  readonly served: number;
}

/** The dialect, answering `POST /v1/messages` from `script`. */
export function anthropicDialect(
  script: readonly AnthropicReply[] | ((request: RecordedRequest, index: number) => AnthropicReply),
): AnthropicDialect {
  const replies = new ReplyScript(script);
  let ids = 0;
  return {
    name: 'anthropic',
    get served() {
      return replies.served;
    },
    matches: (method, path) => method === 'POST' && /^\/v1\/messages(\/count_tokens)?(\?|$)/.test(path),
    respond(request): FakeResponse {
      if (request.path.startsWith('/v1/messages/count_tokens')) {
        return { type: 'json', status: 200, body: { input_tokens: DEFAULT_USAGE.input } };
      }
      const reply = replies.next(request);
      switch (reply.type) {
        case 'hang':
          return { type: 'hang' };
        case 'error':
          return {
            type: 'json',
            status: reply.status,
            body: { type: 'error', error: { type: reply.errorType, message: reply.message } },
            headers: { 'retry-after': String(reply.retryAfterSeconds ?? 0), ...reply.headers },
          };
        case 'message': {
          ids += 1;
          const model = modelOf(request);
          const message = buildMessage(reply, ids, model);
          const stream = (request.body as { stream?: unknown } | null)?.stream === true;
          if (!stream) return { type: 'json', status: 200, body: message.json };
          return {
            type: 'sse',
            frames: message.frames,
            ...(reply.frameDelayMs === undefined ? {} : { frameDelayMs: reply.frameDelayMs }),
            ...(reply.holdAt === undefined ? {} : { holdAfterFrames: message.holdIndex[reply.holdAt] }),
          };
        }
      }
    },
  };
}

function modelOf(request: RecordedRequest): string {
  const model = (request.body as { model?: unknown } | null)?.model;
  return typeof model === 'string' ? model : 'claude-fake';
}

interface BuiltMessage {
  frames: SseFrame[];
  json: unknown;
  /** Frames to write before holding, per hold point. */
  holdIndex: Record<HoldPoint, number>;
}

function buildMessage(
  reply: Extract<AnthropicReply, { type: 'message' }>,
  n: number,
  model: string,
): BuiltMessage {
  const usage = { ...DEFAULT_USAGE, ...reply.usage };
  const text = reply.text ?? (reply.toolCall === undefined ? 'OK' : undefined);
  const id = `msg_fake_${n}`;
  const startUsage = {
    input_tokens: usage.input,
    output_tokens: 1,
    cache_creation_input_tokens: usage.cacheWrite,
    cache_read_input_tokens: usage.cacheRead,
  };
  const frames: SseFrame[] = [];
  const frame = (event: string, data: Record<string, unknown>) =>
    frames.push({ event, data: { type: event, ...data } });
  frame('message_start', {
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: startUsage,
    },
  });
  const holdIndex: Record<HoldPoint, number> = {
    message_start: frames.length,
    first_delta: frames.length,
    text_block: frames.length,
  };
  const content: unknown[] = [];
  let index = 0;
  if (text !== undefined) {
    frame('content_block_start', { index, content_block: { type: 'text', text: '' } });
    frames.push({ event: 'ping', data: { type: 'ping' } });
    const cut = Math.max(1, Math.floor(text.length / 2));
    for (const [i, part] of [text.slice(0, cut), text.slice(cut)].entries()) {
      if (part === '') continue;
      frame('content_block_delta', { index, delta: { type: 'text_delta', text: part } });
      if (i === 0) holdIndex.first_delta = frames.length;
    }
    frame('content_block_stop', { index });
    holdIndex.text_block = frames.length;
    content.push({ type: 'text', text });
    index += 1;
  }
  if (reply.toolCall !== undefined) {
    const toolId = `toolu_fake_${n}`;
    const json = JSON.stringify(reply.toolCall.input);
    const cut = Math.max(1, Math.floor(json.length / 2));
    frame('content_block_start', {
      index,
      content_block: { type: 'tool_use', id: toolId, name: reply.toolCall.name, input: {} },
    });
    frame('content_block_delta', {
      index,
      delta: { type: 'input_json_delta', partial_json: json.slice(0, cut) },
    });
    frame('content_block_delta', {
      index,
      delta: { type: 'input_json_delta', partial_json: json.slice(cut) },
    });
    frame('content_block_stop', { index });
    content.push({ type: 'tool_use', id: toolId, name: reply.toolCall.name, input: reply.toolCall.input });
  }
  const stopReason = reply.toolCall === undefined ? 'end_turn' : 'tool_use';
  frame('message_delta', {
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: usage.output },
  });
  frame('message_stop', {});
  return {
    frames,
    holdIndex,
    json: {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: { ...startUsage, output_tokens: usage.output },
    },
  };
}

/** The last message of a Messages request, null when there is none. */
export function lastMessage(request: RecordedRequest): { role: string; content: unknown } | null {
  const messages = (request.body as { messages?: unknown } | null)?.messages;
  if (!Array.isArray(messages) || messages.length === 0) return null;
  return messages[messages.length - 1] as { role: string; content: unknown };
}

/** The request's last message carries a tool result: the client ran the tool the previous reply asked for. */
export function answersToolCall(request: RecordedRequest): boolean {
  const content = lastMessage(request)?.content;
  return Array.isArray(content) && content.some((b) => (b as { type?: unknown }).type === 'tool_result');
}

/** Every text the request carries (system prompt, messages), joined: for asserting what reached the model. */
export function requestText(request: RecordedRequest): string {
  return request.bodyText;
}

/** Names of the tools a Messages request offers. */
export function offeredTools(request: RecordedRequest): string[] {
  const tools = (request.body as { tools?: unknown } | null)?.tools;
  if (!Array.isArray(tools)) return [];
  return tools.map((t) => String((t as { name?: unknown }).name));
}

/**
 * A script for one tool round trip per prompt: a request that does not answer a tool
 * call gets `first` (text and a tool call); a request answering one gets `then`.
 */
export function toolRoundTrip(
  first: Extract<AnthropicReply, { type: 'message' }>,
  then: AnthropicReply,
): (request: RecordedRequest) => AnthropicReply {
  return (request) => (answersToolCall(request) ? then : first);
}
