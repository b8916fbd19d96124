/**
 * The mock adapter: runs the mock runtime script as a real subprocess through
 * the fork-per-turn skeleton, so the directive table exercises the same process,
 * parsing, usage and disposition code every real CLI goes through.
 */

import { mockTurnEnv } from './command.js';
import { type MockConfig, mockBlock } from './config.js';
import { StreamRuntimeAdapter } from './stream-adapter.js';
import { MOCK_USAGE_SOURCES } from './usage.js';

/** The adapter of the `mock` kind. */
export function createMockAdapter(): StreamRuntimeAdapter<MockConfig> {
  return new StreamRuntimeAdapter({
    kind: 'mock',
    block: mockBlock,
    sources: MOCK_USAGE_SOURCES,
    moduleUrl: import.meta.url,
    turnEnv: (config, _ctx, sessionId, base) => mockTurnEnv(config, sessionId, base),
  });
}
