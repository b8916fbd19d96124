/**
 * A strict JSON scanner over the file's bytes that records where values start and end.
 * `JSON.parse` says neither where a syntax error is (on Node 20 many messages carry no
 * position) nor where an issue begins, and writes need byte offsets: an edit splices new
 * bytes into the original buffer, so everything else in the file (invalid UTF-8, big
 * numbers, `1e3`, duplicate keys, spacing) stays exactly as the operator wrote it.
 * It checks the grammar only; values still come from `JSON.parse`. Strings are not checked
 * for valid UTF-8, so such a file stays readable (decoding replaces the bad bytes).
 */

/** One `"key": value` of a scanned object, with the byte extent of its quoted key. */
export interface JsonMember {
  key: string;
  keyStart: number;
  keyEnd: number;
  value: JsonNode;
}

/**
 * A scanned value and its byte extent [start, end). A container the scan's `expand` chose
 * lists its items or members (every member, repeated keys included, in order); anything
 * else, scalars and containers not expanded, is a `value` with its extent only.
 */
export type JsonNode =
  | { kind: 'array'; start: number; end: number; items: JsonNode[] }
  | { kind: 'object'; start: number; end: number; members: JsonMember[] }
  | { kind: 'value'; start: number; end: number };

/** The scan result: the node tree, or the byte offset and reason of the first syntax error. */
export type JsonScan = { ok: true; root: JsonNode } | { ok: false; offset: number; message: string };

/** Deeper nesting is refused rather than risking the call stack. */
const MAX_DEPTH = 512;

const decoder = new TextDecoder();

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const NEWLINE = 0x0a;

class ScanFailure {
  constructor(
    readonly offset: number,
    readonly message: string,
  ) {}
}

/** Whether `b` is JSON whitespace (space, tab, line feed, carriage return). */
export function isJsonSpace(b: number | undefined): boolean {
  return b === 0x20 || b === 0x09 || b === NEWLINE || b === 0x0d;
}

/** Decodes UTF-8 bytes; invalid sequences become U+FFFD. */
export function decodeUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** Which containers list their children: by nesting depth (the root is 0) and kind. */
export type ExpandRule = (depth: number, kind: 'array' | 'object') => boolean;

/**
 * Scans `bytes` as one strict JSON value (RFC 8259 grammar, no comments, no trailing
 * commas). Containers `expand` declines are still checked but cost no allocation, so a
 * large file is scanned without building a tree of every issue's fields.
 */
