/**
 * The `settings-json` dialect: an `mcpServers` object of a settings file whose servers carry no `type`.
 * Not rendered yet: no kind declares it until it is proven with its real CLI.
 */
import type { ToolDelivery } from '../../../domain/tool-delivery.js';

/** The delivery in this dialect. */
export function renderSettingsJson(_delivery: ToolDelivery): { mcpServers: Record<string, unknown> } {
  throw new Error('the settings-json tool dialect is not rendered yet');
}
