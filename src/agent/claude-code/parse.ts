/**
 * Claude Code's `--output-format stream-json --verbose` lines, decoded into typed
 * records, and the classification of its `result` line. Pure: no I/O, no clock.
 *
 * The traps this format sets: one API message is written as several `assistant`
 * lines (one per content block) that all repeat the message's usage, and that usage
 * is the stream's opening figure (output 1), so it is a request's reading to be
 * counted once at its largest, never summed; the `result` line's `subtype` says
 * "success" on API errors, so only `is_error: false` is a success; a synthetic
 * assistant message (model `<synthetic>`) is the CLI speaking, not the model; tool
 * results arrive on the following `user` line, paired by `tool_use_id`; key order
 * is not fixed and unknown line types keep appearing, so anything unrecognised
 * that is still a JSON object is accepted and ignored rather than called malformed.
 */
import type { AgentErrorKind } from '../../domain/errors.js';
import type { Terminal } from '../core/disposition.js';

/** Token counts as one line reports them; null = the line lacks the count. */
export interface LineCounts {
  input: number | null;
  output: number | null;
  cacheRead: number | null;
  cacheWrite: number | null;
}

export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'thinking' };

export interface ApiRetry {
  attempt: number | null;
  maxRetries: number | null;
  delayMs: number | null;
  /** HTTP status of the failed request, null when none (a connection error). */
  status: number | null;
  error: string | null;
}

export interface ResultLine {
  type: 'result';
  subtype: string;
  /** The only success signal: `is_error === false`. A missing field counts as an error. */
  isError: boolean;
  /** The final text, or the error text. */
  text: string;
  errors: string[];
  apiErrorStatus: number | null;
  terminalReason: string | null;
  sessionId: string | null;
  /** Cumulative for the process: with one process per turn, the turn's cost. */
  costUsd: number | null;
  /** The main thread's counts (sub-agents are only in `modelUsage`). */
  usage: LineCounts | null;
  /** Per model, cumulative for the process, sub-agents included; {} when absent (1.0.x). */
  modelUsage: Record<string, LineCounts>;
}

export type ClaudeLine =
  | { type: 'init'; sessionId: string; model: string | null }
  | { type: 'api_retry'; retry: ApiRetry }
  /** A sub-agent task began, progressed or ended: the model is working. */
  | { type: 'task'; subtype: string; description: string }
  /** Reasoning under way (`system/thinking_tokens`). */
  | { type: 'thinking' }
  /** Any other `system` line (hooks, status, compaction). */
  | { type: 'system'; subtype: string }
  | {
      type: 'assistant';
      /** `message.id`: the request identity its usage belongs to. */
      messageId: string | null;
      model: string | null;
      usage: LineCounts | null;
      blocks: ContentBlock[];
      /** The CLI's own message (an API error shown as text), not model output. */
      synthetic: boolean;
      /** The line's `error` code (`authentication_failed`, `rate_limit`, …), null when none. */
      error: string | null;
    }
  | { type: 'user'; toolResults: { toolUseId: string; isError: boolean }[] }
  | {
      type: 'rate_limit';
      status: string;
      /** Epoch ms the window resets, null when not given. */
      resetsAtMs: number | null;
      limitType: string | null;
      utilization: number | null;
      /** Every window the line reports (`unifiedWindows`, else the one it names); [] when none. */
      windows: ClaudeLimitWindow[];
    }
  | ResultLine
  /** A partial-message event (`--include-partial-messages`) or a line type this build does not know. */
  | { type: 'ignored'; name: string };

export type Decoded = { ok: true; line: ClaudeLine } | { ok: false; reason: string };

/** One rate-limit window of a `rate_limit_event`. */
export interface ClaudeLimitWindow {
  /** The CLI's name for it (`five_hour`, `seven_day`, …). */
  name: string;
  /** Share used, 0–1; null when not given. */
  utilization: number | null;
  /** Epoch ms, null when not given. */
  resetsAtMs: number | null;
}

type Obj = Record<string, unknown>;

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const count = (v: unknown): number | null =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null;
const obj = (v: unknown): Obj | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : null;

/** Counts in the Messages API's spelling (`usage` of a message or a result). */
function apiCounts(v: unknown): LineCounts | null {
  const u = obj(v);
  if (u === null) return null;
  return {
    input: count(u.input_tokens),
    output: count(u.output_tokens),
    cacheRead: count(u.cache_read_input_tokens),
    cacheWrite: count(u.cache_creation_input_tokens),
  };
}

