import { describe, expect, it } from 'vitest';
import type { TrackerSettings } from '../../../src/domain/tracker.js';
import { parseGitlabConfig, parseQueryFilter } from '../../../src/tracker/gitlab/config.js';
import { checkTrackerSettings } from '../../../src/tracker/validate.js';
import '../../../src/tracker/kinds.js';

function settings(over: Partial<TrackerSettings> = {}): TrackerSettings {
  return {
    kind: 'gitlab',
    endpoint: '',
    apiKey: 'glpat-x',
    project: 'acme/platform/widgets',
    queryFilter: '',
    assignee: null,
    requiredLabels: [],
    activeStates: ['todo'],
    terminalStates: ['done'],
    handoffState: 'review',
    inProgressState: null,
    blockedState: 'blocked',
    options: {},
    baseDir: '/',
    ...over,
  };
}

const codes = (over: Partial<TrackerSettings>) => parseGitlabConfig(settings(over)).issues.map((i) => i.code);

describe('gitlab config', () => {
  it('defaults: gitlab.com, workflow:: and priority:: labels, 100 per page, 200 pages, 30 s rate-limit wait', () => {
    expect(parseGitlabConfig(settings()).config).toEqual({
      project: 'acme/platform/widgets',
      endpoint: 'https://gitlab.com',
      token: 'glpat-x',
      queryFilter: [],
      assignee: null,
      stateLabelPrefix: 'workflow::',
      priorityLabelPrefix: 'priority::',
      pageSize: 100,
      maxPages: 200,
      etagCacheSize: 1000,
      maxRateLimitWaitMs: 30_000,
      retryBackoffMs: 500,
    });
  });

  it.each([
    [{ project: 'widgets' }, 'gitlab.project.format'],
    [{ project: 'https://gitlab.com/acme/widgets' }, 'gitlab.project.format'],
    [{ apiKey: '   ' }, 'gitlab.api_key.blank'],
    [{ endpoint: 'gitlab.acme.internal' }, 'gitlab.endpoint.invalid'],
    [{ assignee: 'not a user' }, 'gitlab.assignee.invalid'],
    [{ blockedState: 'Done' }, 'gitlab.states.overlap'],
    [{ queryFilter: 'state=closed' }, 'gitlab.query_filter.invalid'],
    [{ queryFilter: 'lables=x' }, 'gitlab.query_filter.invalid'],
    [{ options: { page_size: 0 } }, 'gitlab.page_size.invalid'],
    [{ options: { page_size: 101 } }, 'gitlab.page_size.invalid'],
    [{ options: { max_pages: -1 } }, 'gitlab.max_pages.invalid'],
    [{ options: { etag_cache_size: 'many' } }, 'gitlab.etag_cache_size.invalid'],
    [{ options: { max_rate_limit_wait_ms: 1.5 } }, 'gitlab.max_rate_limit_wait_ms.invalid'],
    [{ options: { retry_backoff_ms: -5 } }, 'gitlab.retry_backoff_ms.invalid'],
    [{ options: { state_label_prefix: 7 } }, 'gitlab.state_label_prefix.invalid'],
    [{ options: { priority_label_prefix: 'a,b' } }, 'gitlab.priority_label_prefix.invalid'],
    [{ options: { min_write_interval_ms: 5 } }, 'config.unknown_key'],
  ] as const)('%j is reported as %s', (over, code) => {
    expect(codes(over as Partial<TrackerSettings>)).toContain(code);
  });

  it('a misspelt gitlab key gets a "did you mean" and is only a warning', () => {
    const { issues, config } = parseGitlabConfig(settings({ options: { state_lable_prefix: 'x::' } }));
    expect(issues.map((i) => [i.severity, i.message])).toEqual([
      ['warning', 'unknown key "gitlab.state_lable_prefix" (did you mean "gitlab.state_label_prefix"?)'],
    ]);
    expect(config?.stateLabelPrefix).toBe('workflow::');
  });

  it('a misspelt query_filter parameter gets a "did you mean"; a reserved one says the tracker sets it', () => {
    expect(parseQueryFilter('lables=agent').issues[0]?.message).toContain('did you mean "labels"?');
    expect(parseQueryFilter('per_page=5').issues[0]?.message).toContain('set by the tracker itself');
  });

  it('query_filter is read as list parameters in order, blank input as none', () => {
    expect(parseQueryFilter('labels=agent-ready,backend&not[labels]=wip&search=login').pairs).toEqual([
      ['labels', 'agent-ready,backend'],
      ['not[labels]', 'wip'],
      ['search', 'login'],
    ]);
    expect(parseQueryFilter('  ').pairs).toEqual([]);
  });

  it('a self-managed endpoint is the base URL, with or without /api/v4 and a trailing slash', () => {
    for (const endpoint of [
      'https://git.acme.internal/',
      'https://git.acme.internal/api/v4',
      'https://git.acme.internal/api/v4/',
    ])
      expect(parseGitlabConfig(settings({ endpoint })).config?.endpoint).toBe('https://git.acme.internal');
  });

  it('assignee "me" and a username are kept; an empty one means anyone', () => {
    expect(parseGitlabConfig(settings({ assignee: 'me' })).config?.assignee).toBe('me');
    expect(parseGitlabConfig(settings({ assignee: 'jane.doe' })).config?.assignee).toBe('jane.doe');
    expect(parseGitlabConfig(settings({ assignee: ' ' })).config?.assignee).toBeNull();
  });

  it('an empty token or project adds nothing here: the generic checks say it once', () => {
    expect(codes({ apiKey: '' })).toEqual([]);
    expect(parseGitlabConfig(settings({ apiKey: '' })).config).toBeNull();
    expect(checkTrackerSettings(settings({ apiKey: '', project: '' })).map((i) => i.code)).toEqual([
      'tracker.api_key.missing',
      'tracker.project.missing',
    ]);
  });

  it('the api key help names GITLAB_TOKEN', () => {
    const message = checkTrackerSettings(settings({ apiKey: '' }))[0]?.message ?? '';
    expect(message).toContain('$GITLAB_TOKEN');
  });
});
