/**
 * Codex's tool channel: a session given a tool delivery finds its servers in the managed
 * home's config.toml (names of variables only, the operator's tables of the same names
 * replaced, the rest kept), the values in the app-server's environment, and its first turn
 * starts once the servers have; a session without tools (a verification session among
 * them) keeps the block another session wrote but switches its servers off. The pinned
 * Codex, when installed, reads the block exactly as it was meant, and the same servers
 * given as `-c` overrides (the form a session on an SSH host uses) the same way.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeRuntime } from '../../../internal-contracts/agent/fake-runtime.js';
import { assertToolDelivery, contractDelivery } from '../../../internal-contracts/agent/tool-delivery.js';
import { composeConfig, toolOverrideArgs, toolTables } from '../../../src/agent/codex/tool-tables.js';
import type { StartSessionParams } from '../../../src/domain/agent.js';
import type { ToolDelivery, ToolServerSpec } from '../../../src/domain/tool-delivery.js';
import { type RelayEvent, relayEvents, wire } from './fake-app-server.js';
import { CODEX_BIN, realCodexSkipReason } from './real-cli.js';
import { appServerCommand, codexAdapter, codexParams, codexTestRoot, runTurns, verdict } from './support.js';

const t = codexTestRoot('codex-tools-');
afterAll(() => t.cleanup());
const TIMEOUT = 30_000;

const TURN = [
  { stdout: wire.turnStarted() },
  { stdout: wire.message('m1', 'done') },
  { stdout: wire.completed('completed') },
  { exit: 0 },
];

/** The operator's configuration: a stale table of our server's name, and a server of theirs. */
const OPERATOR_TOML = [
  'model = "gpt-5.5"',
  '',
  '[mcp_servers.orchestrator]',
  'command = "/old/orchestrator"',
  '',
  '[mcp_servers.orchestrator.env]',
  'STALE = "1"',
  '',
  '[mcp_servers.docs]',
  'command = "docs-server"',
  '',
].join('\n');

/** The block for `contractDelivery()`, as it must stand in config.toml. */
const CONTRACT_BLOCK = [
  '# >>> tool servers of the orchestrator (rewritten by each session given tools; do not edit)',
  '[mcp_servers.orchestrator]',
  'command = "/usr/bin/node"',
  'args = ["/opt/orchestrator/dist/cli/main.js", "mcp-server"]',
  'env_vars = ["ORCHESTRATOR_TOOLS_URL", "ORCHESTRATOR_TOOLS_TOKEN"]',
  'startup_timeout_sec = 30',
  'default_tools_approval_mode = "approve"',
  '',
  '# <<< tool servers of the orchestrator',
  '',
].join('\n');

let cases = 0;
/** One setup: a source home with the operator's config, the managed homes' root, one fake runtime. */
function setup(env: Record<string, string> = {}) {
  const dir = path.join(t.root, `case-${++cases}`);
  const source = path.join(dir, 'source');
  mkdirSync(source, { recursive: true });
  writeFileSync(path.join(source, 'config.toml'), OPERATOR_TOML);
  const runtime = fakeRuntime(path.join(dir, 'fake'), 'codex', { steps: TURN });
  const params = (
    tools: ToolDelivery | null,
    extra: Partial<StartSessionParams> = {},
  ): StartSessionParams => ({
    ...codexParams(t, appServerCommand(t, 'relay', runtime), {
      options: { credentials_home: source, home_root: path.join(dir, 'homes') },
      env: { PATH: process.env.PATH ?? '', HOME: t.home(), CODEX_API_KEY: 'sk-test-dummy', ...env },
    }),
    tools,
    ...extra,
  });
  const launches = () => relayEvents(runtime).filter((e) => e.event === 'launch');
  return { runtime, params, launches };
}

/** The managed config.toml the launched app-server read. */
function managedConfig(launch: RelayEvent): { path: string; text: string } {
  const file = path.join(launch.env?.CODEX_HOME as string, 'config.toml');
  return { path: file, text: readFileSync(file, 'utf8') };
}

const toolVariables = (launch: RelayEvent | undefined) =>
  Object.keys(launch?.env ?? {}).filter((k) => k.startsWith('ORCHESTRATOR_TOOLS'));

