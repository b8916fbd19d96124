/**
 * The GitHub Issues tracker over the REST API (Octokit with its throttling and retry
 * plugins). States are labels (see normalise.ts), so a transition swaps state labels and
 * closes or reopens the issue when the target demands it; labels are never created on the
 * fly, because a typo in a workflow would otherwise litter the repository with new labels.
 *
 * Polling is what costs: every GET is conditional (conditional-fetch.ts), listings page
 * through Link headers up to a cap, and blockers are fetched only for issues whose
 * dependency summary says they have some. Rate limits are waited out by the throttling
 * plugin only within a bound; beyond it the request fails as a retryable tracker_api_error,
 * so a tick never hangs on a reset an hour away and never spins on one a second away.
 */
import type { Octokit } from '@octokit/rest';
import { TrackerError } from '../../domain/errors.js';
import type { BlockerRef, Issue, IssueComment, ParentRef } from '../../domain/issue.js';
import type { IssueStateReading, TrackerAdapter } from '../../domain/tracker.js';
import { configuredState } from '../states.js';
import { callGithub, createGithubClient, type GithubClientOptions, readPages } from './client.js';
import type { ConditionalStats } from './conditional-fetch.js';
import type { GithubTrackerConfig } from './config.js';
import { payloadError } from './errors.js';
import {
  type GithubStates,
  type RawIssue,
  readBlocker,
  readComments,
  readRawIssue,
  readRawIssues,
  stateOf,
  stateOrder,
  toIssue,
} from './normalise.js';

/** Knobs for tests and embedding; production uses the defaults (see client.ts). */
export type GithubTrackerOptions = GithubClientOptions;

/** A TrackerAdapter over one repository's issues. */
export class GithubTracker implements TrackerAdapter {
  /** Requests sent and 304s served from the cache, for tests and benchmarks. */
  readonly stats: ConditionalStats;
  private readonly octokit: Octokit;
  private readonly project: string;
  private readonly active: Set<string>;
  private readonly terminal: Set<string>;
  private readonly stateLabels: Set<string>;
  private readonly warn: (message: string) => void;
  /** The token's own login once `tracker.assignee: me` asked for it; null before. */
  private ownLogin: string | null = null;
  /** A malformed record in a listing: left out of the result, with a warning naming it. */
  private readonly leaveOut = (error: TrackerError) => this.warn(`${error.message}; that issue is left out`);

  constructor(
    private readonly config: GithubTrackerConfig,
    private readonly states: GithubStates,
    options: GithubTrackerOptions = {},
  ) {
    this.project = `${config.owner}/${config.repo}`;
    this.active = new Set(states.activeStates.map(lower));
    this.terminal = new Set(states.terminalStates.map(lower));
    this.stateLabels = new Set(stateOrder(states).map(lower));
    this.warn = options.warn ?? ((message) => process.emitWarning(message, { code: 'TRACKER_WARNING' }));
    const client = createGithubClient(config, options);
    this.octokit = client.octokit;
    this.stats = client.stats;
  }

  async fetchCandidateIssues(): Promise<Issue[]> {
    const what = 'fetch candidates';
    const assignee = await this.assigneeLogin(what);
    const raws =
      this.queryFilterText === ''
        ? readRawIssues(
            await this.list(what, 'GET /repos/{owner}/{repo}/issues', {
              state: 'open',
              sort: 'created',
              direction: 'asc',
              ...(assignee === null ? {} : { assignee }),
            }),
            what,
            this.leaveOut,
          )
        : await this.search(what, assignee);
    const out: Issue[] = [];
    for (const raw of raws) {
      if (raw.isPullRequest || !this.isCandidate(stateOf(raw, this.states))) continue;
      const blockers = raw.blockedByCount > 0 ? await this.blockers(raw.number, what) : [];
      out.push(toIssue(raw, this.project, this.states, blockers));
    }
    return out;
  }

  async fetchIssueById(id: string): Promise<Issue> {
    const what = `fetch issue ${id}`;
    const n = this.number(id, what);
    const raw = await this.getIssue(n, what);
    const [comments, blockers, parent] = [
      await this.comments(n, what),
      await this.blockers(n, what),
      await this.parent(n, what),
    ];
    return { ...toIssue(raw, this.project, this.states, blockers), comments, parent };
  }

  async fetchIssuesByStates(states: readonly string[]): Promise<Issue[]> {
    if (states.length === 0) return [];
    const what = 'fetch issues by states';
    const wanted = new Set(states.map(lower));
    const closedToo = [...wanted].some((s) => this.terminal.has(s) || !this.active.has(s));
    const raws = readRawIssues(
      await this.list(what, 'GET /repos/{owner}/{repo}/issues', {
        state: closedToo ? 'all' : 'open',
        sort: 'created',
        direction: 'asc',
      }),
      what,
      this.leaveOut,
    );
    return raws
      .filter((raw) => !raw.isPullRequest && wanted.has(lower(stateOf(raw, this.states))))
      .map((raw) => toIssue(raw, this.project, this.states));
  }