export function scanJson(bytes: Uint8Array, options: { expand?: ExpandRule } = {}): JsonScan {
  const expandRule = options.expand ?? (() => true);
  const length = bytes.length;
  let pos = 0;

  const fail = (offset: number, message: string): never => {
    throw new ScanFailure(offset, message);
  };

  const describe = (offset: number): string => {
    if (offset >= length) return 'end of file';
    const char = Array.from(decoder.decode(bytes.subarray(offset, offset + 4)))[0] ?? '';
    return JSON.stringify(char);
  };

  const skipSpace = (): void => {
    while (pos < length && isJsonSpace(bytes[pos])) pos++;
  };

  const startsWith = (word: string): boolean => {
    for (let i = 0; i < word.length; i++) if (bytes[pos + i] !== word.charCodeAt(i)) return false;
    return true;
  };

  /** Where to report a missing separator: after the previous value when another value follows (a forgotten comma). */
  const missingComma = (end: number): number => {
    const b = bytes[pos];
    const valueStart =
      b === QUOTE || b === 0x7b || b === 0x5b || b === 0x2d || b === 0x74 || b === 0x66 || b === 0x6e;
    return valueStart || (b !== undefined && b >= 0x30 && b <= 0x39) ? end : pos;
  };

  /** Scans a string; returns its decoded value only when `decode` (keys that are recorded). */
  const scanString = (decode: boolean): string => {
    const start = pos;
    let escaped = false;
    pos++;
    while (pos < length) {
      const c = bytes[pos] as number;
      if (c === QUOTE) {
        pos++;
        if (!decode) return '';
        const raw = decoder.decode(bytes.subarray(start, pos));
        return escaped ? (JSON.parse(raw) as string) : raw.slice(1, -1);
      }
      if (c < 0x20) fail(pos, 'unescaped control character or line break inside a string');
      if (c === BACKSLASH) {
        escaped = true;
        const next = bytes[pos + 1];
        if (next === 0x75) {
          for (let i = 2; i < 6; i++) if (!isHex(bytes[pos + i])) fail(pos, 'invalid \\u escape in string');
          pos += 6;
          continue;
        }
        if (next === undefined || !SIMPLE_ESCAPES.has(next)) fail(pos, 'invalid escape in string');
        pos += 2;
        continue;
      }
      pos++;
    }
    return fail(start, 'string is never closed');
  };

  const scanDigits = (): number => {
    const from = pos;
    while (pos < length && (bytes[pos] as number) >= 0x30 && (bytes[pos] as number) <= 0x39) pos++;
    return pos - from;
  };

  /** Scans `-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`; false (position unchanged) when no number starts here. */
  const scanNumber = (): boolean => {
    const from = pos;
    if (bytes[pos] === 0x2d) pos++;
    if (bytes[pos] === 0x30) pos++;
    else if (scanDigits() === 0) {
      pos = from;
      return false;
    }
    if (bytes[pos] === 0x2e) {
      const dot = pos++;
      if (scanDigits() === 0) {
        pos = dot;
        return true;
      }
    }
    if (bytes[pos] === 0x65 || bytes[pos] === 0x45) {
      const e = pos++;
      if (bytes[pos] === 0x2b || bytes[pos] === 0x2d) pos++;
      if (scanDigits() === 0) pos = e;
    }
    return true;
  };

  const scanValue = (depth: number): JsonNode => {
    if (depth > MAX_DEPTH) fail(pos, `values nested more than ${MAX_DEPTH} deep`);
    skipSpace();
    const start = pos;
    const c = bytes[pos];
    if (c === 0x5b) {
      const expand = expandRule(depth, 'array');
      pos++;
      const items: JsonNode[] = [];
      skipSpace();
      if (bytes[pos] === 0x5d) {
        pos++;
        return expand ? { kind: 'array', start, end: pos, items } : { kind: 'value', start, end: pos };
      }
      for (;;) {
        const item = scanValue(depth + 1);
        if (expand) items.push(item);
        const end = pos;
        skipSpace();
        if (bytes[pos] === 0x2c) {
          const comma = pos++;
          skipSpace();
          if (bytes[pos] === 0x5d) fail(comma, 'trailing comma before "]"');
          continue;
        }
        if (bytes[pos] === 0x5d) {
          pos++;
          return expand ? { kind: 'array', start, end: pos, items } : { kind: 'value', start, end: pos };
        }
        fail(missingComma(end), `expected "," or "]" after a list item, found ${describe(pos)}`);
      }
    }
    if (c === 0x7b) {
      const expand = expandRule(depth, 'object');
      pos++;
      const members: JsonMember[] = [];
      skipSpace();
      if (bytes[pos] === 0x7d) {
        pos++;
        return expand ? { kind: 'object', start, end: pos, members } : { kind: 'value', start, end: pos };
      }
      for (;;) {
        skipSpace();
        if (bytes[pos] !== QUOTE) fail(pos, `expected a quoted key, found ${describe(pos)}`);
        const keyStart = pos;
        const key = scanString(expand);
        const keyEnd = pos;
        skipSpace();
        if (bytes[pos] !== 0x3a) fail(pos, `expected ":" after a key, found ${describe(pos)}`);
        pos++;
        const value = scanValue(depth + 1);
        if (expand) members.push({ key, keyStart, keyEnd, value });
        const end = pos;
        skipSpace();
        if (bytes[pos] === 0x2c) {
          const comma = pos++;
          skipSpace();
          if (bytes[pos] === 0x7d) fail(comma, 'trailing comma before "}"');
          continue;
        }
        if (bytes[pos] === 0x7d) {
          pos++;
          return expand ? { kind: 'object', start, end: pos, members } : { kind: 'value', start, end: pos };
        }
        fail(missingComma(end), `expected "," or "}" after a value, found ${describe(pos)}`);
      }
    }
    if (c === QUOTE) {
      scanString(false);
      return { kind: 'value', start, end: pos };
    }
    const word = c === 0x74 ? 'true' : c === 0x66 ? 'false' : c === 0x6e ? 'null' : undefined;
    if (word !== undefined && startsWith(word)) {
      pos += word.length;
      return { kind: 'value', start, end: pos };
    }
    if (scanNumber()) return { kind: 'value', start, end: pos };
    return fail(pos, `expected a value, found ${describe(pos)}`);
  };

  try {
    const root = scanValue(0);
    skipSpace();
    if (pos < length) fail(pos, `unexpected ${describe(pos)} after the end of the document`);
    return { ok: true, root };
  } catch (err) {
    if (err instanceof ScanFailure) return { ok: false, offset: err.offset, message: err.message };
    throw err;
  }
}

const SIMPLE_ESCAPES = new Set(Array.from('"\\/bfnrt', (c) => c.charCodeAt(0)));

function isHex(b: number | undefined): boolean {
  return (
    b !== undefined && ((b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66))
  );
}

/** The member JSON.parse would keep for `key` (the last of repeated ones), or undefined. */
export function memberOf(node: JsonNode, key: string): JsonMember | undefined {
  if (node.kind !== 'object') return undefined;
  for (let i = node.members.length - 1; i >= 0; i--) {
    const member = node.members[i] as JsonMember;
    if (member.key === key) return member;
  }
  return undefined;
}

/**
 * The 1-based line of byte `offset` (an offset past the end is on the last line).
 * It counts from the start: for many offsets in one buffer use `lineIndex`.
 */
export function lineAt(bytes: Uint8Array, offset: number): number {
  let line = 1;
  const end = Math.min(offset, bytes.length);
  for (let i = bytes.indexOf(NEWLINE); i !== -1 && i < end; i = bytes.indexOf(NEWLINE, i + 1)) line++;
  return line;
}

/**
 * A `lineAt` for many offsets in one buffer: the newlines are found once and each lookup is
 * a binary search, so giving every issue of a large file its line stays linear in the file.
 */
export function lineIndex(bytes: Uint8Array): (offset: number) => number {
  const newlines: number[] = [];
  for (let i = bytes.indexOf(NEWLINE); i !== -1; i = bytes.indexOf(NEWLINE, i + 1)) newlines.push(i);
  return (offset) => {
    const end = Math.min(offset, bytes.length);
    let low = 0;
    let high = newlines.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((newlines[mid] as number) < end) low = mid + 1;
      else high = mid;
    }
    return low + 1;
  };
}

/** How many line feeds `bytes` holds. */
export function countLines(bytes: Uint8Array): number {
  let count = 0;
  for (let i = bytes.indexOf(NEWLINE); i !== -1; i = bytes.indexOf(NEWLINE, i + 1)) count++;
  return count;
}
