import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TrackerSettings } from '../../../src/domain/tracker.js';
import { parseGithubConfig } from '../../../src/tracker/github/config.js';
import { runCli } from '../../support/cli.js';

function settings(over: Partial<TrackerSettings> = {}): TrackerSettings {
  return {
    kind: 'github',
    endpoint: '',
    apiKey: 'ghp_x',
    project: 'acme/widgets',
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

const codes = (over: Partial<TrackerSettings>) => parseGithubConfig(settings(over)).issues.map((i) => i.code);

describe('github config', () => {
  it('defaults: the public API, 1000 cached answers, 200 pages, 30 s rate-limit wait, 1 s between writes', () => {
    expect(parseGithubConfig(settings()).config).toEqual({
      owner: 'acme',
      repo: 'widgets',
      endpoint: 'https://api.github.com',
      token: 'ghp_x',
      queryFilter: '',
      assignee: null,
      etagCacheSize: 1000,
      maxPages: 200,
      maxRateLimitWaitMs: 30_000,
      minWriteIntervalMs: 1000,
    });
  });

  it.each([
    [{ project: 'acme' }, 'github.project.format'],
    [{ project: 'https://github.com/acme/widgets' }, 'github.project.format'],
    [{ apiKey: '   ' }, 'github.api_key.blank'],
    [{ endpoint: 'ghe.acme.internal' }, 'github.endpoint.invalid'],
    [{ blockedState: 'Done' }, 'github.states.overlap'],
    [{ options: { max_pages: -1 } }, 'github.max_pages.invalid'],
    [{ options: { etag_cache_size: 'many' } }, 'github.etag_cache_size.invalid'],
    [{ options: { max_rate_limit_wait_ms: 1.5 } }, 'github.max_rate_limit_wait_ms.invalid'],
    [{ options: { page_size: 5 } }, 'config.unknown_key'],
  ] as const)('%j is reported as %s', (over, code) => {
    expect(codes(over as Partial<TrackerSettings>)).toContain(code);
  });

  it('an empty token adds nothing here: the generic tracker.api_key.missing (or .empty) says it once', () => {
    expect(codes({ apiKey: '' })).toEqual([]);
    expect(parseGithubConfig(settings({ apiKey: '' })).config).toBeNull();
  });

  it('a misspelt github key gets a "did you mean"', () => {
    expect(parseGithubConfig(settings({ options: { max_pagez: 3 } })).issues.map((i) => i.message)).toEqual([
      'unknown key "github.max_pagez" (did you mean "github.max_pages"?)',
    ]);
  });

  it('an Enterprise endpoint is used as the API base, without a trailing slash', () => {
    expect(
      parseGithubConfig(settings({ endpoint: 'https://ghe.acme.internal/api/v3/' })).config?.endpoint,
    ).toBe('https://ghe.acme.internal/api/v3');
  });

  it('a blocked state shared with the handoff state is fine', () => {
    expect(codes({ blockedState: 'review' })).toEqual([]);
  });
});

describe('orchestrator validate on a github workflow', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-validate-'));
  const workflow = (tracker: string) => {
    const file = path.join(dir, `w-${Math.random().toString(36).slice(2)}.md`);
    writeFileSync(
      file,
      `---\ntracker:\n  kind: github\n${tracker}\nagent:\n  kind: mock\n---\nWork on {{ issue.title }}.\n`,
    );
    return file;
  };

  it('reports the token resolving empty, the project format and overlapping states with their codes', () => {
    const file = workflow(
      [
        '  api_key: $GITHUB_TOKEN',
        '  project: acme',
        '  active_states: [todo]',
        '  terminal_states: [done, Todo]',
        '  blocked_state: done',
      ].join('\n'),
    );
    const r = runCli(['validate', file, '--format', 'json'], { env: { GITHUB_TOKEN: '' } });
    expect(r.status).toBe(1);
    const found = (JSON.parse(r.stdout) as { diagnostics: { code: string; message: string }[] }).diagnostics;
    const byCode = new Map(found.map((d) => [d.code, d.message]));
    expect([...byCode.keys()]).toEqual(
      expect.arrayContaining([
        'tracker.api_key.empty',
        'github.project.format',
        'tracker.states.overlap',
        'github.states.overlap',
      ]),
    );
    expect(byCode.get('tracker.api_key.empty')).toContain('GITHUB_TOKEN');
    expect(found.filter((d) => d.code.includes('api_key')).map((d) => d.code)).toEqual([
      'tracker.api_key.empty',
    ]);
  });
});