describe('codex tool delivery', () => {
  it(
    'writes the servers into the managed config.toml with names of variables only, puts the values in the environment, and starts the first turn once the server is ready',
    async () => {
      const s = setup({ FAKE_MCP_READY_MS: '700' });
      const delivery = contractDelivery();
      const { turns } = await runTurns(codexAdapter(), s.params(delivery), ['first', 'second']);
      expect(turns.map(verdict)).toEqual(['turn_completed/none', 'turn_completed/none']);
      const [launch] = s.launches();
      expect(s.launches()).toHaveLength(1);
      const file = managedConfig(launch as RelayEvent);
      assertToolDelivery(delivery, { argv: launch?.argv ?? [], env: launch?.env ?? {}, files: [file] });
      // The operator's table of our name (and its sub-table) gave way; theirs stayed.
      expect(file.text).toBe(
        `model = "gpt-5.5"\n\n[mcp_servers.docs]\ncommand = "docs-server"\n\n${CONTRACT_BLOCK}`,
      );
      expect((launch?.argv ?? []).join(' ')).not.toContain('enabled=false');
      // The first turn waited for the server's report; the second did not need to.
      const events = relayEvents(s.runtime).map((e) => [e.event, e.name].join(' ').trim());
      expect(events).toEqual([
        'launch',
        'mcp-ready docs',
        'mcp-ready orchestrator',
        'turn/start',
        'turn/start',
      ]);
    },
    TIMEOUT,
  );

  it(
    'gives a session without tools, and a verification session given some, no tool variables and the block switched off',
    async () => {
      const s = setup();
      await runTurns(codexAdapter(), s.params(contractDelivery()), ['with tools']);
      await runTurns(codexAdapter(), s.params(null), ['without']);
      await runTurns(
        codexAdapter(),
        s.params(contractDelivery(), { credentialVerification: { fullContext: false } }),
        ['verify'],
      );
      const [, without, verification] = s.launches();
      for (const launch of [without, verification]) {
        expect(toolVariables(launch)).toEqual([]);
        expect(launch?.argv).toEqual(
          expect.arrayContaining(['-c', 'mcp_servers.orchestrator.enabled=false']),
        );
        // The block stays for the sessions that use it.
        expect(managedConfig(launch as RelayEvent).text.endsWith(CONTRACT_BLOCK)).toBe(true);
      }
      // Only the session with tools started our server (the operator's starts for every session).
      const ours = relayEvents(s.runtime).filter((e) => e.name === 'orchestrator');
      expect(ours.map((e) => e.event)).toEqual(['mcp-ready']);
    },
    TIMEOUT,
  );

  it(
    'gives a session of a setup no session with tools has run no block and nothing switched off',
    async () => {
      const s = setup();
      await runTurns(codexAdapter(), s.params(null), ['plain']);
      const [launch] = s.launches();
      expect(toolVariables(launch)).toEqual([]);
      expect((launch?.argv ?? []).join(' ')).not.toContain('mcp_servers');
      expect(managedConfig(launch as RelayEvent).text).toBe(OPERATOR_TOML);
    },
    TIMEOUT,
  );

  it(
    'reports a server that failed to start as a warning, and the turn goes on without it',
    async () => {
      const s = setup({ FAKE_MCP_STATUS: 'failed' });
      const { turns } = await runTurns(codexAdapter(), s.params(contractDelivery()), ['go']);
      const run = turns[0] as NonNullable<(typeof turns)[0]>;
      expect(verdict(run)).toBe('turn_completed/none');
      expect(run.events).toContainEqual(
        expect.objectContaining({
          type: 'warning',
          message: 'tool server orchestrator failed to start: handshake failed',
        }),
      );
    },
    TIMEOUT,
  );
});

const cliSkip = realCodexSkipReason();

