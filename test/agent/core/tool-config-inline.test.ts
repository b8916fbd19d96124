/**
 * The `inline-config-json` tool dialect: an `mcp` object whose servers are `local` (one command
 * array, an environment of references) or `remote` (a URL and a header that refers to the
 * token, no OAuth), every one enabled, every secret an `{env:NAME}` reference and never a value.
 */
import { describe, expect, it } from 'vitest';
import { renderToolConfig } from '../../../src/agent/core/tool-config.js';
import type { ToolDelivery } from '../../../src/domain/tool-delivery.js';
import { HTTP, http, STDIO, stdio, TOKEN, URL } from './tool-deliveries.js';

describe('the inline-config-json tool dialect', () => {
  it('renders a stdio server as a local one: the command and its arguments in one array, references for its environment', () => {
    const text = renderToolConfig('inline-config-json', stdio) as string;
    expect(text).toBe(
      JSON.stringify({
        mcp: {
          orchestrator: {
            type: 'local',
            command: ['/usr/bin/node', '/opt/orchestrator/dist/cli/main.js', 'mcp-server'],
            environment: {
              ORCHESTRATOR_TOOLS_URL: '{env:ORCHESTRATOR_TOOLS_URL}',
              ORCHESTRATOR_TOOLS_TOKEN: '{env:ORCHESTRATOR_TOOLS_TOKEN}',
            },
            enabled: true,
          },
        },
      }),
    );
    // Neither value of the environment, the secret nor the URL, is in the config.
    for (const value of Object.values(stdio.env)) expect(text).not.toContain(value);
  });

  it('renders an HTTP server as a remote one with a header that refers to the token and no OAuth', () => {
    const text = renderToolConfig('inline-config-json', http) as string;
    expect(text).toBe(
      JSON.stringify({
        mcp: {
          orchestrator: {
            type: 'remote',
            url: URL,
            headers: { Authorization: 'Bearer {env:ORCHESTRATOR_TOOLS_TOKEN}' },
            oauth: false,
            enabled: true,
          },
        },
      }),
    );
    expect(text).not.toContain(TOKEN);
  });

  it('renders every server of the delivery, in order, and an empty object for none', () => {
    const both: ToolDelivery = { servers: { a: STDIO, b: HTTP }, env: stdio.env };
    const text = renderToolConfig('inline-config-json', both) as string;
    const rendered = JSON.parse(text) as { mcp: Record<string, { type: string }> };
    expect(Object.entries(rendered.mcp).map(([name, s]) => [name, s.type])).toEqual([
      ['a', 'local'],
      ['b', 'remote'],
    ]);
    expect(text).not.toContain(TOKEN);
    expect(renderToolConfig('inline-config-json', { servers: {}, env: {} })).toBe('{"mcp":{}}');
  });
});
