/**
 * Claude Code's tool channel: a session given a tool delivery launches the CLI with the
 * rendered `--mcp-config` and our server's tools allowed, the token only in its environment;
 * the credential-verification session gets none of it.
 */

import { afterAll, describe, expect, it } from 'vitest';
import { fakeInvocations, fakeRuntime } from '../../../internal-contracts/agent/fake-runtime.js';
import { assertToolDelivery, contractDelivery } from '../../../internal-contracts/agent/tool-delivery.js';
import { renderToolConfig } from '../../../src/agent/core/tool-config.js';
import '../../../src/agent/kinds.js';
import { claudeLines, runSession, startParams, workspaceRoot } from './support.js';

const ws = workspaceRoot('claude-tools-');
afterAll(() => ws.cleanup());

const TURN = [{ stdout: claudeLines.init() }, { stdout: claudeLines.result({ text: 'done' }) }, { exit: 0 }];

describe('claude-code tool delivery', () => {
  it('passes the servers as --mcp-config JSON with references only, allows their tools, and puts the values in the environment', async () => {
    const command = fakeRuntime(`${ws.root}/tools-fake`, 'claude', { steps: TURN });
    const delivery = contractDelivery();
    await runSession({ ...startParams({ ws, command }), tools: delivery }, ['first', 'second']);
    const invocations = fakeInvocations(command);
    expect(invocations).toHaveLength(2);
    for (const run of invocations) {
      assertToolDelivery(delivery, { argv: run.argv, env: run.env, files: [] });
      const config = JSON.parse(run.argv[run.argv.indexOf('--mcp-config') + 1] as string);
      // Exactly the core's rendering (its shape is pinned in test/agent/core/tool-config-mcp-json.test.ts).
      expect(config).toEqual(JSON.parse(renderToolConfig('mcp-json', delivery) as string));
      expect(run.argv[run.argv.indexOf('--allowedTools') + 1]).toBe('Bash,mcp__orchestrator');
    }
  });

  it('gives a session without a delivery no tool server and no tool variables', async () => {
    const command = fakeRuntime(`${ws.root}/no-tools-fake`, 'claude', { steps: TURN });
    await runSession(startParams({ ws, command }), ['only']);
    const [run] = fakeInvocations(command);
    expect(run?.argv).not.toContain('--mcp-config');
    expect(Object.keys(run?.env ?? {}).filter((k) => k.startsWith('ORCHESTRATOR_TOOLS'))).toEqual([]);
  });
});
