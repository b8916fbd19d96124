/**
 * The Jira tracker's settings: the site base URL (no default: every Jira lives somewhere
 * else), the project key, the token, and the `jira:` block with the e-mail for Cloud's Basic
 * auth or `auth: bearer` for a personal access token. One parser for the adapter and for
 * `validate`, so a workflow that validates is one that starts. The trap it avoids: an
 * endpoint pasted with `/rest/api/3` on the end would double the API path on every request
 * and fail as "not found" instead of saying what is wrong.
 */
import type { ConfigIssue } from '../../domain/diagnostic.js';
import type { TrackerSettings } from '../../domain/tracker.js';
import { type Env, expandTargeted } from '../../workflow/env-vars.js';
import { closest } from '../../workflow/suggest.js';
import { isHttpUrl } from '../config-checks.js';

/** How requests authenticate: Cloud's e-mail + API token, or a Server/Data Center personal access token. */
export type JiraAuthMode = 'basic' | 'bearer';

/** The numeric keys of the `jira:` block with their defaults. */
interface JiraLimits {
  /** Issues asked for per search page (`maxResults`). */
  pageSize: number;
  /** Search pages read per listing before stopping with a warning. */
  maxPages: number;
  /** Longest Retry-After waited out before a 429 fails as a retryable error. */
  maxRateLimitWaitMs: number;
}

const LIMIT_DEFAULTS: JiraLimits = { pageSize: 50, maxPages: 200, maxRateLimitWaitMs: 30_000 };
const LIMIT_FIELDS: Record<string, keyof JiraLimits> = {
  page_size: 'pageSize',
  max_pages: 'maxPages',
  max_rate_limit_wait_ms: 'maxRateLimitWaitMs',
};
/** Jira answers at most 100 issues with full fields per search page. */
const MAX_PAGE_SIZE = 100;
/** Every key of the `jira:` block. */
const BLOCK_KEYS = ['email', 'auth', 'page_size', 'max_pages', 'max_rate_limit_wait_ms'];

/** Project keys: a letter, then letters, digits or underscores (Jira's default key pattern). */
const PROJECT_KEY = /^[A-Za-z][A-Za-z0-9_]*$/;
/** `someone@example.com:token` in tracker.api_key. */
const LEGACY_CREDENTIAL = /^([^:\s]+@[^:\s]+):(.+)$/;

/** Everything the adapter needs, resolved. */
export interface JiraTrackerConfig extends JiraLimits {
  /** Site base URL without a trailing slash (`https://acme.atlassian.net`). */
  endpoint: string;
  /** Project key, uppercased as Jira stores it. */
  project: string;
  auth: JiraAuthMode;
  /** The account e-mail for Basic auth; "" with bearer auth. */
  email: string;
  token: string;
  /** A JQL fragment ANDed to the candidate query; "" = none. */
  queryFilter: string;
  /** `me` = the token's own user; another value = an account id; null = anyone. */
  assignee: string | null;
}

/** The parsed config (null when an error was found) and every problem found. */
export interface JiraConfigResult {
  config: JiraTrackerConfig | null;
  issues: ConfigIssue[];
}

