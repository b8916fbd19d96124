/**
 * The one GitHub API client the tracker and the forge share, so both talk to GitHub the same
 * way: conditional GETs with a timeout (conditional-fetch.ts), the throttling plugin waiting
 * out rate limits only within a bound, the retry plugin for 5xx and transport failures, a
 * plain 429 waited out by its Retry-After, and every failure mapped to a TrackerError by
 * errors.ts. Building two clients with drifting settings is the trap this avoids.
 */
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import { Octokit } from '@octokit/rest';
import { rateLimitRetryMs } from '../http/retry-after.js';
import { type ConditionalStats, conditionalFetch } from './conditional-fetch.js';
import type { GithubTrackerConfig } from './config.js';
import { classifyFailure, payloadError } from './errors.js';

/** Items asked for per page (GitHub's maximum). */
export const PER_PAGE = 100;
const REQUEST_TIMEOUT_MS = 30_000;
/** Rate-limit retries the throttling plugin may make for one request. */
const MAX_RATE_LIMIT_RETRIES = 2;
const API_VERSION = '2022-11-28';

/** Knobs for tests and embedding; production uses the defaults. */
export interface GithubClientOptions {
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

/** What one built client offers its users. */
export interface GithubClient {
  octokit: Octokit;
  /** Requests sent and 304s served from the cache, for tests and benchmarks. */
  stats: ConditionalStats;
  /** The bare transport (no cache, no token), for downloads outside the API such as job logs. */
  download: typeof fetch;
}

type Response = { data: unknown; headers: Record<string, string | number | undefined> };
type Limiter = {
  schedule: (options: unknown, fn: (...args: unknown[]) => unknown, ...args: unknown[]) => unknown;
};

/** Builds the Octokit client for `config` with the plugins, limits and the 429 hook. */
export function createGithubClient(
  config: GithubTrackerConfig,
  options: GithubClientOptions = {},
): GithubClient {
  const base = options.fetch ?? fetch;
  const transport = conditionalFetch(config.etagCacheSize, REQUEST_TIMEOUT_MS, base);
  const maxWaitS = config.maxRateLimitWaitMs / 1000;
  const onLimit = (retryAfterS: number, _options: unknown, _client: unknown, retryCount: number) =>
    retryCount < MAX_RATE_LIMIT_RETRIES && retryAfterS <= maxWaitS;
  const writes = spaced(options.writeIntervalMs ?? config.minWriteIntervalMs);
  const Client = Octokit.plugin(throttling, retry);
  const octokit = new Client({
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
  octokit.hook.wrap('request', async (request, requestOptions) => {
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
  const download = ((input: string | URL | Request, init: RequestInit = {}) =>
    base(input, { ...init, signal: init.signal ?? AbortSignal.timeout(REQUEST_TIMEOUT_MS) })) as typeof fetch;
  return { octokit: octokit as Octokit, stats: transport.stats, download };
}

/** Runs one request, turning any failure into the TrackerError its answer stands for. */
export async function callGithub<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw classifyFailure(error, what);
  }
}

/** How far a listing may page, and where the warning goes when it stops early. */
export interface PageLimits {
  maxPages: number;
  /** Names the cap in the warning (`github.max_pages`). */
  capName: string;
  warn: (message: string) => void;
}

/** Reads a listing page by page through Link headers, handing each page's body to `take`. */
export async function readPages(
  octokit: Octokit,
  what: string,
  route: string,
  params: Record<string, unknown>,
  take: (data: unknown) => void,
  limits: PageLimits,
): Promise<void> {
  let response = (await callGithub(what, () =>
    octokit.request(route, { ...params, per_page: PER_PAGE }),
  )) as Response;
  take(response.data);
  for (let page = 1; ; page++) {
    const next = nextLink(response.headers.link);
    if (next === null) return;
    if (page >= limits.maxPages) {
      limits.warn(
        `${what}: stopped after ${page} page${page === 1 ? '' : 's'} (${limits.capName}); later items were not read`,
      );
      return;
    }
    response = (await callGithub(what, () => octokit.request({ method: 'GET', url: next }))) as Response;
    take(response.data);
  }
}

/** Every item of a listing whose pages are JSON arrays. */
export async function readList(
  octokit: Octokit,
  what: string,
  route: string,
  params: Record<string, unknown>,
  limits: PageLimits,
): Promise<unknown[]> {
  const items: unknown[] = [];
  await readPages(
    octokit,
    what,
    route,
    params,
    (data) => {
      if (!Array.isArray(data)) throw payloadError(what, 'expected a list');
      items.push(...data);
    },
    limits,
  );
  return items;
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
