import { describe, expect, it } from 'vitest';
import type { TrackerSettings } from '../../../src/domain/tracker.js';
import { parseJiraConfig } from '../../../src/tracker/jira/config.js';
import { trackerKind } from '../../../src/tracker/registry.js';
import { checkTrackerSettings } from '../../../src/tracker/validate.js';
import '../../../src/tracker/kinds.js';

function settings(over: Partial<TrackerSettings> = {}): TrackerSettings {
  return {
    kind: 'jira',
    endpoint: 'https://acme.atlassian.net',
    apiKey: 'jira-token-123',
    project: 'PROJ',
    queryFilter: '',
    assignee: null,
    requiredLabels: [],
    activeStates: ['Todo'],
    terminalStates: ['Done'],
    handoffState: 'Review',
    inProgressState: null,
    blockedState: null,
    options: { email: 'bot@acme.test' },
    baseDir: '/',
    ...over,
  };
}

const parse = (over: Partial<TrackerSettings> = {}, env: Record<string, string> = {}) =>
  parseJiraConfig(settings(over), env);
const codes = (over: Partial<TrackerSettings>, env: Record<string, string> = {}) =>
  parse(over, env).issues.map((i) => i.code);

describe('jira config', () => {
  it('Cloud defaults: Basic auth with the e-mail, 50 issues a page, 200 pages, 30 s rate-limit wait', () => {
    expect(parse().config).toEqual({
      endpoint: 'https://acme.atlassian.net',
      project: 'PROJ',
      auth: 'basic',
      email: 'bot@acme.test',
      token: 'jira-token-123',
      queryFilter: '',
      assignee: null,
      pageSize: 50,
      maxPages: 200,
      maxRateLimitWaitMs: 30_000,
    });
  });

  it('bearer auth (Server/Data Center personal access token) needs no e-mail', () => {
    const result = parse({ options: { auth: 'bearer' } });
    expect(result.issues).toEqual([]);
    expect(result.config).toMatchObject({ auth: 'bearer', email: '', token: 'jira-token-123' });
  });

  it('an e-mail given with bearer auth is reported as unused, not an error', () => {
    const result = parse({ options: { auth: 'bearer', email: 'x@y.z' } });
    expect(result.issues.map((i) => [i.severity, i.code])).toEqual([['warning', 'jira.email.unused']]);
    expect(result.config?.email).toBe('');
  });

  it('jira.email may name an environment variable', () => {
    expect(parse({ options: { email: '$JIRA_EMAIL' } }, { JIRA_EMAIL: 'me@acme.test' }).config?.email).toBe(
      'me@acme.test',
    );
    const unset = parse({ options: { email: '$JIRA_EMAIL' } });
    expect(unset.issues.map((i) => i.message)).toEqual([
      'jira.email resolved to empty (check environment variable JIRA_EMAIL)',
    ]);
    expect(unset.config).toBeNull();
  });

  it('the "email:token" form of tracker.api_key is split when jira.email is absent', () => {
    const result = parse({ apiKey: 'me@acme.test:tok:with:colons', options: {} });
    expect(result.issues).toEqual([]);
    expect(result.config).toMatchObject({ email: 'me@acme.test', token: 'tok:with:colons' });
  });

  it.each([
    [{ endpoint: '' }, 'jira.endpoint.missing'],
    [{ endpoint: 'acme.atlassian.net' }, 'jira.endpoint.invalid'],
    [{ endpoint: 'https://acme.atlassian.net/rest/api/3' }, 'jira.endpoint.invalid'],
    [{ project: 'acme/widgets' }, 'jira.project.format'],
    [{ apiKey: '   ' }, 'jira.api_key.blank'],
    [{ options: {} }, 'jira.email.missing'],
    [{ options: { email: 'not-an-address' } }, 'jira.email.invalid'],
    [{ options: { email: 3 } }, 'jira.email.invalid'],
    [{ options: { email: 'a@b.c', auth: 'oauth' } }, 'jira.auth.invalid'],
    [{ options: { email: 'a@b.c', page_size: 500 } }, 'jira.page_size.invalid'],
    [{ options: { email: 'a@b.c', page_size: 'ten' } }, 'jira.page_size.invalid'],
    [{ options: { email: 'a@b.c', max_pages: -1 } }, 'jira.max_pages.invalid'],
    [{ options: { email: 'a@b.c', max_rate_limit_wait_ms: 1.5 } }, 'jira.max_rate_limit_wait_ms.invalid'],
    [{ options: { email: 'a@b.c', etag_cache_size: 5 } }, 'config.unknown_key'],
  ] as const)('%j is reported as %s', (over, code) => {
    expect(codes(over as Partial<TrackerSettings>)).toContain(code);
  });

  it('the endpoint with the API path says what to drop', () => {
    expect(parse({ endpoint: 'https://acme.atlassian.net/rest/api/3/' }).issues[0]?.message).toContain(
      'drop "/rest/api/',
    );
  });

  it('a misspelt jira key gets a "did you mean"', () => {
    const messages = (options: Record<string, unknown>) =>
      parse({ options: { email: 'a@b.c', ...options } }).issues.map((i) => i.message);
    expect(messages({ emial: 'x' })).toEqual(['unknown key "jira.emial" (did you mean "jira.email"?)']);
    expect(messages({ page_sise: 5 })).toEqual([
      'unknown key "jira.page_sise" (did you mean "jira.page_size"?)',
    ]);
    expect(messages({ max_page: 5 })).toEqual([
      'unknown key "jira.max_page" (did you mean "jira.max_pages"?)',
    ]);
  });

  it('an empty token adds nothing here: the generic tracker.api_key.missing says it once', () => {
    expect(codes({ apiKey: '' })).toEqual([]);
    expect(parse({ apiKey: '' }).config).toBeNull();
    expect(checkTrackerSettings(settings({ apiKey: '' })).map((i) => i.code)).toEqual([
      'tracker.api_key.missing',
    ]);
  });

  it('the project key is uppercased and the endpoint loses its trailing slash', () => {
    expect(parse({ project: 'proj', endpoint: 'https://jira.acme.internal/jira/' }).config).toMatchObject({
      project: 'PROJ',
      endpoint: 'https://jira.acme.internal/jira',
    });
  });

  it('tracker.assignee is carried; blank is nobody in particular', () => {
    expect(parse({ assignee: 'me' }).config?.assignee).toBe('me');
    expect(parse({ assignee: ' ' }).config?.assignee).toBeNull();
  });

  it('create refuses a bad config with the kind that says why, naming no token', async () => {
    const create = trackerKind('jira')?.create;
    if (create === undefined) throw new Error('jira kind has no create');
    await expect(create(settings({ apiKey: '' }))).rejects.toMatchObject({ kind: 'missing_tracker_api_key' });
    await expect(create(settings({ project: '' }))).rejects.toMatchObject({
      kind: 'missing_tracker_project',
    });
    const bad = await create(settings({ endpoint: '' })).catch((e: Error) => e);
    expect(bad).toMatchObject({ kind: 'tracker_payload_error' });
    expect(String((bad as Error).message)).not.toContain('jira-token-123');
  });
});
