/**
 * Tool-server configuration in each runtime's dialect, rendered once here from the neutral
 * delivery, so no adapter formats servers itself. Every secret stays a reference to a
 * variable of the runtime's environment; the values travel in that environment only.
 */
import type { ToolDelivery, ToolServerSpec } from '../../domain/tool-delivery.js';
import type { McpDialect } from '../registry.js';

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

/** The rendered configuration as text, in `dialect`; null for `none`. */
export function renderToolConfig(dialect: McpDialect, delivery: ToolDelivery): string | null {
  switch (dialect) {
    case 'none':
      return null;
    case 'mcp-json':
      return JSON.stringify(renderMcpJson(delivery));
  }
}

/** The environment of a session with its tool values added (they win over inherited ones). */
export function withToolEnv(env: Record<string, string>, delivery: ToolDelivery | null | undefined) {
  return delivery === null || delivery === undefined ? env : { ...env, ...delivery.env };
}
