/**
 * The `settings-json` dialect: an `mcpServers` object of a settings file whose servers carry
 * no `type` (a stdio server is known by its `command`, a streamable-HTTP one by `httpUrl`),
 * with `${NAME}` references the runtime expands from its own environment when it loads the
 * file. Every server is marked `trust: true`: the servers delivered are the orchestrator's,
 * scoped to the session by the service, and an unattended run has no one to confirm a call.
 */
import type { ToolDelivery, ToolServerSpec } from '../../../domain/tool-delivery.js';

/** The delivery in this dialect: the `mcpServers` object to merge into the runtime's settings. */
export function renderSettingsJson(delivery: ToolDelivery): { mcpServers: Record<string, unknown> } {
  const mcpServers: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(delivery.servers)) mcpServers[name] = settingsServer(spec);
  return { mcpServers };
}

function settingsServer(spec: ToolServerSpec): Record<string, unknown> {
  if (spec.transport === 'stdio') {
    return {
      command: spec.command,
      args: [...spec.args],
      // Named explicitly, not left to inheritance: a runtime may withhold variables whose
      // names look like secrets (`*_TOKEN`) from the servers it starts.
      env: Object.fromEntries(spec.envNames.map((n) => [n, reference(n)])),
      trust: true,
    };
  }
  return {
    httpUrl: spec.url,
    headers: Object.fromEntries(
      Object.entries(spec.headers).map(([h, v]) => [h, `${v.prefix}${reference(v.variable)}`]),
    ),
    trust: true,
  };
}

function reference(variable: string): string {
  return `\${${variable}}`;
}
