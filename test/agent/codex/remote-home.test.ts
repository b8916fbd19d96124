/**
 * The managed CODEX_HOME on an SSH worker host, with a stand-in host that runs
 * scripts here with exactly the environment they are given: the folder is the
 * local setup's (same hash) under the host's XDG_STATE_HOME or ~/.local/state,
 * 700, made by one script that prints its path; auth.json and config.toml arrive
 * byte for byte with mode 600 while their contents stay out of the script text;
 * an unchanged source does not roll back what the host's Codex rewrote, a changed
 * one replaces it, a removed one is removed; no credential fails before the host
 * is asked. Then the adapter on a host: the session runs with that folder as
 * CODEX_HOME, nothing is made locally, the `--help` probe that decides the
 * fallback to `exec` runs on the host, and a session given tools gets its servers
 * as `-c` overrides on its command line (names of variables only) and the values in
 * its environment, the host's config.toml untouched.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeInvocations, fakeRuntime } from '../../../internal-contracts/agent/fake-runtime.js';
import { assertToolDelivery } from '../../../internal-contracts/agent/tool-delivery.js';
import { codexBlock } from '../../../src/agent/codex/config.js';
import { prepareManagedHome } from '../../../src/agent/codex/home.js';
import { prepareRemoteHome, remoteHomeScript } from '../../../src/agent/codex/remote-home.js';
import { LocalRemoteHost } from '../../support/local-remote-host.js';
import { http, TOKEN } from '../core/tool-deliveries.js';
import { wire } from './fake-app-server.js';
import { execLine } from './lines.js';
import {
  appServerCommand,
  codexAdapter,
  codexParams,
  codexTestRoot,
  figure,
  runTurns,
  verdict,
} from './support.js';

const t = codexTestRoot('codex-remote-home-');
afterAll(() => t.cleanup());
const TIMEOUT = 30_000;
const PATH = process.env.PATH ?? '/usr/bin:/bin';

/** Contents a shell would mangle if they were pasted anywhere: quotes, $, backquotes, newlines. */
const AUTH = `{"OPENAI_API_KEY":"sk-'it'\\"s\`$(touch /tmp/pwned)\`$HOME"}\n\n`;
const CONFIG = 'model = "gpt-5.5"\n# a $VAR and a \'quote\'\n[x]\nk = "v"\n';

const config = (options: Record<string, unknown> = {}) => {
  const parsed = codexBlock.parse(options);
  if (!parsed.ok) throw new Error('bad block');
  return parsed.config;
};

/** A source folder with the given files, a host whose login HOME is a fresh folder, and a session env. */
function setup(files: { auth?: string; config?: string }) {
  const source = path.join(t.home(), 'source');
  mkdirSync(source);
  if (files.auth !== undefined) writeFileSync(path.join(source, 'auth.json'), files.auth);
  if (files.config !== undefined) writeFileSync(path.join(source, 'config.toml'), files.config);
  const hostHome = t.home();
  const host = new LocalRemoteHost({ loginDir: hostHome, loginEnv: { HOME: hostHome, PATH } });
  const cfg = config({ credentials_home: source });
  return { source, hostHome, host, cfg };
}

const mode = (p: string) => statSync(p).mode & 0o777;

