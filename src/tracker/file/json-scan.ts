/**
 * A strict JSON scanner that records where every value starts. `JSON.parse` says
 * neither where a syntax error is (on Node 20 many messages carry no position) nor
 * where an issue object begins, and operators need a line number for both.
 * It checks the grammar only; values still come from `JSON.parse`.
 */

/** A scanned JSON value and its start offset; objects keep the last value of a repeated key, as JSON.parse does. */
export type JsonNode =
  | { kind: 'array'; start: number; items: JsonNode[] }
  | { kind: 'object'; start: number; entries: Map<string, JsonNode> }
  | { kind: 'scalar'; start: number };

/** The scan result: the node tree, or the offset and reason of the first syntax error. */
export type JsonScan = { ok: true; root: JsonNode } | { ok: false; offset: number; message: string };

/** Deeper nesting is refused rather than risking the call stack. */
const MAX_DEPTH = 512;

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const HEX4 = /[0-9a-fA-F]{4}/y;

class ScanFailure {
  constructor(
    readonly offset: number,
    readonly message: string,
  ) {}
}

/** Scans `text` as one strict JSON value (RFC 8259 grammar, no comments, no trailing commas). */
export function scanJson(text: string): JsonScan {
  let pos = 0;

  const fail = (offset: number, message: string): never => {
    throw new ScanFailure(offset, message);
  };

  const describe = (offset: number): string =>
    offset >= text.length ? 'end of file' : `${JSON.stringify(text[offset])}`;

  const skipSpace = (): void => {
    while (pos < text.length) {
      const c = text.charCodeAt(pos);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) pos++;
      else break;
    }
  };

  const expect = (ch: string, what: string): void => {
    skipSpace();
    if (text[pos] !== ch) fail(pos, `expected ${what}, found ${describe(pos)}`);
    pos++;
  };

  /** Where to report a missing separator: after the previous value when another value follows (a forgotten comma). */
  const missingComma = (end: number): number => (/["{[\d\-tfn]/.test(text[pos] ?? '') ? end : pos);

  /** Scans a string; returns its decoded value only when `decode` (keys), since values come from JSON.parse. */
  const scanString = (decode: boolean): string => {
    const start = pos;
    let escaped = false;
    pos++;
    while (pos < text.length) {
      const c = text.charCodeAt(pos);
      if (c === 0x22) {
        pos++;
        if (!decode) return '';
        return escaped ? (JSON.parse(text.slice(start, pos)) as string) : text.slice(start + 1, pos - 1);
      }
      if (c < 0x20) fail(pos, 'unescaped control character or line break inside a string');
      if (c === 0x5c) {
        escaped = true;
        const next = text[pos + 1];
        if (next === 'u') {
          HEX4.lastIndex = pos + 2;
          if (!HEX4.test(text)) fail(pos, 'invalid \\u escape in string');
          pos += 6;
          continue;
        }
        if (next === undefined || !'"\\/bfnrt'.includes(next)) fail(pos, 'invalid escape in string');
        pos += 2;
        continue;
      }
      pos++;
    }
    return fail(start, 'string is never closed');
  };

  const scanValue = (depth: number): JsonNode => {
    if (depth > MAX_DEPTH) fail(pos, `values nested more than ${MAX_DEPTH} deep`);
    skipSpace();
    const start = pos;
    const c = text[pos];
    if (c === '[') {
      pos++;
      const items: JsonNode[] = [];
      skipSpace();
      if (text[pos] === ']') {
        pos++;
        return { kind: 'array', start, items };
      }
      for (;;) {
        items.push(scanValue(depth + 1));
        const end = pos;
        skipSpace();
        if (text[pos] === ',') {
          const comma = pos++;
          skipSpace();
          if (text[pos] === ']') fail(comma, 'trailing comma before "]"');
          continue;
        }
        if (text[pos] === ']') {
          pos++;
          return { kind: 'array', start, items };
        }
        fail(missingComma(end), `expected "," or "]" after a list item, found ${describe(pos)}`);
      }
    }
    if (c === '{') {
      pos++;
      const entries = new Map<string, JsonNode>();
      skipSpace();
      if (text[pos] === '}') {
        pos++;
        return { kind: 'object', start, entries };
      }
      for (;;) {
        skipSpace();
        if (text[pos] !== '"') fail(pos, `expected a quoted key, found ${describe(pos)}`);
        const key = scanString(true);
        expect(':', '":" after a key');
        entries.set(key, scanValue(depth + 1));
        const end = pos;
        skipSpace();
        if (text[pos] === ',') {
          const comma = pos++;
          skipSpace();
          if (text[pos] === '}') fail(comma, 'trailing comma before "}"');
          continue;
        }
        if (text[pos] === '}') {
          pos++;
          return { kind: 'object', start, entries };
        }
        fail(missingComma(end), `expected "," or "}" after a value, found ${describe(pos)}`);
      }
    }
    if (c === '"') {
      scanString(false);
      return { kind: 'scalar', start };
    }
    const word = c === 't' ? 'true' : c === 'f' ? 'false' : c === 'n' ? 'null' : undefined;
    if (word !== undefined && text.startsWith(word, pos)) {
      pos += word.length;
      return { kind: 'scalar', start };
    }
    NUMBER.lastIndex = pos;
    if (NUMBER.test(text)) {
      pos = NUMBER.lastIndex;
      return { kind: 'scalar', start };
    }
    return fail(pos, `expected a value, found ${describe(pos)}`);
  };

  try {
    const root = scanValue(0);
    skipSpace();
    if (pos < text.length) fail(pos, `unexpected ${describe(pos)} after the end of the document`);
    return { ok: true, root };
  } catch (err) {
    if (err instanceof ScanFailure) return { ok: false, offset: err.offset, message: err.message };
    throw err;
  }
}

/**
 * The 1-based line of `offset` in `text` (an offset past the end is on the last line).
 * It counts from the start of the text: for many offsets in one text use `lineIndex`.
 */
export function lineAt(text: string, offset: number): number {
  let line = 1;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) if (text.charCodeAt(i) === 0x0a) line++;
  return line;
}

/**
 * A `lineAt` for many offsets in one text: the newlines are found once and each lookup is a
 * binary search, so giving every issue of a large file its line stays linear in the file.
 */
export function lineIndex(text: string): (offset: number) => number {
  const newlines: number[] = [];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) newlines.push(i);
  return (offset) => {
    const end = Math.min(offset, text.length);
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
