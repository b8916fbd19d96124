/**
 * The GitHub tracker's settings: `tracker.project` as `owner/repo`, an optional
 * Enterprise endpoint, the token, and the `github:` block. One parser for the
 * adapter and for `validate`, so a workflow that validates is one that starts.
 * States are labels here, and a terminal label closes the issue: a blocked state
 * that is also terminal is refused.
 */
import type { ConfigIssue } from '../../domain/diagnostic.js';
import type { TrackerSettings } from '../../domain/tracker.js';
import { closest } from '../../workflow/suggest.js';
import { blockedStateCloses, isHttpUrl } from '../config-checks.js';

const PROJECT = /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\/[A-Za-z0-9._-]+$/;

/** The public API; an Enterprise server's base is `https://HOST/api/v3`. */
export const DEFAULT_ENDPOINT = 'https://api.github.com';

/** The `github:` block with its defaults. */
export interface GithubBlock {
  /** Entries of the conditional-request cache; 0 disables conditional requests. */
  etagCacheSize: number;
  /** Pages read per listing before stopping with a warning. */
  maxPages: number;
  /** Longest wait for a rate-limit reset or Retry-After before the request fails as retryable. */
  maxRateLimitWaitMs: number;
  /** Least gap between writes; GitHub asks for 1 s to stay clear of secondary limits. */
  minWriteIntervalMs: number;
}

const BLOCK_DEFAULTS: GithubBlock = {
  etagCacheSize: 1000,
  maxPages: 200,
  maxRateLimitWaitMs: 30_000,
  minWriteIntervalMs: 1000,
};
const BLOCK_KEYS: Record<string, keyof GithubBlock> = {
  etag_cache_size: 'etagCacheSize',
  max_pages: 'maxPages',
  max_rate_limit_wait_ms: 'maxRateLimitWaitMs',
  min_write_interval_ms: 'minWriteIntervalMs',
};

/** Everything the adapter needs, resolved. */
export interface GithubTrackerConfig extends GithubBlock {
  owner: string;
  repo: string;
  /** API base URL without a trailing slash. */
  endpoint: string;
  token: string;
  /** Search qualifiers added to the candidate query; "" lists open issues instead of searching. */
  queryFilter: string;
  /** Candidates only of this login (`me` = the token's own user); null = anyone's. */
  assignee: string | null;
}

/** The parsed config (null when an error was found) and every problem found. */
export interface GithubConfigResult {
  config: GithubTrackerConfig | null;
  issues: ConfigIssue[];
}

/** Parses and checks the settings of the github kind (beyond the generic api key/project presence checks). */
export function parseGithubConfig(settings: TrackerSettings): GithubConfigResult {
  const issues: ConfigIssue[] = [];
  const error = (code: string, message: string, path: string[]) =>
    issues.push({ severity: 'error', code, message, path });

  if (settings.project !== '' && !PROJECT.test(settings.project)) {
    error('github.project.format', `tracker.project must be "owner/repo", got "${settings.project}"`, [
      'tracker',
      'project',
    ]);
  }
  // An empty token is tracker.api_key.missing (or .empty, naming the variable): one error, said once.
  if (settings.apiKey !== '' && settings.apiKey.trim() === '') {
    error('github.api_key.blank', 'tracker.api_key resolved to whitespace only; it must be a token', [
      'tracker',
      'api_key',
    ]);
  }
  if (settings.endpoint !== '' && !isHttpUrl(settings.endpoint)) {
    error('github.endpoint.invalid', `tracker.endpoint must be an http(s) URL, got "${settings.endpoint}"`, [
      'tracker',
      'endpoint',
    ]);
  }
  issues.push(
    ...blockedStateCloses(
      settings,
      'github.states.overlap',
      'its label would close every issue that asks a question',
    ),
  );

  const block: GithubBlock = { ...BLOCK_DEFAULTS };
  for (const [key, value] of Object.entries(settings.options)) {
    const field = BLOCK_KEYS[key];
    if (field === undefined) {
      const hint = closest(key, Object.keys(BLOCK_KEYS));
      issues.push({
        severity: 'warning',
        code: 'config.unknown_key',
        message: `unknown key "github.${key}"${hint ? ` (did you mean "github.${hint}"?)` : ''}`,
        path: ['github', key],
      });
    } else if (value === null || value === undefined) {
      // A key without a value takes the default.
    } else if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
      error(`github.${key}.invalid`, `github.${key} must be a non-negative integer`, ['github', key]);
    } else {
      block[field] = value;
    }
  }
  if (block.maxPages === 0) block.maxPages = BLOCK_DEFAULTS.maxPages;

  const hasError = issues.some((issue) => issue.severity === 'error');
  if (hasError || settings.project === '' || settings.apiKey === '') return { config: null, issues };
  const [owner = '', repo = ''] = settings.project.split('/');
  return {
    config: {
      ...block,
      owner,
      repo,
      endpoint: (settings.endpoint === '' ? DEFAULT_ENDPOINT : settings.endpoint).replace(/\/+$/, ''),
      token: settings.apiKey.trim(),
      queryFilter: settings.queryFilter.trim(),
      assignee: settings.assignee?.trim() ? settings.assignee.trim() : null,
    },
    issues,
  };
}

/** Rules of the github kind beyond "needs an API key and a project" (what `validate` reports). */
export function checkGithubSettings(settings: TrackerSettings): ConfigIssue[] {
  return parseGithubConfig(settings).issues;
}
