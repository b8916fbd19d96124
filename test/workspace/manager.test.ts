import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { OWNER_ENV } from '../../src/domain/owner.js';
import type { HooksConfig } from '../../src/workflow/config.js';
import { HOOK_PIPE_DRAIN_MS, type HookResult } from '../../src/workspace/hooks.js';
import { WorkspaceManager } from '../../src/workspace/manager.js';
import {
  baseEnvWithSecrets,
  isAlive,
  killQuietly,
  listTree,
  noHooks,
  readPid,
  removeTempDirs,
  tempDir,
} from './support.js';

afterAll(removeTempDirs);

const leftovers: number[] = [];
afterEach(() => {
  for (const pid of leftovers.splice(0)) killQuietly(pid);
});

interface Fixture {
  /** The temp dir holding both the root and an `outside` directory with a file in it. */
  base: string;
  root: string;
  outside: string;
  events: { hook: string; issueIdentifier: string; result: HookResult }[];
  manager: WorkspaceManager;
}

async function fixture(hooks: Partial<HooksConfig> = {}, rootName = 'root'): Promise<Fixture> {
  const base = await tempDir();
  const root = path.join(base, rootName);
  const outside = path.join(base, 'outside');
  await fsp.mkdir(outside);
  await fsp.writeFile(path.join(outside, 'precious.txt'), 'keep me');
  const events: Fixture['events'] = [];
  const manager = new WorkspaceManager({
    root,
    hooks: noHooks(hooks),
    baseEnv: baseEnvWithSecrets(),
    onHook: (event) => events.push(event),
  });
  return { base, root, outside, events, manager };
}

const issue = (identifier: string, id = `id-${identifier}`) => ({ id, identifier });

async function exists(p: string): Promise<boolean> {
  return fsp.lstat(p).then(
    () => true,
    () => false,
  );
}

async function lines(file: string): Promise<string[]> {
  const text = await fsp.readFile(file, 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line !== '');
}

describe('workspace paths: the identifier corpus', () => {
  const corpus = [
    '../',
    '../../etc',
    '/etc/passwd',
    'a/../../b',
    '..\\..\\windows',
    'a\0b',
    '\0',
    'ÄÖ-1',
    '🚀',
    '.',
    '..',
    '',
    '...',
    '-rf',
    ' ',
    'x'.repeat(10_000),
    'ABC-123',
    'owner/repo#9',
  ];

  it('every identifier yields a direct child of the root or is refused; nothing outside is touched', async () => {
    const f = await fixture({ afterCreate: 'echo created > marker' });
    const refused: string[] = [];
    for (const identifier of corpus) {
      const planned = f.manager.pathFor(identifier);
      const prepared = await f.manager.prepare(issue(identifier), 1);
      if (!planned.ok) {
        expect(planned.error.kind).toBe('invalid_key');
        expect(prepared.ok).toBe(false);
        refused.push(identifier);
        continue;
      }
      expect(path.dirname(planned.path)).toBe(f.root);
      expect(prepared.ok).toBe(true);
      if (prepared.ok) expect(prepared.workspace.path).toBe(planned.path);
    }
    expect(refused).toEqual(['']);
    expect((await fsp.readdir(f.base)).sort()).toEqual(['outside', 'root']);
    expect(await listTree(f.outside)).toEqual(['precious.txt']);
    for (const entry of await fsp.readdir(f.root, { withFileTypes: true })) {
      expect(entry.isDirectory()).toBe(true);
      expect(await fsp.readFile(path.join(f.root, entry.name, 'marker'), 'utf8')).toBe('created\n');
    }
  });

  it('the root itself can never be removed through a dot identifier', async () => {
    const f = await fixture();
    await f.manager.prepare(issue('ABC-1'), 1);
    for (const identifier of ['.', '..']) {
      expect(await f.manager.remove(identifier)).toEqual({ removed: false, error: null });
    }
    expect((await f.manager.remove('')).error?.kind).toBe('invalid_key');
    expect(await exists(path.join(f.root, 'ABC-1'))).toBe(true);
    expect(await exists(f.root)).toBe(true);
  });

  it('a missing nested root is created on first use instead of failing', async () => {
    const f = await fixture({}, 'a/b/c');
    const prepared = await f.manager.prepare(issue('ABC-1'), 1);
    expect(prepared).toMatchObject({
      ok: true,
      workspace: { path: path.join(f.root, 'ABC-1'), createdNow: true },
    });
  });

  it('a root reached through a symlink gives paths on the real location, before and after it exists', async () => {
    const base = await tempDir();
    const real = path.join(base, 'real');
    await fsp.mkdir(real);
    await fsp.symlink(real, path.join(base, 'link'));
    const manager = new WorkspaceManager({
      root: path.join(base, 'link', 'ws'),
      hooks: noHooks(),
      baseEnv: {},
    });
    const before = manager.pathFor('ABC-1');
    const prepared = await manager.prepare(issue('ABC-1'), 1);
    const after = manager.pathFor('ABC-1');
    expect(before).toMatchObject({ ok: true, path: path.join(real, 'ws', 'ABC-1') });
    expect(after).toMatchObject({ ok: true, path: path.join(real, 'ws', 'ABC-1') });
    expect(prepared).toMatchObject({ ok: true, workspace: { path: path.join(real, 'ws', 'ABC-1') } });
  });

  it('the filesystem root is refused as a workspace root, so remove() can never delete /etc', () => {
    const manager = new WorkspaceManager({ root: '/', hooks: noHooks(), baseEnv: {} });
    const result = manager.pathFor('etc');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.kind).toBe('escape');
  });
});

