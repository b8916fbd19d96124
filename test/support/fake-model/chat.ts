/**
 * The OpenAI Chat Completions dialect of the fake model server: `POST
 * /v1/chat/completions` (with or without the `/v1` prefix) answered from a script
 * of replies, as a stream of `chat.completion.chunk` events when the request asks
 * for one and as one `chat.completion` object otherwise. OpenCode's
 * OpenAI-compatible providers and Copilot CLI's bring-your-own-key mode speak it.
 *
 * The trap this avoids: clients only learn the usage when they asked for it. The
 * closing usage chunk (empty `choices`) is sent only when the request sets
 * `stream_options.include_usage`, as the real API does, so a test can see a CLI
 * that never asks. `prompt_tokens` includes the cached tokens, as the API counts them.
 * `GET /v1/models` lists the model, for clients that probe before a turn.
 */
import {
  type Dialect,
  type FakeResponse,
  type RecordedRequest,
  ReplyScript,
  type SseFrame,
} from './server.js';

export interface ChatUsage {
  /** Prompt tokens, cached ones included (`prompt_tokens`). */
  prompt: number;
  /** `completion_tokens`. */
  completion: number;
  /** `prompt_tokens_details.cached_tokens`. */
  cachedPrompt?: number;
  /** `completion_tokens_details.reasoning_tokens` (inside `completion`). */
  reasoning?: number;
}

/** One function call the assistant asks for; `arguments` is serialised as the API's JSON string. */
export interface ChatToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

/** Where a held stream stops: after the role chunk, or after the first content delta. */
export type ChatHoldPoint = 'role' | 'first_delta';

export type ChatReply =
  | {
      type: 'message';
      /** Assistant text, streamed as two deltas. Default: none when tool calls are given, else "OK". */
      text?: string;
      /** Function calls after the text, in order (more than one = parallel calls). */
      toolCalls?: readonly ChatToolCall[];
      usage?: ChatUsage;
      /** Pause between SSE frames (a slow stream). */
      frameDelayMs?: number;
      /** Stop writing at this point and hold the connection open. */
      holdAt?: ChatHoldPoint;
    }
  | {
      type: 'error';
      status: number;
      message: string;
      /** The API's error type and code, e.g. `invalid_request_error`/`invalid_api_key`, `server_error`/`server_is_overloaded`. */
      errorType?: string;
      code?: string;
      /** Sent as `retry-after`; default 0 so a client's retries are immediate. */
      retryAfterSeconds?: number;
    }
  /** Never answer. */
  | { type: 'hang' };

/** The figures of one fake call: the same 123 in (7 of them cached) / 45 out as the other dialects. */
export const CHAT_DEFAULT_USAGE: Readonly<Required<ChatUsage>> = {
  prompt: 123,
  completion: 45,
  cachedPrompt: 7,
  reasoning: 0,
};

export interface ChatDialect extends Dialect {
  /** Replies handed out so far (model listings are not replies). */
  readonly served: number;
}

const COMPLETIONS_PATH = /^(\/v1)?\/chat\/completions(\?|$)/;
const MODELS_PATH = /^(\/v1)?\/models(\?|$)/;

