import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readMcpConfig } from '../../src/workflow/mcp-config.js';

const dir = mkdtempSync(path.join(tmpdir(), 'mcp-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function file(content: unknown): string {
  n += 1;
  const p = path.join(dir, `mcp-${n}.json`);
  writeFileSync(p, typeof content === 'string' ? content : JSON.stringify(content));
  return p;
}

const codes = (r: ReturnType<typeof readMcpConfig>) => r.issues.map((i) => i.code);

describe('agent.mcp_config', () => {
  it('turns stdio and http servers into references, their values into the environment, and leaves turned-off ones out', () => {
    const r = readMcpConfig(
      file({
        mcpServers: {
          docs: {
            command: 'npx',
            args: ['-y', 'docs-mcp'],
            env: { DOCS_TOKEN: '${DOCS_TOKEN}', MODE: 'fast' },
          },
          search: {
            url: 'https://search.example/mcp',
            headers: { Authorization: 'Bearer $SEARCH_TOKEN', 'X-Team': 'blue' },
          },
          old: { command: 'old-mcp', disabled: true },
          off: { url: 'https://off.example', enabled: false },
        },
      }),
      { DOCS_TOKEN: 'docs-secret-1', SEARCH_TOKEN: 'search-secret-2' },
    );
    expect(r.issues).toEqual([]);
    expect(r.tools).toEqual({
      servers: {
        docs: {
          transport: 'stdio',
          command: 'npx',
          args: ['-y', 'docs-mcp'],
          envNames: ['DOCS_TOKEN', 'MODE'],
        },
        search: {
          transport: 'http',
          url: 'https://search.example/mcp',
          headers: {
            Authorization: { prefix: 'Bearer ', variable: 'SEARCH_TOKEN' },
            'X-Team': { prefix: '', variable: 'ORCHESTRATOR_MCP_SEARCH_X_TEAM' },
          },
        },
      },
      env: {
        DOCS_TOKEN: 'docs-secret-1',
        MODE: 'fast',
        SEARCH_TOKEN: 'search-secret-2',
        ORCHESTRATOR_MCP_SEARCH_X_TEAM: 'blue',
      },
    });
  });

  it('refuses our own server’s name, bad names, servers with neither command nor url, and unset references', () => {
    const r = readMcpConfig(
      file({
        mcpServers: {
          Orchestrator: { command: 'x' },
          'bad name': { command: 'x' },
          nothing: { args: [] },
          unset: { command: 'x', env: { K: '$NOT_SET' } },
          args: { command: 'x', args: 'not a list' },
        },
      }),
      {},
    );
    expect(codes(r)).toEqual([
      'agent.mcp_config.name_clash',
      'agent.mcp_config.server_name',
      'agent.mcp_config.invalid_server',
      'agent.mcp_config.env_unset',
      'agent.mcp_config.invalid_server',
    ]);
    expect(r.issues.every((i) => i.severity === 'error' && i.path.join('.') === 'agent.mcp_config')).toBe(
      true,
    );
    expect(r.issues[3]?.message).toContain('$NOT_SET');
  });

  it('refuses one variable given two values by two servers', () => {
    const r = readMcpConfig(
      file({ mcpServers: { a: { command: 'a', env: { K: '1' } }, b: { command: 'b', env: { K: '2' } } } }),
      {},
    );
    expect(codes(r)).toEqual(['agent.mcp_config.env_conflict']);
  });

  it('names the file when it is missing, not JSON, or has no mcpServers object', () => {
    const missing = readMcpConfig(path.join(dir, 'absent.json'), {});
    expect(codes(missing)).toEqual(['agent.mcp_config.unreadable']);
    expect(missing.issues[0]?.message).toContain('absent.json');
    expect(codes(readMcpConfig(file('{not json'), {}))).toEqual(['agent.mcp_config.invalid']);
    expect(codes(readMcpConfig(file({ servers: {} }), {}))).toEqual(['agent.mcp_config.invalid']);
    expect(readMcpConfig(file({ mcpServers: {} }), {})).toEqual({
      tools: { servers: {}, env: {} },
      issues: [],
    });
  });
});
