/**
 * Per-key serialisation for workspace creation and removal. Two runs of one issue
 * must never create and remove its directory at the same time in this process; a
 * queue per key (not one global lock) keeps unrelated issues from waiting on each
 * other. The map only holds keys with work queued, so it does not grow with history.
 */

export class KeyLock {
  /** Per key: the tail of its queue. */
  readonly #tails = new Map<string, Promise<void>>();

  /** Runs `body` after every earlier `run` for `key` has settled; its result or rejection passes through. */
  async run<T>(key: string, body: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    let release = () => {};
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => mine);
    this.#tails.set(key, tail);
    await previous;
    try {
      return await body();
    } finally {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}