describe('codex managed home on a host', () => {
  it('is the local setup folder under the host ~/.local/state, 700, holding the files byte for byte at 600; contents never in the script', async () => {
    const { source, hostHome, host, cfg } = setup({ auth: AUTH, config: CONFIG });
    const env = { CODEX_API_KEY: '' };
    const result = await prepareRemoteHome({ config: cfg, env, command: 'codex app-server', host });
    expect(result.ok, result.ok ? '' : result.message).toBe(true);
    if (!result.ok) return;
    // The same setup hash as a local session of this setup would use.
    const localState = t.home();
    const local = prepareManagedHome({ config: cfg, env: { HOME: localState }, command: 'codex app-server' });
    if (!local.ok) throw new Error(local.message);
    expect(path.basename(result.home)).toBe(path.basename(local.home));
    expect(result.home).toBe(
      path.join(hostHome, '.local', 'state', 'orchestrator', 'codex-homes', path.basename(local.home)),
    );
    expect(result.source).toBe(source);
    expect(mode(result.home)).toBe(0o700);
    for (const dir of ['.local', '.local/state', '.local/state/orchestrator']) {
      expect(mode(path.join(hostHome, dir))).toBe(0o700);
    }
    expect(readFileSync(path.join(result.home, 'auth.json'), 'utf8')).toBe(AUTH);
    expect(readFileSync(path.join(result.home, 'config.toml'), 'utf8')).toBe(CONFIG);
    expect(mode(path.join(result.home, 'auth.json'))).toBe(0o600);
    expect(mode(path.join(result.home, 'config.toml'))).toBe(0o600);
    expect(existsSync('/tmp/pwned')).toBe(false);
    // One script, naming variables only; the contents were its environment.
    expect(host.runs).toHaveLength(1);
    const run = host.runs[0];
    expect(run?.script).toBe(remoteHomeScript());
    expect(run?.script).not.toContain('OPENAI_API_KEY');
    expect(run?.script).not.toContain('gpt-5.5');
    expect(Object.values(run?.env ?? {})).toEqual(expect.arrayContaining([AUTH, CONFIG]));
    expect(run?.cwd).toBeNull();
  });

  it('uses the session env XDG_STATE_HOME when it sets one, and works with config.toml alone', async () => {
    const { host, cfg } = setup({ config: 'model = "m"\n' });
    const state = path.join(t.home(), 'state');
    const result = await prepareRemoteHome({
      config: cfg,
      env: { CODEX_API_KEY: 'sk-x', XDG_STATE_HOME: state },
      command: null,
      host,
    });
    if (!result.ok) throw new Error(result.message);
    expect(path.dirname(result.home)).toBe(path.join(state, 'orchestrator', 'codex-homes'));
    expect(existsSync(path.join(result.home, 'auth.json'))).toBe(false);
    expect(mode(path.join(result.home, 'config.toml'))).toBe(0o600);
  });

  it('keeps what the host rewrote while the source is unchanged, replaces it when the source changes, removes it when the source has none', async () => {
    const { source, host, cfg } = setup({ auth: AUTH, config: CONFIG });
    const input = { config: cfg, env: {}, command: null, host };
    const first = await prepareRemoteHome(input);
    if (!first.ok) throw new Error(first.message);
    const hostAuth = path.join(first.home, 'auth.json');
    // The host's Codex refreshed its token; a loose mode is tightened again.
    writeFileSync(hostAuth, '{"refreshed":true}');
    chmodSync(hostAuth, 0o644);
    const second = await prepareRemoteHome(input);
    if (!second.ok) throw new Error(second.message);
    expect(second.home).toBe(first.home);
    expect(readFileSync(hostAuth, 'utf8')).toBe('{"refreshed":true}');
    expect(mode(hostAuth)).toBe(0o600);
    // The operator logged in again.
    writeFileSync(path.join(source, 'auth.json'), '{"new":1}');
    const later = new Date(Date.now() + 5_000);
    utimesSync(path.join(source, 'auth.json'), later, later);
    await prepareRemoteHome(input);
    expect(readFileSync(hostAuth, 'utf8')).toBe('{"new":1}');
    // The configuration is gone from the source: gone from the host too.
    rmSync(path.join(source, 'config.toml'));
    await prepareRemoteHome(input);
    expect(existsSync(path.join(first.home, 'config.toml'))).toBe(false);
    expect(readFileSync(hostAuth, 'utf8')).toBe('{"new":1}');
  });

  it('fails without asking the host when there is no credential, and says so when the host cannot do it', async () => {
    const { host, cfg } = setup({});
    const none = await prepareRemoteHome({ config: cfg, env: {}, command: null, host });
    expect(none.ok).toBe(false);
    if (!none.ok) expect(none.message).toMatch(/codex has no credential/);
    expect(host.runs).toHaveLength(0);

    host.unreachable = 'connection refused';
    const down = await prepareRemoteHome({
      config: cfg,
      env: { CODEX_API_KEY: 'sk-x' },
      command: null,
      host,
    });
    expect(down.ok).toBe(false);
    if (!down.ok) expect(down.message).toMatch(/on local-test-host: .*connection refused/);

    const homeless = new LocalRemoteHost({ loginDir: t.home(), loginEnv: { PATH } });
    const noHome = await prepareRemoteHome({
      config: cfg,
      env: { CODEX_API_KEY: 'sk-x' },
      command: null,
      host: homeless,
    });
    expect(noHome.ok).toBe(false);
    if (!noHome.ok) expect(noHome.message).toMatch(/neither XDG_STATE_HOME nor HOME is set/);
  });
});

