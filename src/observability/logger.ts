/**
 * Structured logs with pino. Secret VALUES are masked in every line, whatever
 * field or message carries them: the line is masked after serialisation, just
 * before it is written, so a token echoed inside an error message or a hook's
 * output is caught as surely as one in a known field. The pretty format is for a
 * person at a terminal: one line per event (issue, message, then `key=value`), since
 * a field per line turned a short demo into hundreds of lines.
 */
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import pino from 'pino';
import { MASK, MaskedValues } from '../domain/masked-values.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFormat = 'auto' | 'json' | 'pretty';

/** The logger shape the orchestrator's ports expect. */
export interface AppLogger {
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
  /** Adds a secret value to mask from now on (values shorter than 4 characters are ignored). */
  addSecret(value: string): void;
  /** Stops masking a value added before (one that is no longer a secret: a dead session token). */
  removeSecret(value: string): void;
  /** `text` masked as the log masks its lines (for output that is not the log: the API, metrics). */
  mask(text: string): string;
  flush(): void;
}

export { MASK };

const require_ = createRequire(import.meta.url);

/** Replaces every secret value in a serialised line, including its JSON-escaped spelling. */
export function maskLine(line: string, secrets: Iterable<string>): string {
  return new MaskedValues(secrets).mask(line, true);
}

export interface LoggerOptions {
  level: LogLevel;
  format: LogFormat;
  secrets?: readonly string[];
  /** Where lines go; default standard output. */
  destination?: NodeJS.WritableStream & { isTTY?: boolean };
}

/** Fields a pretty line leaves out: pino's own, and the issue id its identifier stands for. */
const PRETTY_OMITTED = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'issue_id', 'issue_identifier']);
/** A value written as is in a pretty line; anything else is written as JSON (quoted, escaped). */
const BARE_VALUE = /^[\w.,:/@+-]+$/;

/** One pretty line's text after time and level: `DEMO-1 dispatching attempt=1 host=local`. */
export function prettyMessage(log: Record<string, unknown>): string {
  const parts: string[] = [];
  const identifier = log.issue_identifier ?? log.issue_id;
  if (typeof identifier === 'string' && identifier !== '') parts.push(identifier);
  parts.push(oneLine(String(log.msg ?? '')));
  for (const [key, value] of Object.entries(log)) {
    if (PRETTY_OMITTED.has(key) || value === undefined) continue;
    parts.push(`${key}=${prettyValue(value)}`);
  }
  return parts.join(' ');
}

function prettyValue(value: unknown): string {
  if (typeof value === 'string') return BARE_VALUE.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}

/** Control characters (a newline in a message) written escaped, so an event stays on one line. */
function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1));
}

/** Creates the application logger. */
export function createLogger(options: LoggerOptions): AppLogger {
  const destination = options.destination ?? process.stdout;
  const secrets = new MaskedValues(options.secrets);
  const mask = (text: string) => secrets.mask(text, true);
  const pretty = options.format === 'pretty' || (options.format === 'auto' && destination.isTTY === true);
  let sink: NodeJS.WritableStream = destination;
  if (pretty) {
    // pino-pretty formats the (already masked) JSON lines for a person.
    const { default: build } = require_('pino-pretty') as { default: (o: object) => NodeJS.WritableStream };
    const prettyStream = build({
      destination,
      colorize: destination.isTTY === true,
      sync: true,
      translateTime: 'HH:MM:ss',
      hideObject: true,
      messageFormat: prettyMessage,
    });
    sink = prettyStream;
  }
  const masking = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      sink.write(mask(chunk.toString('utf8')));
      callback();
    },
  });
  const logger = pino(
    { level: options.level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime },
    masking,
  );
  return {
    debug: (fields, message) => logger.debug(fields, message),
    info: (fields, message) => logger.info(fields, message),
    warn: (fields, message) => logger.warn(fields, message),
    error: (fields, message) => logger.error(fields, message),
    addSecret: (value) => secrets.add([value]),
    removeSecret: (value) => secrets.delete([value]),
    mask,
    flush: () => logger.flush(),
  };
}
