/**
 * The masking set the log, the API and the agents' events share: values that come and go
 * (session tokens) are masked longest first whatever order they arrived in, and a value
 * deleted is masked no more.
 */
import { describe, expect, it } from 'vitest';
import { MaskedValues } from '../../src/domain/masked-values.js';

describe('MaskedValues', () => {
  it('masks longest first after every change, and not a value deleted or too short', () => {
    const values = new MaskedValues(['abcd']);
    expect(values.mask('key abcdef')).toBe('key ***ef');
    values.add(['abcdef', 'xyz']);
    // The longer value, added later, wins over the one inside it; 3 characters are not masked.
    expect(values.mask('key abcdef xyz')).toBe('key *** xyz');
    values.delete(['abcdef']);
    expect(values.mask('key abcdef')).toBe('key ***ef');
    values.clear();
    expect(values.mask('key abcdef')).toBe('key abcdef');
  });

  it('masks the JSON-escaped spelling too when asked', () => {
    const values = new MaskedValues(['p"w\\d']);
    const line = JSON.stringify({ a: 'p"w\\d' });
    expect(values.mask(line)).toBe(line);
    expect(values.mask(line, true)).toBe('{"a":"***"}');
  });
});
