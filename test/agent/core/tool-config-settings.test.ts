/**
 * The `settings-json` tool dialect: an untyped `mcpServers` object (stdio by `command`, HTTP by
 * `httpUrl`), every server trusted, every secret a `${NAME}` reference and never a value.
 */
import { describe, expect, it } from 'vitest';
import { renderToolConfig } from '../../../src/agent/core/tool-config.js';
import type { ToolDelivery } from '../../../src/domain/tool-delivery.js';
import { HTTP, http, STDIO, stdio, TOKEN, URL } from './tool-deliveries.js';

describe('the settings-json tool dialect', () => {
  it('renders a stdio server as command, args and env references, trusted, with no type', () => {
    const text = renderToolConfig('settings-json', stdio) as string;
    expect(text).toBe(
      JSON.stringify({
        mcpServers: {
          orchestrator: {
            command: '/usr/bin/node',
            args: ['/opt/orchestrator/dist/cli/main.js', 'mcp-server'],
            env: {
              ORCHESTRATOR_TOOLS_URL: '${ORCHESTRATOR_TOOLS_URL}',
              ORCHESTRATOR_TOOLS_TOKEN: '${ORCHESTRATOR_TOOLS_TOKEN}',
            },
            trust: true,
          },
        },
      }),
    );
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(URL);
    expect(text).not.toContain('"type"');
  });

  it('renders an HTTP server as httpUrl and a header that refers to the token, trusted, with no type', () => {
    const text = renderToolConfig('settings-json', http) as string;
    expect(text).toBe(
      JSON.stringify({
        mcpServers: {
          orchestrator: {
            httpUrl: URL,
            headers: { Authorization: 'Bearer ${ORCHESTRATOR_TOOLS_TOKEN}' },
            trust: true,
          },
        },
      }),
    );
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain('"type"');
  });

  it('renders every server of the delivery and an empty object for none', () => {
    const both: ToolDelivery = {
      servers: { a: STDIO, b: HTTP },
      env: stdio.env,
    };
    const rendered = JSON.parse(renderToolConfig('settings-json', both) as string) as {
      mcpServers: Record<string, unknown>;
    };
    expect(Object.keys(rendered.mcpServers)).toEqual(['a', 'b']);
    expect(renderToolConfig('settings-json', { servers: {}, env: {} })).toBe('{"mcpServers":{}}');
  });
});
