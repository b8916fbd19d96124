/**
 * What a tracker kind declares for a workflow that leaves a key out: default states and the
 * conventional variable its token is read from. Applied to the raw front matter after the
 * ORCHESTRATOR_* overrides (the kind that runs is the effective one) and before the schema, so
 * the values go through the same checks as written ones. Each default used is reported as an
 * `info`, because a value nobody wrote is otherwise invisible.
 */
import type { ConfigIssue } from '../domain/diagnostic.js';
import type { Env } from './env-vars.js';
import type { TrackerTraits } from './kinds.js';

type Map_ = Record<string, unknown>;

function isMap(value: unknown): value is Map_ {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Fills absent states and token from the tracker kind's declaration; returns a copy and the notes. */
export function applyKindDefaults(
  input: Map_,
  traitsOf: ((kind: string) => TrackerTraits | undefined) | undefined,
  env: Env,
): { raw: Map_; issues: ConfigIssue[] } {
  const issues: ConfigIssue[] = [];
  const tracker = input.tracker;
  if (traitsOf === undefined || !isMap(tracker) || typeof tracker.kind !== 'string')
    return { raw: input, issues };
  const kind = tracker.kind.trim();
  const traits = traitsOf(kind);
  if (traits === undefined) return { raw: input, issues };
  const next: Map_ = { ...tracker };
  const states = traits.defaultStates;
  if (states !== undefined) {
    for (const [key, list] of [
      ['active_states', states.active],
      ['terminal_states', states.terminal],
    ] as const) {
      if (next[key] !== undefined && next[key] !== null) continue;
      next[key] = [...list];
      issues.push({
        severity: 'info',
        code: 'tracker.states.kind_default',
        message: `tracker.${key} is absent: the ${kind} kind's default applies (${list.join(', ')})`,
        path: ['tracker', 'kind'],
      });
    }
  }
  const variable = traits.apiKeyEnv;
  const written = next.api_key;
  const missing =
    written === undefined || written === null || (typeof written === 'string' && written.trim() === '');
  if (variable !== undefined && missing && (env[variable] ?? '').trim() !== '') {
    // Written as a reference, so it resolves like one and is never mistaken for a literal token.
    next.api_key = `$${variable}`;
    issues.push({
      severity: 'info',
      code: 'tracker.api_key.kind_env',
      message: `tracker.api_key is absent: the token is read from ${variable}, the ${kind} kind's variable`,
      path: ['tracker', 'kind'],
    });
  }
  return { raw: { ...input, tracker: next }, issues };
}
