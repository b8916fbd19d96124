import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { TOOL_CATALOG } from '../../src/tools/catalog.js';
import { createToolServer, TOOL_SERVER_NAME } from '../../src/tools/mcp-server.js';
import { type FakeBackend, fakeBackend, POLICY, SESSION_A } from './fake-backend.js';

interface Rig {
  client: Client;
  backend: FakeBackend;
  calls: [string, string][];
}

const open: Client[] = [];

async function rig(onCall?: () => void): Promise<Rig> {
  const backend = fakeBackend();
  const calls: [string, string][] = [];
  const server = createToolServer({
    session: SESSION_A,
    backend,
    policy: POLICY,
    version: '9.9.9',
    onCall: (tool, outcome, durationMs) => {
      expect(durationMs).toBeGreaterThanOrEqual(0);
      calls.push([tool, outcome]);
      onCall?.();
    },
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(clientSide);
  open.push(client);
  return { client, backend, calls };
}

afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

function text(result: { content?: unknown }): string {
  const content = result.content as { type: string; text: string }[];
  expect(content).toHaveLength(1);
  expect(content[0]?.type).toBe('text');
  return content[0]?.text ?? '';
}

describe('the MCP tool server', () => {
  it('introduces itself by name and version', async () => {
    const { client } = await rig();
    expect(client.getServerVersion()).toMatchObject({ name: TOOL_SERVER_NAME, version: '9.9.9' });
  });

  it('lists all seven catalog tools with their descriptions and strict input schemas', async () => {
    const { client } = await rig();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'ask_human',
      'run_status',
      'tracker_comment',
      'tracker_issue',
      'tracker_search',
      'tracker_transition',
      'workspace_history',
    ]);
    for (const tool of tools) {
      const entry = TOOL_CATALOG.find((e) => e.name === tool.name);
      expect(tool.description).toBe(entry?.description);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.inputSchema.additionalProperties).toBe(false);
      expect(tool.annotations?.readOnlyHint).toBe(!entry?.writes);
    }
    const comment = tools.find((t) => t.name === 'tracker_comment');
    expect(Object.keys(comment?.inputSchema.properties ?? {}).sort()).toEqual(['body', 'issue_id']);
    expect(comment?.inputSchema.required).toEqual(['body']);
    const search = tools.find((t) => t.name === 'tracker_search');
    expect(search?.inputSchema.properties?.limit).toMatchObject({ type: 'integer', minimum: 1, maximum: 50 });
    const status = tools.find((t) => t.name === 'run_status');
    expect(status?.inputSchema.properties).toEqual({});
  });

  it('tracker_comment posts through the backend and answers with JSON text', async () => {
    const { client, backend, calls } = await rig();
    const result = await client.callTool({ name: 'tracker_comment', arguments: { body: 'all green' } });
    expect(result.isError).toBeFalsy();
    expect(JSON.parse(text(result))).toEqual({ issue_id: 'id-a', commented: true, chars: 9 });
    expect(backend.writes).toEqual([{ op: 'comment', issueId: 'id-a', body: 'all green' }]);
    expect(calls).toEqual([['tracker_comment', 'ok']]);
  });

  it('tracker_transition to a configured state succeeds', async () => {
    const { client, backend } = await rig();
    const result = await client.callTool({ name: 'tracker_transition', arguments: { state: 'done' } });
    expect(result.isError).toBeFalsy();
    expect(JSON.parse(text(result))).toEqual({ issue_id: 'id-a', state: 'Done' });
    expect(backend.writes).toEqual([{ op: 'transition', issueId: 'id-a', state: 'Done' }]);
  });

  it('a refused transition comes back as isError with the code, and is reported to onCall', async () => {
    const { client, backend, calls } = await rig();
    const result = await client.callTool({ name: 'tracker_transition', arguments: { state: 'Shipped' } });
    expect(result.isError).toBe(true);
    expect(text(result)).toBe(
      "tool_state_not_configured: state 'Shipped' is not configured; configured: 'Todo', 'In Progress', 'Human Review', 'Done'",
    );
    expect(backend.writes).toEqual([]);
    expect(calls).toEqual([['tracker_transition', 'tool_state_not_configured']]);
  });

  it('writing another issue over MCP is tool_forbidden', async () => {
    const { client, backend } = await rig();
    const result = await client.callTool({
      name: 'tracker_comment',
      arguments: { body: 'hi', issue_id: 'id-b' },
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toBe('tool_forbidden: this session may write only its own issue PRJ-1');
    expect(backend.writes).toEqual([]);
  });

  it('invalid arguments reach callTool (our code, not an SDK protocol error) and onCall', async () => {
    const { client, calls } = await rig();
    const result = await client.callTool({ name: 'tracker_comment', arguments: { body: 'x', extra: 1 } });
    expect(result.isError).toBe(true);
    expect(text(result).startsWith('tool_invalid_arguments: tracker_comment: ')).toBe(true);
    expect(calls).toEqual([['tracker_comment', 'tool_invalid_arguments']]);
  });

  it('a call without arguments is treated as empty arguments', async () => {
    const { client } = await rig();
    const result = await client.callTool({ name: 'run_status' });
    expect(result.isError).toBeFalsy();
    expect(JSON.parse(text(result))).toMatchObject({ run_id: 7, turn: 3, cost_usd: null });
  });

  it('an onCall that throws does not break the call', async () => {
    const { client } = await rig(() => {
      throw new Error('logger down');
    });
    const result = await client.callTool({ name: 'tracker_issue', arguments: {} });
    expect(result.isError).toBeFalsy();
    expect(JSON.parse(text(result))).toMatchObject({ id: 'id-a', identifier: 'PRJ-1' });
  });
});
