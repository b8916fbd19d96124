/**
 * `linear_graphql` as an agent meets it: the Linear tracker (over the stateful fake) behind
 * the service's tool host and endpoint, reached over MCP with a session's token. The tool is
 * offered beside the catalog, listed in the prompt's tools, answers from the project, and is
 * recorded and counted like every other tool.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import '../../../src/agent/kinds.js';
import { type AgentKind, agentKind } from '../../../src/agent/registry.js';
import { ZERO_TOKENS } from '../../../src/domain/agent.js';
import { instrumentTracker } from '../../../src/observability/instrument-tracker.js';
import type { Observation } from '../../../src/orchestrator/observations.js';
import { ToolHost, type ToolRun } from '../../../src/orchestrator/tool-host.js';
import { openStore, type Store } from '../../../src/persistence/index.js';
import { SAMPLE_ISSUE } from '../../../src/prompt/variables.js';
import { listenToolEndpoint, type ToolEndpoint } from '../../../src/tools/http.js';
import { TOOL_TOKEN_ENV } from '../../../src/tools/relay.js';
import { ToolSessions } from '../../../src/tools/sessions.js';
import { loadWorkflow } from '../../../src/workflow/load.js';
import { type FakeLinear, startFakeLinear } from '../../support/fake-linear/server.js';
import { trackerOver } from './helpers.js';

const WORKFLOW = `---
tracker:
  kind: file
  active_states: [Todo]
  terminal_states: [Done]
  handoff_state: Human Review
file:
  path: issues.json
agent:
  kind: claude-code
---
Work.
`;

let fake: FakeLinear;
let dir: string;
let store: Store;
let sessions: ToolSessions;
let endpoint: ToolEndpoint;

beforeEach(async () => {
  fake = await startFakeLinear();
  dir = mkdtempSync(path.join(tmpdir(), 'linear-tool-'));
  store = openStore(path.join(dir, 'state.db'));
  sessions = new ToolSessions();
  endpoint = await listenToolEndpoint(sessions);
});

afterEach(async () => {
  await endpoint.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
  await fake.close();
});

describe('linear_graphql through the tool host', () => {
  it('is offered, listed in the prompt, answers from the project over MCP, and is recorded and counted', async () => {
    const mine = fake.addIssue({ title: 'Ours to read', state: 'Todo' });
    const identifier = fake.identifierOf(mine);
    const loaded = loadWorkflow('/tmp/WORKFLOW.md', { env: {}, text: WORKFLOW });
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.diagnostics));
    const counted: string[] = [];
    const tracker = instrumentTracker(trackerOver(fake).tracker, (op, result) =>
      counted.push(`${op}:${result}`),
    );
    const observed: Observation[] = [];
    const runId = store.startRun({
      issueId: mine.id,
      identifier: identifier,
      attempt: 1,
      host: 'local',
      agentKind: 'claude-code',
      workspace: '',
      startedAt: new Date().toISOString(),
      reaction: null,
    });
    const run: ToolRun = {
      issue: { ...SAMPLE_ISSUE, id: mine.id, identifier: identifier },
      runId,
      startedAtMs: Date.now(),
      turn: 1,
      usage: { ...ZERO_TOKENS },
      costMicroUsd: null,
      question: null,
      toolToken: null,
      spendBefore: null,
    };
    const host = new ToolHost({
      endpoint: {
        sessions,
        url: endpoint.url,
        port: endpoint.port,
        relay: { command: '/usr/bin/node', args: ['main.js', 'mcp-server'] },
        version: '1',
      },
      tracker,
      store,
      workflow: () => loaded.workflow,
      running: () => run,
      log: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
      observe: (o) => observed.push(o),
      nowMs: () => Date.now(),
    });
    const opening = await host.open(run, agentKind('claude-code') as AgentKind, loaded.workflow, null);
    if (opening.type !== 'delivered') throw new Error('no delivery');
    expect(opening.tools.map((t) => t.name)).toContain('linear_graphql');

    const client = new Client({ name: 'agent', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(endpoint.url), {
        requestInit: { headers: { authorization: `Bearer ${opening.delivery.env[TOOL_TOKEN_ENV]}` } },
      }),
    );
    try {
      const listed = (await client.listTools()).tools.map((t) => t.name);
      expect(listed).toContain('linear_graphql');
      const result = await client.callTool({
        name: 'linear_graphql',
        arguments: {
          query:
            'query($slug: String!) { issues(filter: { project: { slugId: { eq: $slug } } }, first: 5) { nodes { identifier title } } }',
          variables: { slug: fake.project.slugId },
        },
      });
      expect(result.isError).toBeFalsy();
      expect(JSON.parse((result.content as { text: string }[])[0]?.text ?? '')).toEqual({
        issues: { nodes: [{ identifier: identifier, title: 'Ours to read' }] },
      });
      const refused = await client.callTool({
        name: 'linear_graphql',
        arguments: { query: 'mutation { commentCreate(input: { issueId: "x", body: "y" }) { success } }' },
      });
      expect(refused.isError).toBe(true);
      expect((refused.content as { text: string }[])[0]?.text).toMatch(/^tool_forbidden: /);
    } finally {
      await client.close();
      host.close(run);
    }
    expect(store.toolCalls.forRun(runId)).toEqual([
      { tool: 'linear_graphql', outcome: 'ok', calls: 1 },
      { tool: 'linear_graphql', outcome: 'tool_forbidden', calls: 1 },
    ]);
    expect(
      observed.filter((o) => o.type === 'tool_call').map((o) => (o as { outcome: string }).outcome),
    ).toEqual(['ok', 'tool_forbidden']);
    expect(counted).toEqual(['query:success', 'query:success']);
  });
});
