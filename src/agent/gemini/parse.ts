/**
 * Gemini CLI's `--output-format stream-json` lines, decoded into typed records,
 * and the classification of its closing `result` line. Pure: no I/O, no clock.
 *
 * The traps this format sets: the exit status is not an outcome (an API failure
 * exits with the HTTP status modulo 256, 145 for a 401, and a SIGTERM mid-turn
 * exits 0 without any result), so only the `result` line can call a turn a
 * success; its `error.type` is usually just "unknown", so the HTTP status has to
 * be read from the message, its status word, or failing both the exit status;
 * assistant text arrives as many `message` deltas that belong together; tool ids
 * are made up by the CLI, so they pair a `tool_use` with its `tool_result` and
 * mean nothing else; and lines of other types, or unknown fields, keep appearing,
 * so any JSON object is accepted and what is not understood is ignored.
 */
import type { AgentErrorKind } from '../../domain/errors.js';
import type { Terminal } from '../core/disposition.js';

/** Token counts of `result.stats` (or of one of its models); null = the line lacks the count. */
export interface StatsCounts {
  /** `total_tokens`: prompt, candidates and thoughts (and tool-use prompts). */
  total: number | null;
  /** `input_tokens`: the prompt, cached tokens included. */
  prompt: number | null;
  /** `output_tokens`: the candidates, thoughts not included. */
  candidates: number | null;
  /** `cached`: the part of the prompt served from the cache. */
  cached: number | null;
}

export interface ResultStats extends StatsCounts {
  /** Per model as the CLI spells the names; {} when absent. */
  models: Record<string, StatsCounts>;
}

export interface ResultLine {
  type: 'result';
  /** `success` is the only success; anything else (or nothing) is a failure. */
  status: string;
  errorType: string | null;
  errorMessage: string | null;
  stats: ResultStats | null;
}

export type GeminiLine =
  | { type: 'init'; sessionId: string; model: string | null }
  /** The prompt echoed back. */
  | { type: 'user_message' }
  | { type: 'assistant_text'; text: string }
  | { type: 'tool_use'; toolId: string; toolName: string; parameters: unknown }
  | { type: 'tool_result'; toolId: string; failed: boolean }
  /** A non-fatal warning or error the CLI reports while the turn goes on. */
  | { type: 'error'; severity: string; message: string }
  | ResultLine
  /** A line type this build does not know, or one it has no use for. */
  | { type: 'ignored'; name: string };

export type Decoded = { ok: true; line: GeminiLine } | { ok: false; reason: string };

type Obj = Record<string, unknown>;

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const count = (v: unknown): number | null =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null;
const obj = (v: unknown): Obj | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : null;

function statsCounts(o: Obj): StatsCounts {
  return {
    total: count(o.total_tokens),
    prompt: count(o.input_tokens),
    candidates: count(o.output_tokens),
    cached: count(o.cached),
  };
}

function decodeStats(v: unknown): ResultStats | null {
  const o = obj(v);
  if (o === null) return null;
  const models: Record<string, StatsCounts> = {};
  const raw = obj(o.models);
  if (raw !== null) {
    for (const [name, entry] of Object.entries(raw)) {
      const e = obj(entry);
      if (e !== null) models[name] = statsCounts(e);
    }
  }
  return { ...statsCounts(o), models };
}

function decodeResult(o: Obj): Decoded {
  const error = obj(o.error);
  return {
    ok: true,
    line: {
      type: 'result',
      status: str(o.status) ?? '',
      errorType: str(error?.type),
      errorMessage: str(error?.message),
      stats: decodeStats(o.stats),
    },
  };
}