describe('codex adapter on a host', () => {
  let fakes = 0;
  const fake = (turns: Parameters<typeof fakeRuntime>[2]) =>
    fakeRuntime(path.join(t.root, 'fakes', `f${++fakes}`), 'codex', turns);

  it(
    'runs the session with the host folder as CODEX_HOME and prepares nothing locally',
    async () => {
      const runtime = fake({
        steps: [{ stdout: wire.message('m1', 'hi') }, { stdout: wire.completed('completed') }, { exit: 0 }],
      });
      const { host, hostHome, cfg: _cfg, source } = setup({ config: CONFIG });
      const localHome = t.home();
      const params = codexParams(t, appServerCommand(t, 'relay', runtime), {
        options: { credentials_home: source },
        env: { CODEX_API_KEY: 'sk-test-dummy' },
      });
      const { turns } = await runTurns(codexAdapter(), { ...params, remote: host }, ['hello']);
      expect(turns.map(verdict)).toEqual(['turn_completed/none']);
      const [invocation] = fakeInvocations(runtime);
      const codexHome = invocation?.env.CODEX_HOME ?? '';
      expect(
        codexHome.startsWith(path.join(hostHome, '.local', 'state', 'orchestrator', 'codex-homes')),
      ).toBe(true);
      expect(readFileSync(path.join(codexHome, 'config.toml'), 'utf8')).toBe(CONFIG);
      expect(invocation?.env.CODEX_API_KEY).toBe('sk-test-dummy');
      expect(existsSync(path.join(localHome, '.local'))).toBe(false);
    },
    TIMEOUT,
  );

  it(
    'asks the host, not this machine, whether a silently dying app-server means a build without it, then runs exec',
    async () => {
      const runtime = fake({
        turns: [
          [
            { stdout: execLine.threadStarted('01a22a64-0000-7000-8000-0000000000cc') },
            { stdout: execLine.turnStarted() },
            { stdout: execLine.message('item_0', 'one') },
            { stdout: execLine.completed({ input: 100, cached: 0, output: 10 }) },
            { exit: 0 },
          ],
        ],
      });
      // An old build: `app-server` dies without a word, `--help` lists no such subcommand.
      const bin = path.join(t.root, 'old-codex');
      mkdirSync(bin, { recursive: true });
      const program = path.join(bin, 'codex-old');
      writeFileSync(
        program,
        [
          '#!/bin/sh',
          'case "$1" in',
          '  app-server) exit 1;;',
          "  --help) printf 'Commands:\\n  exec  Run Codex non-interactively\\n'; exit 0;;",
          'esac',
          `exec ${appServerCommand(t, 'no-app-server', runtime)} "$@"`,
          '',
        ].join('\n'),
      );
      chmodSync(program, 0o755);
      const { host } = setup({});
      const params = codexParams(t, program, { env: { CODEX_API_KEY: 'sk-test-dummy' } });
      const { turns } = await runTurns(codexAdapter(), { ...params, remote: host }, ['first']);
      expect(turns.map(verdict)).toEqual(['turn_completed/none']);
      expect(turns.map(figure)).toEqual([[100, 10, 0]]);
      expect(fakeInvocations(runtime).map((i) => i.argv[0])).toEqual(['exec']);
      // Two scripts on the host: the home, then the probe in the workspace, naming the program by variable.
      expect(host.runs).toHaveLength(2);
      const probe = host.runs[1];
      expect(probe?.cwd).toBe(params.workspacePath);
      expect(probe?.script).toContain('exec "$ORCH_AUX_PROGRAM" "$ORCH_AUX_ARG_0"');
      expect(probe?.script).not.toContain(program);
      expect(probe?.env.ORCH_AUX_PROGRAM).toBe(program);
      expect(probe?.env.ORCH_AUX_ARG_0).toBe('--help');
      expect(probe?.env.CODEX_API_KEY).toBe('sk-test-dummy');
    },
    TIMEOUT,
  );

  it(
    'gives a session given tools its servers as -c overrides and their values in its environment, and leaves the host config.toml alone',
    async () => {
      // Our server as a session on a host gets it: the host's end of the forward, the token by name.
      const token = TOKEN;
      const delivery = http;
      const runtime = fake({
        turns: [
          [
            { stdout: execLine.threadStarted('01a22a64-0000-7000-8000-0000000000dd') },
            { stdout: execLine.turnStarted() },
            { stdout: execLine.message('item_0', 'one') },
            { stdout: execLine.completed({ input: 100, cached: 0, output: 10 }) },
            { exit: 0 },
          ],
        ],
      });
      const { host, source } = setup({ config: CONFIG });
      const params = codexParams(t, `${runtime} exec`, {
        options: { credentials_home: source },
        env: { PATH, CODEX_API_KEY: 'sk-test-dummy' },
      });
      const { turns } = await runTurns(codexAdapter(), { ...params, remote: host, tools: delivery }, ['go']);
      expect(turns.map(verdict)).toEqual(['turn_completed/none']);
      const [invocation] = fakeInvocations(runtime);
      if (invocation === undefined) throw new Error('the fake was not launched');
      // Before the subcommand, so every subcommand (app-server, exec, the probe) reads them.
      expect(invocation.argv.slice(0, 3)).toEqual([
        '-c',
        'mcp_servers.orchestrator={ url = "http://127.0.0.1:40999/mcp", ' +
          'bearer_token_env_var = "ORCHESTRATOR_TOOLS_TOKEN", ' +
          'startup_timeout_sec = 30, default_tools_approval_mode = "approve" }',
        'exec',
      ]);
      const hostConfig = path.join(invocation.env.CODEX_HOME as string, 'config.toml');
      const file = { path: hostConfig, text: readFileSync(hostConfig, 'utf8') };
      expect(file.text).toBe(CONFIG);
      assertToolDelivery(delivery, { argv: invocation.argv, env: invocation.env, files: [file] });
      // The host's scripts never saw the token either.
      expect(JSON.stringify(host.runs)).not.toContain(token);
    },
    TIMEOUT,
  );
});
