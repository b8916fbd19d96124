/**
 * Maps a key path in the front matter to a line and column of the original file,
 * using the `yaml` document's node ranges. A path that does not exist points at
 * its deepest existing parent key, so "missing key" errors still land nearby.
 */
import { type Document, isMap, isPair, isScalar, isSeq, type LineCounter, type Node } from 'yaml';
import type { Origin } from './front-matter.js';

export interface Position {
  line: number;
  column: number;
}

/** Locates `path` in `doc`; null when the document has no usable root. */
export function locate(
  doc: Document,
  lineCounter: LineCounter,
  origin: Origin,
  path: readonly (string | number)[],
): Position | null {
  let node: unknown = doc.contents;
  let best: number | null = rangeStart(node);
  for (const segment of path) {
    if (isMap(node)) {
      const pair = node.items.find((item) => isPair(item) && keyText(item.key) === String(segment));
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
  if (best === null) return null;
  return toPosition(lineCounter, origin, best);
}

/** Locates the KEY of `path` (for unknown-key warnings), not its value. */
export function locateKey(
  doc: Document,
  lineCounter: LineCounter,
  origin: Origin,
  path: readonly string[],
): Position | null {
  let node: unknown = doc.contents;
  let offset: number | null = null;
  for (const segment of path) {
    if (!isMap(node)) return null;
    const pair = node.items.find((item) => isPair(item) && keyText(item.key) === segment);
    if (pair === undefined) return null;
    offset = rangeStart(pair.key);
    node = pair.value;
  }
  return offset === null ? null : toPosition(lineCounter, origin, offset);
}

/** Turns an offset inside the YAML text into a position in the original file. */
export function toPosition(lineCounter: LineCounter, origin: Origin, offset: number): Position {
  const pos = lineCounter.linePos(offset);
  return {
    line: origin.line + pos.line - 1,
    column: pos.line === 1 ? origin.column + pos.col - 1 : pos.col,
  };
}

function keyText(key: unknown): string {
  if (isScalar(key)) return String(key.value);
  return String(key);
}

function rangeStart(node: unknown): number | null {
  const range = (node as Node | null)?.range;
  return Array.isArray(range) ? (range[0] ?? null) : null;
}
