import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import '../../src/agent/kinds.js';
import { type AgentKind, agentKind } from '../../src/agent/registry.js';
import { ZERO_TOKENS } from '../../src/domain/agent.js';
import type { Issue } from '../../src/domain/issue.js';
import type { RemoteHost } from '../../src/domain/remote.js';
import type { TrackerAdapter } from '../../src/domain/tracker.js';
import type { Observation } from '../../src/orchestrator/observations.js';
import {
  advertisedTools,
  configuredStates,
  ToolHost,
  type ToolRun,
} from '../../src/orchestrator/tool-host.js';
import { openStore, type Store } from '../../src/persistence/index.js';
import { SAMPLE_ISSUE } from '../../src/prompt/variables.js';
import { TOOL_CATALOG } from '../../src/tools/catalog.js';
import { listenToolEndpoint, type ToolEndpoint } from '../../src/tools/http.js';
import { TOOL_TOKEN_ENV, TOOL_URL_ENV } from '../../src/tools/relay.js';
import { ToolSessions } from '../../src/tools/sessions.js';
import { loadWorkflow, type Workflow } from '../../src/workflow/load.js';
import { LocalRemoteHost } from '../support/local-remote-host.js';

const WORKFLOW = (tools: string) => `---
tracker:
  kind: file
  active_states: [Todo, In Progress]
  terminal_states: [Done]
  in_progress_state: in progress
  handoff_state: Review
  blocked_state: Blocked
file:
  path: issues.json
agent:
  kind: claude-code
  max_turns: 4
  max_tokens: 1000
${tools}---
Work on {{ issue.identifier }}.
`;

/** The test workflow with `agent.mcp_config` set to `config` and extra top-level keys. */
function loadWith(config: string, extra: string): Workflow {
  const text = WORKFLOW(extra).replace(
    '  max_tokens: 1000\n',
    `  max_tokens: 1000\n  mcp_config: ${config}\n`,
  );
  const loaded = loadWorkflow('/tmp/WORKFLOW.md', { env: {}, text });
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.diagnostics));
  return loaded.workflow;
}

function workflow(tools = ''): Workflow {
  const loaded = loadWorkflow('/tmp/WORKFLOW.md', { env: {}, text: WORKFLOW(tools) });
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.diagnostics));
  return loaded.workflow;
}

const issue = (id: string): Issue => ({
  ...SAMPLE_ISSUE,
  id,
  identifier: `ENG-${id}`,
  state: 'Todo',
  blockedBy: [],
});

function run(id: string, runId: number, over: Partial<ToolRun> = {}): ToolRun {
  return {
    issue: issue(id),
    runId,
    startedAtMs: 1_000,
    turn: 2,
    usage: { ...ZERO_TOKENS, inputTokens: 100, outputTokens: 20, totalTokens: 120 },
    costMicroUsd: null,
    question: null,
    toolToken: null,
    spendBefore: { sessions: 3, tokens: 500, costMicroUsd: null },
    ...over,
  };
}

let dir: string;
let store: Store;
let sessions: ToolSessions;
let endpoint: ToolEndpoint;
let masked: [string, string | null][];
let comments: [string, string][];
let observed: Observation[];
let running: Map<string, ToolRun>;
let current: Workflow;
const clients: Client[] = [];

beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'tool-host-'));
  store = openStore(path.join(dir, 'state.db'));
  sessions = new ToolSessions();
  endpoint = await listenToolEndpoint(sessions);
  comments = [];
  observed = [];
  masked = [];
  running = new Map();
  current = workflow();
});

afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  await endpoint.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

function host(): ToolHost {
  const tracker = {
    fetchIssueById: async (id: string) => ({ ...issue(id), comments: [] }),
    commentIssue: async (id: string, body: string) => {
      comments.push([id, body]);
    },
  } as unknown as TrackerAdapter;
  return new ToolHost({
    endpoint: {
      sessions,
      url: endpoint.url,
      port: endpoint.port,
      masking: {
        add: (token) => masked.push(['add', token]),
        remove: (token) => masked.push(['remove', token]),
      },
      relay: { command: '/usr/bin/node', args: ['main.js', 'mcp-server'] },
      version: '1.2.3',
    },
    tracker,
    store,
    workflow: () => current,
    running: (issueId) => running.get(issueId),
    log: { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined },
    observe: (o) => observed.push(o),
    nowMs: () => 6_000,
  });
}

const claude = (): AgentKind => agentKind('claude-code') as AgentKind;

