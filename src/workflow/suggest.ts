/**
 * "Did you mean" for unknown keys: a misspelt key is silently ignored by most
 * config loaders, and the operator then wonders why their setting has no effect.
 */

/** Levenshtein distance between two strings. */
export function editDistance(a: string, b: string): number {
  const previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = previous[0] as number;
    previous[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = previous[j] as number;
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      previous[j] = Math.min(above + 1, (previous[j - 1] as number) + 1, diagonal + cost);
      diagonal = above;
    }
  }
  return previous[b.length] as number;
}

/** The closest candidate within a distance that scales with length, or null. */
export function closest(word: string, candidates: readonly string[]): string | null {
  const limit = Math.max(2, Math.floor(word.length / 3));
  const lower = word.toLowerCase();
  let best: string | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    // The distance is at least the difference in length: such a candidate could never be suggested.
    if (Math.abs(candidate.length - word.length) > limit) continue;
    const d = editDistance(lower, candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return bestDistance <= limit ? best : null;
}
