/**
 * Maps what Linear answered to the tracker error kinds, whose retry decision the orchestrator
 * reads. The trap is that GraphQL reports most failures inside a 200 (or 400) body: an
 * unknown issue, a bad key, a spent rate limit and a malformed query all arrive as an
 * `errors` array, told apart only by `extensions.code` / `extensions.type` or the message.
 * Anything this module cannot place is a payload error (released), never an empty result.
 * Every message passes through `redact`, so a server that echoes the key cannot leak it.
 */
import { TrackerError, type TrackerErrorKind } from '../../domain/errors.js';

/** One entry of a GraphQL `errors` array, as far as it is read here. */
export interface GraphqlErrorEntry {
  message?: unknown;
  extensions?: { code?: unknown; type?: unknown; userPresentableMessage?: unknown } | null;
}

/** What a GraphQL error is about, for the client's retry loop. */
export type GraphqlErrorClass = 'auth' | 'rate_limited' | 'not_found' | 'other';

const AUTH_CODES = new Set(['AUTHENTICATION_ERROR', 'FORBIDDEN', 'UNAUTHENTICATED']);
const AUTH_TYPES = new Set(['authentication error', 'forbidden']);
const NOT_FOUND_CODES = new Set(['ENTITY_NOT_FOUND', 'NOT_FOUND']);
const MAX_DETAIL_CHARS = 300;

/** The class of the most telling error in `errors`: auth over rate limit over not-found. */
export function classifyGraphqlErrors(errors: readonly GraphqlErrorEntry[]): GraphqlErrorClass {
  const classes = errors.map(classOf);
  for (const c of ['auth', 'rate_limited', 'not_found'] as const) if (classes.includes(c)) return c;
  return 'other';
}

function classOf(entry: GraphqlErrorEntry): GraphqlErrorClass {
  const code = text(entry.extensions?.code).toUpperCase();
  const type = text(entry.extensions?.type).toLowerCase();
  if (AUTH_CODES.has(code) || AUTH_TYPES.has(type)) return 'auth';
  if (code === 'RATELIMITED' || type === 'ratelimited') return 'rate_limited';
  const said = `${text(entry.message)} ${text(entry.extensions?.userPresentableMessage)}`;
  if (NOT_FOUND_CODES.has(code) || /entity not found|could not find referenced/i.test(said))
    return 'not_found';
  return 'other';
}

/** The TrackerError for a GraphQL `errors` array (rate limits are waited out by the client first). */
export function graphqlFailure(
  errors: readonly GraphqlErrorEntry[],
  what: string,
  redact: (text: string) => string,
): TrackerError {
  const detail = redact(graphqlSummary(errors));
  switch (classifyGraphqlErrors(errors)) {
    case 'auth':
      return new TrackerError('tracker_auth_error', `${what}: the API key was refused (${detail})`);
    case 'rate_limited':
      return new TrackerError('tracker_api_error', `${what}: rate limited (${detail})`);
    case 'not_found':
      return new TrackerError('tracker_not_found', `${what}: not found (${detail})`);
    case 'other':
      return new TrackerError('tracker_payload_error', `${what}: the API refused the request (${detail})`);
  }
}

/** The TrackerError for an HTTP status without a GraphQL answer to read. */
export function httpFailure(status: number, what: string): TrackerError {
  if (status === 401 || status === 403)
    return new TrackerError('tracker_auth_error', `${what}: the API key was refused (${status})`);
  if (status === 429) return new TrackerError('tracker_api_error', `${what}: rate limited (429)`);
  if (status >= 500) return new TrackerError('tracker_transport_error', `${what}: server error (${status})`);
  if (status === 400)
    return new TrackerError('tracker_payload_error', `${what}: the API refused the request (400)`);
  return new TrackerError('tracker_api_error', `${what}: unexpected answer (${status})`);
}

/** A request that got no answer: refused, reset, or timed out. */
export function transportFailure(error: unknown, what: string, timeoutMs: number): TrackerError {
  return wrap('tracker_transport_error', `${what}: ${transportText(error, timeoutMs)}`, error);
}

/** A payload that does not have the shape the schema promises. */
export function payloadError(what: string, detail: string): TrackerError {
  return new TrackerError('tracker_payload_error', `${what}: unexpected response: ${detail}`);
}

/** A function that replaces every occurrence of `secret` in a text. */
export function redactor(secret: string): (text: string) => string {
  if (secret === '') return (t) => t;
  return (t) => t.split(secret).join('[redacted]');
}

/** The first error's code and message in one line (for messages; not yet redacted). */
export function graphqlSummary(errors: readonly GraphqlErrorEntry[]): string {
  const first = errors[0];
  const code = text(first?.extensions?.code);
  const message = text(first?.message) || text(first?.extensions?.userPresentableMessage) || 'no message';
  const more = errors.length > 1 ? ` and ${errors.length - 1} more` : '';
  const line = `${code === '' ? '' : `${code}: `}${message}${more}`;
  return line.length > MAX_DETAIL_CHARS ? `${line.slice(0, MAX_DETAIL_CHARS)}…` : line;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function wrap(kind: TrackerErrorKind, message: string, cause: unknown): TrackerError {
  return new TrackerError(kind, message, { cause });
}

function transportText(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
    return `no answer within ${timeoutMs / 1000} s`;
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    const code = (cause as NodeJS.ErrnoException | undefined)?.code;
    const detail = code ?? (cause instanceof Error ? cause.message : '');
    return `${error.message}${detail === '' ? '' : ` (${detail})`}`;
  }
  return String(error);
}
