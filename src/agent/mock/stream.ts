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
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { ok: false, reason: 'not a JSON object' };
  const o = value as Record<string, unknown>;
  switch (o.type) {
    case 'start': {
      const sessionId = str(o.session_id);
      return sessionId
        ? { ok: true, line: { type: 'start', sessionId, model: str(o.model) } }
        : { ok: false, reason: 'start without session_id' };
    }
    case 'message': {
      const id = str(o.id);
      if (id === null) return { ok: false, reason: 'message without id' };
      const u = o.usage !== null && typeof o.usage === 'object' ? (o.usage as Record<string, unknown>) : null;
      const input = count(u?.input);
      const output = count(u?.output);
      const usage =
        u !== null && input !== null && output !== null
          ? { input, output, cacheRead: count(u.cache_read) ?? 0 }
          : null;
      return {
        ok: true,
        line: {
          type: 'message',
          id,
          model: str(o.model),
          text: str(o.text) ?? '',
          usage,
          costUsd: count(o.cost_usd),
        },
      };
    }
    case 'tool_call': {
      const id = str(o.id);
      const name = str(o.name);
      return id && name
        ? { ok: true, line: { type: 'tool_call', id, name, input: o.input } }
        : { ok: false, reason: 'tool_call without id or name' };
    }
    case 'tool_result': {
      const id = str(o.id);
      return id
        ? { ok: true, line: { type: 'tool_result', id, ok: o.ok === true } }
        : { ok: false, reason: 'tool_result without id' };
    }
    case 'notice':
      return { ok: true, line: { type: 'notice', text: str(o.text) ?? '' } };
    case 'result': {
      const status = o.status === 'success' || o.status === 'error' ? o.status : null;
      return status
        ? { ok: true, line: { type: 'result', status, text: str(o.text) ?? '' } }
        : { ok: false, reason: 'result without a known status' };
    }
    default:
      return { ok: false, reason: `unknown line type ${JSON.stringify(o.type)}` };
  }
}
