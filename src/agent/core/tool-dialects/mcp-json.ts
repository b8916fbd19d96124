/**
 * The `mcp-json` dialect: an `mcpServers` object whose servers carry a `type` (`stdio` or
 * `http`), with `${NAME}` references the runtime resolves from its environment.
 */
import type { ToolDelivery, ToolServerSpec } from '../../../domain/tool-delivery.js';

/**
 * The `mcpServers` JSON object many runtimes read: `type` `stdio` with command, args and
 * `env` entries of the form `${NAME}`, or `type` `http` with a URL and headers of that form.
 */
export function renderMcpJson(delivery: ToolDelivery): { mcpServers: Record<string, unknown> } {
  const mcpServers: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(delivery.servers)) mcpServers[name] = mcpJsonServer(spec);
  return { mcpServers };
}

function mcpJsonServer(spec: ToolServerSpec): Record<string, unknown> {
  if (spec.transport === 'stdio') {
    return {
      type: 'stdio',
      command: spec.command,
      args: [...spec.args],
      env: Object.fromEntries(spec.envNames.map((n) => [n, reference(n)])),
    };
  }
  return {
    type: 'http',
    url: spec.url,
    headers: Object.fromEntries(
      Object.entries(spec.headers).map(([h, v]) => [h, `${v.prefix}${reference(v.variable)}`]),
    ),
  };
}

function reference(variable: string): string {
  return `\${${variable}}`;
}
