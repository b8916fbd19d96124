/**
 * Maps what the API answered to the tracker error kinds, whose retry decision the
 * orchestrator reads. The trap is 403: it means "rate limited" when the remaining quota
 * is 0 or the message names a (secondary) rate limit, and only otherwise "not allowed".
 * A rate limit is always retryable; a missing permission never is.
 */
import { TrackerError, type TrackerErrorKind } from '../../domain/errors.js';

interface HttpFailure {
  status?: number;
  message?: string;
  response?: { headers?: Record<string, string | number | undefined>; data?: unknown };
}

/** The TrackerError for a failed request (`what` names the operation for the message). */
export function classifyFailure(error: unknown, what: string): TrackerError {
  if (error instanceof TrackerError) return error;
  const failure = (typeof error === 'object' && error !== null ? error : {}) as HttpFailure;
  const status = typeof failure.status === 'number' ? failure.status : undefined;
  const message = apiMessage(failure);
  if (status === undefined || failure.response === undefined) {
    return wrap('tracker_transport_error', `${what}: ${transportText(error)}`, error);
  }
  const headers = failure.response?.headers ?? {};
  const header = (name: string) => {
    const value = headers[name];
    return value === undefined ? undefined : String(value);
  };
  const retryAfter = header('retry-after');
  const waitText = retryAfter !== undefined ? `; retry after ${retryAfter} s` : '';
  const s = status;
  if (s === 403 || s === 429) {
    if (header('x-ratelimit-remaining') === '0') {
      const reset = Number(header('x-ratelimit-reset'));
      const resetText =
        Number.isFinite(reset) && reset > 0 ? `; resets at ${new Date(reset * 1000).toISOString()}` : '';
      return wrap('tracker_api_error', `${what}: rate limited (primary)${resetText}`, error);
    }
    if (/secondary rate limit/i.test(message)) {
      return wrap('tracker_api_error', `${what}: rate limited (secondary)${waitText}`, error);
    }
    if (s === 429 || /rate limit/i.test(message)) {
      return wrap('tracker_api_error', `${what}: rate limited${waitText}`, error);
    }
    return wrap('tracker_auth_error', `${what}: insufficient permissions (403: ${message})`, error);
  }
  if (s === 401) return wrap('tracker_auth_error', `${what}: bad credentials (401)`, error);
  if (s === 404) return wrap('tracker_not_found', `${what}: not found (404)`, error);
  if (s === 410)
    return wrap('tracker_not_found', `${what}: gone (410: deleted, or issues are disabled)`, error);
  if (s === 400 || s === 422)
    return wrap('tracker_payload_error', `${what}: rejected (${s}: ${message})`, error);
  if (s >= 500) return wrap('tracker_transport_error', `${what}: server error (${s})`, error);
  return wrap('tracker_api_error', `${what}: unexpected answer (${s}: ${message})`, error);
}

/** A payload that does not have the shape the API documents. */
export function payloadError(what: string, detail: string): TrackerError {
  return new TrackerError('tracker_payload_error', `${what}: unexpected response: ${detail}`);
}

function wrap(kind: TrackerErrorKind, message: string, cause: unknown): TrackerError {
  return new TrackerError(kind, message, { cause });
}

function apiMessage(failure: HttpFailure): string {
  const data = failure.response?.data;
  if (
    typeof data === 'object' &&
    data !== null &&
    typeof (data as { message?: unknown }).message === 'string'
  ) {
    return (data as { message: string }).message;
  }
  return typeof failure.message === 'string' ? failure.message : '';
}

function transportText(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    const detail = cause instanceof Error ? `: ${cause.message}` : '';
    return `${error.name === 'TimeoutError' ? 'request timed out' : error.message}${detail}`;
  }
  return String(error);
}
