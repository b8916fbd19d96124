/**
 * Maps what Jira answered to the tracker error kinds, whose retry decision the orchestrator
 * reads. Jira's own words (`errorMessages`, `errors`) go into the message because they say
 * which value it refused; the credential never does: every message passes through `scrub`,
 * so even a server that echoed the token back could not put it in a log line.
 */
import { TrackerError, type TrackerErrorKind } from '../../domain/errors.js';

/** The error for an HTTP answer outside 2xx (after any waiting or retrying is done). */
export function statusError(
  status: number,
  body: unknown,
  what: string,
  retryAfter: string | null,
): TrackerError {
  const detail = jiraMessage(body);
  const said = detail === '' ? '' : `: ${detail}`;
  const kind = statusKind(status);
  switch (status) {
    case 401:
      return new TrackerError(kind, `${what}: bad credentials (401${said})`);
    case 403:
      return new TrackerError(kind, `${what}: not allowed (403${said})`);
    case 404:
      return new TrackerError(kind, `${what}: not found (404${said})`);
    case 429:
      return new TrackerError(
        kind,
        `${what}: rate limited (429)${retryAfter === null ? '' : `; retry after ${retryAfter} s`}`,
      );
    default:
      if (status >= 500) return new TrackerError(kind, `${what}: server error (${status}${said})`);
      return new TrackerError(kind, `${what}: rejected (${status}${said})`);
  }
}

/** The kind an HTTP status stands for. */
export function statusKind(status: number): TrackerErrorKind {
  if (status === 401 || status === 403) return 'tracker_auth_error';
  if (status === 404) return 'tracker_not_found';
  if (status === 400) return 'tracker_payload_error';
  if (status >= 500) return 'tracker_transport_error';
  return 'tracker_api_error';
}

/** True when `error` is a TrackerError of `kind`. */
export function isKind(error: unknown, kind: TrackerErrorKind): boolean {
  return error instanceof TrackerError && error.kind === kind;
}

/** A request that never got an answer (refused, reset, timed out). */
export function transportError(error: unknown, what: string): TrackerError {
  return new TrackerError('tracker_transport_error', `${what}: ${transportText(error)}`);
}

/** A payload that does not have the shape the API documents. */
export function payloadError(what: string, detail: string): TrackerError {
  return new TrackerError('tracker_payload_error', `${what}: unexpected response: ${detail}`);
}

/** `error` with every occurrence of each secret replaced; other values pass through. */
export function scrub(error: unknown, secrets: readonly string[]): unknown {
  if (!(error instanceof TrackerError)) return error;
  const text = error.message.replace(/^tracker: [a-z_]+: /, '');
  let clean = text;
  for (const secret of secrets) if (secret.length >= 4) clean = clean.replaceAll(secret, '***');
  return clean === text ? error : new TrackerError(error.kind, clean);
}

/** Jira's error body: `errorMessages` and the per-field `errors`, joined; "" when it has neither. */
function jiraMessage(body: unknown): string {
  if (typeof body !== 'object' || body === null) return '';
  const b = body as { errorMessages?: unknown; errors?: unknown; message?: unknown };
  const parts: string[] = [];
  if (Array.isArray(b.errorMessages)) parts.push(...b.errorMessages.filter((m) => typeof m === 'string'));
  if (typeof b.errors === 'object' && b.errors !== null) {
    for (const [field, message] of Object.entries(b.errors)) {
      if (typeof message === 'string') parts.push(`${field}: ${message}`);
    }
  }
  if (parts.length === 0 && typeof b.message === 'string') parts.push(b.message);
  return parts.join('; ').slice(0, 500);
}

function transportText(error: unknown): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError') return 'request timed out';
    const cause = (error as { cause?: unknown }).cause;
    const code = (cause as NodeJS.ErrnoException | undefined)?.code;
    const detail = code !== undefined ? ` (${code})` : cause instanceof Error ? `: ${cause.message}` : '';
    return `${error.message}${detail}`;
  }
  return String(error);
}