/** Counts in `modelUsage`'s spelling. */
function modelCounts(v: unknown): LineCounts | null {
  const u = obj(v);
  if (u === null) return null;
  return {
    input: count(u.inputTokens),
    output: count(u.outputTokens),
    cacheRead: count(u.cacheReadInputTokens),
    cacheWrite: count(u.cacheCreationInputTokens),
  };
}

function blocksOf(content: unknown): ContentBlock[] {
  if (!Array.isArray(content)) return [];
  const blocks: ContentBlock[] = [];
  for (const raw of content) {
    const b = obj(raw);
    if (b === null) continue;
    switch (b.type) {
      case 'text': {
        const text = str(b.text);
        if (text !== null) blocks.push({ type: 'text', text });
        break;
      }
      case 'tool_use': {
        const id = str(b.id);
        const name = str(b.name);
        if (id !== null && name !== null) blocks.push({ type: 'tool_use', id, name, input: b.input });
        break;
      }
      case 'thinking':
      case 'redacted_thinking':
        blocks.push({ type: 'thinking' });
        break;
    }
  }
  return blocks;
}

function decodeSystem(o: Obj): Decoded {
  const subtype = str(o.subtype) ?? '';
  switch (subtype) {
    case 'init': {
      const sessionId = str(o.session_id);
      if (sessionId === null || sessionId === '')
        return { ok: false, reason: 'system/init without session_id' };
      return { ok: true, line: { type: 'init', sessionId, model: str(o.model) } };
    }
    case 'api_retry':
      return {
        ok: true,
        line: {
          type: 'api_retry',
          retry: {
            attempt: count(o.attempt),
            maxRetries: count(o.max_retries),
            delayMs: count(o.retry_delay_ms),
            status: count(o.error_status),
            error: str(o.error),
          },
        },
      };
    case 'task_started':
    case 'task_updated':
    case 'task_notification':
      return {
        ok: true,
        line: { type: 'task', subtype, description: str(o.description) ?? str(o.summary) ?? '' },
      };
    case 'thinking_tokens':
      return { ok: true, line: { type: 'thinking' } };
    default:
      return { ok: true, line: { type: 'system', subtype } };
  }
}

function decodeAssistant(o: Obj): Decoded {
  const message = obj(o.message);
  if (message === null) return { ok: false, reason: 'assistant line without message' };
  const model = str(message.model);
  return {
    ok: true,
    line: {
      type: 'assistant',
      messageId: str(message.id),
      model,
      usage: apiCounts(message.usage),
      blocks: blocksOf(message.content),
      synthetic: model === '<synthetic>' || o.isApiErrorMessage === true || o.is_api_error_message === true,
      error: str(o.error),
    },
  };
}

function decodeUser(o: Obj): Decoded {
  const content = obj(o.message)?.content;
  const toolResults: { toolUseId: string; isError: boolean }[] = [];
  if (Array.isArray(content)) {
    for (const raw of content) {
      const b = obj(raw);
      if (b === null || b.type !== 'tool_result') continue;
      const id = str(b.tool_use_id);
      if (id !== null) toolResults.push({ toolUseId: id, isError: b.is_error === true });
    }
  }
  return { ok: true, line: { type: 'user', toolResults } };
}

function decodeRateLimit(o: Obj): Decoded {
  const info = obj(o.rate_limit_info) ?? {};
  const epochMs = (v: unknown) => {
    const seconds = num(v);
    return seconds === null ? null : Math.round(seconds * 1000);
  };
  const resetsAtMs = epochMs(info.resetsAt);
  const limitType = str(info.rateLimitType);
  const utilization = num(info.utilization);
  // Newer builds list every window in `unifiedWindows`; older ones describe only the one named.
  const unified = obj(info.unifiedWindows);
  const windows: ClaudeLimitWindow[] =
    unified !== null
      ? Object.entries(unified).flatMap(([name, raw]) => {
          const w = obj(raw);
          return w === null
            ? []
            : [{ name, utilization: num(w.utilization), resetsAtMs: epochMs(w.resetsAt) }];
        })
      : limitType === null
        ? []
        : [{ name: limitType, utilization, resetsAtMs }];
  return {
    ok: true,
    line: { type: 'rate_limit', status: str(info.status) ?? '', resetsAtMs, limitType, utilization, windows },
  };
}

