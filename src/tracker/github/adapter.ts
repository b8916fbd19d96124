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
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import { Octokit } from '@octokit/rest';
import { TrackerError } from '../../domain/errors.js';
import type { BlockerRef, Issue, IssueComment, ParentRef } from '../../domain/issue.js';
import type { IssueStateReading, TrackerAdapter } from '../../domain/tracker.js';
import { rateLimitRetryMs } from '../http/retry-after.js';
import { type ConditionalStats, conditionalFetch } from './conditional-fetch.js';
import type { GithubTrackerConfig } from './config.js';
import { classifyFailure, payloadError } from './errors.js';
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

const PER_PAGE = 100;
const REQUEST_TIMEOUT_MS = 30_000;
/** Rate-limit retries the throttling plugin may make for one request. */
const MAX_RATE_LIMIT_RETRIES = 2;
const API_VERSION = '2022-11-28';

/** Knobs for tests and embedding; production uses the defaults. */
export interface GithubTrackerOptions {
  /** Receives operator warnings (page cap reached, incomplete search results). */
  warn?: (message: string) => void;
  /** Gap between writes; defaults to the config's `minWriteIntervalMs`. */
  writeIntervalMs?: number;
  /** Gap between searches (the search API allows 30 a minute). */
  searchIntervalMs?: number;
  /** Base of the retry plugin's backoff for 5xx and transport failures (n² × base). */
  retryBaseMs?: number;
  /** Transport for tests. */
  fetch?: typeof fetch;
}

type Response = { data: unknown; headers: Record<string, string | number | undefined> };
type Limiter = {
  schedule: (options: unknown, fn: (...args: unknown[]) => unknown, ...args: unknown[]) => unknown;
};

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
    const transport = conditionalFetch(config.etagCacheSize, REQUEST_TIMEOUT_MS, options.fetch ?? fetch);
    this.stats = transport.stats;
    const maxWaitS = config.maxRateLimitWaitMs / 1000;
    const onLimit = (retryAfterS: number, _options: unknown, _client: unknown, retryCount: number) =>
      retryCount < MAX_RATE_LIMIT_RETRIES && retryAfterS <= maxWaitS;
    const writes = spaced(options.writeIntervalMs ?? config.minWriteIntervalMs);
    const Client = Octokit.plugin(throttling, retry);
    this.octokit = new Client({
      auth: config.token,
      baseUrl: config.endpoint,
      userAgent: 'workflow-orchestrator',
      request: { fetch: transport.fetch },
      headers: { 'x-github-api-version': API_VERSION },
      log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
      throttle: {
        onRateLimit: onLimit,
        onSecondaryRateLimit: onLimit,
        write: writes,
        notifications: writes,
        search: spaced(options.searchIntervalMs ?? 2000),
      },
      retry: {
        retryAfterBaseValue: options.retryBaseMs ?? 1000,
        doNotRetry: [304, 400, 401, 403, 404, 410, 422, 429, 451],
      },
    } as unknown as ConstructorParameters<typeof Octokit>[0]);
    // A plain 429 (no rate-limit headers the throttling plugin reads) is waited out by its Retry-After.
    this.octokit.hook.wrap('request', async (request, requestOptions) => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await request(requestOptions);
        } catch (error) {
          const response = (error as { status?: number; response?: { headers?: Record<string, unknown> } })
            .response;
          const waitMs = rateLimitRetryMs(
            {
              status: (error as { status?: number }).status ?? 0,
              retryAfter: response?.headers?.['retry-after'] as string | undefined,
            },
            attempt,
            { maxRetries: MAX_RATE_LIMIT_RETRIES, maxWaitMs: config.maxRateLimitWaitMs },
          );
          if (waitMs === null) throw error;
          await new Promise((resolve) => setTimeout(resolve, waitMs));
        }
      }
    });
  }

  async fetchCandidateIssues(): Promise<Issue[]> {
    const what = 'fetch candidates';
    const raws =
      this.queryFilterText === ''
        ? readRawIssues(
            await this.list(what, 'GET /repos/{owner}/{repo}/issues', {
              state: 'open',
              sort: 'created',
              direction: 'asc',
            }),
            what,
            this.leaveOut,
          )
        : await this.search(what);
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
    const target = this.configuredState(state);
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

  /** The configured spelling of `state`; anything else is a payload error. */
  private configuredState(state: string): string {
    const wanted = lower(state.trim());
    const known = [...stateOrder(this.states), this.states.inProgressState].filter(
      (s): s is string => typeof s === 'string' && s.trim() !== '',
    );
    const match = known.find((s) => lower(s.trim()) === wanted);
    if (match === undefined || wanted === '') {
      throw new TrackerError(
        'tracker_payload_error',
        `state "${state}" is not a configured state (${[...new Set(known)].join(', ')})`,
      );
    }
    return match.trim();
  }

  /** The issue number in an id; anything else cannot exist here. */
  private number(id: string, what: string): number {
    if (!/^\d+$/.test(id))
      throw new TrackerError('tracker_not_found', `${what}: no issue "${id}" in ${this.project}`);
    return Number(id);
  }

  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw classifyFailure(error, what);
    }
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

  /** Candidates through the search API, narrowed by `tracker.query_filter`. */
  private async search(what: string): Promise<RawIssue[]> {
    const q = `repo:${this.project} is:issue state:open ${this.queryFilterText}`;
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

  private async pages(
    what: string,
    route: string,
    params: Record<string, unknown>,
    take: (data: unknown) => void,
  ): Promise<void> {
    let response = (await this.call(what, () =>
      this.octokit.request(route, { ...params, per_page: PER_PAGE }),
    )) as Response;
    take(response.data);
    for (let page = 1; ; page++) {
      const next = nextLink(response.headers.link);
      if (next === null) return;
      if (page >= this.config.maxPages) {
        this.warn(
          `${what}: stopped after ${page} page${page === 1 ? '' : 's'} (github.max_pages); later items were not read`,
        );
        return;
      }
      response = (await this.call(what, () =>
        this.octokit.request({ method: 'GET', url: next }),
      )) as Response;
      take(response.data);
    }
  }
}

/** The `rel="next"` URL of a Link header, or null. */
export function nextLink(header: string | number | undefined): string | null {
  if (typeof header !== 'string') return null;
  for (const part of header.split(',')) {
    const match = /<([^>]+)>\s*;\s*rel="?next"?/.exec(part);
    if (match?.[1] !== undefined) return match[1];
  }
  return null;
}

/** A stand-in for a Bottleneck group: jobs start at least `gapMs` apart, one at a time. */
function spaced(gapMs: number): { key: () => Limiter } {
  let chain: Promise<unknown> = Promise.resolve();
  let nextAt = 0;
  const limiter: Limiter = {
    schedule(_options, fn, ...args) {
      const turn = chain.then(async () => {
        const waitMs = nextAt - Date.now();
        if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
        nextAt = Date.now() + gapMs;
      });
      chain = turn;
      return turn.then(() => fn(...args));
    },
  };
  return { key: () => limiter };
}

function lower(value: string): string {
  return value.toLowerCase();
}
