/**
 * The one rule every tracker applies before a transition: the target must be one of the
 * configured states (matched without case or surrounding blanks) and is written in its
 * configured spelling. Anything else is a payload error raised before any request, so a typo
 * in a workflow never creates a state or label in the tracker.
 */
import { TrackerError } from '../domain/errors.js';
import type { TrackerSettings } from '../domain/tracker.js';

export type StateSettings = Pick<
  TrackerSettings,
  'activeStates' | 'terminalStates' | 'handoffState' | 'inProgressState' | 'blockedState'
>;

/** Every configured state, trimmed, blanks left out, in configuration order. */
export function configuredStates(states: StateSettings): string[] {
  return [
    ...states.activeStates,
    ...states.terminalStates,
    states.handoffState,
    states.inProgressState,
    states.blockedState,
  ]
    .filter((s): s is string => typeof s === 'string' && s.trim() !== '')
    .map((s) => s.trim());
}

/** The configured spelling of `state`; `what` (the operation) begins the error's message when given. */
export function configuredState(states: StateSettings, state: string, what?: string): string {
  const wanted = state.trim().toLowerCase();
  const known = configuredStates(states);
  const match = wanted === '' ? undefined : known.find((s) => s.toLowerCase() === wanted);
  if (match === undefined)
    throw new TrackerError(
      'tracker_payload_error',
      `${what === undefined ? '' : `${what}: `}state "${state}" is not a configured state (${[...new Set(known)].join(', ')})`,
    );
  return match;
}
