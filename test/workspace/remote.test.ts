import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { OWNER_ENV } from '../../src/domain/owner.js';
import type {
  RemoteFailure,
  RemoteHost,
  RemoteScriptParams,
  RemoteScriptResult,
} from '../../src/domain/remote.js';
import type { HooksConfig } from '../../src/workflow/config.js';
import { HOOK_OUTPUT_LIMIT_BYTES, type HookResult } from '../../src/workspace/hooks.js';
import { RemoteWorkspaceManager } from '../../src/workspace/remote.js';
import { LocalRemoteHost } from '../support/local-remote-host.js';
import { listTree, noHooks, removeTempDirs, tempDir } from './support.js';

afterAll(removeTempDirs);

const hosts: LocalRemoteHost[] = [];
afterEach(() => {
  for (const host of hosts.splice(0)) host.killAll();
});

const HOST_NAME = 'tester@worker-1:2222';

interface Fixture {
  base: string;
  root: string;
  outside: string;
  host: LocalRemoteHost;
  events: { hook: string; issueIdentifier: string; result: HookResult }[];
  manager: RemoteWorkspaceManager;
}

async function fixture(hooks: Partial<HooksConfig> = {}, rootName = 'root'): Promise<Fixture> {
  const base = await tempDir('remote-ws-');
  const root = path.join(base, rootName);
  const outside = path.join(base, 'outside');
  await fsp.mkdir(outside);
  await fsp.writeFile(path.join(outside, 'precious.txt'), 'keep me');
  const host = new LocalRemoteHost({ name: HOST_NAME, loginDir: base });
  hosts.push(host);
  const events: Fixture['events'] = [];
  const manager = new RemoteWorkspaceManager({
    host,
    root,
    hooks: noHooks(hooks),
    onHook: (event) => events.push(event),
  });
  return { base, root, outside, host, events, manager };
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

/** A host whose every call fails as unreachable. */
function downHost(message = 'connect ECONNREFUSED 10.0.0.9:22'): RemoteHost {
  const down = async (): Promise<RemoteFailure> => ({ ok: false, reason: 'unreachable', message });
  return { name: 'down@10.0.0.9', probe: down, launch: down, run: down, forwardToLocal: down };
}

/** A host that delegates to `inner` but answers some runs itself (to fail or dress up a step). */
function wrapHost(
  inner: RemoteHost,
  intercept: (
    params: RemoteScriptParams,
    next: () => Promise<{ ok: true; result: RemoteScriptResult } | RemoteFailure>,
  ) => Promise<{ ok: true; result: RemoteScriptResult } | RemoteFailure>,
): RemoteHost {
  return {
    name: inner.name,
    probe: () => inner.probe(),
    launch: (params) => inner.launch(params),
    run: (params) => intercept(params, () => inner.run(params)),
    forwardToLocal: (port) => inner.forwardToLocal(port),
  };
}

describe('remote workspaces: creation and reuse', () => {
  it('creates the workspace on the first prepare only, and after_create runs once, in it', async () => {
    const f = await fixture({ afterCreate: 'pwd -P >> "$ORCHESTRATOR_WORKSPACE/../../created.log"' });
    expect(await exists(f.root)).toBe(false);

    const first = await f.manager.prepare(issue('ISSUE-1'), 1);
    const second = await f.manager.prepare(issue('ISSUE-1'), 1);

    expect(first).toEqual({ ok: true, workspace: { path: path.join(f.root, 'ISSUE-1'), createdNow: true } });
    expect(second).toEqual({
      ok: true,
      workspace: { path: path.join(f.root, 'ISSUE-1'), createdNow: false },
    });
    expect(await lines(path.join(f.base, 'created.log'))).toEqual([path.join(f.root, 'ISSUE-1')]);
    expect(f.events.map((e) => e.hook)).toEqual(['after_create']);
  });

  it('concurrent prepares of one issue create it once', async () => {
    const f = await fixture({ afterCreate: 'echo x >> ../../created.log' });
    const results = await Promise.all([1, 2, 3, 4].map(() => f.manager.prepare(issue('ISSUE-2'), 1)));
    const created = results.map((r) => (r.ok ? r.workspace.createdNow : null));
    expect(created.filter((c) => c === true)).toHaveLength(1);
    expect(created.filter((c) => c === false)).toHaveLength(3);
    expect(await lines(path.join(f.base, 'created.log'))).toEqual(['x']);
  });

  it('returns the real path when the root is reached through a symlink, while pathFor keeps the configured one', async () => {
    const base = await tempDir('remote-ws-');
    await fsp.mkdir(path.join(base, 'real-root'));
    await fsp.symlink(path.join(base, 'real-root'), path.join(base, 'link-root'));
    const host = new LocalRemoteHost({ loginDir: base });
    const manager = new RemoteWorkspaceManager({
      host,
      root: path.join(base, 'link-root'),
      hooks: noHooks(),
    });

    const prepared = await manager.prepare(issue('ISSUE-3'), 1);

    expect(prepared.ok && prepared.workspace.path).toBe(path.join(base, 'real-root', 'ISSUE-3'));
    expect(manager.pathFor('ISSUE-3')).toEqual({
      ok: true,
      path: path.join(base, 'link-root', 'ISSUE-3'),
      key: 'ISSUE-3',
    });
  });

  it('a root with spaces, quotes, dollars and backticks is used literally (no quoting bugs)', async () => {
    const f = await fixture({ afterCreate: 'touch made-here' }, `r o'o"t $HOME \`id\` ;x`);
    const prepared = await f.manager.prepare(issue('ISSUE-4'), 1);
    expect(prepared.ok).toBe(true);
    expect(await exists(path.join(f.root, 'ISSUE-4', 'made-here'))).toBe(true);
    expect(await f.manager.existingKeys()).toEqual(['ISSUE-4']);
    expect(await f.manager.remove('ISSUE-4')).toEqual({ removed: true, error: null });
    expect(await listTree(f.root)).toEqual([]);
  });

  it('a key that starts with a dash is a directory name, not an option', async () => {
    const f = await fixture();
    const prepared = await f.manager.prepare(issue('-rf'), 1);
    expect(prepared.ok && prepared.workspace.path).toBe(path.join(f.root, '-rf'));
    expect(await f.manager.remove('-rf')).toEqual({ removed: true, error: null });
    expect(await listTree(f.base)).toEqual(['outside', 'outside/precious.txt', 'root']);
  });

  it('hostile identifiers never leave the root', async () => {
    const f = await fixture();
    for (const identifier of ['../../etc', '/etc/passwd', 'a/../../b', '..\\x', '..', '.']) {
      const prepared = await f.manager.prepare(issue(identifier), 1);
      expect(prepared.ok).toBe(true);
      if (prepared.ok) expect(path.dirname(prepared.workspace.path)).toBe(f.root);
    }
    expect((await f.manager.prepare(issue(''), 1)).ok).toBe(false);
    expect(await listTree(f.outside)).toEqual(['precious.txt']);
  });

  it('refuses a relative root and the filesystem root', async () => {
    const host = new LocalRemoteHost();
    for (const root of ['workspaces', '', '/', '//', '/tmp/..']) {
      const manager = new RemoteWorkspaceManager({ host, root, hooks: noHooks() });
      const prepared = await manager.prepare(issue('ISSUE-5'), 1);
      expect(prepared.ok ? null : prepared.error.kind).toBe('escape');
      await expect(manager.existingKeys()).rejects.toMatchObject({ kind: 'escape' });
    }
    expect(host.runs).toEqual([]);
  });

  it('refuses a root that resolves to / on the host', async () => {
    const base = await tempDir('remote-ws-');
    await fsp.symlink('/', path.join(base, 'slash'));
    const host = new LocalRemoteHost({ loginDir: base });
    const manager = new RemoteWorkspaceManager({ host, root: path.join(base, 'slash'), hooks: noHooks() });
    const prepared = await manager.prepare(issue('ISSUE-ROOT-TEST'), 1);
    expect(prepared.ok ? null : prepared.error.kind).toBe('escape');
    expect(await exists('/ISSUE-ROOT-TEST')).toBe(false);
  });
});

describe('remote workspaces: hooks', () => {
  it('an after_create failure removes the new workspace and fails with its output', async () => {
    const f = await fixture({ afterCreate: 'touch half-done; echo clone failed >&2; exit 3' });
    const prepared = await f.manager.prepare(issue('ISSUE-6'), 1);

    expect(prepared.ok).toBe(false);
    if (prepared.ok) return;
    expect(prepared.error.kind).toBe('hook_failed');
    expect(prepared.error.hook).toBe('after_create');
    expect(prepared.error.message).toBe('after_create hook exited with code 3');
    expect(prepared.error.output).toContain('clone failed');
    expect(await exists(path.join(f.root, 'ISSUE-6'))).toBe(false);

    // The next attempt starts clean and runs after_create again.
    const again = await f.manager.prepare(issue('ISSUE-6'), 1);
    expect(again.ok).toBe(false);
    expect(f.events.map((e) => e.hook)).toEqual(['after_create', 'after_create']);
  });

  it('a before_run failure keeps the workspace', async () => {
    const f = await fixture({ afterCreate: 'echo kept > state', beforeRun: 'echo not today; exit 1' });
    const prepared = await f.manager.prepare(issue('ISSUE-7'), 1);

    expect(prepared.ok ? null : [prepared.error.kind, prepared.error.hook]).toEqual([
      'hook_failed',
      'before_run',
    ]);
    expect(await fsp.readFile(path.join(f.root, 'ISSUE-7', 'state'), 'utf8')).toBe('kept\n');
  });

  it('hooks get the workspace variables and ORCHESTRATOR_SSH_HOST, and nothing of this process', async () => {
    process.env.REMOTE_WS_TEST_LEAK = 'must-not-leak';
    try {
      const f = await fixture({ beforeRun: 'env' });
      const prepared = await f.manager.prepare(issue('ISSUE-8', 'node-8'), 4);
      expect(prepared.ok).toBe(true);

      const output = f.events[0]?.result.output ?? '';
      const env = Object.fromEntries(
        output
          .split('\n')
          .filter((line) => line.includes('='))
          .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
      );
      expect(env).toMatchObject({
        ORCHESTRATOR_SSH_HOST: HOST_NAME,
        ORCHESTRATOR_WORKSPACE: path.join(f.root, 'ISSUE-8'),
        ORCHESTRATOR_ISSUE_ID: 'node-8',
        ORCHESTRATOR_ISSUE_IDENTIFIER: 'ISSUE-8',
        ORCHESTRATOR_ATTEMPT: '4',
      });
      expect(env.REMOTE_WS_TEST_LEAK).toBeUndefined();
      expect(output).not.toContain('must-not-leak');
      expect(env.HOME).toBeUndefined();
      expect(env.PATH === undefined || env.PATH !== process.env.PATH).toBe(true);

      // What was sent is exactly the hook variables: the host's login provides PATH and HOME.
      const hookRun = f.host.runs.find((run) => run.script === 'env');
      expect(Object.keys(hookRun?.env ?? {}).sort()).toEqual([
        'ORCHESTRATOR_ATTEMPT',
        'ORCHESTRATOR_ISSUE_ID',
        'ORCHESTRATOR_ISSUE_IDENTIFIER',
        'ORCHESTRATOR_SSH_HOST',
        'ORCHESTRATOR_WORKSPACE',
      ]);
      expect(hookRun?.cwd).toBe(path.join(f.root, 'ISSUE-8'));
    } finally {
      delete process.env.REMOTE_WS_TEST_LEAK;
    }
  });

  it('a hook on a host carries the owner tag, as an agent there does, so it can be told apart from foreign processes', async () => {
    const base = await tempDir('remote-ws-');
    const host = new LocalRemoteHost({ name: HOST_NAME, loginDir: base });
    hosts.push(host);
    const manager = new RemoteWorkspaceManager({
      host,
      root: path.join(base, 'root'),
      hooks: noHooks({ beforeRun: `printf %s "$${OWNER_ENV}"` }),
      ownerTag: 'tag-9',
    });
    expect((await manager.prepare(issue('ISSUE-8'), 1)).ok).toBe(true);
    expect(host.runs.find((run) => run.script.startsWith('printf'))?.env[OWNER_ENV]).toBe('tag-9');
  });

  it('a hook that runs past its timeout fails with hook_timeout', async () => {
    const f = await fixture({ beforeRun: 'echo started; sleep 30', timeoutMs: 300 });
    const startedAt = Date.now();
    const prepared = await f.manager.prepare(issue('ISSUE-9'), 1);

    expect(Date.now() - startedAt).toBeLessThan(10_000);
    expect(prepared.ok ? null : prepared.error.kind).toBe('hook_timeout');
    const result = f.events[0]?.result;
    expect(result).toMatchObject({ ok: false, timedOut: true });
    expect(result?.output).toContain('started');
    expect(result?.output).toContain('[hook timed out after 300 ms; its process group was killed]');
  });

  it('hook output is kept up to the hook output limit, with a note', async () => {
    const f = await fixture({ beforeRun: "head -c 300000 /dev/zero | tr '\\0' a" });
    const prepared = await f.manager.prepare(issue('ISSUE-24'), 1);
    expect(prepared.ok).toBe(true);
    const output = f.events[0]?.result.output ?? '';
    expect(output.startsWith('a'.repeat(HOOK_OUTPUT_LIMIT_BYTES))).toBe(true);
    expect(output.slice(HOOK_OUTPUT_LIMIT_BYTES)).toBe(
      `\n[output truncated at ${HOOK_OUTPUT_LIMIT_BYTES} bytes]`,
    );
  });

  it('aborting the signal stops a running hook and fails prepare', async () => {
    const f = await fixture({ beforeRun: 'sleep 30' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const prepared = await f.manager.prepare(issue('ISSUE-10'), 1, controller.signal);

    expect(prepared.ok ? null : prepared.error.kind).toBe('hook_failed');
    expect(f.events[0]?.result.output).toContain('[hook aborted; its process group was killed]');
  });

  it('after_run runs in a healthy workspace and reports a failure without throwing', async () => {
    const f = await fixture({ afterRun: 'echo "after $ORCHESTRATOR_ATTEMPT"; exit 2' });
    const prepared = await f.manager.prepare(issue('ISSUE-11'), 1);
    if (!prepared.ok) throw prepared.error;

    const result = await f.manager.afterRun(prepared.workspace.path, issue('ISSUE-11'), 2);
    expect(result).toMatchObject({ ok: false, exitCode: 2, timedOut: false });
    expect(result?.output).toContain('after 2');
  });

  it('after_run is not run for a missing workspace, one outside the root, or a symlink', async () => {
    const f = await fixture({ afterRun: 'touch ran' });
    const prepared = await f.manager.prepare(issue('ISSUE-12'), 1);
    if (!prepared.ok) throw prepared.error;
    await fsp.symlink(f.outside, path.join(f.root, 'ISSUE-LINK'));

    const cases = [
      path.join(f.root, 'ISSUE-GONE'),
      path.join(f.outside),
      path.join(f.base, 'ISSUE-12'),
      path.join(f.root, 'ISSUE-LINK'),
      'relative/ISSUE-12',
    ];
    for (const workspace of cases) {
      const result = await f.manager.afterRun(workspace, issue('ISSUE-12'), 1);
      expect(result?.ok).toBe(false);
      expect(result?.output).toMatch(/^\[after_run not run: /);
    }
    expect(await exists(path.join(f.outside, 'ran'))).toBe(false);
    expect(f.events.map((e) => e.hook)).toEqual(cases.map(() => 'after_run'));
  });

  it('reads the answer after whatever a login profile prints first', async () => {
    const inner = new LocalRemoteHost({ loginDir: (await fixture()).base });
    hosts.push(inner);
    const chatty = wrapHost(inner, async (_params, next) => {
      const ran = await next();
      return ran.ok
        ? { ok: true, result: { ...ran.result, output: `Welcome to worker-1!\n${ran.result.output}` } }
        : ran;
    });
    const base = await tempDir('remote-ws-');
    const manager = new RemoteWorkspaceManager({
      host: chatty,
      root: path.join(base, 'root'),
      hooks: noHooks(),
    });
    expect(await manager.prepare(issue('ISSUE-13'), 1)).toMatchObject({
      ok: true,
      workspace: { createdNow: true },
    });
    expect(await manager.existingKeys()).toEqual(['ISSUE-13']);
  });

  it('a control script cut short is an io error, not a success', async () => {
    const base = await tempDir('remote-ws-');
    const inner = new LocalRemoteHost({ loginDir: base });
    const cut = wrapHost(inner, async () => ({
      ok: true,
      result: {
        exitCode: null,
        signal: 'SIGKILL',
        timedOut: true,
        output: '\n@ow:created\n/x',
        durationMs: 5,
        connectionLost: false,
      },
    }));
    const manager = new RemoteWorkspaceManager({
      host: cut,
      root: path.join(base, 'root'),
      hooks: noHooks(),
    });
    const prepared = await manager.prepare(issue('ISSUE-14'), 1);
    expect(prepared.ok ? null : prepared.error.kind).toBe('io');
  });
});

describe('remote workspaces: what sits at the path', () => {
  it('a symlink at the workspace path is refused, never followed or removed', async () => {
    const f = await fixture({ afterCreate: 'touch planted', beforeRemove: 'touch planted' });
    await fsp.mkdir(f.root);
    await fsp.symlink(f.outside, path.join(f.root, 'ISSUE-15'));

    const prepared = await f.manager.prepare(issue('ISSUE-15'), 1);
    expect(prepared.ok ? null : prepared.error.kind).toBe('symlink');
    const removed = await f.manager.remove('ISSUE-15');
    expect(removed.removed).toBe(false);
    expect(removed.error?.kind).toBe('symlink');

    expect(await listTree(f.outside)).toEqual(['precious.txt']);
    expect((await fsp.lstat(path.join(f.root, 'ISSUE-15'))).isSymbolicLink()).toBe(true);
    expect(await f.manager.existingKeys()).toEqual([]);
  });

  it('a dangling symlink at the workspace path is refused too', async () => {
    const f = await fixture();
    await fsp.mkdir(f.root);
    await fsp.symlink(path.join(f.base, 'nowhere'), path.join(f.root, 'ISSUE-16'));
    const prepared = await f.manager.prepare(issue('ISSUE-16'), 1);
    expect(prepared.ok ? null : prepared.error.kind).toBe('symlink');
    expect(await exists(path.join(f.base, 'nowhere'))).toBe(false);
  });

  it('a file at the workspace path is a conflict, left alone', async () => {
    const f = await fixture();
    await fsp.mkdir(f.root);
    await fsp.writeFile(path.join(f.root, 'ISSUE-17'), 'not a dir');
    const prepared = await f.manager.prepare(issue('ISSUE-17'), 1);
    expect(prepared.ok ? null : prepared.error.kind).toBe('conflict');
    expect((await f.manager.remove('ISSUE-17')).error?.kind).toBe('conflict');
    expect(await fsp.readFile(path.join(f.root, 'ISSUE-17'), 'utf8')).toBe('not a dir');
  });

  it('a root that cannot be created is an io error', async () => {
    const f = await fixture();
    await fsp.writeFile(path.join(f.base, 'file'), '');
    const manager = new RemoteWorkspaceManager({
      host: f.host,
      root: path.join(f.base, 'file', 'root'),
      hooks: noHooks(),
    });
    const prepared = await manager.prepare(issue('ISSUE-18'), 1);
    expect(prepared.ok ? null : prepared.error.kind).toBe('io');
  });
});

describe('remote workspaces: removal and listing', () => {
  it('remove runs before_remove in the workspace, then deletes it without following symlinks inside', async () => {
    const f = await fixture({ beforeRemove: 'pwd -P > ../../before-remove.log; exit 7' });
    const prepared = await f.manager.prepare(issue('ISSUE-19', 'node-19'), 1);
    if (!prepared.ok) throw prepared.error;
    await fsp.symlink(f.outside, path.join(prepared.workspace.path, 'escape-hatch'));

    expect(await f.manager.remove('ISSUE-19', 'node-19')).toEqual({ removed: true, error: null });

    expect(await exists(prepared.workspace.path)).toBe(false);
    expect(await lines(path.join(f.base, 'before-remove.log'))).toEqual([prepared.workspace.path]);
    expect(f.events.map((e) => [e.hook, e.result.exitCode])).toEqual([['before_remove', 7]]);
    expect(await listTree(f.outside)).toEqual(['precious.txt']);
  });

  it('removing a missing workspace (or one under a missing root) is not an error', async () => {
    const f = await fixture({ beforeRemove: 'touch ../../ran' });
    expect(await f.manager.remove('ISSUE-20')).toEqual({ removed: false, error: null });
    await fsp.mkdir(f.root);
    expect(await f.manager.remove('ISSUE-20')).toEqual({ removed: false, error: null });
    expect(await exists(path.join(f.base, 'ran'))).toBe(false);
  });

  it('existingKeys lists own keys that are real directories, sorted; [] without a root', async () => {
    const f = await fixture();
    expect(await f.manager.existingKeys()).toEqual([]);
    const keys: string[] = [];
    for (const id of ['B-2', 'A-1', '.hidden', '..dots']) {
      const prepared = await f.manager.prepare(issue(id), 1);
      if (!prepared.ok) throw prepared.error;
      keys.push(path.basename(prepared.workspace.path));
    }
    await fsp.writeFile(path.join(f.root, 'FILE-1'), '');
    await fsp.symlink(f.outside, path.join(f.root, 'LINK-1'));
    await fsp.mkdir(path.join(f.root, 'not a key'));
    await fsp.mkdir(path.join(f.root, 'ÄÖ'));
    await fsp.mkdir(path.join(f.root, '.git'));

    expect(await f.manager.existingKeys()).toEqual([...keys].sort());
    expect(keys.filter((k) => k.startsWith('.'))).toEqual([]);
  });

  it('existingKeys fails with io when the root is not a directory', async () => {
    const f = await fixture();
    await fsp.writeFile(f.root, '');
    await expect(f.manager.existingKeys()).rejects.toMatchObject({ kind: 'io' });
  });
});

describe('remote workspaces: an unreachable host', () => {
  it('every operation says host_unreachable with the host message', async () => {
    const events: HookResult[] = [];
    const manager = new RemoteWorkspaceManager({
      host: downHost(),
      root: '/srv/workspaces',
      hooks: noHooks({ afterRun: 'true', beforeRemove: 'true' }),
      onHook: (event) => events.push(event.result),
    });

    const prepared = await manager.prepare(issue('ISSUE-21'), 1);
    expect(prepared.ok).toBe(false);
    if (prepared.ok) return;
    expect(prepared.error.kind).toBe('host_unreachable');
    expect(prepared.error.message).toContain('connect ECONNREFUSED 10.0.0.9:22');

    const removed = await manager.remove('ISSUE-21');
    expect(removed.removed).toBe(false);
    expect(removed.error?.kind).toBe('host_unreachable');

    await expect(manager.existingKeys()).rejects.toMatchObject({ kind: 'host_unreachable' });

    const afterRun = await manager.afterRun('/srv/workspaces/ISSUE-21', issue('ISSUE-21'), 1);
    expect(afterRun).toMatchObject({ ok: false, exitCode: null, timedOut: false });
    expect(afterRun?.output).toBe('[hook not run: connect ECONNREFUSED 10.0.0.9:22]');
    expect(events).toHaveLength(1);
  });

  it('a host lost before a hook fails prepare with host_unreachable, not hook_failed', async () => {
    const base = await tempDir('remote-ws-');
    const inner = new LocalRemoteHost({ loginDir: base });
    const lostForHooks = wrapHost(inner, (params, next) =>
      params.cwd === null
        ? next()
        : Promise.resolve({ ok: false, reason: 'unreachable', message: 'connection reset' }),
    );
    const events: HookResult[] = [];
    const manager = new RemoteWorkspaceManager({
      host: lostForHooks,
      root: path.join(base, 'root'),
      hooks: noHooks({ beforeRun: 'true' }),
      onHook: (event) => events.push(event.result),
    });

    const prepared = await manager.prepare(issue('ISSUE-22'), 1);

    expect(prepared.ok ? null : [prepared.error.kind, prepared.error.hook]).toEqual([
      'host_unreachable',
      'before_run',
    ]);
    expect(events).toEqual([
      expect.objectContaining({ ok: false, output: '[hook not run: connection reset]' }),
    ]);
    expect(await exists(path.join(base, 'root', 'ISSUE-22'))).toBe(true);
  });

  it('a connection lost while a hook runs fails prepare with host_unreachable, not hook_failed', async () => {
    const base = await tempDir('remote-ws-');
    const inner = new LocalRemoteHost({ loginDir: base });
    // Control scripts pass; the hook's run comes back as the SSH layer reports a dropped connection.
    const droppedDuringHook = wrapHost(inner, async (params, next) =>
      params.script.includes('hook-marker')
        ? {
            ok: true,
            result: {
              exitCode: null,
              signal: null,
              timedOut: false,
              output: 'partial\n[connection lost before the exit status arrived]',
              durationMs: 3,
              connectionLost: true,
            },
          }
        : next(),
    );
    const manager = new RemoteWorkspaceManager({
      host: droppedDuringHook,
      root: path.join(base, 'root'),
      hooks: noHooks({ beforeRun: 'echo hook-marker' }),
    });
    const prepared = await manager.prepare(issue('ISSUE-23'), 1);
    expect(prepared.ok ? null : [prepared.error.kind, prepared.error.hook]).toEqual([
      'host_unreachable',
      'before_run',
    ]);
  });

  it('an after_create not run because the host was lost still removes the new directory when it can', async () => {
    const base = await tempDir('remote-ws-');
    const inner = new LocalRemoteHost({ loginDir: base });
    const lostForHooks = wrapHost(inner, (params, next) =>
      params.cwd === null
        ? next()
        : Promise.resolve({ ok: false, reason: 'unreachable', message: 'connection reset' }),
    );
    const manager = new RemoteWorkspaceManager({
      host: lostForHooks,
      root: path.join(base, 'root'),
      hooks: noHooks({ afterCreate: 'true' }),
    });
    const prepared = await manager.prepare(issue('ISSUE-23'), 1);
    expect(prepared.ok ? null : prepared.error.kind).toBe('host_unreachable');
    expect(await exists(path.join(base, 'root', 'ISSUE-23'))).toBe(false);
  });
});
