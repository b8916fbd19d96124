/**
 * The Linear tracker's settings: `tracker.project` as the project's slug id (the short hex
 * id at the end of a project URL, not its name), an optional endpoint, the API key, an
 * optional assignee, and the `linear:` block. One parser for the adapter and for `validate`,
 * so a workflow that validates is one that starts. A whole project URL or a name with spaces
 * is refused here: Linear would silently match nothing and the service would look idle.
 */
import type { ConfigIssue } from '../../domain/diagnostic.js';
import type { TrackerSettings } from '../../domain/tracker.js';
import { closest } from '../../workflow/suggest.js';
import { isHttpUrl } from '../config-checks.js';

/** Linear's public GraphQL endpoint. */
export const DEFAULT_ENDPOINT = 'https://api.linear.app/graphql';

/** The assignee value that means "the user the API key belongs to". */
export const ASSIGNEE_ME = 'me';

/** Linear refuses pages larger than this. */
const MAX_PAGE_SIZE = 250;
const SLUG = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/** The `linear:` block with its defaults. */
export interface LinearBlock {
  /** Issues asked for per page (`first`). */
  pageSize: number;
  /** Pages read per listing before stopping with a warning. */
  maxPages: number;
  /** Longest wait for a rate-limit reset or Retry-After before the request fails as retryable. */
  maxRateLimitWaitMs: number;
}

const BLOCK_DEFAULTS: LinearBlock = {
  pageSize: 50,
  maxPages: 200,
  maxRateLimitWaitMs: 30_000,
};
const BLOCK_KEYS: Record<string, keyof LinearBlock> = {
  page_size: 'pageSize',
  max_pages: 'maxPages',
  max_rate_limit_wait_ms: 'maxRateLimitWaitMs',
};

/** Everything the adapter needs, resolved. */
export interface LinearTrackerConfig extends LinearBlock {
  /** The project's slug id (`project.slugId`). */
  projectSlug: string;
  /** GraphQL endpoint URL. */
  endpoint: string;
  /** Sent as-is in `Authorization` (Linear API keys take no `Bearer`). */
  token: string;
  /** `me`, a user id, or null for anyone's issues. */
  assignee: string | null;
}

/** The parsed config (null when an error was found) and every problem found. */
export interface LinearConfigResult {
  config: LinearTrackerConfig | null;
  issues: ConfigIssue[];
}

/** Parses and checks the settings of the linear kind (beyond the generic api key/project presence checks). */
export function parseLinearConfig(settings: TrackerSettings): LinearConfigResult {
  const issues: ConfigIssue[] = [];
  const error = (code: string, message: string, path: string[]) =>
    issues.push({ severity: 'error', code, message, path });

  if (settings.project !== '' && !SLUG.test(settings.project)) {
    error(
      'linear.project.format',
      `tracker.project must be the project's slug id (the hex id that ends its URL, like "3f9c1a7b2e4d"), got "${settings.project}"`,
      ['tracker', 'project'],
    );
  }
  // An empty key is tracker.api_key.missing (or .empty, naming the variable): one error, said once.
  if (settings.apiKey !== '' && settings.apiKey.trim() === '') {
    error('linear.api_key.blank', 'tracker.api_key resolved to whitespace only; it must be an API key', [
      'tracker',
      'api_key',
    ]);
  }
  if (settings.endpoint !== '' && !isHttpUrl(settings.endpoint)) {
    error('linear.endpoint.invalid', `tracker.endpoint must be an http(s) URL, got "${settings.endpoint}"`, [
      'tracker',
      'endpoint',
    ]);
  }
  if (settings.queryFilter.trim() !== '') {
    issues.push({
      severity: 'warning',
      code: 'linear.query_filter.unsupported',
      message:
        'tracker.query_filter is not used by the linear kind (candidates are the project issues in active states); narrow them with tracker.assignee or tracker.required_labels',
      path: ['tracker', 'query_filter'],
    });
  }

  const block: LinearBlock = { ...BLOCK_DEFAULTS };
  for (const [key, value] of Object.entries(settings.options)) {
    const field = BLOCK_KEYS[key];
    if (field === undefined) {
      const hint = closest(key, Object.keys(BLOCK_KEYS));
      issues.push({
        severity: 'warning',
        code: 'config.unknown_key',
        message: `unknown key "linear.${key}"${hint ? ` (did you mean "linear.${hint}"?)` : ''}`,
        path: ['linear', key],
      });
    } else if (value === null || value === undefined) {
      // A key without a value takes the default.
    } else if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
      error(`linear.${key}.invalid`, `linear.${key} must be a non-negative integer`, ['linear', key]);
    } else if (field === 'pageSize' && (value < 1 || value > MAX_PAGE_SIZE)) {
      error(`linear.${key}.invalid`, `linear.${key} must be between 1 and ${MAX_PAGE_SIZE}`, ['linear', key]);
    } else {
      block[field] = value;
    }
  }
  if (block.maxPages === 0) block.maxPages = BLOCK_DEFAULTS.maxPages;

  const hasError = issues.some((issue) => issue.severity === 'error');
  if (hasError || settings.project === '' || settings.apiKey === '') return { config: null, issues };
  return {
    config: {
      ...block,
      projectSlug: settings.project,
      endpoint: settings.endpoint === '' ? DEFAULT_ENDPOINT : settings.endpoint,
      token: settings.apiKey.trim(),
      assignee: settings.assignee === null ? null : settings.assignee.trim(),
    },
    issues,
  };
}

/** Rules of the linear kind beyond "needs an API key and a project" (what `validate` reports). */
export function checkLinearSettings(settings: TrackerSettings): ConfigIssue[] {
  return parseLinearConfig(settings).issues;
}
