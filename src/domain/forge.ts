/**
 * The forge contract: where a pushed branch becomes a pull request, and where CI results,
 * reviews and mergeability come back from. The orchestrator holds the forge token and talks to
 * the forge itself; the agent never does. A tracker kind whose host is a forge offers one
 * (`TrackerKind.createForge`). Failures are `TrackerError`s with the tracker's kinds, so the
 * retry table decides about them as it does for tracker calls.
 */

/** What a pull request should say; `title` and `body` are already rendered. */
export interface PullRequestSpec {
  /** The pushed branch (head). */
  branch: string;
  /** The branch it should merge into. */
  base: string;
  title: string;
  body: string;
  draft: boolean;
  /** Added when the pull request is opened (lowercased, never created). */
  labels: string[];
}

export interface PullRequestRef {
  number: number;
  url: string;
  headSha: string;
  state: 'open' | 'closed' | 'merged';
  /** null while the forge is still computing it. */
  mergeable: boolean | null;
  /** Whether this call opened it (false: an open one for the branch was found and updated). */
  opened: boolean;
}

export type CheckState = 'passing' | 'failing' | 'pending';

export interface CheckSummary {
  name: string;
  state: CheckState;
  /** The forge's own conclusion word (`failure`, `timed_out`, …), null while running. */
  conclusion: string | null;
  detailsUrl: string | null;
}

export interface CiStatus {
  /** No checks, or any still running and none failed → pending; any failed → failing. */
  state: CheckState;
  checks: CheckSummary[];
  /** The last lines of the first failing job's log, ANSI codes and timestamps stripped; [] when none. */
  logExcerpt: string[];
}

/** One piece of review feedback a turn should address. */
export interface ReviewFeedback {
  /** Stable across polls (`review-<id>` for a review's own body, the comment id otherwise). */
  id: string;
  author: string;
  body: string;
  /** File and lines for an inline comment; null for a review's own body. */
  path: string | null;
  line: number | null;
  endLine: number | null;
  createdAt: string;
}

export interface ReviewState {
  /** Approved by someone, with no newer request for changes. */
  approved: boolean;
  /** Feedback from non-bot reviews that request changes, outdated inline comments left out. */
  changesRequested: ReviewFeedback[];
}

export type MergeMethod = 'merge' | 'squash' | 'rebase';

export interface ForgeAdapter {
  /** The text that links a pull request to the tracker issue and closes it on merge; null when the forge cannot. */
  closingReference(issueId: string): string | null;
  /** Opens a pull request for `spec.branch`, or updates the open one (title, body): never a second one. */
  openOrUpdatePullRequest(spec: PullRequestSpec): Promise<PullRequestRef>;
  /** The pull request as it is now. Unknown number → tracker_not_found. */
  pullRequest(number: number): Promise<PullRequestRef>;
  /** CI of one commit, with up to `maxLogLines` of the first failing job's log. */
  ciStatus(sha: string, maxLogLines: number): Promise<CiStatus>;
  /** Reviews of a pull request. */
  reviews(number: number): Promise<ReviewState>;
  /** Merges when the head is still `sha` (else tracker_payload_error, nothing merged). */
  merge(number: number, method: MergeMethod, sha: string): Promise<void>;
}
