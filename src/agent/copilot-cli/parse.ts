/**
 * Copilot CLI's `--output-format json` lines, decoded into typed records, and the
 * classification of a turn from its closing `result` line. Pure: no I/O, no clock.
 *
 * The traps this format sets: the `result` line is the only terminal report and
 * the only place the session id appears, and its `exitCode` (not the process's)
 * says how the turn went; what went wrong is on an earlier `session.error`; text
 * arrives as ephemeral deltas before the whole message, so a stream cut off
 * mid-answer shows only deltas; about twenty `session.background_tasks_changed`
 * lines accompany every tool call; and new event types appear with every release,
 * so any JSON object that is not recognised is accepted and ignored. When no
 * GitHub login exists the CLI writes a plain-text error instead of JSON.
 */
import type { AgentErrorKind } from '../../domain/errors.js';
import type { Terminal } from '../core/disposition.js';

export interface ResultLine {
  type: 'result';
  /** The session the CLI would continue under; null when the line lacks it. */
  sessionId: string | null;
  /** The turn's own verdict: 0 = success. Null when missing (read as a failure). */
  exitCode: number | null;
  /** Premium requests the session has used so far (cumulative across resumes); null when absent. */
  premiumRequests: number | null;
}

export interface ToolRequest {
  id: string;
  name: string;
}

export interface SessionError {
  type: 'session_error';
  /** `authentication`, `query`, … as the CLI names it. */
  errorType: string;
  message: string;
  /** The provider's HTTP status, null when none. */
  statusCode: number | null;
}

export type CopilotLine =
  | ResultLine
  | {
      type: 'message';
      messageId: string | null;
      model: string | null;
      /** The whole text of the message; "" for one that only calls tools. */
      content: string;
      toolRequests: ToolRequest[];
    }
  /** Part of a message (or of its reasoning) still streaming. */
  | { type: 'delta'; messageId: string | null; text: string }
  | { type: 'reasoning' }
  | {
      type: 'tool_start';
      toolCallId: string;
      toolName: string;
      arguments: unknown;
      /** The server and its own name of a tool an MCP server serves; null for the CLI's own. */
      mcp: { server: string; tool: string } | null;
    }
  | { type: 'tool_complete'; toolCallId: string; success: boolean }
  /** One failed model call; the CLI may retry it. */
  | { type: 'call_failure'; statusCode: number | null; attempt: number | null }
  | SessionError
  /** `session.info` / `session.warning`: the CLI telling the user something. */
  | { type: 'notice'; level: 'info' | 'warning'; subtype: string; message: string }
  /** The agent declared the task done (`task_complete`, autopilot's way to stop). */
  | { type: 'task_complete'; summary: string; success: boolean }
  /** The model the session uses (`session.tools_updated`, `model.call_start`). */
  | { type: 'model'; model: string }
  /** The plain-text refusal of a CLI with no GitHub login. */
  | { type: 'not_authenticated'; message: string }
  | { type: 'ignored'; name: string };

export type Decoded = { ok: true; line: CopilotLine } | { ok: false; reason: string };

type Obj = Record<string, unknown>;

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const count = (v: unknown): number | null =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null;
const int = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) ? v : null);
const obj = (v: unknown): Obj | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : null;

/** The first line a CLI without a GitHub login prints (not JSON). */
const NOT_AUTHENTICATED = /^Error: Not authenticated\b/;

function toolRequestsOf(v: unknown): ToolRequest[] {
  if (!Array.isArray(v)) return [];
  const out: ToolRequest[] = [];
  for (const raw of v) {
    const r = obj(raw);
    const id = str(r?.toolCallId);
    const name = str(r?.name);
    if (id !== null && name !== null) out.push({ id, name });
  }
  return out;
}

