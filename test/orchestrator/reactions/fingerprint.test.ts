import { describe, expect, it } from 'vitest';
import { headFingerprint, reviewFingerprint } from '../../../src/orchestrator/reactions/fingerprint.js';
import { SHA_A } from './fixtures.js';

describe('fingerprints', () => {
  it('a review fingerprint is the SHA-256 hex of the sorted ids joined by newlines', () => {
    expect(reviewFingerprint([{ id: 'review-9' }, { id: 'c1' }])).toBe(
      '44aa3001d95e1f92af3e21a732e4cce893cffe42b7a71445280162693fbe45bd',
    );
  });

  it('the same ids in another order, or listed twice, give the same fingerprint', () => {
    const ids = (...xs: string[]) => xs.map((id) => ({ id }));
    const one = reviewFingerprint(ids('r1', 'r2', 'r3'));
    expect(reviewFingerprint(ids('r3', 'r1', 'r2'))).toBe(one);
    expect(reviewFingerprint(ids('r2', 'r3', 'r1', 'r2'))).toBe(one);
    expect(reviewFingerprint(ids('r1', 'r2'))).not.toBe(one);
  });

  it('a CI failure or a conflict is fingerprinted by its head SHA', () => {
    expect(headFingerprint(SHA_A)).toBe(SHA_A);
  });
});
