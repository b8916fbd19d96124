/** The turn context parse tests and benchmarks hand to an adapter's hooks, outside a real turn. */
import type { EventInput, TurnContext } from '../../src/agent/core/fork-per-turn.js';
import { TurnSpend } from '../../src/agent/usage/index.js';
import { SAMPLE_ISSUE } from '../../src/prompt/variables.js';

/** A context for turn `turn` on the sample issue, with a fresh spend, that hands its events to `emit`. */
export function turnContext(emit: (event: EventInput) => void, turn = 1): TurnContext {
  return { turn, prompt: '', issue: SAMPLE_ISSUE, spend: new TurnSpend(), emit, pid: '' };
}
