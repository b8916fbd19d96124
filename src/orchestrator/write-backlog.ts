/**
 * Store writes the database refused, kept in memory in the order they were made and
 * replayed until it takes them. A full disk or a read-only file must not crash the
 * service or lose a finished run: while writes wait, the owner dispatches nothing new,
 * running sessions go on, and every later write queues behind the waiting ones so the
 * database never sees them out of order (a run's end before its last turn).
 */
import { PersistenceError } from '../persistence/index.js';

/** Where the store stands, for the API, readiness, metrics and logs. */
export interface StoreStatus {
  /** False from the first refused write until everything waiting has been written. */
  available: boolean;
  /** When it became unavailable (epoch ms); null while available. */
  sinceMs: number | null;
  /** Writes waiting to be replayed. */
  pendingWrites: number;
  /** The last refusal's message; null while available. */
  lastError: string | null;
}

/** True for a failure of the database itself (disk, lock, file), not a bug in the write. */
export function isStoreFault(error: unknown): error is PersistenceError {
  return error instanceof PersistenceError && error.code !== 'constraint' && error.code !== 'run_not_open';
}

export class WriteBacklog {
  readonly #pending: { what: string; write: () => void }[] = [];
  #sinceMs: number | null = null;
  #lastError: string | null = null;

  /** False while a refused write waits (or the store refused anything since the last replay). */
  get available(): boolean {
    return this.#sinceMs === null;
  }

  /**
   * Writes now when nothing waits; otherwise, or when the store refuses, queues the write
   * behind the waiting ones. True when it was written now. A failure that is not the
   * store's (a bug) is thrown as it is.
   */
  submit(what: string, write: () => void, nowMs: number): boolean {
    if (this.#pending.length === 0) {
      try {
        write();
        return true;
      } catch (error) {
        if (!isStoreFault(error)) throw error;
        this.refused(error, nowMs);
      }
    }
    this.#pending.push({ what, write });
    return false;
  }

  /** Notes a refusal of a write that cannot wait (a run that was never started). */
  refused(error: PersistenceError, nowMs: number): void {
    this.#sinceMs ??= nowMs;
    this.#lastError = error.message;
  }

  /**
   * Replays the waiting writes in order, stopping at the first the store refuses. True
   * when nothing waits any more (the store is available again).
   */
  flush(nowMs: number): boolean {
    while (this.#pending.length > 0) {
      const next = this.#pending[0] as { what: string; write: () => void };
      try {
        next.write();
      } catch (error) {
        if (!isStoreFault(error)) {
          // A write that can never succeed must not block the rest behind it forever.
          this.#pending.shift();
          this.#lastError = `${next.what} dropped: ${error instanceof Error ? error.message : String(error)}`;
          continue;
        }
        this.refused(error, nowMs);
        return false;
      }
      this.#pending.shift();
    }
    this.#sinceMs = null;
    this.#lastError = null;
    return true;
  }

  /** The current state (a copy). */
  status(): StoreStatus {
    return {
      available: this.available,
      sinceMs: this.#sinceMs,
      pendingWrites: this.#pending.length,
      lastError: this.#lastError,
    };
  }
}
