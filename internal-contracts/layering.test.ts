/**
 * Runs the layering and naming rules on the real source tree, so a layering slip
 * or a product name leaking into core code fails CI instead of a later review.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkLayering, formatViolation, layerOf } from './layering/check.js';
import { readSourceTree } from './layering/read-tree.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const files = readSourceTree(ROOT);

describe('the source tree', () => {
  it('is actually read (an empty walk would make every rule pass vacuously)', () => {
    expect(files.some((f) => layerOf(f.path) === 'domain')).toBe(true);
    expect(files.some((f) => f.path === 'src/workflow/load.ts')).toBe(true);
  });

  it('breaks no layering or product-name rule', () => {
    expect(checkLayering(files).map(formatViolation)).toEqual([]);
  });
});
