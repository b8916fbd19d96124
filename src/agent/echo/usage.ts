/**
 * What the echo runtime reports: one request of fixed size, with its price in
 * US dollars, while the turn runs. Measured locally: no provider is involved.
 */
import { UNIT_USD, type UsageSources } from '../usage/index.js';

export const ECHO_USAGE_SOURCES: UsageSources = {
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
      amounts: [{ unit: UNIT_USD, shape: 'per_request' }],
    },
  },
};