/** Decodes one stdout line; what is not a JSON object is a reason, never a throw. */
export function decodeGeminiLine(text: string): Decoded {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  const o = obj(value);
  if (o === null) return { ok: false, reason: 'not a JSON object' };
  switch (o.type) {
    case 'init': {
      const sessionId = str(o.session_id);
      if (sessionId === null || sessionId === '') return { ok: false, reason: 'init without session_id' };
      return { ok: true, line: { type: 'init', sessionId, model: str(o.model) } };
    }
    case 'message':
      if (o.role === 'assistant')
        return { ok: true, line: { type: 'assistant_text', text: str(o.content) ?? '' } };
      return { ok: true, line: { type: 'user_message' } };
    case 'tool_use': {
      const toolId = str(o.tool_id);
      const toolName = str(o.tool_name);
      if (toolId === null || toolName === null)
        return { ok: false, reason: 'tool_use without tool_id or tool_name' };
      return { ok: true, line: { type: 'tool_use', toolId, toolName, parameters: o.parameters } };
    }
    case 'tool_result': {
      const toolId = str(o.tool_id);
      if (toolId === null) return { ok: false, reason: 'tool_result without tool_id' };
      return { ok: true, line: { type: 'tool_result', toolId, failed: o.status !== 'success' } };
    }
    case 'error':
      return {
        ok: true,
        line: { type: 'error', severity: str(o.severity) ?? 'error', message: str(o.message) ?? '' },
      };
    case 'result':
      return decodeResult(o);
    default:
      return { ok: true, line: { type: 'ignored', name: typeof o.type === 'string' ? o.type : '' } };
  }
}

/** Google's status words and the HTTP status each stands for. */
const STATUS_WORDS: Readonly<Record<string, number>> = {
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  RESOURCE_EXHAUSTED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504,
};
const CODE_IN_TEXT = /"code"\s*:\s*(\d{3})\b/;
const WORD_IN_TEXT =
  /\b(UNAUTHENTICATED|PERMISSION_DENIED|RESOURCE_EXHAUSTED|INTERNAL|UNAVAILABLE|DEADLINE_EXCEEDED)\b/;
const STATUS_IN_TEXT = /\bstatus(?: code)?:? (\d{3})\b/i;
const CREDENTIAL_TEXT = /API key not valid|invalid api key|API_KEY_INVALID|unauthenticated/i;
const OVERLOAD_TEXT = /overloaded|try again later|unavailable/i;

/**
 * The HTTP status an API failure carried, or null: from the message (a JSON `code`,
 * Google's status word, "status NNN"), else from the exit status, which on an API
 * failure is the HTTP status modulo 256 (144–255 stand for 400–511; the CLI's own
 * exit codes are all lower).
 */
export function httpStatusOf(message: string, exitCode: number | null): number | null {
  const code = CODE_IN_TEXT.exec(message) ?? STATUS_IN_TEXT.exec(message);
  if (code !== null) return Number(code[1]);
  const word = WORD_IN_TEXT.exec(message);
  if (word !== null) return STATUS_WORDS[word[1] as string] ?? null;
  if (exitCode !== null && exitCode >= 144 && exitCode <= 255) return exitCode + 256;
  return null;
}

/** The error kind a failed result means. */
export function failureKind(result: ResultLine, exitCode: number | null): AgentErrorKind {
  const message = result.errorMessage ?? '';
  const status = httpStatusOf(message, exitCode);
  if (status === 401 || status === 403) return 'credential_unverified';
  if (/auth/i.test(result.errorType ?? '') || CREDENTIAL_TEXT.test(message)) return 'credential_unverified';
  // A quota refusal carries no dependable reset time: it is retried with backoff like an overload.
  if (status === 429 || (status !== null && status >= 500)) return 'response_error';
  if (status === null && OVERLOAD_TEXT.test(message)) return 'response_error';
  return 'turn_failed';
}

/** The runtime's own report of how the turn ended, from its result line. */
export function resultTerminal(result: ResultLine, exitCode: number | null, finalText: string): Terminal {
  if (result.status === 'success') return { type: 'success', message: finalText };
  const detail = result.errorMessage || 'the result reports an error';
  const status = httpStatusOf(result.errorMessage ?? '', exitCode);
  const notes = [
    status === null ? null : `HTTP status ${status}`,
    result.errorType === null || result.errorType === 'unknown' ? null : result.errorType,
    result.status === 'error' ? null : `status "${result.status}"`,
  ].filter((n) => n !== null);
  const message = notes.length === 0 ? detail : `${detail} (${notes.join(', ')})`;
  return { type: 'failure', kind: failureKind(result, exitCode), message };
}
