/**
 * The JSON-lines stream the built-in runtimes (mock and echo) write, decoded
 * into typed lines. A pure decoder: no state, no I/O.
 */

export type StreamLine =
  | { type: 'start'; sessionId: string; model: string | null }
  | {
      type: 'message';
      id: string;
      model: string | null;
      text: string;
      usage: { input: number; output: number; cacheRead: number } | null;
      costUsd: number | null;
    }
  | { type: 'tool_call'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; id: string; ok: boolean }
  | { type: 'notice'; text: string }
  | { type: 'result'; status: 'success' | 'error'; text: string };

export type Decoded = { ok: true; line: StreamLine } | { ok: false; reason: string };

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const count = (v: unknown): number | null =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null;

/** Decodes one stdout line; anything that is not a known line of the stream is a reason, never a throw. */
export function decodeStreamLine(text: string): Decoded {
  const line = decodeLine(text);
  return typeof line === 'string' ? { ok: false, reason: line } : { ok: true, line };
}

/**
 * `decodeStreamLine` without the result wrapper: the line, or the reason it is none. The
 * session's per-line path reads this, so an accepted line costs no object beyond its own.
 */
export function decodeLine(text: string): StreamLine | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'not JSON';
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'not a JSON object';
  const o = value as Record<string, unknown>;
  switch (o.type) {
    case 'start': {
      const sessionId = str(o.session_id);
      return sessionId ? { type: 'start', sessionId, model: str(o.model) } : 'start without session_id';
    }
    case 'message': {
      const id = str(o.id);
      if (id === null) return 'message without id';
      const u = o.usage !== null && typeof o.usage === 'object' ? (o.usage as Record<string, unknown>) : null;
      const input = count(u?.input);
      const output = count(u?.output);
      const usage =
        u !== null && input !== null && output !== null
          ? { input, output, cacheRead: count(u.cache_read) ?? 0 }
          : null;
      return {
        type: 'message',
        id,
        model: str(o.model),
        text: str(o.text) ?? '',
        usage,
        costUsd: count(o.cost_usd),
      };
    }
    case 'tool_call': {
      const id = str(o.id);
      const name = str(o.name);
      return id && name ? { type: 'tool_call', id, name, input: o.input } : 'tool_call without id or name';
    }
    case 'tool_result': {
      const id = str(o.id);
      return id ? { type: 'tool_result', id, ok: o.ok === true } : 'tool_result without id';
    }
    case 'notice':
      return { type: 'notice', text: str(o.text) ?? '' };
    case 'result': {
      const status = o.status === 'success' || o.status === 'error' ? o.status : null;
      return status ? { type: 'result', status, text: str(o.text) ?? '' } : 'result without a known status';
    }
    default:
      return `unknown line type ${JSON.stringify(o.type)}`;
  }
}
