/**
 * Finds keys written twice in one map. The `yaml` parser can do this itself (`uniqueKeys`),
 * but it compares each new key with every earlier key of the map, which made a front matter
 * with many keys quadratic to load; one set per map does the same check in linear time.
 */
import { type Document, isScalar, type Pair, visit } from 'yaml';

/** Every pair whose key repeats an earlier key of the same map (the later one), in file order. */
export function duplicateKeys(doc: Document): Pair[] {
  const repeats: Pair[] = [];
  visit(doc, {
    Map: (_, map) => {
      // Same rule as the parser's: scalars are equal by value, anything else only to itself.
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        const key: unknown = isScalar(pair.key) ? pair.key.value : pair.key;
        if (seen.has(key)) repeats.push(pair);
        else seen.add(key);
      }
    },
  });
  return repeats;
}
