/**
 * OpenCode's `run --format json` lines, decoded into typed records, and what a
 * turn's lines say about how it ended. Pure: no I/O, no clock.
 *
 * The traps this format sets: there is no closing result event, so a finished
 * turn is recognised by its last `step_finish` (reason `stop`) and a failed one by
 * an `error` line, which can come while the process still exits 0; the exit code
 * alone says nothing either way. Text arrives only as whole parts once they are
 * finished, never as deltas, so a turn stopped mid-answer may show nothing but a
 * `step_start`. Each `step_finish` carries the figures of one model call, with
 * the cached and reasoning tokens counted apart from `input` and `output`. A
 * permission rule that asks is answered by the CLI itself with a rejection and a
 * plain-text line (`! permission requested: …; auto-rejecting`), not JSON. Lines
 * of other types, and unknown fields, keep appearing: any JSON object is accepted
 * and what is not understood is ignored.
 */
import type { AgentErrorKind } from '../../domain/errors.js';
import type { Terminal } from '../core/disposition.js';

/** One call's figures as `step_finish.part.tokens` gives them; null = the line lacks the count. */
export interface StepTokens {
  /** The prompt less its cached part (cache reads and writes are counted apart). */
  input: number | null;
  /** The answer, reasoning not included. */
  output: number | null;
  /** Reasoning tokens; undefined when the line has no such field. */
  reasoning: number | null | undefined;
  cacheRead: number | null;
  cacheWrite: number | null;
}

export interface StepFinish {
  type: 'step_finish';
  /** The step's part id: one per model call, so a repeated line counts once. */
  partId: string | null;
  /** `stop` ends the turn; `tool-calls` means another call follows. "" when absent. */
  reason: string;
  tokens: StepTokens | null;
  /** USD as OpenCode priced the call; null when absent. 0 also when it has no price for the model. */
  costUsd: number | null;
}

export interface ErrorLine {
  type: 'error';
  /** `APIError`, `ProviderAuthError`, `UnknownError`, …; "" when absent. */
  name: string;
  message: string;
  statusCode: number | null;
  isRetryable: boolean | null;
}

export interface ToolUse {
  type: 'tool_use';
  callId: string;
  tool: string;
  /** `completed` or `error` (the CLI reports a call only once it has ended). */
  status: string;
  input: unknown;
  /** The call's own start and end, epoch ms; null when absent. */
  startMs: number | null;
  endMs: number | null;
}

export type OpencodeLine = { sessionId: string | null } & (
  | { type: 'step_start' }
  | { type: 'text'; text: string }
  | { type: 'reasoning' }
  | ToolUse
  | StepFinish
  | ErrorLine
  /** A line type this build does not know, or one it has no use for. */
  | { type: 'ignored'; name: string }
);

/** A plain-text line the CLI writes between its JSON lines. */
export type PlainLine = { type: 'permission_rejected'; request: string };

export type Decoded =
  | { ok: true; line: OpencodeLine }
  | { ok: true; plain: PlainLine }
  | { ok: false; reason: string };

type Obj = Record<string, unknown>;

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const count = (v: unknown): number | null =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null;
const obj = (v: unknown): Obj | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : null;

