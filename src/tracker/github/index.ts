/**
 * Registers the `github` tracker kind: issues of one repository, states as labels.
 * Registration only; the client is imported when a tracker is created.
 */
import { TrackerError } from '../../domain/errors.js';
import { reachHttp } from '../http/reach.js';
import { registerTracker } from '../registry.js';
import { checkGithubSettings, DEFAULT_ENDPOINT, parseGithubConfig } from './config.js';

registerTracker('github', {
  requiresApiKey: true,
  apiKeyHelp: 'set it to $GITHUB_TOKEN (a token that may read and write issues) and export that variable',
  requiresProject: true,
  // Candidates are listed with the issues endpoint's `assignee` (`me` = the token's user).
  supportsAssignee: true,
  validateConfig: checkGithubSettings,
  async reach(settings, timeoutMs) {
    const endpoint = parseGithubConfig(settings).config?.endpoint ?? DEFAULT_ENDPOINT;
    return reachHttp(`${endpoint}/`, endpoint, timeoutMs);
  },
  async create(settings, context) {
    const { config, issues } = parseGithubConfig(settings);
    if (config === null) {
      if (settings.apiKey.trim() === '')
        throw new TrackerError(
          'missing_tracker_api_key',
          'tracker.api_key is empty (set it to $GITHUB_TOKEN)',
        );
      if (settings.project === '')
        throw new TrackerError('missing_tracker_project', 'tracker.project is empty (owner/repo)');
      const errors = issues.filter((issue) => issue.severity === 'error').map((issue) => issue.message);
      throw new TrackerError('tracker_payload_error', errors.join('; '));
    }
    const { GithubTracker } = await import('./adapter.js');
    return new GithubTracker(config, settings, context === undefined ? {} : { warn: context.warn });
  },
  // Pull requests, check runs, reviews and merges of the same repository, with the same token.
  async createForge(settings, context) {
    const { createGithubForge } = await import('./forge.js');
    return createGithubForge(settings, context);
  },
});
