/**
 * The resolved GitHub config for a client that is about to run, or the error that stops it.
 * The same refusals whichever object is built from the settings (tracker or forge), so a
 * missing token reads the same from both.
 */
import { TrackerError } from '../../domain/errors.js';
import type { TrackerSettings } from '../../domain/tracker.js';
import { type GithubTrackerConfig, parseGithubConfig } from './config.js';

/** The parsed config; throws the TrackerError a workflow with these settings deserves. */
export function requireGithubConfig(settings: TrackerSettings): GithubTrackerConfig {
  const { config, issues } = parseGithubConfig(settings);
  if (config !== null) return config;
  if (settings.apiKey.trim() === '')
    throw new TrackerError('missing_tracker_api_key', 'tracker.api_key is empty (set it to $GITHUB_TOKEN)');
  if (settings.project === '')
    throw new TrackerError('missing_tracker_project', 'tracker.project is empty (owner/repo)');
  const errors = issues.filter((issue) => issue.severity === 'error').map((issue) => issue.message);
  throw new TrackerError('tracker_payload_error', errors.join('; '));
}
