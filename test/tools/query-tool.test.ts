/**
 * A tracker's own query tool through the tools layer: offered only when the tracker has one,
 * under the tracker's name, its arguments checked, its refusals kept apart (bad query, out of
 * scope, tracker failure), and counted by the tracker instrumentation like other calls.
 */
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import type { TrackerAdapter, TrackerQueryAnswer, TrackerQueryTool } from '../../src/domain/tracker.js';
import { instrumentTracker } from '../../src/observability/instrument-tracker.js';
import { callTool, type ToolContext } from '../../src/tools/call.js';
import { offeredTools, TOOL_CATALOG } from '../../src/tools/catalog.js';
import { createToolServer } from '../../src/tools/mcp-server.js';
import { fakeBackend, POLICY, SESSION_A } from './fake-backend.js';

/** A query tool that answers from a script and records what it was asked. */
function scriptedTool(answer: (query: string) => TrackerQueryAnswer | Error) {
  const asked: { query: string; variables: Readonly<Record<string, unknown>> }[] = [];
  const tool: TrackerQueryTool = {
    name: 'acme_query',
    description: 'Read-only Acme queries in project P.',
    run: async (query, variables) => {
      asked.push({ query, variables });
      const a = answer(query);
      if (a instanceof Error) throw a;
      return a;
    },
  };
  return { tool, asked };
}

function ctxWith(tool: TrackerQueryTool | undefined): ToolContext {
  return {
    session: SESSION_A,
    backend: { ...fakeBackend(), ...(tool === undefined ? {} : { queryTool: tool }) },
    policy: POLICY,
  };
}

describe('a tracker query tool', () => {
  it('is offered after the catalog when the tracker has one, and not otherwise', () => {
    const { tool } = scriptedTool(() => ({ ok: true, data: null }));
    expect(offeredTools().map((t) => t.name)).toEqual(TOOL_CATALOG.map((t) => t.name));
    expect(offeredTools(tool).map((t) => t.name)).toEqual([...TOOL_CATALOG.map((t) => t.name), 'acme_query']);
    expect(offeredTools(tool).at(-1)).toMatchObject({ description: tool.description, writes: false });
  });

  it('passes query and variables through and returns the data as is', async () => {
    const { tool, asked } = scriptedTool(() => ({ ok: true, data: { issues: [{ identifier: 'P-1' }] } }));
    const result = await callTool(
      'acme_query',
      { query: 'query { issues }', variables: { n: 2 } },
      ctxWith(tool),
    );
    expect(result).toEqual({ ok: true, value: { issues: [{ identifier: 'P-1' }] } });
    expect(asked).toEqual([{ query: 'query { issues }', variables: { n: 2 } }]);
  });

  it('keeps its refusals apart: a bad query, one out of scope, a tracker failure, a throw', async () => {
    const { tool, asked } = scriptedTool((query) => {
      if (query === 'bad') return { ok: false, reason: 'invalid', message: 'Syntax Error:\nExpected Name' };
      if (query === 'wide')
        return { ok: false, reason: 'forbidden', message: 'issue X-9 is outside project P' };
      if (query === 'down')
        return { ok: false, reason: 'failed', message: 'HTTP 502 from the tracker\nbody' };
      return new Error('socket hang up');
    });
    const c = ctxWith(tool);
    expect(await callTool('acme_query', { query: 'bad' }, c)).toEqual({
      ok: false,
      code: 'tool_invalid_arguments',
      message: 'Syntax Error:; Expected Name',
    });
    expect(await callTool('acme_query', { query: 'wide' }, c)).toEqual({
      ok: false,
      code: 'tool_forbidden',
      message: 'issue X-9 is outside project P',
    });
    expect(await callTool('acme_query', { query: 'down' }, c)).toEqual({
      ok: false,
      code: 'tool_backend_failed',
      message: 'HTTP 502 from the tracker',
    });
    expect(await callTool('acme_query', { query: 'throw' }, c)).toMatchObject({
      code: 'tool_backend_failed',
    });
    // Arguments are checked before the tracker is asked.
    expect(await callTool('acme_query', { query: ' ', extra: 1 }, c)).toMatchObject({
      ok: false,
      code: 'tool_invalid_arguments',
    });
    expect(asked.map((a) => a.query)).toEqual(['bad', 'wide', 'down', 'throw']);
  });

  it('is an unknown tool when the tracker has none', async () => {
    expect(await callTool('acme_query', { query: 'q' }, ctxWith(undefined))).toMatchObject({
      code: 'tool_unknown',
    });
  });

  it('is listed by the MCP server under the tracker’s name, read-only, and callable there', async () => {
    const { tool } = scriptedTool(() => ({ ok: true, data: { n: 1 } }));
    const calls: [string, string][] = [];
    const server = createToolServer({
      session: SESSION_A,
      backend: { ...fakeBackend(), queryTool: tool },
      policy: POLICY,
      onCall: (name, outcome) => calls.push([name, outcome]),
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 't', version: '1' });
    await client.connect(clientSide);
    try {
      const listed = (await client.listTools()).tools.find((t) => t.name === 'acme_query');
      expect(listed).toMatchObject({ description: tool.description, annotations: { readOnlyHint: true } });
      expect(listed?.inputSchema.required).toEqual(['query']);
      const result = await client.callTool({ name: 'acme_query', arguments: { query: 'q' } });
      expect((result.content as { text: string }[])[0]?.text).toBe('{"n":1}');
      expect(calls).toEqual([['acme_query', 'ok']]);
    } finally {
      await client.close();
    }
  });

  it('is counted by the tracker instrumentation: a failure as an error, a refusal as a success', async () => {
    const { tool } = scriptedTool((query) =>
      query === 'down'
        ? { ok: false, reason: 'failed', message: 'down' }
        : { ok: false, reason: 'forbidden', message: 'no' },
    );
    const counted: [string, string][] = [];
    const tracker = instrumentTracker({ queryTool: tool } as unknown as TrackerAdapter, (op, result) =>
      counted.push([op, result]),
    );
    expect(tracker.queryTool?.name).toBe('acme_query');
    await tracker.queryTool?.run('down', {});
    await tracker.queryTool?.run('wide', {});
    expect(counted).toEqual([
      ['query', 'error'],
      ['query', 'success'],
    ]);
    expect(instrumentTracker({} as TrackerAdapter, () => undefined).queryTool).toBeUndefined();
  });
});
