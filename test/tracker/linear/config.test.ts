import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectTrackerError } from '../../../internal-contracts/tracker/conformance.js';
import type { TrackerSettings } from '../../../src/domain/tracker.js';
import { parseLinearConfig } from '../../../src/tracker/linear/config.js';
import '../../../src/tracker/kinds.js';
import { trackerKind } from '../../../src/tracker/registry.js';
import { runCli } from '../../support/cli.js';
import { startFakeLinear } from '../../support/fake-linear/server.js';

function settings(over: Partial<TrackerSettings> = {}): TrackerSettings {
  return {
    kind: 'linear',
    endpoint: '',
    apiKey: 'lin_api_x',
    project: '3f9c1a7b2e4d',
    queryFilter: '',
    assignee: null,
    requiredLabels: [],
    activeStates: ['Todo'],
    terminalStates: ['Done'],
    handoffState: 'Human Review',
    inProgressState: null,
    blockedState: null,
    options: {},
    baseDir: '/',
    ...over,
  };
}

const codes = (over: Partial<TrackerSettings>) => parseLinearConfig(settings(over)).issues.map((i) => i.code);

describe('linear config', () => {
  it('defaults: the public endpoint, pages of 50, 200 pages, 30 s rate-limit wait, anyone as assignee', () => {
    expect(parseLinearConfig(settings()).config).toEqual({
      projectSlug: '3f9c1a7b2e4d',
      endpoint: 'https://api.linear.app/graphql',
      token: 'lin_api_x',
      assignee: null,
      pageSize: 50,
      maxPages: 200,
      maxRateLimitWaitMs: 30_000,
    });
  });

  it('the linear block and the assignee are read', () => {
    const config = parseLinearConfig(
      settings({
        assignee: 'me',
        endpoint: 'http://127.0.0.1:9/graphql',
        options: { page_size: 10, max_pages: 3, max_rate_limit_wait_ms: 0 },
      }),
    ).config;
    expect(config).toMatchObject({
      assignee: 'me',
      endpoint: 'http://127.0.0.1:9/graphql',
      pageSize: 10,
      maxPages: 3,
      maxRateLimitWaitMs: 0,
    });
  });

  it.each([
    [{ project: 'https://linear.app/acme/project/widgets-3f9c1a7b2e4d' }, 'linear.project.format'],
    [{ project: 'My Project' }, 'linear.project.format'],
    [{ apiKey: '   ' }, 'linear.api_key.blank'],
    [{ endpoint: 'api.linear.app/graphql' }, 'linear.endpoint.invalid'],
    [{ queryFilter: 'label:agent' }, 'linear.query_filter.unsupported'],
    [{ options: { page_size: 0 } }, 'linear.page_size.invalid'],
    [{ options: { page_size: 251 } }, 'linear.page_size.invalid'],
    [{ options: { max_pages: -1 } }, 'linear.max_pages.invalid'],
    [{ options: { max_rate_limit_wait_ms: '30s' } }, 'linear.max_rate_limit_wait_ms.invalid'],
    [{ options: { etag_cache_size: 5 } }, 'config.unknown_key'],
  ] as const)('%j is reported as %s', (over, code) => {
    expect(codes(over as Partial<TrackerSettings>)).toContain(code);
  });

  it('an ignored query filter is a warning, not an error: the tracker still starts', () => {
    const result = parseLinearConfig(settings({ queryFilter: 'label:agent' }));
    expect(result.issues.map((i) => i.severity)).toEqual(['warning']);
    expect(result.config).not.toBeNull();
  });

  it('an empty key adds nothing here: the generic tracker.api_key.missing (or .empty) says it once', () => {
    expect(codes({ apiKey: '' })).toEqual([]);
    expect(parseLinearConfig(settings({ apiKey: '' })).config).toBeNull();
  });

  it('a misspelt linear key gets a "did you mean"', () => {
    expect(parseLinearConfig(settings({ options: { page_sise: 3 } })).issues.map((i) => i.message)).toEqual([
      'unknown key "linear.page_sise" (did you mean "linear.page_size"?)',
    ]);
  });
});

describe('the registered linear kind', () => {
  const kind = trackerKind('linear');

  it('needs an API key and a project, and says where the key comes from', () => {
    expect(kind).toMatchObject({ requiresApiKey: true, requiresProject: true });
    expect(kind?.apiKeyHelp).toContain('$LINEAR_API_KEY');
  });

  it('create refuses a missing key, a missing project and a bad setting with their kinds', async () => {
    const create = kind?.create;
    if (create === undefined) throw new Error('linear kind has no create');
    await expectTrackerError(create(settings({ apiKey: '' })), 'missing_tracker_api_key');
    await expectTrackerError(create(settings({ project: '' })), 'missing_tracker_project');
    await expectTrackerError(create(settings({ options: { page_size: 0 } })), 'tracker_payload_error');
    const tracker = await create(settings());
    expect(typeof tracker.fetchCandidateIssues).toBe('function');
  });

  it('reach reports an endpoint that refuses connections at once, and any answer as reachable', async () => {
    const fake = await startFakeLinear();
    const endpoint = fake.endpoint;
    expect(await kind?.reach?.(settings({ endpoint }), 1_000)).toEqual({ ok: true });
    // No key travels with the probe.
    expect(fake.requests.at(-1)?.key).toBe('none');
    await fake.close();
    const started = Date.now();
    expect(await kind?.reach?.(settings({ endpoint }), 10_000)).toEqual({
      ok: false,
      address: endpoint,
      reason: 'connection refused',
    });
    // Far short of the probe's own limit: refused, not timed out.
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('orchestrator validate on a linear workflow', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'linear-validate-'));
  const workflow = (tracker: string, extra = '') => {
    const file = path.join(dir, `w-${Math.random().toString(36).slice(2)}.md`);
    writeFileSync(
      file,
      `---\ntracker:\n  kind: linear\n${tracker}\n${extra}agent:\n  kind: mock\n---\nWork on {{ issue.title }}.\n`,
    );
    return file;
  };

  it('reports the key resolving empty, the project format and a misspelt block key with their codes', () => {
    const file = workflow(
      [
        '  api_key: $LINEAR_API_KEY',
        '  project: https://linear.app/acme/project/widgets-3f9c1a7b2e4d',
        '  active_states: [Todo]',
        '  terminal_states: [Done]',
      ].join('\n'),
      'linear:\n  page_sise: 10\n',
    );
    const r = runCli(['validate', file, '--format', 'json'], { env: { LINEAR_API_KEY: '' } });
    expect(r.status).toBe(1);
    const found = (JSON.parse(r.stdout) as { diagnostics: { code: string; message: string }[] }).diagnostics;
    const byCode = new Map(found.map((d) => [d.code, d.message]));
    expect([...byCode.keys()]).toEqual(
      expect.arrayContaining(['tracker.api_key.empty', 'linear.project.format', 'config.unknown_key']),
    );
    expect(byCode.get('tracker.api_key.empty')).toContain('LINEAR_API_KEY');
    expect(byCode.get('config.unknown_key')).toContain('linear.page_size');
  });
});
