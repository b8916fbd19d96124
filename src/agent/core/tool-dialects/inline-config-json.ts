/**
 * The `inline-config-json` dialect: an `mcp` object of a runtime's inline config, servers typed `local` or `remote`.
 * Not rendered yet: no kind declares it until it is proven with its real CLI.
 */
import type { ToolDelivery } from '../../../domain/tool-delivery.js';

/** The delivery in this dialect. */
export function renderInlineConfigJson(_delivery: ToolDelivery): { mcp: Record<string, unknown> } {
  throw new Error('the inline-config-json tool dialect is not rendered yet');
}
