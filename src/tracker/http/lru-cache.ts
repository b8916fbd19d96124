/**
 * A bounded least-recently-used map for the ETag cache: a poll touches the same few
 * hundred URLs again and again, and an unbounded map would grow with every issue ever
 * read. A capacity of 0 stores nothing.
 */
export class LruCache<V> {
  private readonly entries = new Map<string, V>();
  constructor(private readonly capacity: number) {}

  /** The value under `key` (now the most recently used), or undefined. */
  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  /** Stores `value`, evicting the least recently used entry past the capacity. */
  set(key: string, value: V): void {
    if (this.capacity <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, value);
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
