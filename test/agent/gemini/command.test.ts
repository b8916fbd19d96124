/**
 * Gemini CLI's argv and environment across block permutations, the block rules
 * validate applies, the managed home (what it writes, what it never touches, how
 * a Google login is copied, where a session record is looked for), its preparation
 * on an SSH host, and the registration's declarations.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import '../../../src/agent/kinds.js';
import { GeminiAdapter } from '../../../src/agent/gemini/adapter.js';
import { buildTurnArgs, geminiEnv } from '../../../src/agent/gemini/command.js';
import { DEFAULT_MAX_ATTEMPTS, type GeminiConfig, geminiBlock } from '../../../src/agent/gemini/config.js';
import {
  ERROR_REPORT_TTL_MS,
  managedRoot,
  managedSettings,
  prepareManagedHome,
  sessionStored,
  setupHash,
  sourceHome,
} from '../../../src/agent/gemini/home.js';
import { prepareRemoteHome } from '../../../src/agent/gemini/remote-home.js';
import { agentKind } from '../../../src/agent/registry.js';
import { checkAgentSettings } from '../../../src/agent/validate.js';
import { LocalRemoteHost } from '../../support/local-remote-host.js';
import { isolatedEnv, scratchDir, startParams, workspaceRoot } from './support.js';

function config(block: Record<string, unknown> = {}): GeminiConfig {
  const parsed = geminiBlock.parse(block);
  if (!parsed.ok) throw new Error(parsed.issues.map((i) => i.message).join('; '));
  return parsed.config;
}

const SID = '3f0b6f3e-2c51-4d5c-9f0e-6a1d2b3c4d5e';

describe('buildTurnArgs', () => {
  it('defaults: headless with the prompt on stdin, stream-json, yolo, a new session by id, no model', () => {
    expect(buildTurnArgs(config(), { sessionId: SID, resume: false })).toEqual([
      '-p',
      '',
      '--output-format',
      'stream-json',
      '--approval-mode',
      'yolo',
      '--session-id',
      SID,
    ]);
  });

  it('a continued session resumes by id; the model and approval mode reach their flags', () => {
    const args = buildTurnArgs(config({ model: 'gemini-2.5-pro', approval_mode: 'auto_edit' }), {
      sessionId: SID,
      resume: true,
    });
    expect(args).not.toContain('--session-id');
    expect(args.slice(-2)).toEqual(['--resume', SID]);
    expect(args[args.indexOf('-m') + 1]).toBe('gemini-2.5-pro');
    expect(args[args.indexOf('--approval-mode') + 1]).toBe('auto_edit');
  });

  it('the environment moves only the CLI home and temp folder, keeps HOME, and trusts the workspace', () => {
    const env = geminiEnv({ HOME: '/home/op', PATH: '/bin' }, { home: '/state/h', tmpDir: '/tmp/t' });
    expect(env).toEqual({
      HOME: '/home/op',
      PATH: '/bin',
      GEMINI_CLI_HOME: '/state/h',
      TMPDIR: '/tmp/t',
      GEMINI_CLI_NO_RELAUNCH: 'true',
      GEMINI_CLI_TRUST_WORKSPACE: 'true',
    });
  });
});

describe('the gemini: block', () => {
  it('defaults: yolo, the CLI model, three attempts, API-key auth', () => {
    expect(config()).toEqual({
      model: null,
      approvalMode: 'yolo',
      maxAttempts: DEFAULT_MAX_ATTEMPTS,
      authType: 'gemini-api-key',
      credentialsHome: null,
    });
    expect(DEFAULT_MAX_ATTEMPTS).toBe(3);
  });

  it.each(['default', 'plan'])(
    'approval_mode %s, which would ask a person, is refused with a code',
    (mode) => {
      expect(geminiBlock.validate({ approval_mode: mode })).toEqual([
        expect.objectContaining({
          severity: 'error',
          code: 'gemini.approval_mode.interactive',
          path: ['gemini', 'approval_mode'],
        }),
      ]);
    },
  );

  it.each([
    [{ approval_mode: 'ask' }, 'gemini.approval_mode.unsupported'],
    [{ max_attempts: 0 }, 'gemini.max_attempts.out_of_range'],
    [{ max_attempts: 11 }, 'gemini.max_attempts.out_of_range'],
    [{ max_attempts: 2.5 }, 'gemini.max_attempts.invalid'],
    [{ auth_type: 'login' }, 'gemini.auth_type.unsupported'],
    [{ model: '' }, 'gemini.model.empty'],
  ])('%j is refused as %s', (block, code) => {
    expect(geminiBlock.validate(block).map((i) => i.code)).toContain(code);
  });

  it('an unknown key is a warning, and effort (not forwarded) draws the generic warning', () => {
    expect(checkAgentSettings('gemini', { effort: 'high' }, { command: null, maxTokens: 0 })).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ severity: 'warning', code: 'agent.effort.not_forwarded' }),
      ]),
    );
  });
});

describe('the managed home', () => {
  it('holds settings with the retry cap, auth, no statistics, telemetry or update checks, and leaves ~/.gemini alone', () => {
    const root = scratchDir('gemini-home-');
    const env = isolatedEnv(root);
    const own = path.join(env.HOME as string, '.gemini');
    mkdirSync(own, { recursive: true });
    writeFileSync(path.join(own, 'settings.json'), '{"mine":true}\n');
    const home = prepareManagedHome({ config: config({ max_attempts: 2 }), env, command: null });
    if (!home.ok) throw new Error(home.message);
    expect(home.home.startsWith(managedRoot(env))).toBe(true);
    expect(managedRoot(env)).toBe(path.join(root, 'state', 'orchestrator', 'gemini-homes'));
    const settings = JSON.parse(readFileSync(path.join(home.home, '.gemini', 'settings.json'), 'utf8'));
    expect(settings).toEqual(managedSettings(config({ max_attempts: 2 })));
    expect(settings).toMatchObject({
      security: { auth: { selectedType: 'gemini-api-key' } },
      general: { maxAttempts: 2, enableAutoUpdate: false },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
    });
    expect(readFileSync(path.join(own, 'settings.json'), 'utf8')).toBe('{"mine":true}\n');
    expect(readdirSync(own)).toEqual(['settings.json']);
    expect(home.tmpDir.startsWith(env.TMPDIR as string)).toBe(true);
    expect(existsSync(home.tmpDir)).toBe(true);
  });

  it('two blocks with different settings get different folders, the same block the same one', () => {
    const env = isolatedEnv(scratchDir('gemini-home-'));
    const a = prepareManagedHome({ config: config({ max_attempts: 2 }), env, command: null });
    const b = prepareManagedHome({ config: config({ max_attempts: 4 }), env, command: null });
    const c = prepareManagedHome({ config: config({ max_attempts: 2, model: 'other' }), env, command: null });
    if (!a.ok || !b.ok || !c.ok) throw new Error('not prepared');
    expect(a.home).not.toBe(b.home);
    // The model is a flag, not a setting: it shares the folder (and so its sessions).
    expect(c.home).toBe(a.home);
    expect(setupHash(sourceHome(config(), env), { config: config(), command: 'gemini' })).not.toBe(
      setupHash(sourceHome(config(), env), { config: config(), command: null }),
    );
  });

  it('refuses a setup without a credential before anything runs, naming what to set', () => {
    const env = isolatedEnv(scratchDir('gemini-home-'));
    delete env.GEMINI_API_KEY;
    const apiKey = prepareManagedHome({ config: config(), env, command: null });
    expect(apiKey).toMatchObject({
      ok: false,
      message: expect.stringContaining('GEMINI_API_KEY is not set'),
    });
    const login = prepareManagedHome({ config: config({ auth_type: 'oauth-personal' }), env, command: null });
    expect(login).toMatchObject({ ok: false, message: expect.stringContaining('no oauth_creds.json') });
    expect(prepareManagedHome({ config: config({ auth_type: 'vertex-ai' }), env, command: null }).ok).toBe(
      true,
    );
  });

  it('a Google login is copied from credentials_home, newer copies only, and never written back', () => {
    const root = scratchDir('gemini-home-');
    const env = isolatedEnv(root);
    const source = path.join(root, 'login');
    mkdirSync(source);
    writeFileSync(path.join(source, 'oauth_creds.json'), '{"v":1}');
    const block = config({ auth_type: 'oauth-personal', credentials_home: source });
    const first = prepareManagedHome({ config: block, env, command: null });
    if (!first.ok) throw new Error(first.message);
    const copy = path.join(first.home, '.gemini', 'oauth_creds.json');
    expect(readFileSync(copy, 'utf8')).toBe('{"v":1}');
    // The CLI refreshed its copy: an older source does not roll it back.
    writeFileSync(copy, '{"v":2}');
    const past = new Date(Date.now() - 60_000);
    utimesSync(path.join(source, 'oauth_creds.json'), past, past);
    prepareManagedHome({ config: block, env, command: null });
    expect(readFileSync(copy, 'utf8')).toBe('{"v":2}');
    expect(readFileSync(path.join(source, 'oauth_creds.json'), 'utf8')).toBe('{"v":1}');
    // A newer login in the source replaces the copy.
    writeFileSync(path.join(source, 'oauth_creds.json'), '{"v":3}');
    const future = new Date(Date.now() + 60_000);
    utimesSync(path.join(source, 'oauth_creds.json'), future, future);
    prepareManagedHome({ config: block, env, command: null });
    expect(readFileSync(copy, 'utf8')).toBe('{"v":3}');
  });

  it('old error reports in the temp folder are removed, recent ones kept', () => {
    const env = isolatedEnv(scratchDir('gemini-home-'));
    const home = prepareManagedHome({ config: config(), env, command: null });
    if (!home.ok) throw new Error(home.message);
    const old = path.join(home.tmpDir, 'gemini-client-error-old.json');
    const recent = path.join(home.tmpDir, 'gemini-client-error-recent.json');
    writeFileSync(old, '{}');
    writeFileSync(recent, '{}');
    const past = new Date(Date.now() - ERROR_REPORT_TTL_MS - 60_000);
    utimesSync(old, past, past);
    prepareManagedHome({ config: config(), env, command: null });
    expect(existsSync(old)).toBe(false);
    expect(existsSync(recent)).toBe(true);
  });

  it('finds a session record by its id, as the CLI names and writes it', () => {
    const home = scratchDir('gemini-home-');
    const chats = path.join(home, '.gemini', 'tmp', 'ws-1', 'chats');
    mkdirSync(chats, { recursive: true });
    writeFileSync(
      path.join(chats, `session-2026-12-02T01-19-${SID.slice(0, 8)}.jsonl`),
      `${JSON.stringify({ sessionId: SID, kind: 'main' })}\n`,
    );
    expect(sessionStored(home, SID)).toBe(true);
    expect(sessionStored(home, `${SID.slice(0, 8)}-0000-0000-0000-000000000000`)).toBe(false);
    expect(sessionStored(path.join(home, 'none'), SID)).toBe(false);
  });
});

describe('the managed home on an SSH host', () => {
  it("is made under the host's state folder with the same settings, and its paths are the host's", async () => {
    const hostHome = scratchDir('gemini-host-');
    const tmp = path.join(hostHome, 'tmp');
    mkdirSync(tmp);
    const host = new LocalRemoteHost({
      loginDir: hostHome,
      loginEnv: { HOME: hostHome, PATH: '/usr/bin:/bin' },
    });
    const env = { GEMINI_API_KEY: 'k', TMPDIR: tmp };
    const block = config({ max_attempts: 2 });
    const result = await prepareRemoteHome({ config: block, env, command: null, host });
    if (!result.ok) throw new Error(result.message);
    expect(
      result.home.startsWith(path.join(hostHome, '.local', 'state', 'orchestrator', 'gemini-homes')),
    ).toBe(true);
    expect(result.tmpDir.startsWith(tmp)).toBe(true);
    const settings = JSON.parse(readFileSync(path.join(result.home, '.gemini', 'settings.json'), 'utf8'));
    expect(settings).toEqual(managedSettings(block));
    // Values travel in the script's environment, never in its text.
    expect(host.runs[0]?.script).not.toContain('maxAttempts');
  });

  it('copies a Google login to the host and keeps a copy the host refreshed', async () => {
    const root = scratchDir('gemini-host-');
    const source = path.join(root, 'login');
    mkdirSync(source);
    writeFileSync(path.join(source, 'oauth_creds.json'), '{"v":1}');
    const host = new LocalRemoteHost({ loginDir: root, loginEnv: { HOME: root, PATH: '/usr/bin:/bin' } });
    const block = config({ auth_type: 'oauth-personal', credentials_home: source });
    const first = await prepareRemoteHome({ config: block, env: {}, command: null, host });
    if (!first.ok) throw new Error(first.message);
    const copy = path.join(first.home, '.gemini', 'oauth_creds.json');
    expect(readFileSync(copy, 'utf8')).toBe('{"v":1}');
    writeFileSync(copy, '{"v":2}');
    await prepareRemoteHome({ config: block, env: {}, command: null, host });
    expect(readFileSync(copy, 'utf8')).toBe('{"v":2}');
  });

  it('a session on a host starts without a local command or folder', async () => {
    const ws = workspaceRoot('gemini-remote-');
    try {
      const hostHome = scratchDir('gemini-host-');
      const adapter = new GeminiAdapter();
      const session = await adapter.startSession({
        ...startParams({ ws, command: null, env: { GEMINI_API_KEY: 'k' } }),
        remote: new LocalRemoteHost({
          name: 'ci@build-1:22',
          loginDir: hostHome,
          loginEnv: { HOME: hostHome },
        }),
      });
      expect(session.kind).toBe('gemini');
      await adapter.stopSession(session);
    } finally {
      ws.cleanup();
    }
  });
});

describe('registration', () => {
  it('declares a command-launched kind with turn-end per-model usage, the settings-json tool channel, resumable, no effort or usage-limit claims', () => {
    const kind = agentKind('gemini');
    expect(kind?.runtime).toMatchObject({
      requiresCommand: true,
      defaultCommand: 'gemini',
      mcpDialect: 'settings-json',
      credentialEnv: ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_APPLICATION_CREDENTIALS'],
      effortForwarding: 'not_forwarded',
      usageLimitRecognition: 'not_recognized',
      verificationContext: ['all_tools', 'project_instructions', 'system_prompt'],
    });
    expect(kind?.runtime?.sessionResumeBlockedBy).toBeUndefined();
    expect(kind?.usageDisposition).toEqual({ arrival: 'turn_end', attribution: 'per_model' });
  });
});
