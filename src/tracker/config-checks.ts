/**
 * Checks the HTTP tracker kinds' settings share: what counts as an endpoint URL, and the one
 * state collision that is an error for trackers whose terminal states close an issue.
 */
import type { ConfigIssue } from '../domain/diagnostic.js';
import type { TrackerSettings } from '../domain/tracker.js';

/** An absolute http(s) URL that parses. */
export function isHttpUrl(value: string): boolean {
  if (!/^https?:\/\//i.test(value)) return false;
  try {
    new URL(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * A blocked state that is also terminal, for a tracker where moving an issue to a terminal
 * state closes it: every issue that asks a question would be closed (`why` says how, in the
 * kind's own terms). For trackers in general this is only a warning.
 */
export function blockedStateCloses(settings: TrackerSettings, code: string, why: string): ConfigIssue[] {
  const blocked = settings.blockedState?.trim().toLowerCase();
  if (blocked === undefined || blocked === '') return [];
  if (!settings.terminalStates.some((s) => s.trim().toLowerCase() === blocked)) return [];
  return [
    {
      severity: 'error',
      code,
      message: `tracker.blocked_state "${settings.blockedState}" is also a terminal state: ${why}`,
      path: ['tracker', 'blocked_state'],
    },
  ];
}
