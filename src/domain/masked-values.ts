/**
 * A set of secret values and the masking of them in text. The log, the agents' events and
 * the API each mask with one; values come and go (a session's token lives as long as its
 * session), while masking runs on every line, so the longest-first order a mask needs (a
 * value inside a longer one must not leave the longer one's rest) is kept, not re-sorted
 * per line.
 */

/** What a masked value is replaced with. */
export const MASK = '***';
/** Shorter values are not masked: they would blank out ordinary text. */
export const MIN_SECRET_LENGTH = 4;

export class MaskedValues {
  readonly #values = new Set<string>();
  /** Longest first, each with its JSON-escaped spelling when that differs: built once per change, not per line. */
  #ordered: { value: string; spelled: string | null }[] | null = [];

  constructor(values: Iterable<string> = []) {
    this.add(values);
  }

  /** Masks `values` from now on (those shorter than MIN_SECRET_LENGTH are ignored). */
  add(values: Iterable<string>): void {
    for (const v of values) {
      if (v.length < MIN_SECRET_LENGTH || this.#values.has(v)) continue;
      this.#values.add(v);
      this.#ordered = null;
    }
  }

  /** Stops masking `values`. */
  delete(values: Iterable<string>): void {
    for (const v of values) if (this.#values.delete(v)) this.#ordered = null;
  }

  clear(): void {
    this.#values.clear();
    this.#ordered = [];
  }

  /** `text` with every value replaced by MASK, longest first; `escaped` also masks a value's JSON-escaped spelling. */
  mask(text: string, escaped = false): string {
    this.#ordered ??= [...this.#values]
      .sort((a, b) => b.length - a.length)
      .map((value) => {
        const spelled = JSON.stringify(value).slice(1, -1);
        return { value, spelled: spelled === value ? null : spelled };
      });
    let out = text;
    // `includes` first: most lines hold no secret, and a search allocates nothing.
    for (const { value, spelled } of this.#ordered) {
      if (out.includes(value)) out = out.split(value).join(MASK);
      if (escaped && spelled !== null && out.includes(spelled)) out = out.split(spelled).join(MASK);
    }
    return out;
  }
}
