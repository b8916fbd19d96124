/**
 * What a reaction's dispatch is about, so the same problem is never handed to the agent twice.
 * A red CI or a conflict belongs to a head SHA: a new push is a new problem. Review feedback
 * belongs to the set of feedback ids, whatever order the forge lists them in; a new comment
 * changes the set and re-arms the reaction.
 */
import { createHash } from 'node:crypto';
import type { ReviewFeedback } from '../../domain/forge.js';

/** The fingerprint of a CI failure or a merge conflict: the head SHA it was seen on. */
export function headFingerprint(headSha: string): string {
  return headSha;
}

/** SHA-256 hex of the distinct feedback ids, sorted and joined by newlines. */
export function reviewFingerprint(feedback: readonly Pick<ReviewFeedback, 'id'>[]): string {
  const ids = [...new Set(feedback.map((f) => f.id))].sort();
  return createHash('sha256').update(ids.join('\n')).digest('hex');
}