describe('symlinks', () => {
  it('a planted symlink at the workspace path pointing outside is refused and nothing outside is touched', async () => {
    const f = await fixture({ afterCreate: 'echo pwned > pwned', beforeRun: 'echo pwned > pwned2' });
    await fsp.mkdir(f.root);
    await fsp.symlink(f.outside, path.join(f.root, 'ABC-1'));
    const prepared = await f.manager.prepare(issue('ABC-1'), 1);
    expect(prepared.ok).toBe(false);
    if (!prepared.ok) expect(prepared.error.kind).toBe('symlink');
    expect(f.events).toEqual([]);

    const removed = await f.manager.remove('ABC-1');
    expect(removed).toMatchObject({ removed: false, error: { kind: 'symlink' } });
    expect(await listTree(f.outside)).toEqual(['precious.txt']);
    expect((await fsp.lstat(path.join(f.root, 'ABC-1'))).isSymbolicLink()).toBe(true);
  });

  it('a symlink at the workspace path is refused even when it points inside the root', async () => {
    const f = await fixture();
    await f.manager.prepare(issue('OTHER-1'), 1);
    await fsp.symlink(path.join(f.root, 'OTHER-1'), path.join(f.root, 'ABC-1'));
    const prepared = await f.manager.prepare(issue('ABC-1'), 1);
    expect(prepared).toMatchObject({ ok: false, error: { kind: 'symlink' } });
  });

  it('a dangling symlink at the workspace path is refused rather than created through', async () => {
    const f = await fixture();
    await fsp.mkdir(f.root);
    const target = path.join(f.base, 'would-be-created');
    await fsp.symlink(target, path.join(f.root, 'ABC-1'));
    const prepared = await f.manager.prepare(issue('ABC-1'), 1);
    expect(prepared).toMatchObject({ ok: false, error: { kind: 'symlink' } });
    expect(await exists(target)).toBe(false);
  });

  it('a symlink inside a workspace pointing outside survives remove() untouched, with its target files', async () => {
    const f = await fixture();
    const prepared = await f.manager.prepare(issue('ABC-1'), 1);
    if (!prepared.ok) throw prepared.error;
    const ws = prepared.workspace.path;
    await fsp.symlink(f.outside, path.join(ws, 'escape-dir'));
    await fsp.symlink(path.join(f.outside, 'precious.txt'), path.join(ws, 'escape-file'));
    await fsp.mkdir(path.join(ws, 'nested'));
    await fsp.symlink(f.outside, path.join(ws, 'nested', 'deeper-escape'));

    const removed = await f.manager.remove('ABC-1');
    expect(removed).toEqual({ removed: true, error: null });
    expect(await exists(ws)).toBe(false);
    expect(await listTree(f.outside)).toEqual(['precious.txt']);
    expect(await fsp.readFile(path.join(f.outside, 'precious.txt'), 'utf8')).toBe('keep me');
  });

  it('a before_remove hook that swaps the workspace for a symlink cannot redirect the deletion', async () => {
    const f = await fixture();
    const prepared = await f.manager.prepare(issue('ABC-1'), 1);
    if (!prepared.ok) throw prepared.error;
    const ws = prepared.workspace.path;
    const swapping = new WorkspaceManager({
      root: f.root,
      hooks: noHooks({ beforeRemove: `cd / && rm -rf '${ws}' && ln -s '${f.outside}' '${ws}'` }),
      baseEnv: baseEnvWithSecrets(),
    });
    const removed = await swapping.remove('ABC-1');
    expect(removed).toMatchObject({ removed: false, error: { kind: 'symlink' } });
    expect(await listTree(f.outside)).toEqual(['precious.txt']);
  });
});

