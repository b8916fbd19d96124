/** Builds a LinearTracker over a fake directly, with test knobs (a fast backoff, warnings collected). */
import type { TrackerSettings } from '../../../src/domain/tracker.js';
import {
  type LinearStates,
  LinearTracker,
  type LinearTrackerOptions,
} from '../../../src/tracker/linear/adapter.js';
import { parseLinearConfig } from '../../../src/tracker/linear/config.js';
import type { FakeLinear } from '../../support/fake-linear/server.js';

/** The states of the fake's default team, as a workflow would configure them. */
export const STATES: LinearStates = {
  activeStates: ['Todo', 'In Progress'],
  terminalStates: ['Done', 'Canceled', 'Duplicate'],
  handoffState: 'Human Review',
  inProgressState: 'In Progress',
  blockedState: 'Blocked',
};

/** Settings for a tracker over `fake`. */
export function linearSettings(
  fake: FakeLinear,
  states: LinearStates = STATES,
  block: Record<string, unknown> = {},
  over: Partial<TrackerSettings> = {},
): TrackerSettings {
  return {
    kind: 'linear',
    endpoint: fake.endpoint,
    apiKey: fake.token,
    project: fake.project.slugId,
    queryFilter: '',
    assignee: null,
    requiredLabels: [],
    ...states,
    options: block,
    baseDir: '/',
    ...over,
  };
}

/** A tracker over `fake` plus the warnings it gave. */
export function trackerOver(
  fake: FakeLinear,
  options: LinearTrackerOptions & {
    block?: Record<string, unknown>;
    settings?: Partial<TrackerSettings>;
    states?: LinearStates;
  } = {},
): { tracker: LinearTracker; warnings: string[] } {
  const { block, settings: over, states, ...knobs } = options;
  const settings = linearSettings(fake, states, block, over);
  const { config, issues } = parseLinearConfig(settings);
  if (config === null) throw new Error(`bad config: ${JSON.stringify(issues)}`);
  const warnings: string[] = [];
  const tracker = new LinearTracker(config, settings, {
    retryBaseMs: 5,
    warn: (m) => warnings.push(m),
    ...knobs,
  });
  return { tracker, warnings };
}
