/**
 * Maps what the GitLab API answered to the tracker error kinds, whose retry decision the
 * orchestrator reads. GitLab uses 403 only for "not allowed" (its rate limits answer 429),
 * so 401 and 403 are both credentials a retry cannot fix. Every message goes through
 * `redact`, so a server that echoes the token back never puts it in a log line.
 */
import { TrackerError, type TrackerErrorKind } from '../../domain/errors.js';

/** The TrackerError for an HTTP answer that was not a success. */
export function statusError(status: number, what: string, apiMessage: string, extra = ''): TrackerError {
  const detail = apiMessage === '' ? '' : `: ${apiMessage}`;
  const kind = statusKind(status);
  switch (status) {
    case 401:
      return new TrackerError(kind, `${what}: bad or expired token (401${detail})`);
    case 403:
      return new TrackerError(kind, `${what}: the token may not do this (403${detail})`);
    case 404:
      return new TrackerError(kind, `${what}: not found (404)`);
    case 429:
      return new TrackerError(kind, `${what}: rate limited (429)${extra}`);
    default:
      if (status >= 500) return new TrackerError(kind, `${what}: server error (${status})`);
      if (status === 400 || status === 422)
        return new TrackerError(kind, `${what}: rejected (${status}${detail})`);
      return new TrackerError(kind, `${what}: unexpected answer (${status}${detail})`);
  }
}

/** The error kind of an HTTP status. */
export function statusKind(status: number): TrackerErrorKind {
  if (status === 401 || status === 403) return 'tracker_auth_error';
  if (status === 404 || status === 410) return 'tracker_not_found';
  if (status === 400 || status === 422) return 'tracker_payload_error';
  if (status >= 500) return 'tracker_transport_error';
  return 'tracker_api_error';
}

/** A request that got no HTTP answer (refused, reset, timed out). */
export function transportError(what: string, error: unknown): TrackerError {
  return new TrackerError('tracker_transport_error', `${what}: ${transportText(error)}`);
}

/** A payload that does not have the shape the API documents. */
export function payloadError(what: string, detail: string): TrackerError {
  return new TrackerError('tracker_payload_error', `${what}: unexpected response: ${detail}`);
}

/** The `message` (or `error`) of a GitLab error body, flattened to one short line. */
export function apiMessage(body: unknown): string {
  if (typeof body !== 'object' || body === null) return '';
  const record = body as { message?: unknown; error?: unknown };
  const value = record.message ?? record.error;
  if (value === undefined || value === null) return '';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** `text` with every occurrence of `secret` replaced, for messages built from server answers. */
export function redact(text: string, secret: string): string {
  return secret === '' ? text : text.split(secret).join('[redacted]');
}

function transportText(error: unknown): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError' || error.name === 'AbortError') return 'request timed out';
    const cause = (error as { cause?: unknown }).cause;
    const code = (cause as NodeJS.ErrnoException | undefined)?.code;
    const detail = code !== undefined ? ` (${code})` : cause instanceof Error ? `: ${cause.message}` : '';
    return `${error.message}${detail}`;
  }
  return String(error);
}
