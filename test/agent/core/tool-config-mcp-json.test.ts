/**
 * The `mcp-json` tool dialect: `mcpServers` whose servers carry a `type`, stdio ones with
 * `${NAME}` references in `env`, HTTP ones with headers that refer to the token; no value of
 * the delivery's environment in the text.
 */
import { describe, expect, it } from 'vitest';
import { renderToolConfig } from '../../../src/agent/core/tool-config.js';
import { HTTP, http, STDIO, stdio, TOKEN, URL } from './tool-deliveries.js';

describe('the mcp-json tool dialect', () => {
  it('renders a stdio server with its type, command, args and env references', () => {
    const text = renderToolConfig('mcp-json', stdio) as string;
    expect(JSON.parse(text)).toEqual({
      mcpServers: {
        orchestrator: {
          type: 'stdio',
          command: '/usr/bin/node',
          args: ['/opt/orchestrator/dist/cli/main.js', 'mcp-server'],
          env: {
            ORCHESTRATOR_TOOLS_URL: '${ORCHESTRATOR_TOOLS_URL}',
            ORCHESTRATOR_TOOLS_TOKEN: '${ORCHESTRATOR_TOOLS_TOKEN}',
          },
        },
      },
    });
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(URL);
  });

  it('renders an HTTP server with its URL and a header that refers to the token', () => {
    const text = renderToolConfig('mcp-json', http) as string;
    expect(JSON.parse(text)).toEqual({
      mcpServers: {
        orchestrator: {
          type: 'http',
          url: URL,
          headers: { Authorization: 'Bearer ${ORCHESTRATOR_TOOLS_TOKEN}' },
        },
      },
    });
    expect(text).not.toContain(TOKEN);
  });

  it('renders every server of the delivery in order, and none for `none`', () => {
    const both = { servers: { a: STDIO, b: HTTP }, env: stdio.env };
    expect(Object.keys(JSON.parse(renderToolConfig('mcp-json', both) as string).mcpServers)).toEqual([
      'a',
      'b',
    ]);
    expect(renderToolConfig('none', both)).toBeNull();
  });
});