function decodeEvent(type: string, data: Obj): CopilotLine {
  switch (type) {
    case 'assistant.message':
      return {
        type: 'message',
        messageId: str(data.messageId),
        model: str(data.model),
        content: str(data.content) ?? '',
        toolRequests: toolRequestsOf(data.toolRequests),
      };
    case 'assistant.message_delta':
      return { type: 'delta', messageId: str(data.messageId), text: str(data.deltaContent) ?? '' };
    case 'assistant.reasoning':
    case 'assistant.reasoning_delta':
      return { type: 'reasoning' };
    case 'tool.execution_start': {
      const toolCallId = str(data.toolCallId);
      const toolName = str(data.toolName);
      if (toolCallId === null || toolName === null) return { type: 'ignored', name: type };
      const server = str(data.mcpServerName);
      const tool = str(data.mcpToolName);
      const mcp = server !== null && tool !== null ? { server, tool } : null;
      return { type: 'tool_start', toolCallId, toolName, arguments: data.arguments, mcp };
    }
    case 'tool.execution_complete': {
      const toolCallId = str(data.toolCallId);
      if (toolCallId === null) return { type: 'ignored', name: type };
      return { type: 'tool_complete', toolCallId, success: data.success === true };
    }
    case 'model.call_failure':
      return { type: 'call_failure', statusCode: int(data.statusCode), attempt: int(data.retryAttempt) };
    case 'session.error':
      return {
        type: 'session_error',
        errorType: str(data.errorType) ?? '',
        message: str(data.message) ?? '',
        statusCode: int(data.statusCode),
      };
    case 'session.info':
    case 'session.warning':
      return {
        type: 'notice',
        level: type === 'session.info' ? 'info' : 'warning',
        subtype: str(data.infoType) ?? str(data.warningType) ?? '',
        message: str(data.message) ?? '',
      };
    case 'session.task_complete':
      return { type: 'task_complete', summary: str(data.summary) ?? '', success: data.success !== false };
    case 'session.tools_updated':
    case 'model.call_start': {
      const model = str(data.model);
      return model === null || model === '' ? { type: 'ignored', name: type } : { type: 'model', model };
    }
    default:
      return { type: 'ignored', name: type };
  }
}

function decodeResult(o: Obj): ResultLine {
  const usage = obj(o.usage);
  return {
    type: 'result',
    sessionId: str(o.sessionId),
    exitCode: int(o.exitCode),
    premiumRequests: count(usage?.premiumRequests),
  };
}

/** Decodes one stdout line; what is neither a JSON object nor a known text line is a reason, never a throw. */
export function decodeCopilotLine(text: string): Decoded {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const trimmed = text.trim();
    if (NOT_AUTHENTICATED.test(trimmed))
      return { ok: true, line: { type: 'not_authenticated', message: trimmed } };
    return { ok: false, reason: 'not JSON' };
  }
  const o = obj(value);
  if (o === null) return { ok: false, reason: 'not a JSON object' };
  const type = str(o.type);
  if (type === null) return { ok: false, reason: 'a JSON object without a type' };
  if (type === 'result') return { ok: true, line: decodeResult(o) };
  return { ok: true, line: decodeEvent(type, obj(o.data) ?? {}) };
}

/** The error kind a failed turn's last `session.error` means (null: none was reported). */
export function failureKind(error: SessionError | null): AgentErrorKind {
  if (error === null) return 'turn_failed';
  const status = error.statusCode;
  if (error.errorType === 'authentication' || status === 401 || status === 403)
    return 'credential_unverified';
  // The CLI has already retried a throttled or failing provider several times; a later attempt may pass.
  if (status === 429 || (status !== null && status >= 500)) return 'response_error';
  return 'turn_failed';
}

/** What the turn showed besides its result line. */
export interface TurnReport {
  /** The last `session.error` of the turn. */
  lastError: SessionError | null;
  /** The plain-text refusal of a CLI that is not logged in. */
  notAuthenticated: string | null;
  /** The runtime's final words for a successful turn. */
  finalMessage: string;
}

/** The runtime's own report of how the turn ended: its result line, or its plain-text refusal; null when neither came. */
export function turnTerminal(result: ResultLine | null, report: TurnReport): Terminal | null {
  if (result === null) {
    if (report.notAuthenticated === null) return null;
    return { type: 'failure', kind: 'credential_unverified', message: report.notAuthenticated };
  }
  if (result.exitCode === 0) return { type: 'success', message: report.finalMessage || 'the turn completed' };
  const error = report.lastError;
  const status = error?.statusCode === null || error === null ? '' : `HTTP ${error.statusCode}, `;
  const what = error === null ? '' : ` (${status}${error.errorType || 'error'})`;
  const detail = error?.message || `the result reports exit code ${result.exitCode ?? 'none'}`;
  return { type: 'failure', kind: failureKind(error), message: `${detail}${what}` };
}