describe('creating and reusing', () => {
  it('an existing file at the workspace path is a conflict and is left as it was', async () => {
    const f = await fixture();
    await fsp.mkdir(f.root);
    await fsp.writeFile(path.join(f.root, 'ABC-1'), 'not a dir');
    const prepared = await f.manager.prepare(issue('ABC-1'), 1);
    expect(prepared).toMatchObject({ ok: false, error: { kind: 'conflict' } });
    expect(await fsp.readFile(path.join(f.root, 'ABC-1'), 'utf8')).toBe('not a dir');
    expect(await f.manager.remove('ABC-1')).toMatchObject({ removed: false, error: { kind: 'conflict' } });
  });

  it('a workspace is reused across attempts and after_create never runs twice', async () => {
    const base = await tempDir();
    const count = path.join(base, 'count');
    const f = await fixture({ afterCreate: `echo x >> '${count}'` });
    const first = await f.manager.prepare(issue('ABC-1'), 1);
    const second = await f.manager.prepare(issue('ABC-1'), 1);
    expect(first).toMatchObject({ ok: true, workspace: { createdNow: true } });
    expect(second).toMatchObject({ ok: true, workspace: { createdNow: false } });
    expect(await lines(count)).toEqual(['x']);
  });

  it('two concurrent prepare() calls create once: one createdNow, after_create once, both see it populated', async () => {
    const base = await tempDir();
    const count = path.join(base, 'count');
    const f = await fixture({
      afterCreate: `sleep 0.2; echo x >> '${count}'; touch populated`,
      beforeRun: 'test -f populated',
    });
    const results = await Promise.all([
      f.manager.prepare(issue('ABC-1'), 1),
      f.manager.prepare(issue('ABC-1'), 1),
    ]);
    const created = results.map((r) => (r.ok ? r.workspace.createdNow : 'failed'));
    expect(created.sort()).toEqual([false, true]);
    expect(await lines(count)).toEqual(['x']);
  });

  it('two managers racing on one root (two processes) still create the directory exactly once', async () => {
    const base = await tempDir();
    const count = path.join(base, 'count');
    const root = path.join(base, 'root');
    const make = () =>
      new WorkspaceManager({ root, hooks: noHooks({ afterCreate: `echo x >> '${count}'` }), baseEnv: {} });
    const managers = Array.from({ length: 6 }, make);
    const results = await Promise.all(managers.map((m) => m.prepare(issue('ABC-1'), 1)));
    expect(results.every((r) => r.ok)).toBe(true);
    expect(results.filter((r) => r.ok && r.workspace.createdNow)).toHaveLength(1);
    expect(await lines(count)).toEqual(['x']);
  });

  it('an after_create failure removes the new directory and reports hook_failed with the output', async () => {
    const f = await fixture({ afterCreate: 'echo cloning; echo boom >&2; exit 7' });
    const prepared = await f.manager.prepare(issue('ABC-1'), 1);
    expect(prepared.ok).toBe(false);
    if (prepared.ok) return;
    expect(prepared.error).toMatchObject({ kind: 'hook_failed', hook: 'after_create' });
    expect(prepared.error.message).toContain('exited with code 7');
    expect(prepared.error.output).toBe('cloning\nboom\n');
    expect(await exists(path.join(f.root, 'ABC-1'))).toBe(false);
  });

  it('after a failed after_create the next attempt creates afresh and runs after_create again', async () => {
    const base = await tempDir();
    const flag = path.join(base, 'fail-once');
    await fsp.writeFile(flag, '');
    const f = await fixture({
      afterCreate: `if [ -f '${flag}' ]; then rm '${flag}'; exit 1; fi; touch populated`,
    });
    expect((await f.manager.prepare(issue('ABC-1'), 1)).ok).toBe(false);
    const retry = await f.manager.prepare(issue('ABC-1'), 1);
    expect(retry).toMatchObject({ ok: true, workspace: { createdNow: true } });
    expect(await exists(path.join(f.root, 'ABC-1', 'populated'))).toBe(true);
  });

  it('an after_create timeout removes the new directory and reports hook_timeout, not a plain failure', async () => {
    const f = await fixture({ afterCreate: 'sleep 300', timeoutMs: 200 });
    const prepared = await f.manager.prepare(issue('ABC-1'), 1);
    expect(prepared).toMatchObject({ ok: false, error: { kind: 'hook_timeout', hook: 'after_create' } });
    expect(await exists(path.join(f.root, 'ABC-1'))).toBe(false);
  });

  it('a before_run failure fails the attempt but keeps the directory and what after_create put there', async () => {
    const f = await fixture({ afterCreate: 'echo work > file.txt', beforeRun: 'echo dirty tree; exit 2' });
    const prepared = await f.manager.prepare(issue('ABC-1'), 1);
    expect(prepared).toMatchObject({
      ok: false,
      error: { kind: 'hook_failed', hook: 'before_run', output: 'dirty tree\n' },
    });
    expect(await fsp.readFile(path.join(f.root, 'ABC-1', 'file.txt'), 'utf8')).toBe('work\n');
  });

  it('a before_run timeout kills its whole process group and returns hook_timeout quickly', async () => {
    const base = await tempDir();
    const pidFile = path.join(base, 'grandchild.pid');
    const f = await fixture({ beforeRun: `sleep 300 & echo $! > '${pidFile}'; sleep 300`, timeoutMs: 300 });
    const started = Date.now();
    const prepared = await f.manager.prepare(issue('ABC-1'), 1);
    const pid = await readPid(pidFile);
    leftovers.push(pid);
    expect(prepared).toMatchObject({ ok: false, error: { kind: 'hook_timeout', hook: 'before_run' } });
    // Not the 300 s sleep, and not an abandoned pipe either (that would add the drain bound).
    expect(Date.now() - started).toBeLessThan(300 + HOOK_PIPE_DRAIN_MS);
    await vi.waitFor(() => expect(isAlive(pid)).toBe(false), { timeout: 2_000, interval: 20 });
  });

  it('an abort during prepare kills the running hook instead of waiting for its timeout', async () => {
    const f = await fixture({ beforeRun: 'sleep 300', timeoutMs: 60_000 });
    const controller = new AbortController();
    const pending = f.manager.prepare(issue('ABC-1'), 1, controller.signal);
    setTimeout(() => controller.abort(), 100);
    const prepared = await pending;
    expect(prepared).toMatchObject({ ok: false, error: { kind: 'hook_failed', hook: 'before_run' } });
  });
});

