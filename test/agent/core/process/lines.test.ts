import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_LINE_BYTES,
  type LineResult,
  LineSplitter,
  type LineSplitterOptions,
  splitLines,
} from '../../../../src/agent/core/process/lines.js';
import { liveMemoryTracker } from './child-scripts.js';

const MiB = 1024 * 1024;

/** Runs chunks through a splitter in order and collects every result. */
function split(chunks: readonly (Uint8Array | string)[], options?: LineSplitterOptions): LineResult[] {
  const splitter = new LineSplitter(options);
  return [...chunks.flatMap((chunk) => splitter.push(chunk)), ...splitter.end()];
}

const line = (text: string): LineResult => ({ type: 'line', text });

/** Cuts `bytes` at the given offsets. */
function cut(bytes: Buffer, offsets: readonly number[]): Buffer[] {
  const points = [...new Set(offsets.map((o) => o % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let start = 0;
  for (const point of [...points, bytes.length]) {
    chunks.push(bytes.subarray(start, point));
    start = point;
  }
  return chunks;
}

/** What the split must equal: `text.split('\n')`, minus a trailing empty line, each without one trailing `\r`. */
function expectedLines(text: string): string[] {
  const parts = text.split('\n');
  if (parts.at(-1) === '') parts.pop();
  return parts.map((part) => (part.endsWith('\r') ? part.slice(0, -1) : part));
}

describe('LineSplitter', () => {
  it('CRLF line ends do not leave a \\r on the text; a lone \\r inside a line is kept', () => {
    expect(split(['a\r\nb\r\n', 'c\rd\n'])).toEqual([line('a'), line('b'), line('c\rd')]);
  });

  it('a \\r\\n split across chunks is still one line end', () => {
    expect(split(['one\r', '\ntwo\r', '\n'])).toEqual([line('one'), line('two')]);
  });

  it('a UTF-8 character split across chunks is not turned into replacement characters', () => {
    const bytes = Buffer.from('€😀é\n', 'utf8');
    const chunks = [...bytes].map((byte) => Uint8Array.of(byte));
    expect(split(chunks)).toEqual([line('€😀é')]);
  });

  it('a final line without a newline is not lost; a final newline adds no empty line', () => {
    expect(split(['a\nb'])).toEqual([line('a'), line('b')]);
    expect(split(['a\n'])).toEqual([line('a')]);
    expect(split([])).toEqual([]);
    expect(split(['\n\n'])).toEqual([line(''), line('')]);
  });

  it('a line of exactly the cap is a line; one byte more is overlong (with or without \\r\\n)', () => {
    const cap = 16;
    const exact = 'x'.repeat(cap);
    expect(split([`${exact}\n`], { maxLineBytes: cap })).toEqual([line(exact)]);
    expect(split([`${exact}\r\n`], { maxLineBytes: cap })).toEqual([line(exact)]);
    expect(split([exact], { maxLineBytes: cap })).toEqual([line(exact)]);
    expect(split([`${exact}y\nnext\n`], { maxLineBytes: cap, headChars: 4 })).toEqual([
      { type: 'overlong', sizeBytes: cap + 1, limitBytes: cap, head: 'xxxx' },
      line('next'),
    ]);
    expect(split([`${exact}y\r\n`], { maxLineBytes: cap })).toEqual([
      { type: 'overlong', sizeBytes: cap + 1, limitBytes: cap, head: `${exact}y` },
    ]);
  });

  it('the cap counts bytes, not characters', () => {
    // Six 3-byte characters: 18 bytes, over a 16-byte cap though only 6 characters long.
    expect(split(['€€€€€€\n'], { maxLineBytes: 16 })).toEqual([
      { type: 'overlong', sizeBytes: 18, limitBytes: 16, head: '€€€€€€' },
    ]);
  });

  it('an overlong head never ends in half a character or half a surrogate pair', () => {
    const text = '😀'.repeat(300);
    const [result] = split([`${text}\n`], { maxLineBytes: 100, headChars: 7 });
    expect(result).toEqual({
      type: 'overlong',
      sizeBytes: Buffer.byteLength(text),
      limitBytes: 100,
      head: '😀😀😀',
    });
    const [bytesCut] = split([`${text}\n`], { maxLineBytes: 100, headChars: 200, headBytes: 10 });
    expect(bytesCut).toEqual({
      type: 'overlong',
      sizeBytes: Buffer.byteLength(text),
      limitBytes: 100,
      head: '😀😀',
    });
  });

  it('a 20 MiB line never has more than the cap buffered, and yields one overlong item then later lines', () => {
    const splitter = new LineSplitter();
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const results: LineResult[] = [];
    let peakBuffered = 0;
    for (let sent = 0; sent < 20 * MiB; sent += chunk.length) {
      results.push(...splitter.push(chunk));
      peakBuffered = Math.max(peakBuffered, splitter.bufferedBytes);
    }
    results.push(...splitter.push('\nafter\n'), ...splitter.end());
    expect(peakBuffered).toBeLessThanOrEqual(DEFAULT_MAX_LINE_BYTES + 1);
    expect(results).toEqual([
      { type: 'overlong', sizeBytes: 20 * MiB, limitBytes: DEFAULT_MAX_LINE_BYTES, head: 'a'.repeat(200) },
      line('after'),
    ]);
  });

  it('an overlong line keeps no input chunk alive: live memory stays near the cap, not the line', async () => {
    const memory = liveMemoryTracker();
    async function* source(): AsyncGenerator<Buffer> {
      // Fresh chunks, as a pipe delivers them; a splitter keeping them all would hold 40 MiB.
      for (let chunks = 0; chunks < 160; chunks++) {
        if (chunks % 16 === 15) memory.sample();
        yield Buffer.alloc(256 * 1024, 'b');
      }
      yield Buffer.from('\nlast\n');
    }
    const results: LineResult[] = [];
    for await (const result of splitLines(source(), { maxLineBytes: 2 * MiB })) results.push(result);
    memory.sample();
    const growth = memory.peakGrowth();
    expect(results).toEqual([
      { type: 'overlong', sizeBytes: 40 * MiB, limitBytes: 2 * MiB, head: 'b'.repeat(200) },
      line('last'),
    ]);
    expect(growth).toBeLessThan(8 * MiB);
  });

  it('rejects a cap that is not a positive integer instead of splitting wrongly', () => {
    expect(() => new LineSplitter({ maxLineBytes: 0 })).toThrow(RangeError);
    expect(() => new LineSplitter({ maxLineBytes: 1.5 })).toThrow(RangeError);
  });
});

describe('splitLines', () => {
  it('accepts string chunks and ends with the stream', async () => {
    async function* source() {
      yield 'x\ny';
      yield 'z\r\n';
    }
    const results: LineResult[] = [];
    for await (const result of splitLines(source())) results.push(result);
    expect(results).toEqual([line('x'), line('yz')]);
  });

  it('a stream error reaches the consumer instead of ending the lines silently', async () => {
    async function* source() {
      yield 'partial\n';
      throw new Error('pipe broke');
    }
    const results: LineResult[] = [];
    await expect(async () => {
      for await (const result of splitLines(source())) results.push(result);
    }).rejects.toThrow('pipe broke');
    expect(results).toEqual([line('partial')]);
  });
});

const textUnit = fc.oneof(
  fc.constantFrom('\n', '\r\n', '\r', 'a', 'é', '€', '😀', '\ufeff'),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
);
const anyText = fc.string({ unit: textUnit, maxLength: 200 });
const cutOffsets = fc.array(fc.nat(), { maxLength: 40 });

describe('LineSplitter properties', () => {
  it('any chunking of any text yields exactly the lines of text.split("\\n")', () => {
    fc.assert(
      fc.property(anyText, cutOffsets, (text, offsets) => {
        const results = split(cut(Buffer.from(text, 'utf8'), offsets));
        expect(results).toEqual(expectedLines(text).map(line));
      }),
    );
  });

  it('with a small cap, every line is either returned whole or reported with its exact byte size', () => {
    fc.assert(
      fc.property(anyText, cutOffsets, fc.integer({ min: 1, max: 12 }), (text, offsets, cap) => {
        const results = split(cut(Buffer.from(text, 'utf8'), offsets), { maxLineBytes: cap, headChars: 3 });
        const parts = expectedLines(text);
        expect(results).toHaveLength(parts.length);
        results.forEach((result, i) => {
          const part = parts[i]!;
          const sizeBytes = Buffer.byteLength(part, 'utf8');
          if (sizeBytes <= cap) {
            expect(result).toEqual(line(part));
          } else {
            expect(result).toMatchObject({ type: 'overlong', sizeBytes, limitBytes: cap });
            const head = result.type === 'overlong' ? result.head : '';
            expect(head.length).toBeLessThanOrEqual(3);
            expect(part.startsWith(head)).toBe(true);
          }
        });
      }),
    );
  });
});
