import { homedir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { TrackerError } from '../../../src/domain/errors.js';
import type { TrackerSettings } from '../../../src/domain/tracker.js';
import { parseFileConfig } from '../../../src/tracker/file/config.js';
import { trackerKind } from '../../../src/tracker/registry.js';
import '../../../src/tracker/kinds.js';

function settings(options: Record<string, unknown>): TrackerSettings {
  return {
    kind: 'file',
    endpoint: '',
    apiKey: '',
    project: '',
    queryFilter: '',
    assignee: null,
    requiredLabels: [],
    activeStates: [],
    terminalStates: [],
    handoffState: null,
    inProgressState: null,
    blockedState: null,
    options,
    baseDir: '/srv/work',
  };
}

describe('file tracker config', () => {
  it('a relative path resolves against the workflow directory, not the process cwd', () => {
    expect(parseFileConfig(settings({ path: 'issues.yaml' }))).toEqual({
      config: { path: '/srv/work/issues.yaml' },
      issues: [],
    });
    expect(parseFileConfig(settings({ path: '/abs/issues.json' })).config?.path).toBe('/abs/issues.json');
    expect(parseFileConfig(settings({ path: '~/issues.json' })).config?.path).toBe(
      `${homedir()}/issues.json`,
    );
  });

  it.each([
    ['absent', {}, 'file.path.missing'],
    ['null', { path: null }, 'file.path.missing'],
    ['empty', { path: '  ' }, 'file.path.missing'],
    ['a number', { path: 3 }, 'file.path.invalid'],
    ['a list', { path: ['a'] }, 'file.path.invalid'],
  ])('a path that is %s is an error at file.path', (_label, options, code) => {
    const result = parseFileConfig(settings(options));
    expect(result.config).toBeNull();
    expect(result.issues).toEqual([
      expect.objectContaining({ severity: 'error', code, path: ['file', 'path'] }),
    ]);
  });

  it('an unknown key in the file block is a warning, not a silent no-op', () => {
    const result = parseFileConfig(settings({ path: 'x.json', pth: 'y.json' }));
    expect(result.config).not.toBeNull();
    expect(result.issues).toEqual([
      expect.objectContaining({ severity: 'warning', code: 'config.unknown_key', path: ['file', 'pth'] }),
    ]);
  });
});

describe('file tracker registration', () => {
  it('the file kind needs neither an api key nor a project', () => {
    const kind = trackerKind('file');
    expect(kind).toBeDefined();
    expect(kind?.requiresApiKey).toBe(false);
    expect(kind?.requiresProject).toBe(false);
  });

  it('validation and creation apply the same path rule', async () => {
    const kind = trackerKind('file');
    const create = kind?.create;
    if (create === undefined) throw new Error('the file kind must be able to create trackers');
    expect(kind?.validateConfig(settings({}))).toEqual([
      expect.objectContaining({ code: 'file.path.missing' }),
    ]);
    const created = create(settings({}));
    await expect(created).rejects.toBeInstanceOf(TrackerError);
    await expect(created).rejects.toMatchObject({ kind: 'tracker_payload_error' });
    expect(kind?.validateConfig(settings({ path: 'issues.json' }))).toEqual([]);
    await expect(create(settings({ path: 'issues.json' }))).resolves.toBeDefined();
  });
});