describe('hook environment and working directory', () => {
  it('hooks run in the workspace with the issue variables, and secrets never reach them', async () => {
    const base = await tempDir();
    const dump = path.join(base, 'env');
    const f = await fixture({ beforeRun: `env > '${dump}'; echo "PWD_IS=$(pwd)" >> '${dump}'` });
    const prepared = await f.manager.prepare(issue('ABC-1', 'internal-77'), 2);
    if (!prepared.ok) throw prepared.error;
    const env = await fsp.readFile(dump, 'utf8');
    expect(env).not.toContain('ORCHESTRATOR_TRACKER_API_KEY');
    expect(env).not.toContain('GITHUB_TOKEN');
    expect(env).not.toContain('secret');
    expect(env).toContain('ORCHESTRATOR_ISSUE_ID=internal-77\n');
    expect(env).toContain('ORCHESTRATOR_ISSUE_IDENTIFIER=ABC-1\n');
    expect(env).toContain(`ORCHESTRATOR_WORKSPACE=${prepared.workspace.path}\n`);
    expect(env).toContain('ORCHESTRATOR_ATTEMPT=2\n');
    expect(env).toContain(`PWD_IS=${prepared.workspace.path}\n`);
  });

  it('every hook runs with the owner tag, so the start-up reaper of a restarted service can find any of them', async () => {
    const base = await tempDir();
    const log = path.join(base, 'owners');
    const record = (hook: string) => `echo "${hook} $${OWNER_ENV}" >> '${log}'`;
    const manager = new WorkspaceManager({
      root: path.join(base, 'root'),
      hooks: noHooks({
        afterCreate: record('after_create'),
        beforeRun: record('before_run'),
        afterRun: record('after_run'),
        beforeRemove: record('before_remove'),
      }),
      baseEnv: { ...baseEnvWithSecrets(), [OWNER_ENV]: 'outer-tag' },
      ownerTag: 'tag-7',
    });
    const prepared = await manager.prepare(issue('ABC-1'), 1);
    if (!prepared.ok) throw prepared.error;
    await manager.afterRun(prepared.workspace.path, issue('ABC-1'), 1);
    await manager.remove('ABC-1', 'id-ABC-1');
    expect(await lines(log)).toEqual([
      'after_create tag-7',
      'before_run tag-7',
      'after_run tag-7',
      'before_remove tag-7',
    ]);
  });

  it('a first run reports attempt 1 to hooks, the number its run record and comment carry', async () => {
    const f = await fixture({ afterCreate: 'echo "$ORCHESTRATOR_ATTEMPT" > attempt' });
    const prepared = await f.manager.prepare(issue('ABC-1'), 1);
    if (!prepared.ok) throw prepared.error;
    expect(await fsp.readFile(path.join(prepared.workspace.path, 'attempt'), 'utf8')).toBe('1\n');
  });

  it('every hook run is reported to onHook with its name and the issue', async () => {
    const f = await fixture({
      afterCreate: 'true',
      beforeRun: 'true',
      afterRun: 'true',
      beforeRemove: 'true',
    });
    const prepared = await f.manager.prepare(issue('ABC-1'), 1);
    if (!prepared.ok) throw prepared.error;
    await f.manager.afterRun(prepared.workspace.path, issue('ABC-1'), 1);
    await f.manager.remove('ABC-1', 'id-ABC-1');
    expect(f.events.map((e) => [e.hook, e.issueIdentifier, e.result.ok])).toEqual([
      ['after_create', 'ABC-1', true],
      ['before_run', 'ABC-1', true],
      ['after_run', 'ABC-1', true],
      ['before_remove', 'ABC-1', true],
    ]);
  });

  it('an onHook observer that throws does not change the outcome', async () => {
    const base = await tempDir();
    const manager = new WorkspaceManager({
      root: path.join(base, 'root'),
      hooks: noHooks({ afterCreate: 'true' }),
      baseEnv: {},
      onHook: () => {
        throw new Error('observer bug');
      },
    });
    expect((await manager.prepare(issue('ABC-1'), 1)).ok).toBe(true);
  });
});