/** The dialect, answering `POST /v1/chat/completions` from `script`. */
export function chatDialect(
  script: readonly ChatReply[] | ((request: RecordedRequest, index: number) => ChatReply),
  options: { models?: readonly string[] } = {},
): ChatDialect {
  const replies = new ReplyScript(script);
  let ids = 0;
  return {
    name: 'chat',
    get served() {
      return replies.served;
    },
    matches: (method, path) =>
      (method === 'POST' && COMPLETIONS_PATH.test(path)) || (method === 'GET' && MODELS_PATH.test(path)),
    respond(request): FakeResponse {
      if (request.method === 'GET') {
        const data = (options.models ?? ['fake-model']).map((id) => ({
          id,
          object: 'model',
          created: 0,
          owned_by: 'fake',
        }));
        return { type: 'json', status: 200, body: { object: 'list', data } };
      }
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
          const body = request.body as {
            stream?: unknown;
            stream_options?: { include_usage?: unknown };
          } | null;
          const built = buildCompletion(
            reply,
            ids,
            modelOf(request),
            body?.stream_options?.include_usage === true,
          );
          if (body?.stream !== true) return { type: 'json', status: 200, body: built.json };
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

interface ChatMessage {
  role?: unknown;
  content?: unknown;
  tool_calls?: unknown;
}

function messagesOf(request: RecordedRequest): ChatMessage[] {
  const messages = (request.body as { messages?: unknown } | null)?.messages;
  return Array.isArray(messages) ? (messages as ChatMessage[]) : [];
}

/** True when the request's last message is a tool result: the client ran the call the previous reply asked for. */
export function chatAnswersToolCall(request: RecordedRequest): boolean {
  return messagesOf(request).at(-1)?.role === 'tool';
}

/** Names of the functions a Chat Completions request offers (empty for side requests such as titles). */
export function chatOfferedTools(request: RecordedRequest): string[] {
  const tools = (request.body as { tools?: unknown } | null)?.tools;
  if (!Array.isArray(tools)) return [];
  return tools.map((t) => String((t as { function?: { name?: unknown } }).function?.name));
}

/** The text of the request's last user message ("" when none), whether content is a string or parts. */
export function chatLastUserText(request: RecordedRequest): string {
  const user = messagesOf(request).findLast((m) => m.role === 'user');
  if (user === undefined) return '';
  if (typeof user.content === 'string') return user.content;
  if (!Array.isArray(user.content)) return '';
  return user.content.map((p) => String((p as { text?: unknown }).text ?? '')).join('');
}

/**
 * A script for one tool round trip: a request offering no tools (a client's side
 * request, such as a title) gets `side`; a request answering a tool call gets
 * `then`; any other gets `first`.
 */
export function chatToolRoundTrip(
  first: Extract<ChatReply, { type: 'message' }>,
  then: ChatReply,
  side: ChatReply = { type: 'message', text: 'Fake title' },
): (request: RecordedRequest) => ChatReply {
  return (request) => {
    if (chatOfferedTools(request).length === 0) return side;
    return chatAnswersToolCall(request) ? then : first;
  };
}

function modelOf(request: RecordedRequest): string {
  const model = (request.body as { model?: unknown } | null)?.model;
  return typeof model === 'string' ? model : 'fake-model';
}

interface BuiltCompletion {
  frames: SseFrame[];
  json: unknown;
  /** Frames to write before holding, per hold point. */
  holdIndex: Record<ChatHoldPoint, number>;
}

function buildCompletion(
  reply: Extract<ChatReply, { type: 'message' }>,
  n: number,
  model: string,
  includeUsage: boolean,
): BuiltCompletion {
  const usage = { ...CHAT_DEFAULT_USAGE, ...reply.usage };
  const toolCalls = reply.toolCalls ?? [];
  const text = reply.text ?? (toolCalls.length === 0 ? 'OK' : undefined);
  const id = `chatcmpl-fake-${n}`;
  const base = { id, object: 'chat.completion.chunk', created: 0, model, system_fingerprint: 'fp_fake' };
  const frames: SseFrame[] = [];
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
    frames.push({
      data: {
        ...base,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
        ...(includeUsage ? { usage: null } : {}),
      },
    });
  chunk({ role: 'assistant', content: '' });
  const holdIndex: Record<ChatHoldPoint, number> = { role: frames.length, first_delta: frames.length };
  if (text !== undefined) {
    const cut = Math.max(1, Math.floor(text.length / 2));
    const parts = text.length > 1 ? [text.slice(0, cut), text.slice(cut)] : [text];
    parts.forEach((content, i) => {
      chunk({ content });
      if (i === 0) holdIndex.first_delta = frames.length;
    });
  }
  const wireCalls = toolCalls.map((call, index) => ({
    index,
    id: `call_fake_${n}_${index}`,
    type: 'function',
    function: { name: call.name, arguments: JSON.stringify(call.arguments) },
  }));
  for (const call of wireCalls) {
    const args = call.function.arguments;
    const cut = Math.max(1, Math.floor(args.length / 2));
    chunk({ tool_calls: [{ ...call, function: { name: call.function.name, arguments: '' } }] });
    chunk({ tool_calls: [{ index: call.index, function: { arguments: args.slice(0, cut) } }] });
    chunk({ tool_calls: [{ index: call.index, function: { arguments: args.slice(cut) } }] });
  }
  const finishReason = toolCalls.length === 0 ? 'stop' : 'tool_calls';
  chunk({}, finishReason);
  const wireUsage = {
    prompt_tokens: usage.prompt,
    completion_tokens: usage.completion,
    total_tokens: usage.prompt + usage.completion,
    prompt_tokens_details: { cached_tokens: usage.cachedPrompt },
    completion_tokens_details: { reasoning_tokens: usage.reasoning },
  };
  if (includeUsage) frames.push({ data: { ...base, choices: [], usage: wireUsage } });
  frames.push({ data: '[DONE]' });
  const message: Record<string, unknown> = { role: 'assistant', content: text ?? null };
  if (wireCalls.length > 0) message.tool_calls = wireCalls.map(({ index: _index, ...call }) => call);
  return {
    frames,
    holdIndex,
    json: {
      id,
      object: 'chat.completion',
      created: 0,
      model,
      choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
      usage: wireUsage,
    },
  };
}