async function call(token: string, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const client = new Client({ name: 't', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(endpoint.url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  );
  clients.push(client);
  const result = await client.callTool({ name, arguments: args });
  return (result.content as { text: string }[])[0]?.text ?? '';
}

/** A run registered as running, with its tool session open. */
async function opened(h: ToolHost, r: ToolRun): Promise<string> {
  running.set(r.issue.id, r);
  const opening = await h.open(r, claude(), current, null);
  if (opening.type !== 'delivered') throw new Error('no delivery');
  return opening.delivery.env[TOOL_TOKEN_ENV] as string;
}

describe('the tool host', () => {
  it('opens a session only where tools can be reached: enabled, a kind with a channel', async () => {
    const h = host();
    const mock = agentKind('mock') as AgentKind;
    // The mock calls no tools at all: nothing to deliver, and no gap either.
    expect(await h.open(run('1', 1), mock, current, null)).toEqual({ type: 'off' });
    const toolless = {
      ...claude(),
      name: 'acme',
      runtime: { ...claude().runtime, mcpDialect: 'none', mcpDialectNoneReason: 'no MCP support' },
    } as AgentKind;
    expect(await h.open(run('1', 1), toolless, current, null)).toEqual({
      type: 'gap',
      reason: 'agent kind "acme" cannot reach the tool server: no MCP support',
    });
    expect(await h.open(run('1', 1), claude(), workflow('tools:\n  enabled: false\n'), null)).toEqual({
      type: 'off',
    });
    expect(sessions.size).toBe(0);
    const r = run('1', 1);
    const opening = await h.open(r, claude(), current, null);
    expect(opening).toEqual({ type: 'delivered', delivery: expect.anything(), tools: expect.any(Array) });
    expect(opening.type === 'delivered' && opening.delivery).toEqual({
      servers: {
        orchestrator: {
          transport: 'stdio',
          command: '/usr/bin/node',
          args: ['main.js', 'mcp-server'],
          envNames: [TOOL_URL_ENV, TOOL_TOKEN_ENV],
        },
      },
      env: { [TOOL_URL_ENV]: endpoint.url, [TOOL_TOKEN_ENV]: r.toolToken },
    });
    expect(sessions.size).toBe(1);
    expect(masked).toEqual([['add', r.toolToken]]);
    const token = r.toolToken;
    h.close(r);
    expect(r.toolToken).toBeNull();
    expect(sessions.size).toBe(0);
    // Masked while it lived; forgotten after, so the masking set does not grow with every session.
    expect(masked).toEqual([
      ['add', token],
      ['remove', token],
    ]);
  });

  it('gives a session on an SSH host our server over HTTP on the host’s forwarded port, token by reference', async () => {
    const h = host();
    const asked: number[] = [];
    const onHost = {
      name: 'worker@build-1',
      forwardToLocal: async (port: number) => {
        asked.push(port);
        return { ok: true as const, remotePort: 40_123 };
      },
    } as unknown as RemoteHost;
    const r = run('1', 1);
    expect(await h.open(r, claude(), current, onHost)).toEqual({
      type: 'delivered',
      delivery: {
        servers: {
          orchestrator: {
            transport: 'http',
            url: 'http://127.0.0.1:40123/mcp',
            headers: { Authorization: { prefix: 'Bearer ', variable: TOOL_TOKEN_ENV } },
          },
        },
        env: { [TOOL_TOKEN_ENV]: r.toolToken },
      },
      tools: TOOL_CATALOG.map((t) => ({ server: 'orchestrator', name: t.name, description: t.description })),
    });
    expect(asked).toEqual([endpoint.port]);
    expect(sessions.size).toBe(1);

    // A host that refuses the forward: a gap naming the host, and no session left open.
    const refusing = {
      name: 'worker@build-2',
      forwardToLocal: async () => ({
        ok: false as const,
        reason: 'failed' as const,
        message: 'administratively prohibited',
      }),
    } as unknown as RemoteHost;
    const r2 = run('2', 2);
    expect(await h.open(r2, claude(), current, refusing)).toEqual({
      type: 'gap',
      reason: 'the tool server cannot be reached from worker@build-2: administratively prohibited',
    });
    expect(r2.toolToken).toBeNull();
    expect(sessions.size).toBe(1);
  });

  it('a session on a host whose forward reaches this machine (its loopback) calls our server with its token', async () => {
    const h = host();
    const r = run('1', 1);
    running.set('1', r);
    const opening = await h.open(r, claude(), current, new LocalRemoteHost());
    if (opening.type !== 'delivered') throw new Error('no delivery');
    const spec = opening.delivery.servers.orchestrator;
    if (spec?.transport !== 'http') throw new Error('not http');
    const client = new Client({ name: 't', version: '1' });
    const token = opening.delivery.env[spec.headers.Authorization?.variable ?? ''] as string;
    await client.connect(
      new StreamableHTTPClientTransport(new URL(spec.url), {
        requestInit: { headers: { authorization: `${spec.headers.Authorization?.prefix}${token}` } },
      }),
    );
    clients.push(client);
    const result = await client.callTool({ name: 'run_status', arguments: {} });
    expect(JSON.parse((result.content as { text: string }[])[0]?.text ?? '')).toMatchObject({ turn: 2 });
  });

  it('run_status gives the run’s live figures, its budgets counted as the check between turns counts them', async () => {
    const h = host();
    const runId = store.startRun({
      issueId: '1',
      identifier: 'ENG-1',
      attempt: 1,
      host: 'local',
      agentKind: 'claude-code',
      workspace: '',
      startedAt: '2026-03-01T12:00:00.000Z',
      reaction: null,
    });
    const token = await opened(h, run('1', runId));
    const figures = JSON.parse(await call(token, 'run_status'));
    expect(figures).toMatchObject({
      turn: 2,
      elapsed_ms: 5_000,
      tokens: { input: 100, output: 20, total: 120 },
      cost_usd: null,
      budgets: [
        { name: 'max_turns', used: 2, limit: 4, left: 2 },
        { name: 'max_tokens', used: 620, limit: 1000, left: 380 },
      ],
    });
    expect(store.toolCalls.forRun(runId)).toEqual([{ tool: 'run_status', outcome: 'ok', calls: 1 }]);
    expect(observed).toEqual([
      { type: 'tool_call', tool: 'run_status', outcome: 'ok', durationMs: expect.any(Number) },
    ]);
  });

  it('scopes each token to its own run: A’s question parks A only, and an ended run’s token is refused', async () => {
    const h = host();
    const a = run('1', 1);
    const b = run('2', 2);
    const tokenA = await opened(h, a);
    const tokenB = await opened(h, b);
    await call(tokenA, 'ask_human', { question: 'Which API?' });
    expect(comments).toEqual([['1', 'The agent asks:\n\nWhich API?']]);
    expect([a.question, b.question]).toEqual(['Which API?', null]);
    expect(await call(tokenB, 'tracker_comment', { body: 'x', issue_id: '1' })).toMatch(/^tool_forbidden/);

    // A newer run of the same issue does not inherit the old run's figures or question.
    running.set('1', run('1', 9));
    expect(await call(tokenA, 'run_status')).toMatch(/^tool_backend_failed: .*ended/);
    h.close(a);
    await expect(call(tokenA, 'run_status')).rejects.toThrow(/401|no live tool session/);
    expect(comments).toHaveLength(1);
  });

  it('delivers the operator’s own servers beside ours, and alone with tools.enabled false', async () => {
    const config = path.join(dir, 'mcp.json');
    writeFileSync(
      config,
      JSON.stringify({ mcpServers: { docs: { command: 'docs-mcp', env: { DOCS_KEY: 'k-1' } } } }),
    );
    const h = host();
    current = loadWith(config, '');
    const both = await h.open(run('1', 1), claude(), current, null);
    expect(both.type === 'delivered' && Object.keys(both.delivery.servers)).toEqual(['orchestrator', 'docs']);
    expect(both.type === 'delivered' && both.delivery.env.DOCS_KEY).toBe('k-1');
    const alone = await h.open(run('2', 2), claude(), loadWith(config, 'tools:\n  enabled: false\n'), null);
    expect(alone).toEqual({
      type: 'delivered',
      delivery: {
        servers: { docs: { transport: 'stdio', command: 'docs-mcp', args: [], envNames: ['DOCS_KEY'] } },
        env: { DOCS_KEY: 'k-1' },
      },
      // Our tools are not there, so the prompt lists none.
      tools: [],
    });
    // Only the run with our server holds a session of ours.
    expect(sessions.size).toBe(1);
  });

  it('advertises the catalog to a session given our server, and nothing to one without it', async () => {
    const h = host();
    const r = run('1', 1);
    const opening = await h.open(r, claude(), current, null);
    if (opening.type !== 'delivered') throw new Error('no delivery');
    const tools = advertisedTools(opening.delivery);
    expect(tools.map((t) => t.name)).toEqual(TOOL_CATALOG.map((t) => t.name));
    expect(tools.every((t) => t.server === 'orchestrator' && t.description.length > 20)).toBe(true);
    expect(advertisedTools({ servers: {}, env: {} })).toEqual([]);
  });

  it('lists each configured state once, in the workflow’s first spelling', () => {
    expect(configuredStates(current)).toEqual(['Todo', 'In Progress', 'Done', 'Review', 'Blocked']);
  });
});