  async fetchIssueStatesByIds(ids: readonly string[]): Promise<IssueStateReading[]> {
    const out: IssueStateReading[] = [];
    for (const id of new Set(ids)) {
      if (!/^\d+$/.test(id)) continue;
      const what = `fetch state of issue ${id}`;
      let raw: RawIssue;
      try {
        raw = await this.getIssue(Number(id), what);
      } catch (error) {
        if (error instanceof TrackerError && error.kind === 'tracker_not_found') continue;
        throw error;
      }
      out.push({ id, identifier: id, state: stateOf(raw, this.states) });
    }
    return out;
  }

  fetchIssueStatesByIdentifiers(identifiers: readonly string[]): Promise<IssueStateReading[]> {
    return this.fetchIssueStatesByIds(identifiers.map((i) => i.replace(/^.*#/, '')));
  }

  async fetchIssueComments(id: string): Promise<IssueComment[]> {
    const what = `fetch comments of issue ${id}`;
    const n = this.number(id, what);
    await this.getIssue(n, what);
    return this.comments(n, what);
  }

  async transitionIssue(id: string, state: string): Promise<void> {
    const what = `transition issue ${id} to "${state}"`;
    const target = configuredState(this.states, state);
    const n = this.number(id, what);
    const raw = await this.getIssue(n, what);
    const label = await this.repoLabel(target, what);
    for (const current of raw.labels) {
      if (this.stateLabels.has(lower(current)) && lower(current) !== lower(target)) {
        try {
          await this.call(what, () =>
            this.octokit.request('DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}', {
              ...this.repoParams,
              issue_number: n,
              name: current,
            }),
          );
        } catch (error) {
          if (!(error instanceof TrackerError && error.kind === 'tracker_not_found')) throw error;
        }
      }
    }
    if (!raw.labels.some((l) => lower(l) === lower(target))) {
      await this.call(what, () =>
        this.octokit.request('POST /repos/{owner}/{repo}/issues/{issue_number}/labels', {
          ...this.repoParams,
          issue_number: n,
          labels: [label],
        }),
      );
    }
    const closes = this.terminal.has(lower(target));
    if (closes && raw.state === 'open') {
      await this.patchState(n, { state: 'closed', state_reason: 'completed' }, what);
    } else if (!closes && raw.state === 'closed') {
      await this.patchState(n, { state: 'open' }, what);
    }
  }

  async commentIssue(id: string, body: string): Promise<void> {
    const what = `comment on issue ${id}`;
    const n = this.number(id, what);
    await this.call(what, () =>
      this.octokit.request('POST /repos/{owner}/{repo}/issues/{issue_number}/comments', {
        ...this.repoParams,
        issue_number: n,
        body,
      }),
    );
  }

  async addLabel(id: string, label: string): Promise<void> {
    const what = `add label "${label}" to issue ${id}`;
    const wanted = label.trim().toLowerCase();
    if (wanted === '') throw new TrackerError('tracker_payload_error', `${what}: a label must not be empty`);
    const n = this.number(id, what);
    const raw = await this.getIssue(n, what);
    if (raw.labels.some((l) => lower(l) === wanted)) return;
    const name = await this.repoLabel(wanted, what);
    await this.call(what, () =>
      this.octokit.request('POST /repos/{owner}/{repo}/issues/{issue_number}/labels', {
        ...this.repoParams,
        issue_number: n,
        labels: [name],
      }),
    );
  }

  // ------------------------------------------------------------------ helpers

  private get repoParams(): { owner: string; repo: string } {
    return { owner: this.config.owner, repo: this.config.repo };
  }

  private get queryFilterText(): string {
    return this.config.queryFilter.trim();
  }

  private isCandidate(state: string): boolean {
    const key = lower(state);
    return !this.terminal.has(key) && (this.active.size === 0 || this.active.has(key));
  }

  /** The issue number in an id; anything else cannot exist here. */
  private number(id: string, what: string): number {
    if (!/^\d+$/.test(id))
      throw new TrackerError('tracker_not_found', `${what}: no issue "${id}" in ${this.project}`);
    return Number(id);
  }

  private call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    return callGithub(what, fn);
  }

  private async getIssue(n: number, what: string): Promise<RawIssue> {
    const response = await this.call(what, () =>
      this.octokit.request('GET /repos/{owner}/{repo}/issues/{issue_number}', {
        ...this.repoParams,
        issue_number: n,
      }),
    );
    const raw = readRawIssue(response.data, what);
    if (raw.isPullRequest) throw new TrackerError('tracker_not_found', `${what}: #${n} is a pull request`);
    return raw;
  }

  private async patchState(n: number, body: Record<string, string>, what: string): Promise<void> {
    await this.call(what, () =>
      this.octokit.request('PATCH /repos/{owner}/{repo}/issues/{issue_number}', {
        ...this.repoParams,
        issue_number: n,
        ...body,
      }),
    );
  }

  /** The repository's spelling of a label; a label the repository lacks is a payload error, never created. */
  private async repoLabel(name: string, what: string): Promise<string> {
    try {
      const response = await this.call(what, () =>
        this.octokit.request('GET /repos/{owner}/{repo}/labels/{name}', { ...this.repoParams, name }),
      );
      const found = (response.data as { name?: unknown }).name;
      if (typeof found !== 'string') throw payloadError(what, 'a label has no name');
      return found;
    } catch (error) {
      if (error instanceof TrackerError && error.kind === 'tracker_not_found') {
        throw new TrackerError(
          'tracker_payload_error',
          `${what}: the label "${name}" does not exist in ${this.project}; create it first (labels are never created automatically)`,
        );
      }
      throw error;
    }
  }

  private async comments(n: number, what: string): Promise<IssueComment[]> {
    return readComments(
      await this.list(what, 'GET /repos/{owner}/{repo}/issues/{issue_number}/comments', { issue_number: n }),
      what,
    );
  }

  /** Issues blocking `n`; none when the server has no dependency API (404). */
  private async blockers(n: number, what: string): Promise<BlockerRef[]> {
    let items: unknown[];
    try {
      items = await this.list(
        what,
        'GET /repos/{owner}/{repo}/issues/{issue_number}/dependencies/blocked_by',
        {
          issue_number: n,
        },
      );
    } catch (error) {
      if (error instanceof TrackerError && error.kind === 'tracker_not_found') return [];
      throw error;
    }
    if (!Array.isArray(items)) throw payloadError(what, 'expected a list of issues');
    return items.map((item) => readBlocker(item, what, this.states));
  }

  /** The parent issue; null when it has none or the server has no sub-issue API (404). */
  private async parent(n: number, what: string): Promise<ParentRef | null> {
    try {
      const response = await this.call(what, () =>
        this.octokit.request('GET /repos/{owner}/{repo}/issues/{issue_number}/parent', {
          ...this.repoParams,
          issue_number: n,
        }),
      );
      const raw = readRawIssue(response.data, what);
      return { id: String(raw.number), identifier: String(raw.number) };
    } catch (error) {
      if (error instanceof TrackerError && error.kind === 'tracker_not_found') return null;
      throw error;
    }
  }

  /**
   * The login candidates must be assigned to; null = anyone's. `me` is the token's own user,
   * asked once (`GET /user`) and remembered: it cannot change while the token does not.
   */
  private async assigneeLogin(what: string): Promise<string | null> {
    const wanted = this.config.assignee;
    if (wanted === null || lower(wanted) !== 'me') return wanted;
    if (this.ownLogin === null) {
      const response = await this.call(`${what}: read the token's user`, () =>
        this.octokit.request('GET /user'),
      );
      const login = (response.data as { login?: unknown }).login;
      if (typeof login !== 'string' || login === '')
        throw payloadError(what, 'GET /user answered without a login');
      this.ownLogin = login;
    }
    return this.ownLogin;
  }

  /** Candidates through the search API, narrowed by `tracker.query_filter` (and the assignee). */
  private async search(what: string, assignee: string | null): Promise<RawIssue[]> {
    const byAssignee = assignee === null ? '' : ` assignee:${assignee}`;
    const q = `repo:${this.project} is:issue state:open${byAssignee} ${this.queryFilterText}`;
    const items: unknown[] = [];
    await this.pages(what, 'GET /search/issues', { q, sort: 'created', order: 'asc' }, (data) => {
      const page = data as { items?: unknown; incomplete_results?: unknown };
      if (!Array.isArray(page?.items)) throw payloadError(what, 'search results have no items');
      if (page.incomplete_results === true) this.warn(`${what}: the search answered with incomplete results`);
      items.push(...page.items);
    });
    return readRawIssues(items, what, this.leaveOut);
  }

  /** Every item of a listing endpoint, following Link headers up to the page cap. */
  private async list(what: string, route: string, params: Record<string, unknown>): Promise<unknown[]> {
    const items: unknown[] = [];
    await this.pages(what, route, { ...this.repoParams, ...params }, (data) => {
      if (!Array.isArray(data)) throw payloadError(what, 'expected a list');
      items.push(...data);
    });
    return items;
  }

  private pages(
    what: string,
    route: string,
    params: Record<string, unknown>,
    take: (data: unknown) => void,
  ): Promise<void> {
    return readPages(this.octokit, what, route, params, take, {
      maxPages: this.config.maxPages,
      capName: 'github.max_pages',
      warn: this.warn,
    });
  }
}

function lower(value: string): string {
  return value.toLowerCase();
}