function decodeResult(o: Obj): Decoded {
  const modelUsage: Record<string, LineCounts> = {};
  const models = obj(o.modelUsage);
  if (models !== null) {
    for (const [name, v] of Object.entries(models)) {
      const counts = modelCounts(v);
      if (counts !== null) modelUsage[name] = counts;
    }
  }
  const errors: string[] = [];
  if (Array.isArray(o.errors)) for (const e of o.errors) if (typeof e === 'string') errors.push(e);
  return {
    ok: true,
    line: {
      type: 'result',
      subtype: str(o.subtype) ?? '',
      isError: o.is_error !== false,
      text: str(o.result) ?? '',
      errors,
      apiErrorStatus: count(o.api_error_status),
      terminalReason: str(o.terminal_reason),
      sessionId: str(o.session_id),
      costUsd: count(o.total_cost_usd),
      usage: apiCounts(o.usage),
      modelUsage,
    },
  };
}

/** Decodes one stdout line; what is not a JSON object is a reason, never a throw. */
export function decodeClaudeLine(text: string): Decoded {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  const o = obj(value);
  if (o === null) return { ok: false, reason: 'not a JSON object' };
  switch (o.type) {
    case 'system':
      return decodeSystem(o);
    case 'assistant':
      return decodeAssistant(o);
    case 'user':
      return decodeUser(o);
    case 'rate_limit_event':
      return decodeRateLimit(o);
    case 'result':
      return decodeResult(o);
    default:
      return { ok: true, line: { type: 'ignored', name: typeof o.type === 'string' ? o.type : '' } };
  }
}

/** What the turn showed before its result that the result line itself may not repeat. */
export interface FailureContext {
  /** The last `system/api_retry` of the turn. */
  lastRetry: ApiRetry | null;
  /** The `error` code of the last synthetic assistant message. */
  syntheticError: string | null;
  /** Reset time (epoch ms) of a rate-limit window the turn was refused by. */
  rejectedResetMs: number | null;
}

const CREDENTIAL_ERRORS = new Set(['authentication_failed', 'oauth_org_not_allowed', 'billing_error']);
const LIMIT_ERRORS = new Set(['rate_limit']);
const SERVER_ERRORS = new Set(['overloaded', 'server_error', 'api_error']);
const LIMIT_TEXT = /usage limit|limit reached|hit your limit|rate limit/i;
/** Older builds append the reset time as epoch seconds: `Claude AI usage limit reached|1760000000`. */
const RESET_SUFFIX = /\|(\d{10})\s*$/;

/** The error kind a failed result means. */
export function failureKind(result: ResultLine, ctx: FailureContext): AgentErrorKind {
  const status = result.apiErrorStatus ?? ctx.lastRetry?.status ?? null;
  const code = ctx.syntheticError ?? ctx.lastRetry?.error ?? null;
  if (status === 401 || status === 403 || (code !== null && CREDENTIAL_ERRORS.has(code))) {
    return 'credential_unverified';
  }
  if (
    status === 429 ||
    ctx.rejectedResetMs !== null ||
    (code !== null && LIMIT_ERRORS.has(code)) ||
    // Only an API refusal (reported as subtype "success") is read by its text: a turn or
    // budget cap of the CLI itself must not pass for a provider's limit.
    (result.subtype === 'success' && LIMIT_TEXT.test(result.text))
  ) {
    return 'usage_limit';
  }
  if ((status !== null && status >= 500) || (code !== null && SERVER_ERRORS.has(code))) {
    return 'response_error';
  }
  return 'turn_failed';
}

/** The runtime's own report of how the turn ended, from its result line. */
export function resultTerminal(result: ResultLine, ctx: FailureContext): Terminal {
  if (!result.isError) return { type: 'success', message: result.text };
  const kind = failureKind(result, ctx);
  const detail = result.text || result.errors.join('; ') || result.subtype || 'the result reports an error';
  const status = result.apiErrorStatus === null ? '' : `API status ${result.apiErrorStatus}, `;
  const message = `${detail} (${status}${result.subtype || 'error'})`;
  if (kind !== 'usage_limit') return { type: 'failure', kind, message };
  const suffix = RESET_SUFFIX.exec(result.text);
  const resetAtMs = ctx.rejectedResetMs ?? (suffix === null ? null : Number(suffix[1]) * 1000);
  return { type: 'failure', kind, message, resetAtMs };
}