describe('afterRun', () => {
  it('no after_run hook gives null, not a fake result', async () => {
    const f = await fixture();
    const prepared = await f.manager.prepare(issue('ABC-1'), 1);
    if (!prepared.ok) throw prepared.error;
    expect(await f.manager.afterRun(prepared.workspace.path, issue('ABC-1'), 1)).toBeNull();
  });

  it('an after_run failure is returned, not thrown', async () => {
    const f = await fixture({ afterRun: 'echo cleanup failed; exit 5' });
    const prepared = await f.manager.prepare(issue('ABC-1'), 1);
    if (!prepared.ok) throw prepared.error;
    const result = await f.manager.afterRun(prepared.workspace.path, issue('ABC-1'), 1);
    expect(result).toMatchObject({ ok: false, exitCode: 5, timedOut: false, output: 'cleanup failed\n' });
  });

  it('an after_run timeout is returned as a timed-out result, not thrown', async () => {
    const f = await fixture({ afterRun: 'sleep 300', timeoutMs: 200 });
    const prepared = await f.manager.prepare(issue('ABC-1'), 1);
    if (!prepared.ok) throw prepared.error;
    const result = await f.manager.afterRun(prepared.workspace.path, issue('ABC-1'), 1);
    expect(result).toMatchObject({ ok: false, timedOut: true });
  });

  it('after_run is not run in a directory outside the root', async () => {
    const f = await fixture({ afterRun: 'touch ran-here' });
    const result = await f.manager.afterRun(f.outside, issue('ABC-1'), 1);
    expect(result).toMatchObject({ ok: false, exitCode: null });
    expect(await listTree(f.outside)).toEqual(['precious.txt']);
  });
});

