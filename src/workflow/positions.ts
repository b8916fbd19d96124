/**
 * Maps a key path in the front matter to a line and column of the original file,
 * using the `yaml` document's node ranges. A path that does not exist points at
 * its deepest existing parent key, so "missing key" errors still land nearby.
 *
 * Each map's keys are indexed the first time a lookup passes through it: a file
 * with thousands of keys gets one diagnostic per key, and scanning the map for
 * every one of them made loading quadratic.
 */
import { type Document, isMap, isPair, isScalar, isSeq, type LineCounter, type Node, type Pair } from 'yaml';
import type { Origin } from './front-matter.js';

export interface Position {
  line: number;
  column: number;
}

/** Finds places in one parsed front matter; build it once per document with `createLocator`. */
export interface Locator {
  /** Where the value at `path` is (or its deepest existing parent); null when the document has no usable root. */
  locate(path: readonly (string | number)[]): Position | null;
  /** Where the KEY of `path` is (for unknown-key warnings); null when the path does not exist. */
  locateKey(path: readonly (string | number)[]): Position | null;
}

/** A locator over `doc` whose lookups cost the depth of the path, not the size of the maps on it. */
export function createLocator(doc: Document, lineCounter: LineCounter, origin: Origin): Locator {
  const index = new WeakMap<object, Map<string, Pair>>();
  const pairOf = (map: { items: unknown[] }, segment: string | number): Pair | undefined => {
    let keys = index.get(map);
    if (keys === undefined) {
      keys = new Map();
      for (const item of map.items) {
        // The first of two equal keys wins, as a linear scan would find it.
        if (isPair(item) && !keys.has(keyText(item.key))) keys.set(keyText(item.key), item);
      }
      index.set(map, keys);
    }
    return keys.get(String(segment));
  };
  const position = (offset: number | null) =>
    offset === null ? null : toPosition(lineCounter, origin, offset);

  return {
    locate(path) {
      let node: unknown = doc.contents;
      let best: number | null = rangeStart(node);
      for (const segment of path) {
        if (isMap(node)) {
          const pair = pairOf(node, segment);
          if (pair === undefined) break;
          best = rangeStart(pair.key) ?? best;
          node = pair.value;
          if (node !== null) best = rangeStart(node) ?? best;
        } else if (isSeq(node) && typeof segment === 'number') {
          const item = node.items[segment];
          if (item === undefined) break;
          best = rangeStart(item) ?? best;
          node = item;
        } else {
          break;
        }
      }
      return position(best);
    },
    locateKey(path) {
      let node: unknown = doc.contents;
      let offset: number | null = null;
      for (const segment of path) {
        if (!isMap(node)) return null;
        const pair = pairOf(node, segment);
        if (pair === undefined) return null;
        offset = rangeStart(pair.key);
        node = pair.value;
      }
      return position(offset);
    },
  };
}

/** Turns an offset inside the YAML text into a position in the original file. */
export function toPosition(lineCounter: LineCounter, origin: Origin, offset: number): Position {
  const pos = lineCounter.linePos(offset);
  return {
    line: origin.line + pos.line - 1,
    column: pos.line === 1 ? origin.column + pos.col - 1 : pos.col,
  };
}

/** The text a key is compared by: a scalar's value, anything else as written. */
export function keyText(key: unknown): string {
  if (isScalar(key)) return String(key.value);
  return String(key);
}

/** Where a node starts in the YAML text; null for a node without a range. */
export function rangeStart(node: unknown): number | null {
  const range = (node as Node | null)?.range;
  return Array.isArray(range) ? (range[0] ?? null) : null;
}
