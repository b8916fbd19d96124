/**
 * The `toml-config` tool dialect: one `[mcp_servers.<name>]` table per server, stdio servers
 * passing their variables through by name (`env_vars`), HTTP servers naming the variables of
 * their bearer token and headers; names and values escaped as TOML strings, and no value of
 * the delivery's environment ever in the text.
 */
import { describe, expect, it } from 'vitest';
import { renderToolConfig } from '../../../src/agent/core/tool-config.js';
import { tomlKey, tomlString } from '../../../src/agent/core/tool-dialects/toml-config.js';
import type { ToolDelivery } from '../../../src/domain/tool-delivery.js';
import { STDIO, TOKEN, URL } from './tool-deliveries.js';

const render = (delivery: ToolDelivery) => renderToolConfig('toml-config', delivery) as string;

describe('the toml-config tool dialect', () => {
  it('renders a stdio server as command, args and the variables it passes through', () => {
    const text = render({
      servers: { orchestrator: STDIO },
      env: { ORCHESTRATOR_TOOLS_URL: URL, ORCHESTRATOR_TOOLS_TOKEN: TOKEN },
    });
    expect(text).toBe(
      [
        '[mcp_servers.orchestrator]',
        'command = "/usr/bin/node"',
        'args = ["/opt/orchestrator/dist/cli/main.js", "mcp-server"]',
        'env_vars = ["ORCHESTRATOR_TOOLS_URL", "ORCHESTRATOR_TOOLS_TOKEN"]',
        '',
      ].join('\n'),
    );
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(URL);
  });

  it('renders an HTTP server as its URL, the bearer token variable and headers taken whole from variables', () => {
    const text = render({
      servers: {
        orchestrator: STDIO,
        remote: {
          transport: 'http',
          url: URL,
          headers: {
            Authorization: { prefix: 'Bearer ', variable: 'ORCHESTRATOR_TOOLS_TOKEN' },
            'X-Tenant': { prefix: '', variable: 'TENANT_ID' },
            'X-Trace "id"': { prefix: '', variable: 'TRACE_ID' },
          },
        },
      },
      env: { ORCHESTRATOR_TOOLS_TOKEN: TOKEN, TENANT_ID: 'tenant-secret-1', TRACE_ID: 'trace-secret-2' },
    });
    expect(text).toBe(
      [
        '[mcp_servers.orchestrator]',
        'command = "/usr/bin/node"',
        'args = ["/opt/orchestrator/dist/cli/main.js", "mcp-server"]',
        'env_vars = ["ORCHESTRATOR_TOOLS_URL", "ORCHESTRATOR_TOOLS_TOKEN"]',
        '',
        '[mcp_servers.remote]',
        `url = "${URL}"`,
        'bearer_token_env_var = "ORCHESTRATOR_TOOLS_TOKEN"',
        'env_http_headers = { "X-Tenant" = "TENANT_ID", "X-Trace \\"id\\"" = "TRACE_ID" }',
        '',
      ].join('\n'),
    );
    for (const secret of [TOKEN, 'tenant-secret-1', 'trace-secret-2']) expect(text).not.toContain(secret);
  });

  it('refuses a header it could only write with its value (a prefix other than a bearer token’s)', () => {
    const delivery: ToolDelivery = {
      servers: {
        remote: {
          transport: 'http',
          url: URL,
          headers: { 'X-Api-Key': { prefix: 'Key ', variable: 'API_KEY' } },
        },
      },
      env: { API_KEY: 'key-secret-3' },
    };
    expect(() => render(delivery)).toThrow(/tool server remote: header X-Api-Key .*API_KEY/);
  });

  it('quotes a server name that is not a bare key, and escapes quotes, backslashes and control characters', () => {
    const text = render({
      servers: {
        'my "tools"\\v2': {
          transport: 'stdio',
          command: 'C:\\node\\node.exe',
          args: ['a "quoted" arg', 'line\nbreak', 'tab\tand\rreturn', 'bell\u0007del\u007f', 'üñí'],
          envNames: ['TOKEN'],
        },
      },
      env: { TOKEN },
    });
    expect(text).toBe(
      [
        '[mcp_servers."my \\"tools\\"\\\\v2"]',
        'command = "C:\\\\node\\\\node.exe"',
        'args = ["a \\"quoted\\" arg", "line\\nbreak", "tab\\tand\\rreturn", "bell\\u0007del\\u007f", "üñí"]',
        'env_vars = ["TOKEN"]',
        '',
      ].join('\n'),
    );
    expect(text).not.toContain(TOKEN);
  });

  it('keeps bare keys bare and quotes everything else', () => {
    expect(tomlKey('orchestrator_2-b')).toBe('orchestrator_2-b');
    expect(tomlKey('with.dot')).toBe('"with.dot"');
    expect(tomlKey('')).toBe('""');
    expect(tomlString('\u0000\b\f')).toBe('"\\u0000\\u0008\\u000c"');
  });

  it('renders a delivery with no servers as no text', () => {
    expect(render({ servers: {}, env: {} })).toBe('');
  });
});