describe('remove', () => {
  it('before_remove runs while the workspace still exists, then the workspace is deleted', async () => {
    const base = await tempDir();
    const seen = path.join(base, 'seen');
    const f = await fixture({ afterCreate: 'touch keep.txt', beforeRemove: `ls > '${seen}'` });
    await f.manager.prepare(issue('ABC-1'), 1);
    const removed = await f.manager.remove('ABC-1', 'id-ABC-1');
    expect(removed).toEqual({ removed: true, error: null });
    expect(await lines(seen)).toEqual(['keep.txt']);
    expect(await exists(path.join(f.root, 'ABC-1'))).toBe(false);
  });

  it('a failing before_remove hook does not stop the deletion', async () => {
    const f = await fixture({ beforeRemove: 'echo cannot; exit 1' });
    await f.manager.prepare(issue('ABC-1'), 1);
    expect(await f.manager.remove('ABC-1')).toEqual({ removed: true, error: null });
    expect(await exists(path.join(f.root, 'ABC-1'))).toBe(false);
    expect(f.events.map((e) => [e.hook, e.result.exitCode])).toEqual([['before_remove', 1]]);
  });

  it('a timed-out before_remove hook does not stop the deletion', async () => {
    const f = await fixture({ beforeRemove: 'sleep 300', timeoutMs: 200 });
    await f.manager.prepare(issue('ABC-1'), 1);
    expect(await f.manager.remove('ABC-1')).toEqual({ removed: true, error: null });
  });

  it('removing a workspace that does not exist is not an error and runs no hook', async () => {
    const f = await fixture({ beforeRemove: 'true' });
    expect(await f.manager.remove('ABC-1')).toEqual({ removed: false, error: null });
    expect(f.events).toEqual([]);
  });

  it('removal leaves the root and the other workspaces in place', async () => {
    const f = await fixture();
    await f.manager.prepare(issue('ABC-1'), 1);
    await f.manager.prepare(issue('ABC-2'), 1);
    await f.manager.remove('ABC-1');
    expect(await f.manager.existingKeys()).toEqual(['ABC-2']);
  });
});

describe('existingKeys', () => {
  it('a root that does not exist yet lists nothing instead of failing', async () => {
    const f = await fixture();
    expect(await f.manager.existingKeys()).toEqual([]);
  });

  it('only workspace directories are listed: files, symlinks and foreign names are not', async () => {
    const f = await fixture();
    await f.manager.prepare(issue('ABC-2'), 1);
    await f.manager.prepare(issue('ABC-1'), 1);
    await fsp.writeFile(path.join(f.root, 'stray-file'), '');
    await fsp.symlink(f.outside, path.join(f.root, 'link-to-dir'));
    await fsp.mkdir(path.join(f.root, 'not a key'));
    expect(await f.manager.existingKeys()).toEqual(['ABC-1', 'ABC-2']);
  });
});

