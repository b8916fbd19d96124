/**
 * The `inline-config-json` dialect: the `mcp` object of a runtime's JSON config, servers typed
 * `local` (one `command` array, an `environment` map) or `remote` (a URL and headers, no OAuth),
 * each `enabled`. Secrets are `{env:NAME}` references: the runtime replaces them in the config's
 * text with its own environment's values when it loads the config.
 */
import type { ToolDelivery, ToolServerSpec } from '../../../domain/tool-delivery.js';

/** The delivery in this dialect. */
export function renderInlineConfigJson(delivery: ToolDelivery): { mcp: Record<string, unknown> } {
  const mcp: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(delivery.servers)) mcp[name] = inlineServer(spec);
  return { mcp };
}

function inlineServer(spec: ToolServerSpec): Record<string, unknown> {
  if (spec.transport === 'stdio') {
    return {
      type: 'local',
      command: [spec.command, ...spec.args],
      environment: Object.fromEntries(spec.envNames.map((n) => [n, reference(n)])),
      enabled: true,
    };
  }
  return {
    type: 'remote',
    url: spec.url,
    headers: Object.fromEntries(
      Object.entries(spec.headers).map(([h, v]) => [h, `${v.prefix}${reference(v.variable)}`]),
    ),
    // The headers carry the credential; without this a refused token would start an OAuth sign-in.
    oauth: false,
    enabled: true,
  };
}

function reference(variable: string): string {
  return `{env:${variable}}`;
}
