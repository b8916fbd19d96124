/**
 * How every response leaves the server: JSON with the same three headers, errors in one
 * envelope `{ error: { code, message } }`, HEAD answered with the GET headers and no body,
 * and every body passed through the secret mask on its way out. Keeping this in one place
 * is what keeps a new route from forgetting `no-store`, echoing an exception's text or
 * sending a token that reached a record.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The error codes the API answers with; the HTTP status goes with each. */
export type ApiErrorCode =
  | 'not_found'
  | 'method_not_allowed'
  | 'invalid_parameter'
  | 'issue_not_found'
  | 'draining'
  | 'host_not_allowed'
  | 'origin_not_allowed'
  | 'snapshot_unavailable'
  | 'store_unavailable'
  | 'internal_error';

/** Headers every JSON response carries. */
export const JSON_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
};

/** Writes one response; bodies are masked, and HEAD gets the headers only. */
export interface Reply {
  json(status: number, body: unknown, headers?: Record<string, string>): void;
  /** The error envelope. `message` must be safe to show: never an exception's text. */
  error(status: number, code: ApiErrorCode, message: string, headers?: Record<string, string>): void;
  text(status: number, body: string, headers: Record<string, string>): void;
}

export function reply(req: IncomingMessage, res: ServerResponse, mask: (text: string) => string): Reply {
  const text: Reply['text'] = (status, body, headers) => {
    const bytes = Buffer.from(mask(body), 'utf8');
    res.writeHead(status, { ...headers, 'content-length': String(bytes.length) });
    res.end(req.method === 'HEAD' ? undefined : bytes);
  };
  const json: Reply['json'] = (status, body, headers = {}) =>
    text(status, JSON.stringify(body), { ...JSON_HEADERS, ...headers });
  return {
    text,
    json,
    error: (status, code, message, headers = {}) => json(status, { error: { code, message } }, headers),
  };
}
