/**
 * Registers the `gitlab` tracker kind: issues of one GitLab project, states as scoped labels.
 * Registration only; the API client is imported when a tracker is created.
 */
import { TrackerError } from '../../domain/errors.js';
import { reachHttp } from '../http/reach.js';
import { registerTracker } from '../registry.js';
import { baseUrl, checkGitlabSettings, DEFAULT_ENDPOINT, parseGitlabConfig } from './config.js';

registerTracker('gitlab', {
  requiresApiKey: true,
  apiKeyHelp:
    'set it to $GITLAB_TOKEN (a personal, project or group access token with the api scope) and export that variable',
  requiresProject: true,
  supportsAssignee: true,
  validateConfig: checkGitlabSettings,
  async reach(settings, timeoutMs) {
    const endpoint = baseUrl(settings.endpoint === '' ? DEFAULT_ENDPOINT : settings.endpoint);
    // The version route answers without a token on every instance.
    return reachHttp(`${endpoint}/api/v4/version`, endpoint, timeoutMs);
  },
  async create(settings, context) {
    const { config, issues } = parseGitlabConfig(settings);
    if (config === null) {
      if (settings.apiKey.trim() === '')
        throw new TrackerError(
          'missing_tracker_api_key',
          'tracker.api_key is empty (set it to $GITLAB_TOKEN)',
        );
      if (settings.project === '')
        throw new TrackerError('missing_tracker_project', 'tracker.project is empty (group/project)');
      const errors = issues.filter((issue) => issue.severity === 'error').map((issue) => issue.message);
      throw new TrackerError('tracker_payload_error', errors.join('; '));
    }
    const { GitlabTracker } = await import('./adapter.js');
    return new GitlabTracker(config, settings, context === undefined ? {} : { warn: context.warn });
  },
});
