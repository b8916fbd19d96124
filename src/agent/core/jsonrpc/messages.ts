/**
 * JSON-RPC messages as a long-lived agent runtime writes them, one per line. Some
 * runtimes omit the `"jsonrpc":"2.0"` member, and a runtime numbers its own
 * requests to us independently of ours (both can start at 0), so a message is
 * classified by which members it carries, never by its id's value: `method` and
 * `id` make a request from the runtime, `method` alone a notification, `id` alone
 * a response.
 */

export type RpcId = number | string;

export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

export type RpcMessage =
  /** A request from the runtime; it must be answered, once. */
  | { type: 'request'; id: RpcId; method: string; params: unknown }
  | { type: 'notification'; method: string; params: unknown }
  | { type: 'response'; id: RpcId; result: unknown }
  /** An error response; `id` is null when the runtime could not read our request's id. */
  | { type: 'error_response'; id: RpcId | null; error: RpcErrorObject };

export type DecodeResult = { ok: true; message: RpcMessage } | { ok: false; reason: string };

const isId = (v: unknown): v is RpcId =>
  typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));

/** Classifies one line; anything that is not a JSON-RPC message is a reason, never a throw. */
export function decodeRpcLine(line: string): DecodeResult {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, reason: 'not a JSON-RPC message object' };
  }
  const m = value as Record<string, unknown>;
  const hasId = Object.hasOwn(m, 'id') && m.id !== null;
  if (typeof m.method === 'string') {
    if (hasId) {
      if (!isId(m.id)) return { ok: false, reason: 'a request id must be a number or a string' };
      return { ok: true, message: { type: 'request', id: m.id, method: m.method, params: m.params ?? null } };
    }
    return { ok: true, message: { type: 'notification', method: m.method, params: m.params ?? null } };
  }
  if (Object.hasOwn(m, 'error') && m.error !== null && typeof m.error === 'object') {
    const e = m.error as Record<string, unknown>;
    const id = hasId && isId(m.id) ? m.id : null;
    return {
      ok: true,
      message: {
        type: 'error_response',
        id,
        error: {
          code: typeof e.code === 'number' ? e.code : 0,
          message: typeof e.message === 'string' ? e.message : JSON.stringify(e),
          ...(Object.hasOwn(e, 'data') ? { data: e.data } : {}),
        },
      },
    };
  }
  if (hasId && Object.hasOwn(m, 'result')) {
    if (!isId(m.id)) return { ok: false, reason: 'a response id must be a number or a string' };
    return { ok: true, message: { type: 'response', id: m.id, result: m.result } };
  }
  return { ok: false, reason: 'neither a request, a notification nor a response' };
}

/** Standard JSON-RPC error codes used when answering the runtime. */
export const RPC_METHOD_NOT_FOUND = -32601;
export const RPC_INTERNAL_ERROR = -32603;

/** One message as a line (without the newline); `version` adds `"jsonrpc":"2.0"`. */
export function encodeRpc(message: Record<string, unknown>, version: boolean): string {
  return JSON.stringify(version ? { jsonrpc: '2.0', ...message } : message);
}
