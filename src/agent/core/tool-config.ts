/**
 * Tool-server configuration in each runtime's dialect, rendered once here from the neutral
 * delivery, so no adapter formats servers itself. Every secret stays a reference to a
 * variable of the runtime's environment; the values travel in that environment only.
 */
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

/** The environment of a session with its tool values added (they win over inherited ones). */
export function withToolEnv(env: Record<string, string>, delivery: ToolDelivery | null | undefined) {
  return delivery === null || delivery === undefined ? env : { ...env, ...delivery.env };
}
