/**
 * OpenCode's argv and environment across block permutations, the block rules
 * validate applies (a permission rule that asks is refused, the keys the
 * orchestrator manages cannot be set through `config`), the managed home (what it
 * writes, what it never touches, how a login is copied, how a session is looked up
 * in OpenCode's database), its preparation on an SSH host, and the registration's
 * declarations.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import '../../../src/agent/kinds.js';
import { OpencodeAdapter } from '../../../src/agent/opencode/adapter.js';
import {
  buildTurnArgs,
  inlineConfig,
  OPENCODE_CREDENTIAL_ENV,
  opencodeEnv,
  sessionTitle,
} from '../../../src/agent/opencode/command.js';
import {
  DEFAULT_PERMISSION,
  type OpencodeConfig,
  opencodeBlock,
} from '../../../src/agent/opencode/config.js';
import {
  managedRoot,
  PLUGIN_PACKAGE,
  prepareManagedHome,
  setupHash,
  sourceDataDir,
  storedSession,
  xdgEnv,
} from '../../../src/agent/opencode/home.js';
import { prepareRemoteHome } from '../../../src/agent/opencode/remote-home.js';
import { agentKind } from '../../../src/agent/registry.js';
import { checkAgentSettings } from '../../../src/agent/validate.js';
import { LocalRemoteHost } from '../../support/local-remote-host.js';
import { isolatedEnv, scratchDir, startParams, workspaceRoot } from './support.js';

function config(block: Record<string, unknown> = {}): OpencodeConfig {
  const parsed = opencodeBlock.parse(block);
  if (!parsed.ok) throw new Error(parsed.issues.map((i) => i.message).join('; '));
  return parsed.config;
}

describe('buildTurnArgs', () => {
  it('defaults: run with JSON events, a new session named by its title, no model, agent or variant', () => {
    expect(buildTurnArgs(config(), { resumeSessionId: null, title: 'ABC-1 Fix it' })).toEqual([
      'run',
      '--format',
      'json',
      '--title',
      'ABC-1 Fix it',
    ]);
  });

  it('a continued session is named by id and gets no title; model, agent and variant reach their flags', () => {
    const args = buildTurnArgs(
      config({ model: 'anthropic/claude-sonnet-4-5', agent: 'plan-free', variant: 'max' }),
      {
        resumeSessionId: 'ses_1',
        title: 'unused',
      },
    );
    expect(args).toEqual([
      'run',
      '--format',
      'json',
      '-m',
      'anthropic/claude-sonnet-4-5',
      '--agent',
      'plan-free',
      '--variant',
      'max',
      '--session',
      'ses_1',
    ]);
  });

  it('the title is the issue on one line, capped, and never empty (an empty one makes OpenCode ask the model)', () => {
    expect(sessionTitle({ identifier: 'ABC-1', title: 'Fix\n  the   bug' })).toBe('ABC-1 Fix the bug');
    expect(sessionTitle({ identifier: '', title: '' })).toBe('orchestrator session');
    expect(sessionTitle({ identifier: 'X', title: 'y'.repeat(500) })).toHaveLength(100);
  });
});

describe('the environment', () => {
  const base = {
    HOME: '/home/op',
    PATH: '/bin',
    PWD: '/srv/orchestrator',
    OPENCODE_CONFIG: '/home/op/mine.json',
    OPENCODE_CONFIG_DIR: '/home/op/.oc',
    OPENCODE_DB: '/tmp/other.db',
    OPENCODE_AUTO_SHARE: '1',
    ANTHROPIC_API_KEY: 'k',
  };

  it('moves the four XDG folders into the managed home, keeps HOME, sets PWD to the workspace, turns the network side-jobs off', () => {
    const env = opencodeEnv(base, {
      home: '/state/h',
      workspacePath: '/ws/1',
      config: config(),
      verification: null,
    });
    expect(env).toMatchObject({
      HOME: '/home/op',
      PATH: '/bin',
      PWD: '/ws/1',
      ANTHROPIC_API_KEY: 'k',
      ...xdgEnv('/state/h'),
      XDG_CONFIG_HOME: '/state/h/config',
      OPENCODE_DISABLE_AUTOUPDATE: '1',
      OPENCODE_DISABLE_SHARE: '1',
      OPENCODE_DISABLE_MODELS_FETCH: '1',
      OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
      OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
      OPENCODE_DISABLE_CLAUDE_CODE: '1',
      OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
      OPENCODE_DISABLE_CHANNEL_DB: '1',
    });
    // What would move the config, the database or sharing elsewhere is withheld.
    for (const name of ['OPENCODE_CONFIG', 'OPENCODE_CONFIG_DIR', 'OPENCODE_DB', 'OPENCODE_AUTO_SHARE']) {
      expect(env[name]).toBeUndefined();
    }
    expect(JSON.parse(env.OPENCODE_PERMISSION as string)).toEqual(DEFAULT_PERMISSION);
    expect(JSON.parse(env.OPENCODE_CONFIG_CONTENT as string)).toEqual({
      snapshot: false,
      autoupdate: false,
      share: 'disabled',
    });
  });

  it("the block's config goes inline under the managed keys; its permission rules replace the default posture", () => {
    const block = config({
      config: { provider: { p: { npm: 'x' } }, snapshot: true },
      permission: { bash: { 'git *': 'allow', '*': 'deny' }, edit: 'deny' },
    });
    expect(inlineConfig(block)).toEqual({
      provider: { p: { npm: 'x' } },
      snapshot: true,
      autoupdate: false,
      share: 'disabled',
    });
    const env = opencodeEnv(base, { home: '/h', workspacePath: '/ws', config: block, verification: null });
    expect(JSON.parse(env.OPENCODE_PERMISSION as string)).toEqual({
      bash: { 'git *': 'allow', '*': 'deny' },
      edit: 'deny',
    });
  });

  it('a reduced verification session refuses every tool, so none is offered; a full one keeps the rules', () => {
    const reduced = opencodeEnv(base, {
      home: '/h',
      workspacePath: '/ws',
      config: config(),
      verification: { fullContext: false },
    });
    expect(JSON.parse(reduced.OPENCODE_PERMISSION as string)).toEqual({ '*': 'deny' });
    const full = opencodeEnv(base, {
      home: '/h',
      workspacePath: '/ws',
      config: config(),
      verification: { fullContext: true },
    });
    expect(JSON.parse(full.OPENCODE_PERMISSION as string)).toEqual(DEFAULT_PERMISSION);
  });
});

describe('the opencode: block', () => {
  it('defaults: no model, agent or variant; the shell and edits allowed, outside paths and loops refused', () => {
    expect(config()).toEqual({
      model: null,
      agent: null,
      variant: null,
      permission: { ...DEFAULT_PERMISSION },
      config: {},
    });
    expect(DEFAULT_PERMISSION).toMatchObject({ bash: 'allow', edit: 'allow', external_directory: 'deny' });
  });

  it.each<[string, Record<string, unknown>, (string | number)[]]>([
    ['a tool rule', { permission: { bash: 'ask' } }, ['opencode', 'permission', 'bash']],
    [
      'a pattern rule',
      { permission: { bash: { 'git push *': 'ask' } } },
      ['opencode', 'permission', 'bash', 'git push *'],
    ],
  ])('%s that asks a person is refused with a code', (_what, block, at) => {
    expect(opencodeBlock.validate(block)).toEqual([
      expect.objectContaining({ severity: 'error', code: 'opencode.permission.interactive', path: at }),
    ]);
    expect(opencodeBlock.parse(block).ok).toBe(false);
  });

  it.each<[Record<string, unknown>, string]>([
    [{ permission: { bash: 'yes' } }, 'opencode.permission.unsupported'],
    [{ permission: { bash: ['allow'] } }, 'opencode.permission.unsupported'],
    [{ permission: { bash: { '*': 'sometimes' } } }, 'opencode.permission.unsupported'],
    [{ permission: 'allow' }, 'opencode.permission.invalid'],
    [{ config: { permission: { bash: 'allow' } } }, 'opencode.config.managed_key'],
    [{ config: { share: 'auto' } }, 'opencode.config.managed_key'],
    [{ config: { autoupdate: true } }, 'opencode.config.managed_key'],
    [{ config: [] }, 'opencode.config.invalid'],
    [{ model: 'claude-sonnet-4-5' }, 'opencode.model.invalid'],
    [{ model: '' }, 'opencode.model.empty'],
    [{ agent: '' }, 'opencode.agent.empty'],
    [{ variant: 3 }, 'opencode.variant.invalid'],
  ])('%j is refused as %s', (block, code) => {
    expect(opencodeBlock.validate(block).map((i) => i.code)).toContain(code);
  });

  it('an unknown key is a warning, and effort (not forwarded: use variant) draws the generic warning', () => {
    expect(checkAgentSettings('opencode', { effort: 'high' }, { command: null, maxTokens: 0 })).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ severity: 'warning', code: 'config.unknown_key' }),
        expect.objectContaining({ severity: 'warning', code: 'agent.effort.not_forwarded' }),
      ]),
    );
  });
});

describe('the managed home', () => {
  it("holds the four XDG folders with the plugin install pre-seeded, and leaves the operator's folders alone", () => {
    const root = scratchDir('opencode-home-');
    const env = isolatedEnv(root);
    const own = path.join(env.HOME as string, '.config', 'opencode');
    mkdirSync(own, { recursive: true });
    writeFileSync(path.join(own, 'opencode.json'), '{"mine":true}\n');
    const home = prepareManagedHome({ env, command: null });
    if (!home.ok) throw new Error(home.message);
    expect(managedRoot(env)).toBe(path.join(root, 'state', 'orchestrator', 'opencode-homes'));
    expect(home.home.startsWith(managedRoot(env))).toBe(true);
    const configDir = path.join(home.home, 'config', 'opencode');
    expect(JSON.parse(readFileSync(path.join(configDir, 'package.json'), 'utf8'))).toEqual({
      dependencies: { [PLUGIN_PACKAGE]: '*' },
    });
    // What OpenCode checks before it runs npm install: the lock lists the plugin, node_modules exists.
    expect(JSON.parse(readFileSync(path.join(configDir, 'package-lock.json'), 'utf8'))).toMatchObject({
      packages: { '': { dependencies: { [PLUGIN_PACKAGE]: '*' } } },
    });
    expect(existsSync(path.join(configDir, 'node_modules'))).toBe(true);
    for (const dir of ['data/opencode', 'state', 'cache'])
      expect(existsSync(path.join(home.home, dir))).toBe(true);
    expect(readdirSync(own)).toEqual(['opencode.json']);
    expect(readFileSync(path.join(own, 'opencode.json'), 'utf8')).toBe('{"mine":true}\n');
  });

  it('one folder per setup (its login source and command), whatever the block says', () => {
    const env = isolatedEnv(scratchDir('opencode-home-'));
    const a = prepareManagedHome({ env, command: null });
    const b = prepareManagedHome({ env, command: null });
    const c = prepareManagedHome({ env, command: '/opt/opencode' });
    if (!a.ok || !b.ok || !c.ok) throw new Error('not prepared');
    expect(b.home).toBe(a.home);
    expect(c.home).not.toBe(a.home);
    expect(setupHash(sourceDataDir(env), null)).not.toBe(setupHash('/elsewhere', null));
  });

  it("a login is copied from the operator's data folder, newer copies only, never written back, and removed on logout", () => {
    const root = scratchDir('opencode-home-');
    const env = isolatedEnv(root, { XDG_DATA_HOME: path.join(root, 'data') });
    const source = sourceDataDir(env);
    expect(source).toBe(path.join(root, 'data', 'opencode'));
    mkdirSync(source, { recursive: true });
    writeFileSync(path.join(source, 'auth.json'), '{"v":1}');
    const first = prepareManagedHome({ env, command: null });
    if (!first.ok) throw new Error(first.message);
    const copy = path.join(first.home, 'data', 'opencode', 'auth.json');
    expect(readFileSync(copy, 'utf8')).toBe('{"v":1}');
    // The CLI refreshed its copy: an older source does not roll it back.
    writeFileSync(copy, '{"v":2}');
    const past = new Date(Date.now() - 60_000);
    utimesSync(path.join(source, 'auth.json'), past, past);
    prepareManagedHome({ env, command: null });
    expect(readFileSync(copy, 'utf8')).toBe('{"v":2}');
    expect(readFileSync(path.join(source, 'auth.json'), 'utf8')).toBe('{"v":1}');
    const future = new Date(Date.now() + 60_000);
    writeFileSync(path.join(source, 'auth.json'), '{"v":3}');
    utimesSync(path.join(source, 'auth.json'), future, future);
    prepareManagedHome({ env, command: null });
    expect(readFileSync(copy, 'utf8')).toBe('{"v":3}');
    // The operator logged out: the copy goes too.
    rmSync(path.join(source, 'auth.json'));
    prepareManagedHome({ env, command: null });
    expect(existsSync(copy)).toBe(false);
  });

  it("finds a session in OpenCode's database with the folder it was made for; no database is no session", () => {
    const home = scratchDir('opencode-home-');
    expect(storedSession(home, 'ses_1')).toEqual({ stored: false });
    const dataDir = path.join(home, 'data', 'opencode');
    mkdirSync(dataDir, { recursive: true });
    const db = new Database(path.join(dataDir, 'opencode.db'));
    db.exec('CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT NOT NULL, title TEXT)');
    db.prepare('INSERT INTO session (id, directory, title) VALUES (?, ?, ?)').run('ses_1', '/ws/1', 't');
    db.close();
    expect(storedSession(home, 'ses_1')).toEqual({ stored: true, directory: '/ws/1' });
    expect(storedSession(home, 'ses_2')).toEqual({ stored: false });
  });

  it('a database it cannot read (another schema) is unknown, so the CLI is not second-guessed', () => {
    const home = scratchDir('opencode-home-');
    const dataDir = path.join(home, 'data', 'opencode');
    mkdirSync(dataDir, { recursive: true });
    const db = new Database(path.join(dataDir, 'opencode.db'));
    db.exec('CREATE TABLE sessions (key TEXT)');
    db.close();
    expect(storedSession(home, 'ses_1')).toBeNull();
  });
});

describe('the managed home on an SSH host', () => {
  it("is made under the host's state folder with the same seed, and the host's own login is copied in", async () => {
    const hostHome = scratchDir('opencode-host-');
    const login = path.join(hostHome, '.local', 'share', 'opencode');
    mkdirSync(login, { recursive: true });
    writeFileSync(path.join(login, 'auth.json'), '{"host":1}');
    const host = new LocalRemoteHost({
      loginDir: hostHome,
      loginEnv: { HOME: hostHome, PATH: '/usr/bin:/bin' },
    });
    const result = await prepareRemoteHome({ env: { ANTHROPIC_API_KEY: 'k' }, command: null, host });
    if (!result.ok) throw new Error(result.message);
    expect(
      result.home.startsWith(path.join(hostHome, '.local', 'state', 'orchestrator', 'opencode-homes')),
    ).toBe(true);
    const configDir = path.join(result.home, 'config', 'opencode');
    expect(JSON.parse(readFileSync(path.join(configDir, 'package-lock.json'), 'utf8'))).toMatchObject({
      packages: { '': { dependencies: { [PLUGIN_PACKAGE]: '*' } } },
    });
    expect(existsSync(path.join(configDir, 'node_modules'))).toBe(true);
    expect(readFileSync(path.join(result.home, 'data', 'opencode', 'auth.json'), 'utf8')).toBe('{"host":1}');
    // Values travel in the script's environment, never in its text.
    expect(host.runs[0]?.script).not.toContain('lockfileVersion');
    // A second preparation finds the same folder.
    const again = await prepareRemoteHome({ env: {}, command: null, host });
    expect(again).toEqual(result);
  });

  it('a host that is down fails the preparation with its name', async () => {
    const host = new LocalRemoteHost({ name: 'ci@build-9:22' });
    host.unreachable = 'connection refused';
    const result = await prepareRemoteHome({ env: {}, command: null, host });
    expect(result).toMatchObject({ ok: false, message: expect.stringContaining('ci@build-9:22') });
  });

  it('a session on a host starts without a local command or folder', async () => {
    const ws = workspaceRoot('opencode-remote-');
    try {
      const hostHome = scratchDir('opencode-host-');
      const adapter = new OpencodeAdapter();
      const session = await adapter.startSession({
        ...startParams({ ws, command: null, env: { ANTHROPIC_API_KEY: 'k' } }),
        remote: new LocalRemoteHost({
          name: 'ci@build-1:22',
          loginDir: hostHome,
          loginEnv: { HOME: hostHome },
        }),
      });
      expect(session.kind).toBe('opencode');
      await adapter.stopSession(session);
    } finally {
      ws.cleanup();
    }
  });
});

describe('starting a session', () => {
  it('a block validate would refuse fails the start as a configuration error, before anything runs', async () => {
    const ws = workspaceRoot('opencode-start-');
    try {
      await expect(
        new OpencodeAdapter().startSession(
          startParams({ ws, command: '/bin/true', options: { permission: { bash: 'ask' } } }),
        ),
      ).rejects.toMatchObject({ kind: 'agent_not_found', detail: expect.stringContaining('"ask"') });
    } finally {
      ws.cleanup();
    }
  });
});

describe('registration', () => {
  it('declares a command-launched kind with incremental usage, resumable, its provider credentials, no effort or usage-limit claims', () => {
    const kind = agentKind('opencode');
    expect(kind?.runtime).toMatchObject({
      requiresCommand: true,
      defaultCommand: 'opencode',
      mcpDialect: 'inline-config-json',
      effortForwarding: 'not_forwarded',
      usageLimitRecognition: 'not_recognized',
      verificationContext: ['project_instructions', 'system_prompt'],
      sandbox: { kind: 'none' },
      versionProbe: { timeoutMs: 15_000 },
    });
    expect(kind?.runtime?.credentialEnv).toEqual([...OPENCODE_CREDENTIAL_ENV]);
    expect(kind?.runtime?.credentialEnv).toEqual(
      expect.arrayContaining([
        'ANTHROPIC_API_KEY',
        'OPENAI_API_KEY',
        'OPENROUTER_API_KEY',
        'OPENCODE_AUTH_CONTENT',
      ]),
    );
    // The tracker's usual token is not claimed: a GitHub workflow's GITHUB_TOKEN stays the tracker's.
    expect(kind?.runtime?.credentialEnv).not.toContain('GITHUB_TOKEN');
    expect(kind?.runtime?.sessionResumeBlockedBy).toBeUndefined();
    expect(kind?.usageDisposition).toEqual({ arrival: 'incremental', attribution: 'session_total' });
  });
});
