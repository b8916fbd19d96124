/**
 * What reviewers currently want, from a pull request's review history. Each person's word is
 * their latest review that takes a position (approve, request changes, or a dismissal that
 * withdraws one); a plain comment review after a request for changes does not lift it, as on
 * GitHub itself. Bots are not reviewers here: their reviews neither approve nor block, and
 * their comments never become work. Inline comments on lines that have since changed
 * (`position` null) are outdated and left out, so a turn is not spent on code that is gone.
 * Pure: the forge does the I/O.
 */
import type { ReviewFeedback } from '../../domain/forge.js';
import { payloadError } from './errors.js';

/** Review states that state a position; COMMENTED and PENDING do not. */
const DECISIVE = new Set(['APPROVED', 'CHANGES_REQUESTED', 'DISMISSED']);

/** One review as read. */
export interface RawReview {
  id: number;
  author: string;
  bot: boolean;
  state: string;
  body: string;
  submittedAt: string;
}

/** Reads one page of `GET …/pulls/{n}/reviews`; reviews of deleted users are left out. */
export function readReviews(data: unknown, what: string): RawReview[] {
  if (!Array.isArray(data)) throw payloadError(what, 'expected a list of reviews');
  const out: RawReview[] = [];
  for (const raw of data) {
    const review = raw as Record<string, unknown> | null;
    if (typeof review?.id !== 'number' || typeof review.state !== 'string') {
      throw payloadError(what, 'a review has no id or state');
    }
    const user = readUser(review.user);
    if (user === null) continue;
    out.push({
      id: review.id,
      ...user,
      state: review.state.toUpperCase(),
      body: typeof review.body === 'string' ? review.body : '',
      submittedAt: typeof review.submitted_at === 'string' ? review.submitted_at : '',
    });
  }
  return out;
}

/** Each non-bot reviewer's latest decisive review, in the order they were submitted. */
export function latestDecisions(reviews: readonly RawReview[]): RawReview[] {
  const ordered = reviews
    .filter((r) => !r.bot && DECISIVE.has(r.state) && r.submittedAt !== '')
    .sort((a, b) => a.submittedAt.localeCompare(b.submittedAt) || a.id - b.id);
  const latest = new Map<string, RawReview>();
  for (const review of ordered) {
    latest.delete(review.author.toLowerCase());
    latest.set(review.author.toLowerCase(), review);
  }
  return [...latest.values()];
}

/** Approved: someone's latest word is an approval and nobody's is a request for changes. */
export function isApproved(decisions: readonly RawReview[]): boolean {
  return (
    decisions.some((r) => r.state === 'APPROVED') && !decisions.some((r) => r.state === 'CHANGES_REQUESTED')
  );
}

/** The reviews whose author's latest word asks for changes. */
export function changeRequests(decisions: readonly RawReview[]): RawReview[] {
  return decisions.filter((r) => r.state === 'CHANGES_REQUESTED');
}

/** A review's own text as feedback, or null when it says nothing. */
export function reviewBodyFeedback(review: RawReview): ReviewFeedback | null {
  if (review.body.trim() === '') return null;
  return {
    id: `review-${review.id}`,
    author: review.author,
    body: review.body,
    path: null,
    line: null,
    endLine: null,
    createdAt: review.submittedAt,
  };
}

/**
 * Inline comments of one review page as feedback: bots' and outdated ones left out. `line` is
 * the first line of the range and `endLine` its last (equal for a one-line comment); when the
 * answer lacks current lines, the original ones stand in.
 */
export function readReviewComments(data: unknown, what: string): ReviewFeedback[] {
  if (!Array.isArray(data)) throw payloadError(what, 'expected a list of review comments');
  const out: ReviewFeedback[] = [];
  for (const raw of data) {
    const comment = raw as Record<string, unknown> | null;
    if (typeof comment?.id !== 'number' || typeof comment.path !== 'string') {
      throw payloadError(what, 'a review comment has no id or path');
    }
    const user = readUser(comment.user);
    if (user === null || user.bot || isOutdated(comment)) continue;
    const end = numberOrNull(comment.line) ?? numberOrNull(comment.original_line);
    const start = numberOrNull(comment.start_line) ?? numberOrNull(comment.original_start_line) ?? end;
    out.push({
      id: String(comment.id),
      author: user.author,
      body: typeof comment.body === 'string' ? comment.body : '',
      path: comment.path,
      line: start,
      endLine: end,
      createdAt: typeof comment.created_at === 'string' ? comment.created_at : '',
    });
  }
  return out;
}

/** GitHub nulls `position` once the commented line is gone from the diff. */
function isOutdated(comment: Record<string, unknown>): boolean {
  if ('position' in comment) return comment.position === null;
  return comment.line === null;
}

function readUser(value: unknown): { author: string; bot: boolean } | null {
  const user = value as { login?: unknown; type?: unknown } | null | undefined;
  if (typeof user?.login !== 'string' || user.login === '') return null;
  return { author: user.login, bot: user.type === 'Bot' || user.login.endsWith('[bot]') };
}

function numberOrNull(value: unknown): number | null {
  return typeof value === 'number' ? value : null;
}
