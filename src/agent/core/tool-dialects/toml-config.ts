/**
 * The `toml-config` dialect: TOML tables `[mcp_servers.<name>]` of a runtime's config.toml.
 * Not rendered yet: no kind declares it until it is proven with its real CLI.
 */
import type { ToolDelivery } from '../../../domain/tool-delivery.js';

/** The delivery in this dialect. */
export function renderTomlConfig(_delivery: ToolDelivery): string {
  throw new Error('the toml-config tool dialect is not rendered yet');
}
