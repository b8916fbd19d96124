/**
 * The GitHub forge: pull requests for pushed branches, CI from check runs, reviews and the
 * merge, through the same client as the tracker (client.ts) so rate limits, retries,
 * conditional reads and error kinds behave alike. The orchestrator calls it with its own
 * token; agents never do.
 *
 * The traps it avoids: a second pull request for one branch (the open one is looked up first,
 * and a lost race against another caller is recognised by GitHub's refusal and answered with
 * the winner); labels created by accident (GitHub's labels endpoint creates unknown names, so
 * each is looked up and a missing one is skipped with a warning); a merge of a head nobody
 * reviewed (the merge names the head it expects, and a moved head is refused, not retried).
 */
import type { Octokit } from '@octokit/rest';
import { TrackerError } from '../../domain/errors.js';
import type {
  CiStatus,
  ForgeAdapter,
  MergeMethod,
  PullRequestRef,
  PullRequestSpec,
  ReviewFeedback,
  ReviewState,
} from '../../domain/forge.js';
import type { TrackerSettings } from '../../domain/tracker.js';
import type { TrackerContext } from '../registry.js';
import { firstFailingActionsRun, logTail, type RawCheckRun, readCheckRuns, summarise } from './checks.js';
import {
  callGithub,
  createGithubClient,
  type GithubClientOptions,
  type PageLimits,
  readList,
  readPages,
} from './client.js';
import type { ConditionalStats } from './conditional-fetch.js';
import type { GithubTrackerConfig } from './config.js';
import { classifyFailure } from './errors.js';
import { readJobLog } from './job-log.js';
import { apiMessage, isDuplicatePull, type RawPull, readPull, toRef } from './pulls.js';
import {
  changeRequests,
  isApproved,
  latestDecisions,
  type RawReview,
  readReviewComments,
  readReviews,
  reviewBodyFeedback,
} from './reviews.js';
import { requireGithubConfig } from './settings.js';

/** Merge refusals that mean "not now, not like this" (not mergeable, head moved): the caller must look again. */
const MERGE_REFUSED = new Set([405, 409]);

/** A ForgeAdapter over one repository. */
export class GithubForge implements ForgeAdapter {
  /** Requests sent and 304s served from the cache, for tests and benchmarks. */
  readonly stats: ConditionalStats;
  private readonly octokit: Octokit;
  private readonly download: typeof fetch;
  private readonly warn: (message: string) => void;
  private readonly limits: PageLimits;

  constructor(
    private readonly config: GithubTrackerConfig,
    options: GithubClientOptions = {},
  ) {
    const client = createGithubClient(config, options);
    this.octokit = client.octokit;
    this.stats = client.stats;
    this.download = client.download;
    this.warn = options.warn ?? ((message) => process.emitWarning(message, { code: 'TRACKER_WARNING' }));
    this.limits = { maxPages: config.maxPages, capName: 'github.max_pages', warn: this.warn };
  }

  closingReference(issueId: string): string | null {
    // The forge is the tracker's own repository, so the short form names the issue.
    return /^\d+$/.test(issueId) ? `Closes #${issueId}` : null;
  }

  async openOrUpdatePullRequest(spec: PullRequestSpec): Promise<PullRequestRef> {
    const what = `open a pull request for branch "${spec.branch}"`;
    const found = await this.openPullOf(spec.branch, what);
    if (found !== undefined) return this.update(found, spec, what);
    let created: RawPull;
    try {
      const response = await this.octokit.request('POST /repos/{owner}/{repo}/pulls', {
        ...this.repoParams,
        head: spec.branch,
        base: spec.base,
        title: spec.title,
        body: spec.body,
        draft: spec.draft,
      });
      created = readPull(response.data, what);
    } catch (error) {
      // Another caller opened it between our look and our write: theirs is the one.
      if (isDuplicatePull(error)) {
        const winner = await this.openPullOf(spec.branch, what);
        if (winner !== undefined) return this.update(winner, spec, what);
      }
      throw classifyFailure(error, what);
    }
    await this.addLabels(created.number, spec.labels, what);
    return toRef(created, true);
  }

  async pullRequest(number: number): Promise<PullRequestRef> {
    return toRef(await this.getPull(number, `read pull request #${number}`), false);
  }

  async ciStatus(sha: string, maxLogLines: number): Promise<CiStatus> {
    const what = `read the checks of commit ${sha}`;
    const runs: RawCheckRun[] = [];
    let total = 0;
    await readPages(
      this.octokit,
      what,
      'GET /repos/{owner}/{repo}/commits/{ref}/check-runs',
      { ...this.repoParams, ref: sha, filter: 'latest' },
      (data) => {
        runs.push(...readCheckRuns(data, what));
        const count = (data as { total_count?: unknown }).total_count;
        if (typeof count === 'number') total = Math.max(total, count);
      },
      this.limits,
    );
    const summary = summarise(runs);
    // Runs left unread may be failing: a cut listing can say pending or failing, never passing.
    const state = summary.state === 'passing' && runs.length < total ? 'pending' : summary.state;
    const logExcerpt = state === 'failing' && maxLogLines > 0 ? await this.failingLog(runs, maxLogLines) : [];
    return { state, checks: summary.checks, logExcerpt };
  }

