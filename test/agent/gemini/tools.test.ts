/**
 * Gemini CLI's tool channel: a session given a tool delivery, here or on an SSH host, runs
 * with the servers in the `mcpServers` of its managed settings.json (references only,
 * trusted) and the values in its environment; on a host the settings travel in the
 * environment of the script that prepares the home, with no token in them. A session without
 * a delivery, or a credential check, gets a settings file without them, in a folder of its
 * own so neither rewrites the other's settings.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeInvocations, fakeRuntime } from '../../../internal-contracts/agent/fake-runtime.js';
import { assertToolDelivery, contractDelivery } from '../../../internal-contracts/agent/tool-delivery.js';
import { type GeminiConfig, geminiBlock } from '../../../src/agent/gemini/config.js';
import { managedSettings, setupHash, sourceHome } from '../../../src/agent/gemini/home.js';
import '../../../src/agent/kinds.js';
import { OWN_TOOL_SERVER } from '../../../src/domain/tool-delivery.js';
import { LocalRemoteHost } from '../../support/local-remote-host.js';
import { http, TOKEN } from '../core/tool-deliveries.js';
import { geminiLines, runSession, scratchDir, startParams, workspaceRoot } from './support.js';

const ws = workspaceRoot('gemini-tools-');
afterAll(() => ws.cleanup());

const TURN = [{ stdout: geminiLines.init() }, { stdout: geminiLines.success() }, { exit: 0 }];

/** The servers as the managed settings must hold them. */
const SERVERS = {
  orchestrator: {
    command: '/usr/bin/node',
    args: ['/opt/orchestrator/dist/cli/main.js', 'mcp-server'],
    env: {
      ORCHESTRATOR_TOOLS_URL: '${ORCHESTRATOR_TOOLS_URL}',
      ORCHESTRATOR_TOOLS_TOKEN: '${ORCHESTRATOR_TOOLS_TOKEN}',
    },
    trust: true,
  },
};

function defaults(): GeminiConfig {
  const parsed = geminiBlock.parse({});
  if (!parsed.ok) throw new Error('the empty block does not parse');
  return parsed.config;
}

/** The managed settings file an invocation ran with, and its text. */
function settingsOf(env: Record<string, string>): { path: string; text: string } {
  const file = path.join(env.GEMINI_CLI_HOME as string, '.gemini', 'settings.json');
  return { path: file, text: readFileSync(file, 'utf8') };
}

const toolVariables = (env: Record<string, string>) =>
  Object.keys(env).filter((k) => k.startsWith('ORCHESTRATOR_TOOLS'));

describe('gemini tool delivery', () => {
  it('merges the servers into the managed settings with references only, trusted, and puts the values in the environment', async () => {
    const command = fakeRuntime(`${ws.root}/tools-fake`, 'gemini', { steps: TURN });
    const delivery = contractDelivery();
    await runSession({ ...startParams({ ws, command }), tools: delivery }, ['first', 'second']);
    const invocations = fakeInvocations(command);
    expect(invocations).toHaveLength(2);
    for (const run of invocations) {
      const settings = settingsOf(run.env);
      assertToolDelivery(delivery, { argv: run.argv, env: run.env, files: [settings] });
      expect(JSON.parse(settings.text)).toEqual({ ...managedSettings(defaults()), mcpServers: SERVERS });
      // Nothing about the tools on the command line: the settings are the only channel.
      expect(run.argv.join(' ')).not.toMatch(/mcp|orchestrator/i);
    }
  });

  it('gives a session without a delivery settings without servers, in another folder, and no tool variables', async () => {
    const withTools = fakeRuntime(`${ws.root}/tools-home-fake`, 'gemini', { steps: TURN });
    await runSession({ ...startParams({ ws, command: withTools }), tools: contractDelivery() }, ['only']);
    const command = fakeRuntime(`${ws.root}/no-tools-fake`, 'gemini', { steps: TURN });
    await runSession(startParams({ ws, command }), ['only']);
    const [tooled] = fakeInvocations(withTools);
    const [run] = fakeInvocations(command);
    if (run === undefined || tooled === undefined) throw new Error('a fake was not launched');
    expect(JSON.parse(settingsOf(run.env).text)).toEqual(managedSettings(defaults()));
    expect(toolVariables(run.env)).toEqual([]);
    // Both are live setups of one block: one folder would have them rewrite each other's file.
    expect(run.env.GEMINI_CLI_HOME).not.toBe(tooled.env.GEMINI_CLI_HOME);
    expect(JSON.parse(settingsOf(tooled.env).text).mcpServers).toEqual(SERVERS);
  });

  it('writes no servers for a credential check even when handed a delivery', async () => {
    const command = fakeRuntime(`${ws.root}/verify-fake`, 'gemini', { steps: TURN });
    const params = { ...startParams({ ws, command }), tools: contractDelivery() };
    await runSession({ ...params, credentialVerification: { fullContext: true } }, ['only']);
    const [run] = fakeInvocations(command);
    if (run === undefined) throw new Error('the fake was not launched');
    expect(JSON.parse(settingsOf(run.env).text)).not.toHaveProperty('mcpServers');
  });

  it('gives a session on an SSH host the servers in the settings sent to the host, references only, and the values in its environment', async () => {
    // Our server as a session on a host gets it: the host's end of the forward, the token by name.
    const token = TOKEN;
    const delivery = http;
    const command = fakeRuntime(`${ws.root}/remote-fake`, 'gemini', { steps: TURN });
    const hostHome = scratchDir('gemini-tools-host-');
    const host = new LocalRemoteHost({ loginDir: hostHome, loginEnv: { HOME: hostHome } });
    const params = { ...startParams({ ws, command }), remote: host, tools: delivery };
    await runSession(params, ['only']);

    const mcpServers = {
      [OWN_TOOL_SERVER]: {
        httpUrl: 'http://127.0.0.1:40999/mcp',
        headers: { Authorization: 'Bearer ${ORCHESTRATOR_TOOLS_TOKEN}' },
        trust: true,
      },
    };
    // The settings went to the host as a value of the script's environment, never its text.
    const [prepare] = host.runs;
    if (prepare === undefined) throw new Error('the host was not asked to prepare the home');
    const sent = prepare.env.ORCH_GEMINI_SETTINGS as string;
    expect(JSON.parse(sent)).toEqual({ ...managedSettings(defaults()), mcpServers });
    expect(prepare.script).not.toContain('mcpServers');
    expect(JSON.stringify(host.runs)).not.toContain(token);
    // The same setup (folder) a local session given these servers would use.
    const source = sourceHome(defaults(), params.env);
    expect(prepare.env.ORCH_GEMINI_SETUP).toBe(
      setupHash(source, { config: defaults(), command, mcpServers }),
    );
    expect(prepare.env.ORCH_GEMINI_SETUP).not.toBe(setupHash(source, { config: defaults(), command }));

    const [run] = fakeInvocations(command);
    if (run === undefined) throw new Error('the fake was not launched');
    const settings = settingsOf(run.env);
    expect(settings.text).toBe(sent);
    assertToolDelivery(delivery, { argv: run.argv, env: run.env, files: [settings] });
  });
});
