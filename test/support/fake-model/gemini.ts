/**
 * The Gemini API dialect of the fake model server, as Gemini CLI reaches it
 * through `GOOGLE_GEMINI_BASE_URL`: `POST /v1beta/models/{model}:streamGenerateContent?alt=sse`
 * answered from a script of replies as a server-sent-event stream of
 * `GenerateContentResponse` frames (CRLF-terminated, as Google sends them);
 * `:generateContent` takes a reply from the same script and answers it as one
 * JSON object; `:countTokens` answers a fixed count.
 *
 * Things a parser must not get wrong, which the fake reproduces: function calls
 * carry no id (the client makes one up), the usage comes once on the last frame
 * beside `finishReason`, and `promptTokenCount` includes the cached tokens.
 */
import {
  type Dialect,
  type FakeResponse,
  type RecordedRequest,
  ReplyScript,
  type SseFrame,
} from './server.js';

export interface GeminiUsage {
  /** `promptTokenCount`, cached tokens included. */
  prompt: number;
  /** `candidatesTokenCount`. */
  candidates: number;
  /** `cachedContentTokenCount`. */
  cached?: number;
  /** `thoughtsTokenCount` (reported beside, not inside, `candidatesTokenCount`). */
  thoughts?: number;
}

export interface GeminiFunctionCall {
  name: string;
  args: Record<string, unknown>;
}

/** Where a held stream stops: after the first frame (the first half of the text). */
export type GeminiHoldPoint = 'first_frame';

export type GeminiReply =
  | {
      type: 'message';
      /** Model text, in two frames. Default: none when function calls are given, else "OK". */
      text?: string;
      /** Function calls in the last frame, after the text (more than one = parallel calls). */
      functionCalls?: readonly GeminiFunctionCall[];
      usage?: GeminiUsage;
      /** `finishReason` of the last frame; default `STOP` (Gemini says STOP for function calls too). */
      finishReason?: string;
      /** Pause between SSE frames (a slow stream). */
      frameDelayMs?: number;
      /** Stop writing at this point and hold the connection open. */
      holdAt?: GeminiHoldPoint;
    }
  | {
      type: 'error';
      status: number;
      message: string;
      /** Google's status word; default from the HTTP status (401 UNAUTHENTICATED, 429 RESOURCE_EXHAUSTED, 503 UNAVAILABLE, …). */
      statusText?: string;
      /** Sent as `retry-after`; default 0 so a client's retries are immediate. */
      retryAfterSeconds?: number;
    }
  /** Never answer. */
  | { type: 'hang' };

/** The figures of one fake call: the same 123 in (7 of them cached) / 45 out as the other dialects. */
export const GEMINI_DEFAULT_USAGE: Readonly<Required<GeminiUsage>> = {
  prompt: 123,
  candidates: 45,
  cached: 7,
  thoughts: 0,
};

const STATUS_WORDS: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

export interface GeminiDialect extends Dialect {
  /** Replies handed out so far (token counts are not replies). */
  readonly served: number;
}

const ROUTE =
  /^\/v1(?:beta|alpha)?\/models\/([^/:?]+):(streamGenerateContent|generateContent|countTokens)(\?|$)/;

/** The dialect, answering `streamGenerateContent` and `generateContent` from `script`. */
export function geminiDialect(
  script: readonly GeminiReply[] | ((request: RecordedRequest, index: number) => GeminiReply),
): GeminiDialect {
  const replies = new ReplyScript(script);
  let ids = 0;
  return {
    name: 'gemini',
    get served() {
      return replies.served;
    },
    matches: (method, path) => method === 'POST' && ROUTE.test(path),
    respond(request): FakeResponse {
      const [, model = 'gemini-fake', action] = ROUTE.exec(request.path) ?? [];
      if (action === 'countTokens') {
        return { type: 'json', status: 200, body: { totalTokens: GEMINI_DEFAULT_USAGE.prompt } };
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
                code: reply.status,
                message: reply.message,
                status: reply.statusText ?? STATUS_WORDS[reply.status] ?? 'UNKNOWN',
              },
            },
            headers: { 'retry-after': String(reply.retryAfterSeconds ?? 0) },
          };
        case 'message': {
          ids += 1;
          const built = buildResponse(reply, ids, model);
          if (action !== 'streamGenerateContent') return { type: 'json', status: 200, body: built.json };
          return {
            type: 'sse',
            frames: built.frames,
            lineEnding: '\r\n',
            ...(reply.frameDelayMs === undefined ? {} : { frameDelayMs: reply.frameDelayMs }),
            ...(reply.holdAt === undefined ? {} : { holdAfterFrames: 1 }),
          };
        }
      }
    },
  };
}

