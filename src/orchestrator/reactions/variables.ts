/** The template variables of a dispatched fix turn (their shapes live in the prompt layer). */
import { NO_REACTION_VARIABLES, type ReactionVariables } from '../../prompt/reaction-variables.js';
import type { DispatchTarget } from './types.js';

/** The variables for a dispatched fix turn: its own kind filled, the others null. */
export function reactionVariables(target: DispatchTarget): ReactionVariables {
  return { ...NO_REACTION_VARIABLES, [target.kind]: target.context };
}
