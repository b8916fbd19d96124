/**
 * OpenCode's tool channel: a session given a tool delivery launches the CLI with the servers in
 * the inline config's `mcp` section as `{env:NAME}` references, their tools allowed after the
 * block's own rules, and the values only as variables of their own; the block's own servers
 * stay, and a credential check or a session without a delivery gets none of it.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeInvocations, fakeRuntime } from '../../../internal-contracts/agent/fake-runtime.js';
import { assertToolDelivery, contractDelivery } from '../../../internal-contracts/agent/tool-delivery.js';
import '../../../src/agent/kinds.js';
import { DEFAULT_PERMISSION } from '../../../src/agent/opencode/config.js';
import { adapterOf, opencodeLines, runSession, runTurn, startParams, workspaceRoot } from './support.js';

const ws = workspaceRoot('opencode-tools-');
afterAll(() => ws.cleanup());

const TURN = [
  { stdout: opencodeLines.stepStart() },
  { stdout: opencodeLines.text('done') },
  { stdout: opencodeLines.stepFinish({ input: 10, output: 5 }) },
  { exit: 0 },
];

/** Our server as the inline config names it: the relay's command line, references for its variables. */
const OURS = {
  type: 'local',
  command: ['/usr/bin/node', '/opt/orchestrator/dist/cli/main.js', 'mcp-server'],
  environment: {
    ORCHESTRATOR_TOOLS_URL: '{env:ORCHESTRATOR_TOOLS_URL}',
    ORCHESTRATOR_TOOLS_TOKEN: '{env:ORCHESTRATOR_TOOLS_TOKEN}',
  },
  enabled: true,
};

/** A server of the block's own config, which must survive ours being added. */
const THEIRS = { type: 'remote', url: 'https://mcp.example.test/mcp', enabled: true };

const parse = (text: string | undefined) => JSON.parse(text ?? 'null') as Record<string, unknown>;

let fakes = 0;
const fake = () => fakeRuntime(path.join(ws.root, `tools-fake-${++fakes}`), 'opencode', { steps: TURN });

describe('opencode tool delivery', () => {
  it('puts the servers in the inline config as references, allows their tools last, and the values only in their own variables', async () => {
    const command = fake();
    const delivery = contractDelivery();
    const token = delivery.env.ORCHESTRATOR_TOOLS_TOKEN as string;
    const options = {
      permission: { bash: 'allow', '*': 'deny' },
      config: { mcp: { theirs: THEIRS, orchestrator: { type: 'local', command: ['stale'] } } },
    };
    await runSession({ ...startParams({ ws, command, options }), tools: delivery }, ['first', 'second']);
    const invocations = fakeInvocations(command);
    expect(invocations).toHaveLength(2);
    for (const run of invocations) {
      const config = run.env.OPENCODE_CONFIG_CONTENT as string;
      // The config travels in a variable, so its text is held to what a file may hold.
      assertToolDelivery(delivery, {
        argv: run.argv,
        env: run.env,
        files: [{ path: 'OPENCODE_CONFIG_CONTENT', text: config }],
      });
      // The block's server stays; ours replaces the one of the same name.
      expect(parse(config).mcp).toEqual({ theirs: THEIRS, orchestrator: OURS });
      // After the block's "*": deny, so OpenCode (last matching rule wins) lets the model call them.
      expect(Object.entries(parse(run.env.OPENCODE_PERMISSION))).toEqual([
        ['bash', 'allow'],
        ['*', 'deny'],
        ['orchestrator_*', 'allow'],
      ]);
      const holders = Object.entries(run.env).filter(([, value]) => value.includes(token));
      expect(holders.map(([name]) => name)).toEqual(['ORCHESTRATOR_TOOLS_TOKEN']);
    }
  });

  it('keeps our allow rule last even when the block names the same pattern', async () => {
    const command = fake();
    const options = {
      permission: { orchestrator_tracker_comment: 'deny', 'orchestrator_*': 'deny', '*': 'deny' },
    };
    await runSession({ ...startParams({ ws, command, options }), tools: contractDelivery() }, ['only']);
    const [run] = fakeInvocations(command);
    expect(Object.entries(parse(run?.env.OPENCODE_PERMISSION))).toEqual([
      ['orchestrator_tracker_comment', 'deny'],
      ['*', 'deny'],
      ['orchestrator_*', 'allow'],
    ]);
  });

  it('gives a session without a delivery no tool server, no tool rule and no tool variables', async () => {
    const command = fake();
    await runSession(startParams({ ws, command }), ['only']);
    const [run] = fakeInvocations(command);
    expect(parse(run?.env.OPENCODE_CONFIG_CONTENT)).not.toHaveProperty('mcp');
    expect(parse(run?.env.OPENCODE_PERMISSION)).toEqual(DEFAULT_PERMISSION);
    expect(Object.keys(run?.env ?? {}).filter((k) => k.startsWith('ORCHESTRATOR_TOOLS'))).toEqual([]);
  });

  it('gives a credential check no tool server even when it is handed one', async () => {
    const command = fake();
    const adapter = adapterOf();
    const params = {
      ...startParams({ ws, command }),
      tools: contractDelivery(),
      credentialVerification: { fullContext: true },
    };
    const session = await adapter.startSession(params);
    try {
      await runTurn(adapter, session, 'check');
    } finally {
      await adapter.stopSession(session);
    }
    const [run] = fakeInvocations(command);
    expect(parse(run?.env.OPENCODE_CONFIG_CONTENT)).not.toHaveProperty('mcp');
    expect(parse(run?.env.OPENCODE_PERMISSION)).toEqual(DEFAULT_PERMISSION);
  });
});
