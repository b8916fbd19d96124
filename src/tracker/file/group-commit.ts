/**
 * Group commit for the issues file. One write (re-read, splice, fsync, rename, fsync the
 * directory) costs about twenty file system calls; with a write per edit, edits that arrive
 * faster than a write completes (handoffs from 32 agents on a slow disk or a busy event loop)
 * queue up and the queue grows with the handoff rate: finished issues waited tens of seconds
 * for their handoff. Here every edit that arrives while a write is under way waits for the
 * next one, and that write carries all of them: the wait is bounded by two writes, whatever
 * the rate.
 */

/** An edit waiting for the write that will carry it, and its caller's promise. */
interface Waiting<E> {
  edit: E;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Batches edits for one committer, in arrival order. `commit` applies a batch in order and
 * makes it durable; it returns, for each edit, the error that edit alone failed with
 * (undefined: applied, or nothing to change), and throws when the write itself failed,
 * which fails every edit of the batch. A caller's promise settles only once that is known.
 */
export class GroupCommit<E> {
  private waiting: Waiting<E>[] = [];
  private draining = false;
  private last: Promise<void> = Promise.resolve();

  constructor(private readonly commit: (edits: readonly E[]) => Promise<readonly unknown[]>) {}

  /** Resolves once a write carrying `edit` is durable; rejects with the edit's or the write's error. */
  submit(edit: E): Promise<void> {
    const done = new Promise<void>((resolve, reject) => this.waiting.push({ edit, resolve, reject }));
    this.last = done.then(
      () => undefined,
      () => undefined,
    );
    if (!this.draining) {
      this.draining = true;
      void this.drain();
    }
    return done;
  }

  /** Settles once every edit submitted so far has been written or has failed. */
  settled(): Promise<void> {
    return this.last;
  }

  private async drain(): Promise<void> {
    // Edits submitted in the same turn of the event loop share the first write too.
    await Promise.resolve();
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0);
      let failures: readonly unknown[];
      try {
        failures = await this.commit(batch.map((w) => w.edit));
      } catch (error) {
        for (const w of batch) w.reject(error);
        continue;
      }
      for (const [i, w] of batch.entries()) {
        const failure = failures[i];
        if (failure === undefined) w.resolve();
        else w.reject(failure);
      }
    }
    this.draining = false;
  }
}
