/**
 * Codex's argv, request parameters and managed CODEX_HOME across block
 * permutations: the block's settings reach the runtime in both modes, the prompt
 * never travels in argv, and the operator's own Codex folder is never written.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  appServerArgs,
  execTurnArgs,
  lacksAppServer,
  launchMode,
  threadParams,
  turnParams,
} from '../../../src/agent/codex/command.js';
import { type CodexConfig, codexBlock } from '../../../src/agent/codex/config.js';
import { managedRoot, prepareManagedHome, sourceHome } from '../../../src/agent/codex/home.js';

function config(block: Record<string, unknown> = {}): CodexConfig {
  const parsed = codexBlock.parse(block);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.config;
}

describe('codex command', () => {
  it.each([
    [['app-server'], 'app-server', []],
    [[], 'app-server', []],
    [['exec'], 'exec', []],
    [['--profile', 'ci', 'app-server'], 'app-server', ['--profile', 'ci']],
  ])('args %j launch %s with leading args %j', (args, mode, base) => {
    expect(launchMode(args)).toEqual({ mode, baseArgs: base });
  });

  it('the first exec turn reads the prompt from stdin and passes every setting as a flag or override', () => {
    const c = config({
      model: 'gpt-5.5',
      effort: 'high',
      approval_policy: 'untrusted',
      sandbox: 'danger-full-access',
      config: { 'model_providers.fake.base_url': 'http://127.0.0.1:1/v1', hide_agent_reasoning: true, n: 3 },
    });
    expect(execTurnArgs(c, { threadId: null, verification: null })).toEqual([
      'exec',
      '--json',
      '--skip-git-repo-check',
      '-c',
      'model_providers.fake.base_url="http://127.0.0.1:1/v1"',
      '-c',
      'hide_agent_reasoning=true',
      '-c',
      'n=3',
      '-m',
      'gpt-5.5',
      '-s',
      'danger-full-access',
      '-c',
      'approval_policy="untrusted"',
      '-c',
      'model_reasoning_effort="high"',
      '-',
    ]);
  });

  it('a later exec turn resumes the thread, with every flag before `resume`', () => {
    const args = execTurnArgs(config(), { threadId: 'thread-1', verification: null });
    expect(args.slice(-3)).toEqual(['resume', 'thread-1', '-']);
    expect(args.indexOf('-s')).toBeLessThan(args.indexOf('resume'));
  });

  it('a reduced-context verification drops AGENTS.md and persists nothing; a full-context one adds nothing', () => {
    const reduced = execTurnArgs(config(), { threadId: null, verification: { fullContext: false } });
    expect(reduced).toEqual(expect.arrayContaining(['project_doc_max_bytes=0', '--ephemeral']));
    const full = execTurnArgs(config(), { threadId: null, verification: { fullContext: true } });
    expect(full).toEqual(execTurnArgs(config(), { threadId: null, verification: null }));
    expect(appServerArgs(config(), { fullContext: false })).toEqual([
      'app-server',
      '-c',
      'project_doc_max_bytes=0',
    ]);
    expect(threadParams(config(), '/ws', { fullContext: false })).toMatchObject({ ephemeral: true });
    expect(threadParams(config(), '/ws', { fullContext: true })).not.toHaveProperty('ephemeral');
  });

  it('the app-server gets the thread settings once and the effort on every turn', () => {
    const c = config({
      model: 'gpt-5.5',
      effort: 'low',
      approval_policy: 'on-request',
      sandbox: 'read-only',
    });
    expect(threadParams(c, '/ws', null)).toEqual({
      cwd: '/ws',
      approvalPolicy: 'on-request',
      sandbox: 'read-only',
      model: 'gpt-5.5',
    });
    expect(turnParams(c, 't1', 'do it')).toEqual({
      threadId: 't1',
      input: [{ type: 'text', text: 'do it', text_elements: [] }],
      model: 'gpt-5.5',
      effort: 'low',
    });
    expect(threadParams(config(), '/ws', null)).toEqual({
      cwd: '/ws',
      approvalPolicy: 'never',
      sandbox: 'workspace-write',
    });
  });

  it.each([
    [2, ["error: unrecognized subcommand 'app-server'"], true],
    [2, ["error: unexpected argument 'app-server' found"], true],
    [2, ['error: unexpected argument --bogus'], false],
    [0, ["error: unrecognized subcommand 'app-server'"], false],
    [1, ['fatal: config.toml is invalid'], false],
  ])('exit %i with %j means a build without app-server: %s', (code, stderr, want) => {
    expect(lacksAppServer(code, stderr)).toBe(want);
  });
});

describe('managed CODEX_HOME', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'codex-home-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  let n = 0;
  const fresh = () => {
    const dir = path.join(root, `case-${++n}`);
    mkdirSync(path.join(dir, 'home'), { recursive: true });
    return { dir, env: { HOME: path.join(dir, 'home') } as Record<string, string> };
  };

  it('fails fast, naming what it looked for, when no credential exists anywhere', () => {
    const { dir, env } = fresh();
    const result = prepareManagedHome({
      config: config({ credentials_home: path.join(dir, 'empty') }),
      env,
      command: null,
    });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.message).toMatch(/no auth\.json in .*empty.*CODEX_API_KEY.*OPENAI_API_KEY/);
    expect(existsSync(managedRoot(env))).toBe(false);
  });

  it('copies auth.json and config.toml in, and a token Codex refreshed in its copy is never copied back', () => {
    const { dir, env } = fresh();
    const source = path.join(dir, 'operator-codex');
    mkdirSync(source);
    writeFileSync(path.join(source, 'auth.json'), '{"token":"operator"}');
    writeFileSync(path.join(source, 'config.toml'), 'model = "gpt-5.5"\n');
    const c = config({ credentials_home: source });
    const first = prepareManagedHome({ config: c, env, command: null });
    if (!first.ok) throw new Error(first.message);
    expect(first.home.startsWith(managedRoot(env))).toBe(true);
    expect(readFileSync(path.join(first.home, 'auth.json'), 'utf8')).toBe('{"token":"operator"}');
    expect(statSync(path.join(first.home, 'auth.json')).mode & 0o777).toBe(0o600);
    // Codex rotates the token in its own copy; the next session keeps it and the source is untouched.
    writeFileSync(path.join(first.home, 'auth.json'), '{"token":"refreshed"}');
    const second = prepareManagedHome({ config: c, env, command: null });
    if (!second.ok) throw new Error(second.message);
    expect(second.home).toBe(first.home);
    expect(readFileSync(path.join(second.home, 'auth.json'), 'utf8')).toBe('{"token":"refreshed"}');
    expect(readFileSync(path.join(source, 'auth.json'), 'utf8')).toBe('{"token":"operator"}');
    // A new login at the source is newer: it replaces the managed copy.
    writeFileSync(path.join(source, 'auth.json'), '{"token":"relogged"}');
    const later = new Date(Date.now() + 60_000);
    utimesSync(path.join(source, 'auth.json'), later, later);
    const third = prepareManagedHome({ config: c, env, command: null });
    if (!third.ok) throw new Error(third.message);
    expect(readFileSync(path.join(third.home, 'auth.json'), 'utf8')).toBe('{"token":"relogged"}');
  });

  it('accepts a key in the environment, or the variable a configured model provider reads, as the credential', () => {
    const { dir, env } = fresh();
    const source = path.join(dir, 'src');
    mkdirSync(source);
    writeFileSync(path.join(source, 'config.toml'), '[model_providers.fake]\nenv_key = "FAKE_KEY"\n');
    const c = config({ credentials_home: source });
    expect(prepareManagedHome({ config: c, env, command: null }).ok).toBe(false);
    expect(prepareManagedHome({ config: c, env: { ...env, FAKE_KEY: 'k' }, command: null }).ok).toBe(true);
    expect(prepareManagedHome({ config: c, env: { ...env, CODEX_API_KEY: 'k' }, command: null }).ok).toBe(
      true,
    );
  });

  it('different setups get different folders; the source defaults to CODEX_HOME, then ~/.codex', () => {
    const { dir, env } = fresh();
    const withKey = { ...env, OPENAI_API_KEY: 'k' };
    const a = prepareManagedHome({ config: config(), env: withKey, command: null });
    const b = prepareManagedHome({ config: config({ config: { x: 1 } }), env: withKey, command: null });
    if (!a.ok || !b.ok) throw new Error('expected homes');
    expect(a.home).not.toBe(b.home);
    expect(sourceHome(config(), env)).toBe(path.join(env.HOME as string, '.codex'));
    expect(sourceHome(config(), { ...env, CODEX_HOME: path.join(dir, 'ch') })).toBe(path.join(dir, 'ch'));
    expect(sourceHome(config({ credentials_home: '~/creds' }), env)).toBe(
      path.join(env.HOME as string, 'creds'),
    );
  });
});
