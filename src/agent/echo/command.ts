/**
 * The echo runtime's environment for one turn: its delay, failure rate and the
 * issue it pretends to work on. No argument carries issue text.
 */
import type { TurnContext } from '../core/fork-per-turn.js';
import type { EchoConfig } from './config.js';

/** Environment for one turn of the echo runtime. */
export function echoTurnEnv(
  config: EchoConfig,
  ctx: TurnContext,
  base: Record<string, string>,
): Record<string, string> {
  return {
    ...base,
    ORCHESTRATOR_ECHO_DELAY_MS: String(config.delayMs),
    ORCHESTRATOR_ECHO_FAIL_RATE: String(config.failRate),
    ORCHESTRATOR_ECHO_IDENTIFIER: ctx.issue.identifier,
    ORCHESTRATOR_ECHO_TITLE: ctx.issue.title,
  };
}