interface GeminiContent {
  role?: unknown;
  parts?: unknown;
}

function lastContent(request: RecordedRequest): GeminiContent | undefined {
  const contents = (request.body as { contents?: unknown } | null)?.contents;
  return Array.isArray(contents) ? (contents.at(-1) as GeminiContent | undefined) : undefined;
}

/** True when the request's last content hands back a function's result (the step after a tool). */
export function geminiAnswersFunctionCall(request: RecordedRequest): boolean {
  const parts = lastContent(request)?.parts;
  return Array.isArray(parts) && parts.some((p) => (p as { functionResponse?: unknown }).functionResponse);
}

/** Names of the functions a request declares. */
export function geminiOfferedTools(request: RecordedRequest): string[] {
  const tools = (request.body as { tools?: unknown } | null)?.tools;
  if (!Array.isArray(tools)) return [];
  return tools.flatMap((t) => {
    const declarations = (t as { functionDeclarations?: unknown }).functionDeclarations;
    return Array.isArray(declarations) ? declarations.map((d) => String((d as { name?: unknown }).name)) : [];
  });
}

/** The model named in the request's path, null when the path is not a model call. */
export function geminiModelOf(request: RecordedRequest): string | null {
  return ROUTE.exec(request.path)?.[1] ?? null;
}

/**
 * A script for one tool round trip: a request handing back a function result
 * gets `then`; any other gets `first`.
 */
export function geminiToolRoundTrip(
  first: Extract<GeminiReply, { type: 'message' }>,
  then: GeminiReply,
): (request: RecordedRequest) => GeminiReply {
  return (request) => (geminiAnswersFunctionCall(request) ? then : first);
}

interface BuiltResponse {
  frames: SseFrame[];
  json: unknown;
}

function buildResponse(
  reply: Extract<GeminiReply, { type: 'message' }>,
  n: number,
  model: string,
): BuiltResponse {
  const usage = { ...GEMINI_DEFAULT_USAGE, ...reply.usage };
  const calls = reply.functionCalls ?? [];
  const text = reply.text ?? (calls.length === 0 ? 'OK' : undefined);
  const cut = text === undefined ? 0 : Math.max(1, Math.floor(text.length / 2));
  const head = text?.slice(0, cut) ?? '';
  const tail = text?.slice(cut) ?? '';
  const callParts = calls.map((call) => ({ functionCall: { name: call.name, args: call.args } }));
  const envelope = { modelVersion: model, responseId: `fake-response-${n}` };
  const usageMetadata = {
    promptTokenCount: usage.prompt,
    candidatesTokenCount: usage.candidates,
    totalTokenCount: usage.prompt + usage.candidates + usage.thoughts,
    cachedContentTokenCount: usage.cached,
    ...(usage.thoughts > 0 ? { thoughtsTokenCount: usage.thoughts } : {}),
  };
  const finishReason = reply.finishReason ?? 'STOP';
  const candidate = (parts: unknown[], last: boolean) => ({
    content: { role: 'model', parts },
    index: 0,
    ...(last ? { finishReason } : {}),
  });
  // The last frame always has a part; Google's closing frame is often an empty text.
  const lastParts = [...(tail === '' && callParts.length > 0 ? [] : [{ text: tail }]), ...callParts];
  const frames: SseFrame[] = [];
  // Text, when there is any, starts in a frame of its own so a held stream has shown some.
  if (head !== '') frames.push({ data: { candidates: [candidate([{ text: head }], false)], ...envelope } });
  frames.push({ data: { candidates: [candidate(lastParts, true)], usageMetadata, ...envelope } });
  const allParts = [...(text === undefined ? [] : [{ text }]), ...callParts];
  return { frames, json: { candidates: [candidate(allParts, true)], usageMetadata, ...envelope } };
}
