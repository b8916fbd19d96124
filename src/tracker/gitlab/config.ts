/**
 * The GitLab tracker's settings: `tracker.project` as a project path (`group/sub/project`),
 * an optional self-managed base URL, the token, `tracker.query_filter` as extra list
 * parameters, `tracker.assignee`, and the `gitlab:` block. One parser serves the adapter
 * and `validate`, so a workflow that validates is one that starts.
 *
 * `query_filter` is a URL query string (`labels=agent-ready&search=login`) whose keys are
 * checked against the list-issues parameters the tracker leaves to the operator: a
 * parameter the tracker sets itself (state, paging, assignee) would silently change what a
 * candidate is, so it is refused rather than passed through.
 */
import type { ConfigIssue } from '../../domain/diagnostic.js';
import type { TrackerSettings } from '../../domain/tracker.js';
import { closest } from '../../workflow/suggest.js';
import { blockedStateCloses, isHttpUrl } from '../config-checks.js';

/** GitLab.com; a self-managed instance is its base URL (`/api/v4` is appended). */
export const DEFAULT_ENDPOINT = 'https://gitlab.com';

/** A namespace path with at least one group: `group/project`, `group/sub/project`. */
const PROJECT = /^[A-Za-z0-9_.][A-Za-z0-9_.-]*(?:\/[A-Za-z0-9_.][A-Za-z0-9_.-]*)+$/;
/** GitLab usernames: letters, digits, `_`, `-`, `.`. */
const USERNAME = /^[A-Za-z0-9_.][A-Za-z0-9_.-]*$/;

/** List-issues parameters an operator may add through `tracker.query_filter`. */
export const QUERY_FILTER_PARAMS = [
  'labels',
  'not[labels]',
  'search',
  'in',
  'milestone',
  'not[milestone]',
  'author_username',
  'not[author_username]',
  'issue_type',
  'confidential',
  'iteration_title',
  'weight',
  'created_after',
  'created_before',
  'updated_after',
  'updated_before',
] as const;

/** Parameters the tracker sets itself; a filter naming one is refused. */
const RESERVED_PARAMS = [
  'state',
  'scope',
  'page',
  'per_page',
  'pagination',
  'order_by',
  'sort',
  'assignee_username',
  'assignee_id',
  'iids[]',
  'iids',
];

/** The `gitlab:` block with its defaults. */
export interface GitlabBlock {
  /** Prefix of the scoped labels that carry states: state `todo` is label `<prefix>todo`. */
  stateLabelPrefix: string;
  /** Prefix of the scoped labels that carry a priority: `<prefix>2` is priority 2. */
  priorityLabelPrefix: string;
  /** Issues asked for per page (1–100). */
  pageSize: number;
  /** Pages read per listing before stopping with a warning. */
  maxPages: number;
  /** Entries of the conditional-request cache; 0 disables conditional requests. */
  etagCacheSize: number;
  /** Longest Retry-After (or RateLimit-Reset) wait before a 429 fails as retryable. */
  maxRateLimitWaitMs: number;
  /** First backoff after a 5xx or a transport failure; the second waits twice as long. */
  retryBackoffMs: number;
}

const BLOCK_DEFAULTS: GitlabBlock = {
  stateLabelPrefix: 'workflow::',
  priorityLabelPrefix: 'priority::',
  pageSize: 100,
  maxPages: 200,
  etagCacheSize: 1000,
  maxRateLimitWaitMs: 30_000,
  retryBackoffMs: 500,
};

type NumberField = 'pageSize' | 'maxPages' | 'etagCacheSize' | 'maxRateLimitWaitMs' | 'retryBackoffMs';
type StringField = 'stateLabelPrefix' | 'priorityLabelPrefix';
const NUMBER_KEYS: Record<string, NumberField> = {
  page_size: 'pageSize',
  max_pages: 'maxPages',
  etag_cache_size: 'etagCacheSize',
  max_rate_limit_wait_ms: 'maxRateLimitWaitMs',
  retry_backoff_ms: 'retryBackoffMs',
};
const STRING_KEYS: Record<string, StringField> = {
  state_label_prefix: 'stateLabelPrefix',
  priority_label_prefix: 'priorityLabelPrefix',
};
const ALL_KEYS = [...Object.keys(NUMBER_KEYS), ...Object.keys(STRING_KEYS)];

/** Everything the adapter needs, resolved. */
export interface GitlabTrackerConfig extends GitlabBlock {
  /** Project path as configured (`group/project`). */
  project: string;
  /** Instance base URL without `/api/v4` and without a trailing slash. */
  endpoint: string;
  token: string;
  /** Extra list parameters for the candidate listing, in order. */
  queryFilter: [string, string][];
  /** `me`, a username, or null for anyone's issues. */
  assignee: string | null;
}

/** The parsed config (null when an error was found) and every problem found. */
export interface GitlabConfigResult {
  config: GitlabTrackerConfig | null;
  issues: ConfigIssue[];
}

