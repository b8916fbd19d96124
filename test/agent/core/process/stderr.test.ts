import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  ABANDONED_MARKER,
  BoundedStderr,
  droppedLinesMarker,
  truncatedLineNote,
} from '../../../../src/agent/core/process/stderr.js';

function feed(stderr: BoundedStderr, count: number, make = (i: number) => `line ${i}`): void {
  for (let i = 0; i < count; i++) stderr.push(`${make(i)}\n`);
}

describe('BoundedStderr', () => {
  it('keeps everything, with no marker, while under the limits', () => {
    const stderr = new BoundedStderr({ headLines: 3, tailLines: 3 });
    feed(stderr, 6);
    stderr.end();
    expect(stderr.lines()).toEqual(['line 0', 'line 1', 'line 2', 'line 3', 'line 4', 'line 5']);
    expect(stderr.droppedLines).toBe(0);
  });

  it('keeps the first and last lines and counts the middle as dropped, in order', () => {
    const stderr = new BoundedStderr({ headLines: 2, tailLines: 3 });
    feed(stderr, 10);
    stderr.end();
    expect(stderr.lines()).toEqual(['line 0', 'line 1', droppedLinesMarker(5), 'line 7', 'line 8', 'line 9']);
    expect(stderr.droppedLines).toBe(5);
    expect(droppedLinesMarker(5)).toBe('… 5 lines dropped …');
  });

  it('the byte cap holds even when lines are few but long; the head takes at most half', () => {
    const stderr = new BoundedStderr({ headLines: 100, tailLines: 100, maxBytes: 1000, maxLineBytes: 100 });
    feed(stderr, 50, (i) => `${String(i).padStart(2, '0')}${'.'.repeat(98)}`);
    stderr.end();
    expect(stderr.keptBytes).toBeLessThanOrEqual(1000);
    const lines = stderr.lines();
    expect(lines.slice(0, 5).map((l) => l.slice(0, 2))).toEqual(['00', '01', '02', '03', '04']);
    expect(lines[5]).toBe(droppedLinesMarker(40));
    expect(lines.slice(6).map((l) => l.slice(0, 2))).toEqual(['45', '46', '47', '48', '49']);
  });

  it('a long line is cut at the line cap with a note, not kept whole', () => {
    const stderr = new BoundedStderr({ maxLineBytes: 10 });
    stderr.push(`${'y'.repeat(5000)}\nshort\n`);
    stderr.end();
    expect(stderr.lines()).toEqual([`${'y'.repeat(10)}${truncatedLineNote(5000)}`, 'short']);
    expect(stderr.truncatedLines).toBe(1);
    expect(truncatedLineNote(5000)).toBe(' … [line truncated: 5000 bytes]');
  });

  it('a final line without a newline is kept at EOF', async () => {
    const source = new PassThrough();
    const stderr = new BoundedStderr().attach(source);
    source.write('first\nno newline');
    source.end();
    expect(await stderr.drain(1_000)).toBe(true);
    expect(stderr.lines()).toEqual(['first', 'no newline']);
  });

  it('drain returns true at EOF without waiting out its bound', async () => {
    const source = new PassThrough();
    const stderr = new BoundedStderr().attach(source);
    source.end('x\n');
    const before = Date.now();
    expect(await stderr.drain(10_000)).toBe(true);
    expect(Date.now() - before).toBeLessThan(1_000);
    expect(await stderr.drain(10_000)).toBe(true);
  });

  it('a stream that never ends is abandoned after the bound: marker last, later output not read', async () => {
    const source = new PassThrough();
    const stderr = new BoundedStderr().attach(source);
    source.write('before\npartial');
    expect(await stderr.drain(50)).toBe(false);
    expect(stderr.abandoned).toBe(true);
    expect(stderr.lines()).toEqual(['before', 'partial', ABANDONED_MARKER]);
    expect(source.destroyed).toBe(true);
    stderr.push('after\n');
    expect(stderr.lines()).toEqual(['before', 'partial', ABANDONED_MARKER]);
    expect(await stderr.drain(50)).toBe(false);
    expect(stderr.lines().filter((l) => l === ABANDONED_MARKER)).toHaveLength(1);
  });

  it('a read error ends the capture with a note instead of crashing or hanging the drain', async () => {
    const source = new PassThrough();
    const stderr = new BoundedStderr().attach(source);
    source.write('ok\n');
    source.destroy(new Error('EIO'));
    expect(await stderr.drain(1_000)).toBe(true);
    expect(stderr.lines()).toEqual(['ok', '[orchestrator: stderr read error: EIO]']);
  });

  it('attaching twice is refused rather than interleaving two streams', () => {
    const stderr = new BoundedStderr().attach(new PassThrough());
    expect(() => stderr.attach(new PassThrough())).toThrow(/already attached/);
  });
});