describe('one issue per workspace', () => {
  it('identifiers that sanitise alike (A/B, A_B, A:B, A B) run in four directories, and removing one spares the others', async () => {
    const f = await fixture({ afterCreate: 'echo "$ORCHESTRATOR_ISSUE_IDENTIFIER" > owner' });
    const paths: string[] = [];
    for (const identifier of ['A/B', 'A_B', 'A:B', 'A B']) {
      const prepared = await f.manager.prepare(issue(identifier), 1);
      if (!prepared.ok) throw prepared.error;
      paths.push(prepared.workspace.path);
    }
    expect(new Set(paths).size).toBe(4);
    await f.manager.afterRun(paths[0] as string, issue('A/B'), 1);
    expect(await f.manager.remove('A/B', 'id-A/B')).toEqual({ removed: true, error: null });
    for (const [i, identifier] of ['A_B', 'A:B', 'A B'].entries()) {
      expect(await fsp.readFile(path.join(paths[i + 1] as string, 'owner'), 'utf8')).toBe(`${identifier}\n`);
    }
  });

  it('a second issue with the same identifier cannot run in, or remove, a workspace in use (busy)', async () => {
    const f = await fixture();
    const first = await f.manager.prepare(issue('DUP-1', 'one'), 1);
    if (!first.ok) throw first.error;
    const second = await f.manager.prepare(issue('DUP-1', 'two'), 1);
    expect(second.ok ? null : second.error.kind).toBe('busy');
    expect(await f.manager.remove('DUP-1', 'two')).toMatchObject({ removed: false, error: { kind: 'busy' } });
    expect(await exists(first.workspace.path)).toBe(true);
    await f.manager.afterRun(first.workspace.path, issue('DUP-1', 'one'), 1);
    expect((await f.manager.prepare(issue('DUP-1', 'two'), 1)).ok).toBe(true);
  });

  it('a workspace whose before_run failed is free again for another issue', async () => {
    const f = await fixture({ beforeRun: 'exit 3' });
    expect((await f.manager.prepare(issue('DUP-2', 'one'), 1)).ok).toBe(false);
    const other = await f.manager.prepare(issue('DUP-2', 'two'), 1);
    expect(other.ok ? null : other.error.kind).toBe('hook_failed');
  });

  it('an old-named workspace is adopted when the owner check says it was this issue’s, with its files', async () => {
    const base = await tempDir();
    const root = path.join(base, 'root');
    await fsp.mkdir(path.join(root, 'owner_repo_9'), { recursive: true });
    await fsp.writeFile(path.join(root, 'owner_repo_9', 'work.txt'), 'checkout');
    const asked: [string, string][] = [];
    const manager = new WorkspaceManager({
      root,
      hooks: noHooks({ afterCreate: 'touch created' }),
      baseEnv: {},
      ownsLegacy: (issueId, p) => {
        asked.push([issueId, p]);
        return true;
      },
    });
    const prepared = await manager.prepare(issue('owner/repo#9'), 1);
    if (!prepared.ok) throw prepared.error;
    expect(asked).toEqual([['id-owner/repo#9', path.join(root, 'owner_repo_9')]]);
    expect(prepared.workspace.createdNow).toBe(false);
    expect(path.basename(prepared.workspace.path)).toMatch(/^owner_repo_9--[0-9a-f]{16}$/);
    expect(await fsp.readdir(prepared.workspace.path)).toEqual(['work.txt']);
    expect(await exists(path.join(root, 'owner_repo_9'))).toBe(false);
  });

  it('an old-named workspace another issue may own is left alone and a new one is made', async () => {
    const base = await tempDir();
    const root = path.join(base, 'root');
    await fsp.mkdir(path.join(root, 'A_B'), { recursive: true });
    await fsp.writeFile(path.join(root, 'A_B', 'theirs.txt'), 'A_B work');
    const manager = new WorkspaceManager({ root, hooks: noHooks(), baseEnv: {}, ownsLegacy: () => false });
    const prepared = await manager.prepare(issue('A/B'), 1);
    if (!prepared.ok) throw prepared.error;
    expect(prepared.workspace.createdNow).toBe(true);
    expect(await fsp.readFile(path.join(root, 'A_B', 'theirs.txt'), 'utf8')).toBe('A_B work');
    // A_B itself still works in its own directory.
    const own = await manager.prepare(issue('A_B'), 1);
    expect(own.ok ? own.workspace.path : null).toBe(path.join(root, 'A_B'));
  });
});
