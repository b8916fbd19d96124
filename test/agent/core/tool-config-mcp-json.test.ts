/**
 * The `mcp-json` tool dialect: `mcpServers` whose servers carry a `type`, stdio ones with
 * `${NAME}` references in `env`, HTTP ones with headers that refer to the token; no value of
 * the delivery's environment in the text.
 */
import { describe, expect, it } from 'vitest';
import { commandLineTools, renderToolConfig, sessionDelivery } from '../../../src/agent/core/tool-config.js';
import type { RemoteHost } from '../../../src/domain/remote.js';
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

describe('which sessions get their delivery', () => {
  it('a working session gets it, on this machine or on an SSH host; a credential check never does', () => {
    const onHost = { name: 'worker@build-1' } as RemoteHost;
    expect(sessionDelivery({ tools: http })).toBe(http);
    expect(sessionDelivery({ tools: http, remote: onHost } as Parameters<typeof sessionDelivery>[0])).toBe(
      http,
    );
    expect(sessionDelivery({ tools: http, credentialVerification: { fullContext: false } })).toBeNull();
    expect(sessionDelivery({ tools: null })).toBeNull();
    expect(commandLineTools('mcp-json', { tools: http })).toEqual({
      config: renderToolConfig('mcp-json', http),
      servers: ['orchestrator'],
    });
    expect(commandLineTools('none', { tools: http })).toBeNull();
    expect(
      commandLineTools('mcp-json', { tools: http, credentialVerification: { fullContext: true } }),
    ).toBeNull();
  });
});