  async reviews(number: number): Promise<ReviewState> {
    const what = `read the reviews of pull request #${number}`;
    const reviews: RawReview[] = [];
    await readPages(
      this.octokit,
      what,
      'GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews',
      { ...this.repoParams, pull_number: number },
      (data) => reviews.push(...readReviews(data, what)),
      this.limits,
    );
    const decisions = latestDecisions(reviews);
    const changesRequested: ReviewFeedback[] = [];
    for (const review of changeRequests(decisions)) {
      const own = reviewBodyFeedback(review);
      if (own !== null) changesRequested.push(own);
      const comments = await readList(
        this.octokit,
        `read the comments of review ${review.id} on pull request #${number}`,
        'GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/comments',
        { ...this.repoParams, pull_number: number, review_id: review.id },
        this.limits,
      );
      changesRequested.push(...readReviewComments(comments, what));
    }
    return { approved: isApproved(decisions), changesRequested };
  }

  async merge(number: number, method: MergeMethod, sha: string): Promise<void> {
    const what = `merge pull request #${number} (${method}) at ${sha}`;
    let merged: unknown;
    try {
      const response = await this.octokit.request('PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge', {
        ...this.repoParams,
        pull_number: number,
        sha,
        merge_method: method,
        // A refusal is an answer, not a hiccup; and a merge is never sent twice blind (the
        // caller re-reads the pull request instead).
        request: { retries: 0 },
      });
      merged = (response.data as { merged?: unknown } | null)?.merged;
    } catch (error) {
      const status = (error as { status?: unknown } | null)?.status;
      if (typeof status === 'number' && MERGE_REFUSED.has(status)) {
        throw new TrackerError(
          'tracker_payload_error',
          `${what}: not merged (${status}: ${apiMessage(error)})`,
          {
            cause: error,
          },
        );
      }
      throw classifyFailure(error, what);
    }
    if (merged !== true) throw new TrackerError('tracker_payload_error', `${what}: GitHub did not merge it`);
  }

  // ------------------------------------------------------------------ helpers

  private get repoParams(): { owner: string; repo: string } {
    return { owner: this.config.owner, repo: this.config.repo };
  }

  private async getPull(number: number, what: string): Promise<RawPull> {
    const response = await callGithub(what, () =>
      this.octokit.request('GET /repos/{owner}/{repo}/pulls/{pull_number}', {
        ...this.repoParams,
        pull_number: number,
      }),
    );
    return readPull(response.data, what);
  }

  /** The open pull request whose head is `branch` of this repository, if any. */
  private async openPullOf(branch: string, what: string): Promise<RawPull | undefined> {
    const pulls = await readList(
      this.octokit,
      what,
      'GET /repos/{owner}/{repo}/pulls',
      { ...this.repoParams, head: `${this.config.owner}:${branch}`, state: 'open' },
      this.limits,
    );
    return pulls[0] === undefined ? undefined : readPull(pulls[0], what);
  }

  /** Brings an open pull request's title and body up to date; its labels and draft flag are left alone. */
  private async update(pull: RawPull, spec: PullRequestSpec, what: string): Promise<PullRequestRef> {
    let current = pull;
    if (pull.title !== spec.title || pull.body !== spec.body) {
      const response = await callGithub(what, () =>
        this.octokit.request('PATCH /repos/{owner}/{repo}/pulls/{pull_number}', {
          ...this.repoParams,
          pull_number: pull.number,
          title: spec.title,
          body: spec.body,
        }),
      );
      current = readPull(response.data, what);
    }
    // Listings leave `mergeable` out; the single read has it (or null while GitHub computes it).
    if (!current.mergeableKnown) current = await this.getPull(pull.number, what);
    return toRef(current, false);
  }

  /** Adds the labels the repository has; the rest are skipped with a warning, never created. */
  private async addLabels(number: number, labels: readonly string[], what: string): Promise<void> {
    const names: string[] = [];
    for (const wanted of new Set(labels.map((l) => l.trim().toLowerCase()).filter((l) => l !== ''))) {
      try {
        const response = await callGithub(what, () =>
          this.octokit.request('GET /repos/{owner}/{repo}/labels/{name}', {
            ...this.repoParams,
            name: wanted,
          }),
        );
        const name = (response.data as { name?: unknown } | null)?.name;
        names.push(typeof name === 'string' ? name : wanted);
      } catch (error) {
        if (!(error instanceof TrackerError && error.kind === 'tracker_not_found')) throw error;
        this.warn(
          `${what}: the label "${wanted}" does not exist in ${this.config.owner}/${this.config.repo}; skipped (labels are never created automatically)`,
        );
      }
    }
    if (names.length === 0) return;
    await callGithub(what, () =>
      this.octokit.request('POST /repos/{owner}/{repo}/issues/{issue_number}/labels', {
        ...this.repoParams,
        issue_number: number,
        labels: names,
      }),
    );
  }

  /** The tail of the first failing Actions job's log; [] when there is none or it cannot be read. */
  private async failingLog(runs: readonly RawCheckRun[], maxLogLines: number): Promise<string[]> {
    const run = firstFailingActionsRun(runs);
    if (run === undefined) return [];
    try {
      const log = await readJobLog(this.octokit, this.download, this.repoParams, run.id);
      if (log.truncated) {
        this.warn(
          `the log of job ${run.id} ("${run.name}") is over 1 MiB; the excerpt ends where the read stopped`,
        );
      }
      return logTail(log.text, maxLogLines);
    } catch (error) {
      // The verdict stands without its excerpt: an expired or unreadable log must not hide a failure.
      if (!(error instanceof TrackerError)) throw error;
      this.warn(`${error.message}; the CI failure is reported without a log excerpt`);
      return [];
    }
  }
}

/** The forge for a workflow's github tracker settings (what `createForge` of the kind builds). */
export function createGithubForge(settings: TrackerSettings, context?: TrackerContext): GithubForge {
  return new GithubForge(requireGithubConfig(settings), context === undefined ? {} : { warn: context.warn });
}
