/**
 * The one reading of a tracker state against the workflow's lists. Only the states
 * listed in `tracker.active_states` are worked on: an empty list is refused by
 * `validate`, and reads here as "nothing is active", so a handoff, blocked or unknown
 * state can never be dispatched by a gap in the configuration.
 */

/** `active`: dispatchable; `terminal`: finished (workspace cleaned); `inactive`: anything else. */
export type StateClass = 'active' | 'terminal' | 'inactive';

/** The classifier for one configuration, its sets built once; names compare case-insensitively. */
export function stateClassifier(tracker: {
  activeStates: readonly string[];
  terminalStates: readonly string[];
}): (state: string) => StateClass {
  const active = new Set(tracker.activeStates.map((s) => s.toLowerCase()));
  const terminal = new Set(tracker.terminalStates.map((s) => s.toLowerCase()));
  return (state) => {
    const lower = state.toLowerCase();
    if (terminal.has(lower)) return 'terminal';
    return active.has(lower) ? 'active' : 'inactive';
  };
}
