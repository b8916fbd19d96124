/**
 * The mock runtime's per-turn arguments and environment: it takes its prompt on
 * stdin and its settings from variables, so no argument carries issue text.
 */
import type { MockConfig } from './config.js';

/** Environment for one turn of the mock runtime. */
export function mockTurnEnv(
  config: MockConfig,
  sessionId: string,
  base: Record<string, string>,
): Record<string, string> {
  return {
    ...base,
    ORCHESTRATOR_MOCK_MODEL: config.model,
    ORCHESTRATOR_MOCK_LINE_DELAY_MS: String(config.lineDelayMs),
    ORCHESTRATOR_MOCK_SESSION_ID: sessionId,
    ...(config.pidLog !== null ? { ORCHESTRATOR_MOCK_PID_LOG: config.pidLog } : {}),
  };
}
