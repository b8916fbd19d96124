/**
 * Reads an async iterator one item at a time, with a way to stop waiting for a read that
 * may never finish (an agent that exited while something it started still holds stdout).
 * The obvious way, `Promise.race([iterator.next(), gaveUp])` on every read, is a leak: each
 * race hangs a reaction on the long-lived `gaveUp` promise, and every reaction keeps its
 * read's result (the whole line) reachable until `gaveUp` settles, usually at the end of the
 * turn. A million lines then hold a million lines. Here the only thing that outlives a read
 * is one slot naming the read in progress, overwritten by the next one.
 */

/** What `next` yields: the iterator's own result, or `interrupted` once reading was given up. */
export type ReadResult<T> = IteratorResult<T, unknown> | { interrupted: true };

/** One consumer's view of `source`; call `next` only after the previous read settled. */
export class InterruptibleReader<T> {
  /** Settles the read in progress as interrupted; null when no read is waiting. */
  #wake: (() => void) | null = null;
  #interrupted = false;

  constructor(private readonly source: AsyncIterator<T, unknown>) {}

  /** True once `interrupt` was called. */
  get interrupted(): boolean {
    return this.#interrupted;
  }

  /** The next item, the end, or `{ interrupted: true }` (at once after `interrupt`). Rejects as the source does. */
  next(): Promise<ReadResult<T>> {
    if (this.#interrupted) return Promise.resolve({ interrupted: true });
    return new Promise<ReadResult<T>>((resolve, reject) => {
      const wake = () => resolve({ interrupted: true });
      this.#wake = wake;
      const settle = () => {
        if (this.#wake === wake) this.#wake = null;
      };
      this.source.next().then(
        (result) => {
          settle();
          resolve(result);
        },
        (error: unknown) => {
          settle();
          reject(error);
        },
      );
    });
  }

  /** Stops waiting: the pending read (if any) and every later one resolve as interrupted. Idempotent. */
  interrupt(): void {
    this.#interrupted = true;
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }
}
