/** Builds a GithubTracker over a fake directly, with test knobs (no waits between writes or searches). */
import { GithubTracker, type GithubTrackerOptions } from '../../../src/tracker/github/adapter.js';
import { parseGithubConfig } from '../../../src/tracker/github/config.js';
import type { FakeGithub } from '../../support/fake-github/server.js';
import { githubSettings } from './harness.js';

export const STATES = {
  activeStates: ['Todo', 'In Progress'],
  terminalStates: ['Done', 'Cancelled'],
  handoffState: 'Review',
  inProgressState: 'In Progress',
  blockedState: 'Blocked',
};

export function trackerOver(
  fake: FakeGithub,
  block: Record<string, unknown> = {},
  options: GithubTrackerOptions & { queryFilter?: string } = {},
): GithubTracker {
  const settings = githubSettings(fake, STATES, block, options.queryFilter ?? '');
  const { config, issues } = parseGithubConfig(settings);
  if (config === null) throw new Error(`bad config: ${JSON.stringify(issues)}`);
  return new GithubTracker(config, settings, { searchIntervalMs: 0, retryBaseMs: 10, ...options });
}

export function seedLabels(fake: FakeGithub): void {
  for (const l of ['Todo', 'In Progress', 'Review', 'Blocked', 'Done', 'Cancelled', 'bug']) fake.addLabel(l);
}
