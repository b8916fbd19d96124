/**
 * What the mock runtime reports: one usage figure per model request while the
 * turn runs, naming the model, measured locally (no provider involved).
 */
import type { UsageSources } from '../usage/index.js';

export const MOCK_USAGE_SOURCES: UsageSources = {
  live: {
    category: 'local',
    strategy: 'live',
    spend: {
      shape: 'per_request',
      cacheInInput: false,
      reasoningInOutput: true,
      servedModel: true,
      duringTurn: true,
      lowerBound: false,
      amounts: [],
    },
  },
};
