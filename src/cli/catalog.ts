/**
 * The composition root's view of every adapter kind this build has, handed to the
 * workflow layer so it can check `tracker.kind`, `agent.kind` and their blocks.
 */
import '../agent/kinds.js';
import '../tracker/kinds.js';
import { agentKindNames } from '../agent/registry.js';
import { checkAgentSettings } from '../agent/validate.js';
import { trackerKind, trackerKindNames } from '../tracker/registry.js';
import { checkTrackerSettings } from '../tracker/validate.js';
import type { KindCatalog } from '../workflow/kinds.js';

/** The catalog of registered tracker and agent kinds. */
export function kindCatalog(): KindCatalog {
  return {
    trackerKinds: trackerKindNames(),
    agentKinds: agentKindNames(),
    checkTracker: checkTrackerSettings,
    trackerTraits: (name) => {
      const kind = trackerKind(name);
      if (kind === undefined) return undefined;
      return {
        ...(kind.apiKeyEnv !== undefined ? { apiKeyEnv: kind.apiKeyEnv } : {}),
        ...(kind.defaultStates !== undefined ? { defaultStates: kind.defaultStates } : {}),
        supportsAssignee: kind.supportsAssignee === true,
        hasForge: kind.createForge !== undefined,
      };
    },
    trackerFiles: (settings) => trackerKind(settings.kind)?.localFiles?.(settings) ?? [],
    checkAgent: checkAgentSettings,
  };
}