const ANSI = /\u001b\[[0-9;]*m/g;
const PERMISSION_REJECTED = /^!\s*permission requested: (.*?);?\s*auto-rejecting\s*$/;

function decodeTokens(v: unknown): StepTokens | null {
  const t = obj(v);
  if (t === null) return null;
  const cache = obj(t.cache);
  return {
    input: count(t.input),
    output: count(t.output),
    reasoning: t.reasoning === undefined ? undefined : count(t.reasoning),
    cacheRead: count(cache?.read),
    cacheWrite: count(cache?.write),
  };
}

function decodeToolUse(part: Obj, sessionId: string | null): Decoded {
  const callId = str(part.callID) ?? str(part.id);
  const tool = str(part.tool);
  if (callId === null || tool === null) return { ok: false, reason: 'tool_use without callID or tool' };
  const state = obj(part.state) ?? {};
  const time = obj(state.time);
  return {
    ok: true,
    line: {
      sessionId,
      type: 'tool_use',
      callId,
      tool,
      status: str(state.status) ?? '',
      input: state.input,
      startMs: count(time?.start),
      endMs: count(time?.end),
    },
  };
}

function decodeError(o: Obj, sessionId: string | null): Decoded {
  const error = obj(o.error) ?? {};
  const data = obj(error.data) ?? {};
  const retryable = data.isRetryable;
  return {
    ok: true,
    line: {
      sessionId,
      type: 'error',
      name: str(error.name) ?? '',
      message: str(data.message) ?? str(error.message) ?? '',
      statusCode: count(data.statusCode),
      isRetryable: typeof retryable === 'boolean' ? retryable : null,
    },
  };
}

/** Decodes one stdout line; what is neither a JSON object nor a known plain line is a reason, never a throw. */
export function decodeOpencodeLine(text: string): Decoded {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const plain = PERMISSION_REJECTED.exec(text.replace(ANSI, '').trim());
    if (plain !== null) return { ok: true, plain: { type: 'permission_rejected', request: plain[1] ?? '' } };
    return { ok: false, reason: 'not JSON' };
  }
  const o = obj(value);
  if (o === null) return { ok: false, reason: 'not a JSON object' };
  const sessionId = str(o.sessionID);
  const part = obj(o.part) ?? {};
  switch (o.type) {
    case 'step_start':
      return { ok: true, line: { sessionId, type: 'step_start' } };
    case 'text':
      return { ok: true, line: { sessionId, type: 'text', text: str(part.text) ?? '' } };
    case 'reasoning':
      return { ok: true, line: { sessionId, type: 'reasoning' } };
    case 'tool_use':
      return decodeToolUse(part, sessionId);
    case 'step_finish':
      return {
        ok: true,
        line: {
          sessionId,
          type: 'step_finish',
          partId: str(part.id),
          reason: str(part.reason) ?? '',
          tokens: decodeTokens(part.tokens),
          costUsd: count(part.cost),
        },
      };
    case 'error':
      return decodeError(o, sessionId);
    default:
      return {
        ok: true,
        line: { sessionId, type: 'ignored', name: typeof o.type === 'string' ? o.type : '' },
      };
  }
}

const CREDENTIAL_TEXT = /invalid.{0,20}api.?key|incorrect api key|unauthori[sz]ed|authentication/i;
const OVERLOAD_TEXT = /overloaded|rate.?limit|too many requests|try again later|unavailable/i;

/** The error kind an `error` line means. */
export function failureKind(error: ErrorLine): AgentErrorKind {
  const status = error.statusCode;
  if (status === 401 || status === 403) return 'credential_unverified';
  if (error.name === 'ProviderAuthError') return 'credential_unverified';
  // A quota refusal carries no dependable reset time: it is retried with backoff like an overload.
  if (status === 429 || (status !== null && status >= 500)) return 'response_error';
  if (error.isRetryable === true) return 'response_error';
  if (status === null && CREDENTIAL_TEXT.test(error.message)) return 'credential_unverified';
  if (status === null && OVERLOAD_TEXT.test(error.message)) return 'response_error';
  return 'turn_failed';
}

/** Finish reasons after which OpenCode's loop ends without the turn being done. */
const CUT_SHORT: Readonly<Record<string, string>> = {
  length: "the model's reply was cut off at its output limit",
  'content-filter': "the provider's content filter stopped the reply",
  error: 'the model call ended with an error',
};

/**
 * The runtime's own report of how the turn ended, from its lines: an `error` line is a
 * failure whatever the exit code; otherwise the last step decides, and a last step that
 * asked for tools (or none at all) is no report, so the exit decides, never as a success.
 */
export function turnTerminal(
  lastError: ErrorLine | null,
  lastStep: StepFinish | null,
  finalText: string,
): Terminal | null {
  if (lastError !== null) {
    const notes = [
      lastError.statusCode === null ? null : `HTTP status ${lastError.statusCode}`,
      lastError.name === '' ? null : lastError.name,
    ].filter((n) => n !== null);
    const detail = lastError.message || 'the runtime reported an error';
    return {
      type: 'failure',
      kind: failureKind(lastError),
      message: notes.length === 0 ? detail : `${detail} (${notes.join(', ')})`,
    };
  }
  if (lastStep === null || lastStep.reason === 'tool-calls' || lastStep.reason === '') return null;
  const cut = Object.hasOwn(CUT_SHORT, lastStep.reason) ? CUT_SHORT[lastStep.reason] : undefined;
  if (cut !== undefined) {
    return { type: 'failure', kind: 'turn_failed', message: `${cut} (finish reason ${lastStep.reason})` };
  }
  return { type: 'success', message: finalText };
}
