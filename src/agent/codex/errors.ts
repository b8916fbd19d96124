/**
 * What a Codex failure means for the retry decision. The app-server names the
 * cause in `codexErrorInfo`, either a bare string (`usageLimitExceeded`) or an
 * object with one key and an HTTP status (`{httpConnectionFailed:{httpStatusCode:401}}`);
 * its README spells the names in PascalCase while the wire uses camelCase, so
 * names are compared case-insensitively. `exec --json` gives only a message, so
 * there the same causes are read from the text the CLI prints for them.
 */
import type { Terminal } from '../core/disposition.js';

/** `codexErrorInfo` reduced to a lower-case name and the HTTP status it carries. */
export interface ErrorInfo {
  /** Lower-cased variant name, "" when absent. */
  name: string;
  httpStatus: number | null;
}

/** Reads `codexErrorInfo` in either of its shapes; null for anything else. */
export function readErrorInfo(value: unknown): ErrorInfo | null {
  if (typeof value === 'string') return { name: value.toLowerCase(), httpStatus: null };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const [entry] = Object.entries(value as Record<string, unknown>);
  if (entry === undefined) return null;
  const [name, detail] = entry;
  const status =
    detail !== null && typeof detail === 'object' ? (detail as Record<string, unknown>).httpStatusCode : null;
  return { name: name.toLowerCase(), httpStatus: typeof status === 'number' ? status : null };
}

const CREDENTIAL_NAMES = new Set(['unauthorized']);
const LIMIT_NAMES = new Set(['usagelimitexceeded']);
const SERVER_NAMES = new Set([
  'serveroverloaded',
  'internalservererror',
  'ratelimitexceeded',
  'responsestreamdisconnected',
  'responsestreamconnectionfailed',
  'httpconnectionfailed',
  'responsetoomanyfailedattempts',
  'flexunavailable',
  'policycapacityunavailable',
]);

const STATUS_IN_TEXT = /\bstatus (\d{3})\b/i;
const CREDENTIAL_TEXT = /\b401 Unauthorized\b|invalid[_ ]api[_ ]key|incorrect api key/i;
const LIMIT_TEXT = /hit your usage limit|usage limit (?:reached|exceeded)/i;
const SERVER_TEXT = /at capacity|overloaded|stream disconnected|internal server error/i;

/** A failed turn's terminal report from its message and, when the app-server gave one, its error info. */
export function failureTerminal(message: string, info: ErrorInfo | null, nowMs: number): Terminal {
  const status = info?.httpStatus ?? statusInText(message);
  const name = info?.name ?? '';
  if (CREDENTIAL_NAMES.has(name) || status === 401 || (info === null && CREDENTIAL_TEXT.test(message))) {
    return { type: 'failure', kind: 'credential_unverified', message };
  }
  if (LIMIT_NAMES.has(name) || (info === null && LIMIT_TEXT.test(message))) {
    return { type: 'failure', kind: 'usage_limit', message, resetAtMs: resetTime(message, nowMs) };
  }
  if (
    SERVER_NAMES.has(name) ||
    (status !== null && (status >= 500 || status === 429)) ||
    (info === null && SERVER_TEXT.test(message))
  ) {
    return { type: 'failure', kind: 'response_error', message };
  }
  return { type: 'failure', kind: 'turn_failed', message };
}

function statusInText(message: string): number | null {
  const m = STATUS_IN_TEXT.exec(message);
  return m === null ? null : Number(m[1]);
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
/** `try again at Sep 23rd, 2026 6:23 PM` (local time of the machine running Codex). */
const RESET_AT =
  /try again at ([A-Z][a-z]{2})[a-z]* (\d{1,2})(?:st|nd|rd|th)?,? (\d{4}),? (\d{1,2}):(\d{2}) ?([AP]M)?/i;
/** `try again in 3 hours` / `in 45 minutes`. */
const RESET_IN = /try again in (\d+) ?(second|minute|hour|day)s?/i;

/** When the message says the limit resets, as epoch ms; null when it does not say. */
export function resetTime(message: string, nowMs: number): number | null {
  const at = RESET_AT.exec(message);
  if (at !== null) {
    const month = MONTHS.indexOf((at[1] ?? '').toLowerCase());
    let hour = Number(at[4]);
    const meridiem = (at[6] ?? '').toUpperCase();
    if (meridiem === 'PM' && hour < 12) hour += 12;
    if (meridiem === 'AM' && hour === 12) hour = 0;
    if (month < 0) return null;
    const ms = new Date(Number(at[3]), month, Number(at[2]), hour, Number(at[5])).getTime();
    return Number.isFinite(ms) ? ms : null;
  }
  const within = RESET_IN.exec(message);
  if (within !== null) {
    const unitMs = { second: 1_000, minute: 60_000, hour: 3_600_000, day: 86_400_000 }[
      (within[2] ?? '').toLowerCase() as 'second' | 'minute' | 'hour' | 'day'
    ];
    return nowMs + Number(within[1]) * unitMs;
  }
  return null;
}
