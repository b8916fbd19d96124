/**
 * What a fix turn is told: the template variables `ci_failure`, `review_comments` and
 * `merge_conflict`, in the snake_case a template author writes and as plain JSON values. All
 * three names are always present (null when the turn is not that kind's fix) because strict
 * variables turn a missing name into an error; `validate` renders with the samples so every
 * `{% if ci_failure %}` branch is exercised.
 */
import type { CiStatus, ReviewFeedback } from '../domain/forge.js';

/** One failing check as a template sees it. */
export interface FailingCheckVariable {
  name: string;
  /** The forge's conclusion word (`failure`, `timed_out`, …); null when it gave none. */
  conclusion: string | null;
  /** The check's details page; null when the forge has none. */
  url: string | null;
}

/** `ci_failure`: the red CI a fix turn should make green. */
export interface CiFailureVariables {
  head_sha: string;
  /** This fix turn's number (1 for the first since CI was last green). */
  attempt: number;
  max_retries: number;
  /** Failing checks only, in the forge's order. */
  checks: FailingCheckVariable[];
  /** The last lines of the first failing job's log, at most `max_log_lines`. */
  log_lines: string[];
  /** `log_lines` joined by newlines. */
  log: string;
}

/** One review feedback item as a template sees it; `path` is null for a review's own body. */
export interface ReviewCommentVariable {
  author: string;
  body: string;
  path: string | null;
  line: number | null;
  end_line: number | null;
}

/** `review_comments`: the requested changes a fix turn should address. */
export interface ReviewCommentsVariables {
  /** This fix turn's number (1 for the first of this round of review). */
  attempt: number;
  max_turns: number;
  /** Review bodies first, then inline comments by path and line. */
  comments: ReviewCommentVariable[];
  /** The same comments as a readable list, one `- path:line — author: body` item each. */
  text: string;
}

/** `merge_conflict`: the branch no longer merges into its base. */
export interface MergeConflictVariables {
  base: string;
  head_sha: string;
  attempt: number;
  max_retries: number;
}

/** The reaction variables of one turn; at most one is non-null. */
export interface ReactionVariables {
  ci_failure: CiFailureVariables | null;
  review_comments: ReviewCommentsVariables | null;
  merge_conflict: MergeConflictVariables | null;
}

/** The top-level names reactions add to a prompt template. */
export const REACTION_VARIABLE_NAMES = ['ci_failure', 'review_comments', 'merge_conflict'] as const;

/** The reaction variables of a turn that is no reaction's fix. */
export const NO_REACTION_VARIABLES: Readonly<ReactionVariables> = Object.freeze({
  ci_failure: null,
  review_comments: null,
  merge_conflict: null,
});

/** `ci_failure` for a failing CI of `headSha`; the log keeps its last `maxLogLines` lines. */
export function ciFailureVariables(
  ci: CiStatus,
  headSha: string,
  attempt: number,
  settings: { maxRetries: number; maxLogLines: number },
): CiFailureVariables {
  // slice(-0) would keep everything: a limit of 0 means no log at all.
  const logLines = settings.maxLogLines > 0 ? ci.logExcerpt.slice(-settings.maxLogLines) : [];
  return {
    head_sha: headSha,
    attempt,
    max_retries: settings.maxRetries,
    checks: ci.checks
      .filter((c) => c.state === 'failing')
      .map((c) => ({ name: c.name, conclusion: c.conclusion, url: c.detailsUrl })),
    log_lines: logLines,
    log: logLines.join('\n'),
  };
}

/** `review_comments` for the feedback that requests changes. */
export function reviewCommentsVariables(
  feedback: readonly ReviewFeedback[],
  attempt: number,
  settings: { maxContinuationTurns: number },
): ReviewCommentsVariables {
  const comments = [...feedback].sort(feedbackOrder).map(
    (f): ReviewCommentVariable => ({
      author: f.author,
      body: f.body.trim(),
      path: f.path,
      line: f.line,
      end_line: f.endLine,
    }),
  );
  return {
    attempt,
    max_turns: settings.maxContinuationTurns,
    comments,
    text: comments.map(commentItem).join('\n'),
  };
}

/** `merge_conflict` for a head that does not merge into `base`. */
export function mergeConflictVariables(
  base: string,
  headSha: string,
  attempt: number,
  settings: { maxRetries: number },
): MergeConflictVariables {
  return { base, head_sha: headSha, attempt, max_retries: settings.maxRetries };
}

/** Review bodies (no path) first, then by path and line; time and id keep the order stable. */
function feedbackOrder(a: ReviewFeedback, b: ReviewFeedback): number {
  if ((a.path === null) !== (b.path === null)) return a.path === null ? -1 : 1;
  return (
    compare(a.path ?? '', b.path ?? '') ||
    compare(a.line ?? -1, b.line ?? -1) ||
    compare(a.createdAt, b.createdAt) ||
    compare(a.id, b.id)
  );
}

// Code-unit order, not the locale's: the same feedback must read the same on every host.
function compare<T extends string | number>(a: T, b: T): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function commentItem(c: ReviewCommentVariable): string {
  const head = c.path === null ? '' : `${location(c)} — `;
  // Continuation lines are indented so a multi-line body stays inside its list item.
  return `- ${head}${c.author}: ${c.body.split('\n').join('\n  ')}`;
}

function location(c: ReviewCommentVariable): string {
  if (c.line === null) return c.path ?? '';
  const end = c.end_line !== null && c.end_line !== c.line ? `-${c.end_line}` : '';
  return `${c.path}:${c.line}${end}`;
}

const SAMPLE_SETTINGS = { maxRetries: 2, maxContinuationTurns: 3, maxLogLines: 50 };
const SAMPLE_SHA = '3f9c2a7e5b1d4c8f9a0b6e2d7c4f1a8b5e3d9c20';

/** Realistic values for every reaction variable, rendered by `validate` to exercise each branch. */
export const SAMPLE_REACTION_VARIABLES: Readonly<ReactionVariables> = Object.freeze({
  ci_failure: ciFailureVariables(
    {
      state: 'failing',
      checks: [
        {
          name: 'test (node 20)',
          state: 'failing',
          conclusion: 'failure',
          detailsUrl: 'https://forge.example.com/acme/api/actions/runs/901/job/1',
        },
        { name: 'lint', state: 'passing', conclusion: 'success', detailsUrl: null },
      ],
      logExcerpt: [
        'FAIL test/webhooks/retry.test.ts > retries a timed-out delivery',
        'AssertionError: expected 4 attempts, got 5',
        '  at test/webhooks/retry.test.ts:42:18',
      ],
    },
    SAMPLE_SHA,
    1,
    SAMPLE_SETTINGS,
  ),
  review_comments: reviewCommentsVariables(
    [
      {
        id: 'PRRC_sample2',
        author: 'lee',
        body: 'Cap the delay here; 2^attempt grows past an hour by attempt 12.',
        path: 'src/webhooks/retry.ts',
        line: 18,
        endLine: 21,
        createdAt: '2025-03-05T10:04:00Z',
      },
      {
        id: 'review-sample1',
        author: 'lee',
        body: 'Close, but the backoff needs a cap and the attempts need recording.',
        path: null,
        line: null,
        endLine: null,
        createdAt: '2025-03-05T10:05:00Z',
      },
    ],
    1,
    SAMPLE_SETTINGS,
  ),
  merge_conflict: mergeConflictVariables('main', SAMPLE_SHA, 1, SAMPLE_SETTINGS),
});
