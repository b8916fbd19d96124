/**
 * `codex exec --json` lines as a pure mapper: text in, one decoded line out, no
 * I/O. Two formats exist. The current one (`thread.started`, `turn.*`, `item.*`)
 * names the thread only in `thread.started`, ends a turn with `turn.completed`
 * (usage: the thread's running total) or `turn.failed`, and treats a top-level
 * `error` as a notice (`Reconnecting... 1/5`) that the turn may survive. The old
 * one wraps each event as `{"id":…,"msg":{"type":…}}` after a config header and
 * a prompt echo; it is mapped onto the same lines, so one session serves both.
 */

import { type CodexItem, readItem } from './items.js';
import { type CodexRateLimits, readRateLimits } from './rate-limits.js';
import type { CodexCounts } from './usage.js';

export type ExecLine =
  | { type: 'thread_started'; threadId: string }
  | { type: 'turn_started' }
  | { type: 'item'; phase: 'started' | 'updated' | 'completed'; item: CodexItem }
  /** The turn ended on its own; `usage` is the thread's running total, null when absent. */
  | { type: 'completion'; usage: CodexCounts | null; lastMessage: string | null }
  | { type: 'failure'; message: string }
  /** A notice from the CLI; not the end of the turn. */
  | { type: 'error'; message: string }
  /** A usage report of the old format, before the turn's end, with the rate limits it carries (null when none). */
  | { type: 'usage'; usage: CodexCounts; rateLimits: CodexRateLimits | null }
  /** A line of the protocol this adapter does not use (config header, plan deltas, unknown types). */
  | { type: 'ignored'; name: string };

export type DecodeResult = { ok: true; line: ExecLine } | { ok: false; reason: string };

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** Counts from snake_case usage fields; null when the value is not an object. */
export function readExecUsage(value: unknown): CodexCounts | null {
  if (!isObject(value)) return null;
  return {
    input: num(value.input_tokens),
    cachedInput: num(value.cached_input_tokens),
    cacheWriteInput: num(value.cache_write_input_tokens),
    output: num(value.output_tokens),
    reasoningOutput: num(value.reasoning_output_tokens),
  };
}

/** Decodes one stdout line of `codex exec --json`. */
export function decodeExecLine(text: string): DecodeResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  if (!isObject(value)) return { ok: false, reason: 'not a JSON object' };
  if (isObject(value.msg)) return decodeLegacy(value.msg);
  if (typeof value.type !== 'string') {
    // The old format opens with a config header and an echo of the prompt.
    if (typeof value.prompt === 'string' || typeof value.model === 'string') {
      return { ok: true, line: { type: 'ignored', name: 'header' } };
    }
    return { ok: false, reason: 'no type' };
  }
  switch (value.type) {
    case 'thread.started': {
      const threadId = str(value.thread_id);
      if (threadId === '') return { ok: false, reason: 'thread.started without thread_id' };
      return { ok: true, line: { type: 'thread_started', threadId } };
    }
    case 'turn.started':
      return { ok: true, line: { type: 'turn_started' } };
    case 'item.started':
    case 'item.updated':
    case 'item.completed': {
      const item = readItem(value.item);
      if (item === null) return { ok: false, reason: `${value.type} without an item` };
      const phase = value.type.slice('item.'.length) as 'started' | 'updated' | 'completed';
      return { ok: true, line: { type: 'item', phase, item } };
    }
    case 'turn.completed':
      return {
        ok: true,
        line: { type: 'completion', usage: readExecUsage(value.usage), lastMessage: null },
      };
    case 'turn.failed': {
      const error = isObject(value.error) ? str(value.error.message) : str(value.error);
      return { ok: true, line: { type: 'failure', message: error || 'the turn failed' } };
    }
    case 'error':
      return { ok: true, line: { type: 'error', message: str(value.message) } };
    default:
      return { ok: true, line: { type: 'ignored', name: value.type } };
  }
}

/** Item id of an old-format event: its call id. */
function legacyItem(msg: Record<string, unknown>, type: string, fields: Record<string, unknown>): CodexItem {
  return readItem({ id: str(msg.call_id), type, ...fields }) as CodexItem;
}

function decodeLegacy(msg: Record<string, unknown>): DecodeResult {
  const type = str(msg.type);
  const line = (l: ExecLine): DecodeResult => ({ ok: true, line: l });
  switch (type) {
    case 'session_configured': {
      const threadId = str(msg.session_id);
      return threadId === ''
        ? line({ type: 'ignored', name: type })
        : line({ type: 'thread_started', threadId });
    }
    case 'task_started':
      return line({ type: 'turn_started' });
    case 'agent_message':
      return line({
        type: 'item',
        phase: 'completed',
        item: { type: 'message', id: '', text: str(msg.message) },
      });
    case 'agent_reasoning':
      return line({ type: 'item', phase: 'completed', item: { type: 'reasoning', id: '' } });
    case 'exec_command_begin':
      return line({
        type: 'item',
        phase: 'started',
        item: legacyItem(msg, 'command_execution', { command: msg.command, status: 'in_progress' }),
      });
    case 'exec_command_end': {
      const exitCode = num(msg.exit_code);
      return line({
        type: 'item',
        phase: 'completed',
        item: legacyItem(msg, 'command_execution', {
          command: msg.command,
          exit_code: exitCode,
          status: exitCode === 0 ? 'completed' : 'failed',
        }),
      });
    }
    case 'patch_apply_begin':
    case 'patch_apply_end': {
      const changes = isObject(msg.changes) ? Object.keys(msg.changes).map((path) => ({ path })) : [];
      const done = type === 'patch_apply_end';
      return line({
        type: 'item',
        phase: done ? 'completed' : 'started',
        item: legacyItem(msg, 'file_change', {
          changes,
          status: !done ? 'in_progress' : msg.success === false ? 'failed' : 'completed',
        }),
      });
    }
    case 'mcp_tool_call_begin':
    case 'mcp_tool_call_end': {
      const invocation = isObject(msg.invocation) ? msg.invocation : {};
      const done = type === 'mcp_tool_call_end';
      const result = isObject(msg.result) ? msg.result : {};
      const failed =
        done && (Object.hasOwn(result, 'Err') || (isObject(result.Ok) && result.Ok.isError === true));
      return line({
        type: 'item',
        phase: done ? 'completed' : 'started',
        item: legacyItem(msg, 'mcp_tool_call', {
          server: invocation.server,
          tool: invocation.tool,
          status: !done ? 'in_progress' : failed ? 'failed' : 'completed',
        }),
      });
    }
    case 'token_count': {
      const usage = readExecUsage(
        isObject(msg.info) && isObject(msg.info.total_token_usage) ? msg.info.total_token_usage : msg,
      );
      if (usage === null) return line({ type: 'ignored', name: type });
      return line({ type: 'usage', usage, rateLimits: readRateLimits(msg.rate_limits) });
    }
    case 'task_complete':
      return line({
        type: 'completion',
        usage: null,
        lastMessage: typeof msg.last_agent_message === 'string' ? msg.last_agent_message : null,
      });
    case 'turn_aborted':
      return line({ type: 'failure', message: 'the turn was aborted' });
    case 'error':
      return line({ type: 'error', message: str(msg.message) });
    default:
      return line({ type: 'ignored', name: type });
  }
}
