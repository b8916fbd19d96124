/**
 * The app-server's messages as a pure mapper: a notification's method and params
 * in, one decoded event out, no I/O. Shapes follow the wire of the pinned
 * release (not the README, whose examples disagree with it): `turn/completed`
 * carries no usage, `thread/tokenUsage/updated` carries the thread total and the
 * latest request, and `turn/completed`'s `status` is the turn's one terminal
 * report (a build that sends `turn/failed` instead ends the turn with it just
 * the same). Every event keeps its thread and turn ids so the session can ignore
 * what belongs to another thread or an earlier turn.
 */
import { type ErrorInfo, readErrorInfo } from './errors.js';
import { type CodexItem, readItem } from './items.js';
import { type CodexRateLimits, readRateLimits } from './rate-limits.js';
import type { CodexCounts } from './usage.js';

interface Scope {
  threadId: string | null;
  turnId: string | null;
}

export type ServerEvent = Scope &
  (
    | { type: 'thread_started'; startedThreadId: string }
    | { type: 'turn_started' }
    | { type: 'item'; phase: 'started' | 'completed'; item: CodexItem }
    /** Streamed output (`message`: text of the answer; `reasoning`; `other`: command output and the like). */
    | { type: 'delta'; of: 'message' | 'reasoning' | 'other' }
    | { type: 'token_usage'; total: CodexCounts; last: CodexCounts | null }
    /** `willRetry` true: the runtime retries on its own and the turn goes on. */
    | { type: 'error'; message: string; info: ErrorInfo | null; willRetry: boolean }
    | {
        type: 'turn_end';
        /** `completed`, `failed` or `interrupted` (anything else is kept as sent). */
        status: string;
        error: { message: string; info: ErrorInfo | null } | null;
      }
    | { type: 'warning'; message: string }
    /** The account's rate limit (one limit id per notification). */
    | { type: 'rate_limits'; limits: CodexRateLimits }
    | { type: 'other'; method: string }
  );

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);
const idOrNull = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** Counts of a `TokenUsageBreakdown`; null when the value is not one. */
export function readBreakdown(value: unknown): CodexCounts | null {
  if (!isObject(value)) return null;
  return {
    input: num(value.inputTokens),
    cachedInput: num(value.cachedInputTokens),
    cacheWriteInput: num(value.cacheWriteInputTokens),
    output: num(value.outputTokens),
    reasoningOutput: num(value.reasoningOutputTokens),
  };
}

function readTurnError(value: unknown): { message: string; info: ErrorInfo | null } | null {
  if (!isObject(value)) return null;
  const details = str(value.additionalDetails);
  const message = str(value.message) || details || 'the turn failed';
  return { message, info: readErrorInfo(value.codexErrorInfo) };
}

/** Decodes one notification of the app-server. */
export function decodeNotification(method: string, params: unknown): ServerEvent {
  const p = isObject(params) ? params : {};
  const turn = isObject(p.turn) ? p.turn : null;
  const scope: Scope = {
    threadId: idOrNull(p.threadId) ?? (isObject(p.thread) ? idOrNull(p.thread.id) : null),
    turnId: idOrNull(p.turnId) ?? (turn === null ? null : idOrNull(turn.id)),
  };
  switch (method) {
    case 'thread/started': {
      const id = isObject(p.thread) ? str(p.thread.id) : '';
      return id === ''
        ? { ...scope, type: 'other', method }
        : { ...scope, type: 'thread_started', startedThreadId: id };
    }
    case 'turn/started':
      return { ...scope, type: 'turn_started' };
    case 'item/started':
    case 'item/completed': {
      const item = readItem(p.item);
      if (item === null) return { ...scope, type: 'other', method };
      return { ...scope, type: 'item', phase: method === 'item/started' ? 'started' : 'completed', item };
    }
    case 'item/agentMessage/delta':
      return { ...scope, type: 'delta', of: 'message' };
    case 'item/reasoning/textDelta':
    case 'item/reasoning/summaryTextDelta':
    case 'item/reasoning/summaryPartAdded':
      return { ...scope, type: 'delta', of: 'reasoning' };
    case 'item/commandExecution/outputDelta':
    case 'item/fileChange/outputDelta':
    case 'item/plan/delta':
    case 'item/mcpToolCall/progress':
      return { ...scope, type: 'delta', of: 'other' };
    case 'thread/tokenUsage/updated': {
      const usage = isObject(p.tokenUsage) ? p.tokenUsage : {};
      const total = readBreakdown(usage.total);
      if (total === null) return { ...scope, type: 'other', method };
      return { ...scope, type: 'token_usage', total, last: readBreakdown(usage.last) };
    }
    case 'error': {
      const error = readTurnError(p.error) ?? { message: 'error', info: null };
      return { ...scope, type: 'error', ...error, willRetry: p.willRetry === true };
    }
    case 'turn/completed':
      return {
        ...scope,
        type: 'turn_end',
        status: turn === null ? '' : str(turn.status),
        error: turn === null ? null : readTurnError(turn.error),
      };
    case 'turn/failed':
      // Some builds end a failed turn with this notification and never send turn/completed:
      // it is as terminal as a completion with status "failed".
      return {
        ...scope,
        type: 'turn_end',
        status: 'failed',
        error:
          typeof p.error === 'string' && p.error !== ''
            ? { message: p.error, info: null }
            : (readTurnError(p.error) ?? (turn === null ? null : readTurnError(turn.error))),
      };
    case 'account/rateLimits/updated': {
      const limits = readRateLimits(p.rateLimits);
      return limits === null
        ? { ...scope, type: 'other', method }
        : { ...scope, type: 'rate_limits', limits };
    }
    case 'warning':
    case 'configWarning':
    case 'deprecationNotice':
      return { ...scope, type: 'warning', message: str(p.message) || str(p.summary) || method };
    default:
      return { ...scope, type: 'other', method };
  }
}

/** The thread id and model of a `thread/start` or `thread/resume` result; null when it names no thread. */
export function readThreadResult(result: unknown): { threadId: string; model: string | null } | null {
  if (!isObject(result) || !isObject(result.thread)) return null;
  const threadId = str(result.thread.id);
  if (threadId === '') return null;
  const model = idOrNull(result.model) ?? idOrNull(result.thread.model);
  return { threadId, model };
}

/** The turn id of a `turn/start` result; null when it names none. */
export function readTurnResult(result: unknown): string | null {
  if (!isObject(result) || !isObject(result.turn)) return null;
  return idOrNull(result.turn.id);
}
