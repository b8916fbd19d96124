/**
 * Splits an agent's stdout into lines without trusting it. A runtime can print a
 * single multi-megabyte line (a tool dumping a file, a base64 image); buffering it
 * whole, or decoding the stream chunk by chunk and cutting a UTF-8 character in
 * two, are the traps this module avoids. Work is done on bytes: a newline byte
 * never occurs inside a multi-byte UTF-8 sequence, so a complete line can always
 * be decoded on its own, and a line past the cap is skipped to its newline while
 * only its first bytes are kept for the report.
 */
import { StringDecoder } from 'node:string_decoder';

/** Default cap on one stdout line, in bytes, excluding its `\n` and a trailing `\r`. */
export const DEFAULT_MAX_LINE_BYTES = 10 * 1024 * 1024;
/** Characters of an over-long line kept for its report. */
export const DEFAULT_OVERLONG_HEAD_CHARS = 200;

/** One stdout line, or the report of a line that exceeded the cap and was skipped. */
export type LineResult =
  | { type: 'line'; text: string }
  | {
      type: 'overlong';
      /** Size of the skipped line in bytes, excluding its `\n` and a trailing `\r`. */
      sizeBytes: number;
      /** The cap it exceeded, in bytes: a report says what the limit was, not only that there was one. */
      limitBytes: number;
      /** The line's first characters (at most `headChars`). */
      head: string;
    };

export interface LineSplitterOptions {
  /** A longer line is reported as `overlong` instead of being returned; default 10 MiB. */
  maxLineBytes?: number;
  /** Characters kept in an overlong report's `head`; default 200. */
  headChars?: number;
  /** Bytes of an overlong line examined for its head; default `headChars * 4`. */
  headBytes?: number;
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Incremental byte-to-line splitter. Memory held is at most `maxLineBytes + 1`
 * bytes of the current line plus the head of an overlong one, whatever the input.
 */
export class LineSplitter {
  private readonly maxLineBytes: number;
  private readonly headChars: number;
  private readonly headBytes: number;
  /** Pieces of the current line while it is within the cap. */
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  /** Bytes of the current line seen so far, including a possible trailing `\r`. */
  private lineBytes = 0;
  private lastByte = -1;
  private overlong = false;
  /** First bytes of the current overlong line (copies, so no input chunk is retained). */
  private head: Buffer[] = [];
  private headLength = 0;

  constructor(options: LineSplitterOptions = {}) {
    this.maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    this.headChars = options.headChars ?? DEFAULT_OVERLONG_HEAD_CHARS;
    this.headBytes = options.headBytes ?? this.headChars * 4;
    if (!Number.isInteger(this.maxLineBytes) || this.maxLineBytes < 1) {
      throw new RangeError(`maxLineBytes must be a positive integer, got ${this.maxLineBytes}`);
    }
  }

  /** Bytes currently held for the unfinished line (for diagnostics and tests). */
  get bufferedBytes(): number {
    return this.pendingBytes + this.headLength;
  }

  /** Feeds a chunk; returns the lines it completed, in order. */
  push(chunk: Uint8Array | string): LineResult[] {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    const out: LineResult[] = [];
    let start = 0;
    while (start < bytes.length) {
      const newline = bytes.indexOf(LF, start);
      const end = newline === -1 ? bytes.length : newline;
      this.append(bytes.subarray(start, end));
      if (newline === -1) break;
      out.push(this.finishLine());
      start = newline + 1;
    }
    return out;
  }

  /** Ends the input: returns the final line when the input did not end with a newline. */
  end(): LineResult[] {
    return this.lineBytes > 0 ? [this.finishLine()] : [];
  }

  private append(segment: Uint8Array): void {
    if (segment.length === 0) return;
    this.lineBytes += segment.length;
    this.lastByte = segment[segment.length - 1] ?? -1;
    if (this.overlong) {
      this.collectHead(segment);
      return;
    }
    // One byte of slack: a line exactly at the cap may still be followed by `\r\n`.
    if (this.pendingBytes + segment.length > this.maxLineBytes + 1) {
      this.overlong = true;
      for (const piece of this.pending) this.collectHead(piece);
      this.collectHead(segment);
      this.pending = [];
      this.pendingBytes = 0;
      return;
    }
    this.pending.push(segment);
    this.pendingBytes += segment.length;
  }

  private collectHead(segment: Uint8Array): void {
    const room = this.headBytes - this.headLength;
    if (room <= 0) return;
    const taken = Buffer.from(segment.subarray(0, room));
    this.head.push(taken);
    this.headLength += taken.length;
  }

  private finishLine(): LineResult {
    const endsWithCr = this.lastByte === CR;
    let result: LineResult;
    if (this.overlong) {
      result = {
        type: 'overlong',
        sizeBytes: this.lineBytes - (endsWithCr ? 1 : 0),
        limitBytes: this.maxLineBytes,
        head: this.decodeHead(
          Buffer.concat(this.head, this.headLength).subarray(0, this.lineBytes - (endsWithCr ? 1 : 0)),
        ),
      };
    } else {
      const line =
        this.pending.length === 1
          ? asBuffer(this.pending[0]!)
          : Buffer.concat(this.pending, this.pendingBytes);
      const length = endsWithCr ? line.length - 1 : line.length;
      result =
        length > this.maxLineBytes
          ? {
              type: 'overlong',
              sizeBytes: length,
              limitBytes: this.maxLineBytes,
              head: this.decodeHead(line.subarray(0, Math.min(length, this.headBytes))),
            }
          : { type: 'line', text: line.toString('utf8', 0, length) };
    }
    this.pending = [];
    this.pendingBytes = 0;
    this.lineBytes = 0;
    this.lastByte = -1;
    this.overlong = false;
    this.head = [];
    this.headLength = 0;
    return result;
  }

  /** Decodes a prefix, dropping a character cut at its end, then trims to `headChars`. */
  private decodeHead(prefix: Buffer): string {
    const text = new StringDecoder('utf8').write(prefix);
    if (text.length <= this.headChars) return text;
    const cut = text.slice(0, this.headChars);
    const last = cut.charCodeAt(cut.length - 1);
    return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut;
  }
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Lines of a byte stream (a child's stdout, or any async iterable of chunks).
 * The stream's own errors propagate to the consumer.
 */
export async function* splitLines(
  source: AsyncIterable<Uint8Array | string>,
  options: LineSplitterOptions = {},
): AsyncGenerator<LineResult, void, undefined> {
  const splitter = new LineSplitter(options);
  for await (const chunk of source) {
    yield* splitter.push(chunk);
  }
  yield* splitter.end();
}
