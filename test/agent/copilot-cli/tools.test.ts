/**
 * Copilot CLI's tool channel: a session given a tool delivery launches the CLI with the
 * rendered `--additional-mcp-config` and our server allowed by name, the token only in its
 * environment; a call to one of the server's tools is reported as `server.tool`; the
 * credential-verification session gets no server. The real CLI's side is in
 * test/e2e/tools-copilot-cli.test.ts.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { fakeInvocations, fakeRuntime } from '../../../internal-contracts/agent/fake-runtime.js';
import { assertToolDelivery, contractDelivery } from '../../../internal-contracts/agent/tool-delivery.js';
import { renderToolConfig } from '../../../src/agent/core/tool-config.js';
import '../../../src/agent/kinds.js';
import { copilotLines, ofType, runSession, startParams, workspaceRoot } from './support.js';

const ws = workspaceRoot('copilot-tools-');
afterAll(() => ws.cleanup());

const TURN = [
  { stdout: copilotLines.mcpToolStart('t-1', 'orchestrator', 'run_status', {}) },
  { stdout: copilotLines.toolComplete('t-1') },
  { stdout: copilotLines.message('m-1', 'done') },
  { stdout: copilotLines.result() },
  { exit: 0 },
];

const CONFIG_FLAG = '--additional-mcp-config=';

/** The JSON an invocation was given as its additional MCP config; undefined when none. */
function mcpConfigOf(argv: readonly string[]): unknown {
  const arg = argv.find((a) => a.startsWith(CONFIG_FLAG));
  return arg === undefined ? undefined : JSON.parse(arg.slice(CONFIG_FLAG.length));
}

describe('copilot-cli tool delivery', () => {
  it('passes the servers as --additional-mcp-config JSON with references only, allows them by name, and puts the values in the environment', async () => {
    const command = fakeRuntime(`${ws.root}/tools-fake`, 'copilot', { steps: TURN });
    const delivery = contractDelivery();
    const turns = await runSession({ ...startParams({ ws, command }), tools: delivery }, ['first', 'second']);
    const invocations = fakeInvocations(command);
    expect(invocations).toHaveLength(2);
    for (const run of invocations) {
      assertToolDelivery(delivery, { argv: run.argv, env: run.env, files: [] });
      expect(run.argv.filter((a) => a.startsWith(CONFIG_FLAG))).toHaveLength(1);
      // Exactly the core's rendering (its shape is pinned in test/agent/core/tool-config-mcp-json.test.ts).
      expect(mcpConfigOf(run.argv)).toEqual(JSON.parse(renderToolConfig('mcp-json', delivery) as string));
      expect(run.argv.filter((a) => a.startsWith('--allow-tool'))).toEqual(['--allow-tool=orchestrator']);
    }
    for (const turn of turns) {
      expect(ofType(turn.events, 'tool_result')).toMatchObject([
        { toolName: 'orchestrator.run_status', toolKind: null, toolArgument: null, toolError: false },
      ]);
    }
  });

  it('gives a session without a delivery no tool server and no tool variables', async () => {
    const command = fakeRuntime(`${ws.root}/no-tools-fake`, 'copilot', { steps: TURN });
    await runSession(startParams({ ws, command }), ['only']);
    const [run] = fakeInvocations(command);
    expect(mcpConfigOf(run?.argv ?? [])).toBeUndefined();
    expect(run?.argv.filter((a) => a.startsWith('--allow-tool'))).toEqual([]);
    expect(Object.keys(run?.env ?? {}).filter((k) => k.startsWith('ORCHESTRATOR_TOOLS'))).toEqual([]);
  });

  it('a credential-verification session is launched without the servers, whatever it is handed', async () => {
    const command = fakeRuntime(`${ws.root}/verify-fake`, 'copilot', { steps: TURN });
    for (const fullContext of [true, false]) {
      await runSession(
        {
          ...startParams({ ws, command }),
          tools: contractDelivery(),
          credentialVerification: { fullContext },
        },
        ['ping'],
      );
    }
    const invocations = fakeInvocations(command);
    expect(invocations).toHaveLength(2);
    for (const run of invocations) {
      expect(mcpConfigOf(run.argv)).toBeUndefined();
      expect(run.argv).not.toContain('--allow-tool=orchestrator');
    }
  });
});