describe.skipIf(cliSkip !== null)('the pinned Codex reading the tool block', () => {
  const awkward: ToolDelivery = {
    servers: {
      orchestrator: {
        transport: 'stdio',
        command: '/opt/node "v20"\\bin/node',
        args: ['/opt/a b/main.js', 'tab\there', 'quote"d', 'back\\slash', 'ctl\u0001'],
        envNames: ['ORCHESTRATOR_TOOLS_URL', 'ORCHESTRATOR_TOOLS_TOKEN'],
      },
      'web "tools"': {
        transport: 'http',
        url: 'http://127.0.0.1:9/mcp',
        headers: {
          Authorization: { prefix: 'Bearer ', variable: 'WEB_TOKEN' },
          'X-Tenant': { prefix: '', variable: 'WEB_TENANT' },
        },
      },
    },
    env: { ORCHESTRATOR_TOOLS_URL: 'http://127.0.0.1:1/mcp', ORCHESTRATOR_TOOLS_TOKEN: 'secret-token-1' },
  };

  const codexHome = () => {
    const home = path.join(t.root, `cli-home-${++cases}`);
    mkdirSync(home);
    writeFileSync(path.join(home, 'config.toml'), composeConfig(null, null, toolTables(awkward)) as string);
    return home;
  };
  const codex = (home: string, args: string[]) =>
    execFileSync(CODEX_BIN, args, {
      env: { PATH: process.env.PATH ?? '', HOME: home, CODEX_HOME: home, RUST_LOG: 'error' },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 30_000,
    });

  it('accepts every key under --strict-config', () => {
    const out = codex(codexHome(), ['app-server', '--strict-config', '--print-startup-config']);
    expect(JSON.parse(out)).toMatchObject({ appServerVersion: expect.any(String) });
  });

  it('lists the servers with the values as written, and a server switched off by -c as disabled', () => {
    const home = codexHome();
    const listed = JSON.parse(codex(home, ['mcp', 'list', '--json'])) as Record<string, unknown>[];
    const byName = Object.fromEntries(listed.map((s) => [s.name as string, s]));
    expect(byName.orchestrator).toMatchObject({
      enabled: true,
      transport: {
        type: 'stdio',
        command: '/opt/node "v20"\\bin/node',
        args: ['/opt/a b/main.js', 'tab\there', 'quote"d', 'back\\slash', 'ctl\u0001'],
        env: null,
        env_vars: ['ORCHESTRATOR_TOOLS_URL', 'ORCHESTRATOR_TOOLS_TOKEN'],
      },
      startup_timeout_sec: 30,
    });
    expect(byName['web "tools"']).toMatchObject({
      transport: {
        type: 'streamable_http',
        url: 'http://127.0.0.1:9/mcp',
        bearer_token_env_var: 'WEB_TOKEN',
        http_headers: null,
        env_http_headers: { 'X-Tenant': 'WEB_TENANT' },
      },
    });
    const off = JSON.parse(
      codex(home, ['mcp', 'list', '--json', '-c', 'mcp_servers.orchestrator.enabled=false']),
    ) as Record<string, unknown>[];
    expect(off.find((s) => s.name === 'orchestrator')).toMatchObject({ enabled: false });
  });

  it('reads the same servers given as -c overrides before the subcommand, every key under --strict-config', () => {
    // Overrides can address bare names only; the awkward one gets a bare name here.
    const { 'web "tools"': web, ...rest } = awkward.servers;
    const delivery: ToolDelivery = { ...awkward, servers: { ...rest, 'web-tools': web as ToolServerSpec } };
    const overrides = toolOverrideArgs(delivery);
    const home = path.join(t.root, `cli-home-${++cases}`);
    mkdirSync(home);
    const started = codex(home, [...overrides, 'app-server', '--strict-config', '--print-startup-config']);
    expect(JSON.parse(started)).toMatchObject({ appServerVersion: expect.any(String) });
    const listed = JSON.parse(codex(home, [...overrides, 'mcp', 'list', '--json'])) as Record<
      string,
      unknown
    >[];
    expect(listed.map((s) => s.name).sort()).toEqual(['orchestrator', 'web-tools']);
    const byName = Object.fromEntries(listed.map((s) => [s.name as string, s]));
    expect(byName.orchestrator).toMatchObject({
      enabled: true,
      transport: {
        type: 'stdio',
        command: '/opt/node "v20"\\bin/node',
        args: ['/opt/a b/main.js', 'tab\there', 'quote"d', 'back\\slash', 'ctl\u0001'],
        env_vars: ['ORCHESTRATOR_TOOLS_URL', 'ORCHESTRATOR_TOOLS_TOKEN'],
      },
      startup_timeout_sec: 30,
    });
    expect(byName['web-tools']).toMatchObject({
      enabled: true,
      transport: {
        type: 'streamable_http',
        url: 'http://127.0.0.1:9/mcp',
        bearer_token_env_var: 'WEB_TOKEN',
        http_headers: null,
        env_http_headers: { 'X-Tenant': 'WEB_TENANT' },
      },
      startup_timeout_sec: 30,
    });
  });
});
