import { describe, expect, it } from 'vitest';
import { normaliseText, splitFrontMatter } from '../../src/workflow/front-matter.js';

describe('front matter split', () => {
  it('a file without a leading --- is all prompt', () => {
    const split = splitFrontMatter('Hello\n---\nx: 1\n');
    expect(split.yaml).toBeNull();
    expect(split.body).toBe('Hello\n---\nx: 1');
    expect(split.bodyOrigin).toEqual({ line: 1, column: 1 });
  });

  it('the body origin skips blank lines and indentation after the closing delimiter', () => {
    const split = splitFrontMatter('---\na: 1\nb: 2\n---\n\n\n  Prompt {{ x }}\n');
    expect(split.yaml).toBe('a: 1\nb: 2');
    expect(split.yamlOrigin.line).toBe(2);
    expect(split.body).toBe('Prompt {{ x }}');
    expect(split.bodyOrigin).toEqual({ line: 7, column: 3 });
  });

  it('delimiters with trailing spaces still count', () => {
    const split = splitFrontMatter('--- \t\na: 1\n---   \nbody');
    expect(split.yaml).toBe('a: 1');
    expect(split.body).toBe('body');
  });

  it('an opener without a closer is reported as unclosed, not parsed as prompt', () => {
    const split = splitFrontMatter('---\na: 1\nprompt text');
    expect(split.unclosed).toBe(true);
    expect(split.body).toBe('');
  });

  it('an empty front matter block yields empty yaml', () => {
    const split = splitFrontMatter('---\n---\nbody');
    expect(split.yaml).toBe('');
    expect(split.body).toBe('body');
    expect(split.bodyOrigin.line).toBe(3);
  });

  it('a BOM and CRLF line endings do not shift lines', () => {
    const text = normaliseText('\uFEFF---\r\na: 1\r\n---\r\nbody\r\n');
    expect(text.startsWith('---\n')).toBe(true);
    const split = splitFrontMatter(text);
    expect(split.yaml).toBe('a: 1');
    expect(split.bodyOrigin.line).toBe(4);
  });
});
