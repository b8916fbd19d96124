/**
 * Keeps an agent's stderr for diagnostics without letting it eat memory: the first
 * lines (where startup errors are) and a ring of the last ones (where the crash is),
 * with long lines cut and a byte cap over everything kept. The second trap is the
 * drain: a tool the agent started can inherit stderr and outlive the agent, so
 * waiting for EOF could wait forever. `drain` waits a bounded time and then stops
 * reading, leaving a marker that says so.
 */
import type { Readable } from 'node:stream';
import { type LineResult, LineSplitter } from './lines.js';

/** Appended as the last line when `drain` gave up waiting for EOF. */
export const ABANDONED_MARKER =
  '[orchestrator: stderr drain abandoned; output after this point was not read]';

export const DEFAULT_STDERR_HEAD_LINES = 200;
export const DEFAULT_STDERR_TAIL_LINES = 800;
export const DEFAULT_STDERR_MAX_BYTES = 1024 * 1024;
export const DEFAULT_STDERR_MAX_LINE_BYTES = 4 * 1024;

/** The line standing for the lines dropped between head and tail. */
export function droppedLinesMarker(count: number): string {
  return `… ${count} lines dropped …`;
}

/** The note that ends a line cut at the line cap. */
export function truncatedLineNote(sizeBytes: number): string {
  return ` … [line truncated: ${sizeBytes} bytes]`;
}

export interface BoundedStderrOptions {
  /** First lines always kept; default 200. */
  headLines?: number;
  /** Last lines kept in a ring; default 800. */
  tailLines?: number;
  /** Cap on the UTF-8 bytes of all kept lines; the head may use at most half. Default 1 MiB. */
  maxBytes?: number;
  /** A longer line keeps its first bytes and a note; default 4 KiB. */
  maxLineBytes?: number;
}

/** Stderr lines kept within fixed bounds; fed from a stream (`attach`) or by hand (`push`/`end`). */
export class BoundedStderr {
  private readonly headLimit: number;
  private readonly tailLimit: number;
  private readonly maxBytes: number;
  private readonly splitter: LineSplitter;
  private readonly head: string[] = [];
  private headBytes = 0;
  private headClosed = false;
  /** Ring of the last lines: live entries are `tail[tailStart..]`. */
  private tail: (string | undefined)[] = [];
  private tailStart = 0;
  private tailBytes = 0;
  private dropped = 0;
  private truncated = 0;
  private isEnded = false;
  private isAbandoned = false;
  private readError: string | null = null;
  private source: Readable | null = null;
  private readonly endedPromise: Promise<void>;
  private resolveEnded!: () => void;

  constructor(options: BoundedStderrOptions = {}) {
    this.headLimit = options.headLines ?? DEFAULT_STDERR_HEAD_LINES;
    this.tailLimit = options.tailLines ?? DEFAULT_STDERR_TAIL_LINES;
    this.maxBytes = options.maxBytes ?? DEFAULT_STDERR_MAX_BYTES;
    const maxLineBytes = options.maxLineBytes ?? DEFAULT_STDERR_MAX_LINE_BYTES;
    this.splitter = new LineSplitter({ maxLineBytes, headChars: maxLineBytes, headBytes: maxLineBytes });
    this.endedPromise = new Promise((resolve) => {
      this.resolveEnded = resolve;
    });
  }

  /** Reads `stream` to its end (or until `drain` abandons it). Call once. */
  attach(stream: Readable): this {
    if (this.source) throw new Error('BoundedStderr is already attached to a stream');
    this.source = stream;
    stream.on('data', (chunk: Buffer | string) => this.push(chunk));
    stream.once('end', () => this.end());
    stream.once('close', () => this.end());
    stream.on('error', (error: Error) => {
      this.readError = error.message;
      this.end();
    });
    return this;
  }

  /** Feeds a chunk; ignored after EOF or abandonment. */
  push(chunk: Uint8Array | string): void {
    if (this.isEnded) return;
    for (const line of this.splitter.push(chunk)) this.keep(line);
  }

  /** Marks EOF, keeping a final line without newline. Idempotent. */
  end(): void {
    if (this.isEnded) return;
    for (const line of this.splitter.end()) this.keep(line);
    if (this.readError !== null)
      this.keep({ type: 'line', text: `[orchestrator: stderr read error: ${this.readError}]` });
    this.isEnded = true;
    this.resolveEnded();
  }

  /** True once EOF was seen or reading was abandoned. */
  get ended(): boolean {
    return this.isEnded;
  }

  /** True when `drain` gave up before EOF. */
  get abandoned(): boolean {
    return this.isAbandoned;
  }

  /** Lines dropped between head and tail. */
  get droppedLines(): number {
    return this.dropped;
  }

  /** Lines cut at the line cap. */
  get truncatedLines(): number {
    return this.truncated;
  }

  /** UTF-8 bytes of the lines kept. */
  get keptBytes(): number {
    return this.headBytes + this.tailBytes;
  }

  /**
   * Waits up to `timeoutMs` for EOF. True when stderr was read to its end; false
   * when it was abandoned (now or earlier): reading stops and `ABANDONED_MARKER`
   * becomes the last line.
   */
  async drain(timeoutMs: number): Promise<boolean> {
    if (this.isAbandoned) return false;
    if (this.isEnded) return true;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), Math.max(0, timeoutMs));
    });
    const outcome = await Promise.race([this.endedPromise.then(() => 'ended' as const), timedOut]);
    clearTimeout(timer);
    if (outcome === 'ended') return !this.isAbandoned;
    this.abandon();
    return false;
  }

  /** Head, then a dropped-lines marker when any, then tail, then the abandoned marker when abandoned. */
  lines(): string[] {
    const out = [...this.head];
    if (this.dropped > 0) out.push(droppedLinesMarker(this.dropped));
    for (let i = this.tailStart; i < this.tail.length; i++) out.push(this.tail[i]!);
    if (this.isAbandoned) out.push(ABANDONED_MARKER);
    return out;
  }

  private abandon(): void {
    if (this.isEnded) return;
    const source = this.source;
    this.end();
    this.isAbandoned = true;
    if (source) {
      source.removeAllListeners('data');
      source.on('error', () => {});
      source.destroy();
    }
  }

  private keep(result: LineResult): void {
    let text: string;
    if (result.type === 'line') {
      text = result.text;
    } else {
      this.truncated++;
      text = result.head + truncatedLineNote(result.sizeBytes);
    }
    const bytes = Buffer.byteLength(text, 'utf8');
    if (!this.headClosed) {
      if (this.head.length < this.headLimit && this.headBytes + bytes <= this.maxBytes / 2) {
        this.head.push(text);
        this.headBytes += bytes;
        return;
      }
      this.headClosed = true;
    }
    const budget = this.maxBytes - this.headBytes;
    if (bytes > budget || this.tailLimit === 0) {
      this.dropped++;
      return;
    }
    this.tail.push(text);
    this.tailBytes += bytes;
    while (this.tail.length - this.tailStart > this.tailLimit || this.tailBytes > budget) {
      this.tailBytes -= Buffer.byteLength(this.tail[this.tailStart]!, 'utf8');
      this.tail[this.tailStart] = undefined;
      this.tailStart++;
      this.dropped++;
    }
    if (this.tailStart > 1024 && this.tailStart * 2 > this.tail.length) {
      this.tail = this.tail.slice(this.tailStart);
      this.tailStart = 0;
    }
  }
}
