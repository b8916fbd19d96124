/**
 * The reader the fork-per-turn skeleton reads stdout through: it can give up on a read
 * that never finishes, and a read's result is not kept alive by the reads after it.
 */
import { describe, expect, it } from 'vitest';
import { InterruptibleReader } from '../../../../src/agent/core/process/interruptible-reader.js';
import { liveMemoryTracker } from './child-scripts.js';

/** A source whose reads never settle (stdout held open by a leftover process). */
function neverEnding(): AsyncIterator<string> {
  return { next: () => new Promise<IteratorResult<string>>(() => undefined) };
}

describe('InterruptibleReader', () => {
  it('an interrupt settles the pending read although the source never answers it', async () => {
    const reader = new InterruptibleReader(neverEnding());
    const pending = reader.next();
    reader.interrupt();
    await expect(pending).resolves.toEqual({ interrupted: true });
    await expect(reader.next()).resolves.toEqual({ interrupted: true });
    expect(reader.interrupted).toBe(true);
  });

  it('items and the end pass through unchanged until an interrupt', async () => {
    async function* source() {
      yield 'a';
      yield 'b';
    }
    const reader = new InterruptibleReader(source());
    await expect(reader.next()).resolves.toEqual({ done: false, value: 'a' });
    await expect(reader.next()).resolves.toEqual({ done: false, value: 'b' });
    await expect(reader.next()).resolves.toEqual({ done: true, value: undefined });
    reader.interrupt();
    expect(reader.interrupted).toBe(true);
  });

  it('a failing source rejects the read instead of hanging it', async () => {
    const reader = new InterruptibleReader<string>({ next: () => Promise.reject(new Error('EIO')) });
    await expect(reader.next()).rejects.toThrow('EIO');
  });

  it('items already read are not kept alive while the reader is never interrupted (no per-read retention)', async () => {
    const itemBytes = 64 * 1024;
    const items = 2_000;
    async function* source() {
      for (let i = 0; i < items; i++) yield Buffer.alloc(itemBytes, i % 256);
    }
    const memory = liveMemoryTracker();
    const reader = new InterruptibleReader(source());
    for (let read = 0; ; read++) {
      const next = await reader.next();
      if ('interrupted' in next || next.done === true) break;
      if (read % 200 === 199) memory.sample();
    }
    memory.sample();
    // 2,000 reads of 64 KiB: keeping them would hold 125 MiB.
    expect(memory.peakGrowth()).toBeLessThan(16 * 1024 * 1024);
  });
});