/** Parses and checks the settings of the jira kind (beyond the generic api key/project presence checks). */
export function parseJiraConfig(settings: TrackerSettings, env: Env = process.env): JiraConfigResult {
  const issues: ConfigIssue[] = [];
  const error = (code: string, message: string, path: string[]) =>
    issues.push({ severity: 'error', code, message, path });

  const endpoint = settings.endpoint.trim().replace(/\/+$/, '');
  if (endpoint === '') {
    error(
      'jira.endpoint.missing',
      'tracker.endpoint is required for jira: the site base URL, such as https://acme.atlassian.net',
      ['tracker', 'endpoint'],
    );
  } else if (!isHttpUrl(endpoint)) {
    error('jira.endpoint.invalid', `tracker.endpoint must be an http(s) URL, got "${endpoint}"`, [
      'tracker',
      'endpoint',
    ]);
  } else if (/\/rest\/api(\/|$)/i.test(endpoint)) {
    error(
      'jira.endpoint.invalid',
      `tracker.endpoint must be the site base URL without the API path, got "${endpoint}" (drop "/rest/api/…")`,
      ['tracker', 'endpoint'],
    );
  }
  if (settings.project !== '' && !PROJECT_KEY.test(settings.project)) {
    error(
      'jira.project.format',
      `tracker.project must be a Jira project key such as "PROJ", got "${settings.project}"`,
      ['tracker', 'project'],
    );
  }
  if (settings.apiKey !== '' && settings.apiKey.trim() === '') {
    error('jira.api_key.blank', 'tracker.api_key resolved to whitespace only; it must be a token', [
      'tracker',
      'api_key',
    ]);
  }

  const options = settings.options;
  for (const key of Object.keys(options)) {
    if (BLOCK_KEYS.includes(key)) continue;
    const hint = closest(key, BLOCK_KEYS);
    issues.push({
      severity: 'warning',
      code: 'config.unknown_key',
      message: `unknown key "jira.${key}"${hint ? ` (did you mean "jira.${hint}"?)` : ''}`,
      path: ['jira', key],
    });
  }

  const limits: JiraLimits = { ...LIMIT_DEFAULTS };
  for (const [key, field] of Object.entries(LIMIT_FIELDS)) {
    const value = options[key];
    if (value === null || value === undefined) continue;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
      error(`jira.${key}.invalid`, `jira.${key} must be a non-negative integer`, ['jira', key]);
    } else if (value > 0 || field === 'maxRateLimitWaitMs') {
      limits[field] = value;
    }
  }
  if (limits.pageSize > MAX_PAGE_SIZE) {
    error('jira.page_size.invalid', `jira.page_size must be at most ${MAX_PAGE_SIZE} (Jira's page limit)`, [
      'jira',
      'page_size',
    ]);
  }

  const auth = readAuth(options.auth, error);
  let token = settings.apiKey.trim();
  let email = readEmail(options.email, env, error);
  if (auth === 'basic' && (options.email === undefined || options.email === null) && token !== '') {
    // The `email:token` form some tools keep in one secret is accepted when jira.email is absent.
    const legacy = LEGACY_CREDENTIAL.exec(token);
    if (legacy === null) {
      error(
        'jira.email.missing',
        'jira.email is required with Basic auth (Jira Cloud): the account e-mail the API token belongs to, or set jira.auth: bearer for a personal access token',
        ['jira', 'email'],
      );
    } else {
      email = legacy[1] as string;
      token = legacy[2] as string;
    }
  }
  if (auth === 'bearer' && options.email !== undefined && options.email !== null) {
    issues.push({
      severity: 'warning',
      code: 'jira.email.unused',
      message: 'jira.email is ignored with jira.auth: bearer (a personal access token names its own user)',
      path: ['jira', 'email'],
    });
  }

  const hasError = issues.some((issue) => issue.severity === 'error');
  if (hasError || auth === null || settings.project === '' || token === '') return { config: null, issues };
  return {
    config: {
      ...limits,
      endpoint,
      project: settings.project.toUpperCase(),
      auth,
      email: auth === 'basic' ? email : '',
      token,
      queryFilter: settings.queryFilter.trim(),
      assignee:
        settings.assignee === null || settings.assignee.trim() === '' ? null : settings.assignee.trim(),
    },
    issues,
  };
}

/** Rules of the jira kind beyond "needs an API key and a project" (what `validate` reports). */
export function checkJiraSettings(settings: TrackerSettings): ConfigIssue[] {
  return parseJiraConfig(settings).issues;
}

function readAuth(
  value: unknown,
  error: (code: string, message: string, path: string[]) => void,
): JiraAuthMode | null {
  if (value === undefined || value === null) return 'basic';
  if (value === 'basic' || value === 'bearer') return value;
  error('jira.auth.invalid', `jira.auth must be "basic" (Jira Cloud) or "bearer" (a personal access token)`, [
    'jira',
    'auth',
  ]);
  return null;
}

function readEmail(
  value: unknown,
  env: Env,
  error: (code: string, message: string, path: string[]) => void,
): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') {
    error('jira.email.invalid', 'jira.email must be a string (an e-mail address or $VARIABLE)', [
      'jira',
      'email',
    ]);
    return '';
  }
  const expanded = expandTargeted(value, env);
  if (!expanded.ok) {
    error('jira.email.invalid', expanded.message, ['jira', 'email']);
    return '';
  }
  const email = expanded.value.trim();
  if (email === '') {
    const names =
      expanded.names.length > 0 ? ` (check environment variable ${expanded.names.join(', ')})` : '';
    error('jira.email.empty', `jira.email resolved to empty${names}`, ['jira', 'email']);
  } else if (!/^[^\s@]+@[^\s@]+$/.test(email)) {
    error('jira.email.invalid', `jira.email must be an e-mail address, got "${email}"`, ['jira', 'email']);
  }
  return email;
}
