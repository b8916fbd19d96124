/**
 * Tool-server configuration in each runtime's dialect, rendered once here from the neutral
 * delivery, so no adapter formats servers itself. Every secret stays a reference to a
 * variable of the runtime's environment; the values travel in that environment only.
 */
import type { StartSessionParams } from '../../domain/agent.js';
import type { ToolDelivery } from '../../domain/tool-delivery.js';
import type { McpDialect } from '../registry.js';
import { renderInlineConfigJson } from './tool-dialects/inline-config-json.js';
import { renderMcpJson } from './tool-dialects/mcp-json.js';
import { renderSettingsJson } from './tool-dialects/settings-json.js';
import { renderTomlConfig } from './tool-dialects/toml-config.js';

/** The rendered configuration as text, in `dialect`; null for `none`. */
export function renderToolConfig(dialect: McpDialect, delivery: ToolDelivery): string | null {
  switch (dialect) {
    case 'none':
      return null;
    case 'mcp-json':
      return JSON.stringify(renderMcpJson(delivery));
    case 'toml-config':
      return renderTomlConfig(delivery);
    case 'settings-json':
      return JSON.stringify(renderSettingsJson(delivery));
    case 'inline-config-json':
      return JSON.stringify(renderInlineConfigJson(delivery));
  }
}

/**
 * The delivery a session's runtime gets: a working session's, on this machine or on an SSH
 * host (whose delivery reaches the server through the host's forward). A credential check
 * never gets tools. Every kind asks here, so the rule lives in one place.
 */
export function sessionDelivery(
  params: Pick<StartSessionParams, 'tools' | 'credentialVerification'>,
): ToolDelivery | null {
  if (params.tools === null || params.tools === undefined) return null;
  return params.credentialVerification === undefined ? params.tools : null;
}

/** A session's servers rendered for a command line: the text, and the names whose tools the runtime must allow. */
export interface CommandLineTools {
  config: string;
  servers: readonly string[];
}

/** The session's delivery as `CommandLineTools` in `dialect`; null when it gets none. */
export function commandLineTools(
  dialect: McpDialect,
  params: Pick<StartSessionParams, 'tools' | 'credentialVerification'>,
): CommandLineTools | null {
  const delivery = sessionDelivery(params);
  const config = delivery === null ? null : renderToolConfig(dialect, delivery);
  return delivery === null || config === null ? null : { config, servers: Object.keys(delivery.servers) };
}

/** The environment of a session with its tool values added (they win over inherited ones). */
export function withToolEnv(env: Record<string, string>, delivery: ToolDelivery | null | undefined) {
  return delivery === null || delivery === undefined ? env : { ...env, ...delivery.env };
}