/** Parses and checks the settings of the gitlab kind (beyond the generic api key/project presence checks). */
export function parseGitlabConfig(settings: TrackerSettings): GitlabConfigResult {
  const issues: ConfigIssue[] = [];
  const error = (code: string, message: string, path: string[]) =>
    issues.push({ severity: 'error', code, message, path });

  if (settings.project !== '' && !PROJECT.test(settings.project)) {
    error(
      'gitlab.project.format',
      `tracker.project must be a project path such as "group/project", got "${settings.project}"`,
      ['tracker', 'project'],
    );
  }
  if (settings.apiKey !== '' && settings.apiKey.trim() === '') {
    error('gitlab.api_key.blank', 'tracker.api_key resolved to whitespace only; it must be a token', [
      'tracker',
      'api_key',
    ]);
  }
  if (settings.endpoint !== '' && !isHttpUrl(settings.endpoint)) {
    error('gitlab.endpoint.invalid', `tracker.endpoint must be an http(s) URL, got "${settings.endpoint}"`, [
      'tracker',
      'endpoint',
    ]);
  }
  const assignee = settings.assignee?.trim() ?? null;
  if (assignee !== null && assignee !== '' && assignee !== 'me' && !USERNAME.test(assignee)) {
    error(
      'gitlab.assignee.invalid',
      `tracker.assignee must be "me" or a GitLab username, got "${assignee}"`,
      ['tracker', 'assignee'],
    );
  }
  const filter = parseQueryFilter(settings.queryFilter);
  issues.push(...filter.issues);
  issues.push(
    ...blockedStateCloses(settings, 'gitlab.states.overlap', 'moving an issue there would close it'),
  );

  const block = readBlock(settings.options, issues);

  const hasError = issues.some((issue) => issue.severity === 'error');
  if (hasError || settings.project === '' || settings.apiKey === '') return { config: null, issues };
  return {
    config: {
      ...block,
      project: settings.project,
      endpoint: baseUrl(settings.endpoint === '' ? DEFAULT_ENDPOINT : settings.endpoint),
      token: settings.apiKey.trim(),
      queryFilter: filter.pairs,
      assignee: assignee === null || assignee === '' ? null : assignee,
    },
    issues,
  };
}

/** Rules of the gitlab kind beyond "needs an API key and a project" (what `validate` reports). */
export function checkGitlabSettings(settings: TrackerSettings): ConfigIssue[] {
  return parseGitlabConfig(settings).issues;
}

/** The instance base URL: no trailing slash and no `/api/v4`, which the client appends. */
export function baseUrl(endpoint: string): string {
  return endpoint.replace(/\/+$/, '').replace(/\/api\/v4$/i, '');
}

function readBlock(options: Record<string, unknown>, issues: ConfigIssue[]): GitlabBlock {
  const block: GitlabBlock = { ...BLOCK_DEFAULTS };
  for (const [key, value] of Object.entries(options)) {
    const numberField = NUMBER_KEYS[key];
    const stringField = STRING_KEYS[key];
    if (numberField === undefined && stringField === undefined) {
      const hint = closest(key, ALL_KEYS);
      issues.push({
        severity: 'warning',
        code: 'config.unknown_key',
        message: `unknown key "gitlab.${key}"${hint ? ` (did you mean "gitlab.${hint}"?)` : ''}`,
        path: ['gitlab', key],
      });
    } else if (value === null || value === undefined) {
      // A key without a value takes the default.
    } else if (stringField !== undefined) {
      if (typeof value !== 'string' || /[,\s]$/.test(value) || value.includes(',')) {
        issues.push({
          severity: 'error',
          code: `gitlab.${key}.invalid`,
          message: `gitlab.${key} must be a label prefix such as "${stringField === 'stateLabelPrefix' ? 'workflow::' : 'priority::'}" (no commas)`,
          path: ['gitlab', key],
        });
      } else {
        block[stringField] = value;
      }
    } else if (numberField !== undefined) {
      const pageSize = numberField === 'pageSize';
      const ok =
        typeof value === 'number' &&
        Number.isInteger(value) &&
        value >= (pageSize ? 1 : 0) &&
        (!pageSize || value <= 100);
      if (!ok) {
        issues.push({
          severity: 'error',
          code: `gitlab.${key}.invalid`,
          message: pageSize
            ? `gitlab.${key} must be an integer from 1 to 100`
            : `gitlab.${key} must be a non-negative integer`,
          path: ['gitlab', key],
        });
      } else {
        block[numberField] = value as number;
      }
    }
  }
  if (block.maxPages === 0) block.maxPages = BLOCK_DEFAULTS.maxPages;
  return block;
}

/** `tracker.query_filter` as parameter pairs, with an issue for every key it may not carry. */
export function parseQueryFilter(text: string): { pairs: [string, string][]; issues: ConfigIssue[] } {
  const pairs: [string, string][] = [];
  const issues: ConfigIssue[] = [];
  const trimmed = text.trim().replace(/^\?/, '');
  if (trimmed === '') return { pairs, issues };
  for (const [key, value] of new URLSearchParams(trimmed)) {
    const allowed = (QUERY_FILTER_PARAMS as readonly string[]).includes(key);
    if (allowed && value.trim() !== '') {
      pairs.push([key, value.trim()]);
      continue;
    }
    const reserved = RESERVED_PARAMS.includes(key);
    const hint = allowed || reserved ? null : closest(key, QUERY_FILTER_PARAMS);
    issues.push({
      severity: 'error',
      code: 'gitlab.query_filter.invalid',
      message: allowed
        ? `tracker.query_filter: "${key}" has no value`
        : reserved
          ? `tracker.query_filter: "${key}" is set by the tracker itself and cannot be filtered on`
          : `tracker.query_filter: unknown list parameter "${key}"${hint ? ` (did you mean "${hint}"?)` : ''}; allowed: ${QUERY_FILTER_PARAMS.join(', ')}`,
      path: ['tracker', 'query_filter'],
    });
  }
  return { pairs, issues };
}
