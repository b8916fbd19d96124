/**
 * Registers the `jira` tracker kind: issues of one Jira project, states as workflow statuses.
 * Registration only; the client is imported when a tracker is created.
 */
import { TrackerError } from '../../domain/errors.js';
import { reachHttp } from '../http/reach.js';
import { registerTracker } from '../registry.js';
import { checkJiraSettings, parseJiraConfig } from './config.js';

registerTracker('jira', {
  requiresApiKey: true,
  apiKeyHelp:
    'set it to $JIRA_API_TOKEN (a Jira Cloud API token, with jira.email; or a personal access token with jira.auth: bearer) and export that variable',
  requiresProject: true,
  supportsAssignee: true,
  validateConfig: checkJiraSettings,
  async reach(settings, timeoutMs) {
    const endpoint = settings.endpoint.trim().replace(/\/+$/, '');
    return reachHttp(`${endpoint}/`, endpoint, timeoutMs);
  },
  async create(settings, context) {
    const { config, issues } = parseJiraConfig(settings);
    if (config === null) {
      if (settings.apiKey.trim() === '')
        throw new TrackerError(
          'missing_tracker_api_key',
          'tracker.api_key is empty (set it to $JIRA_API_TOKEN)',
        );
      if (settings.project === '')
        throw new TrackerError('missing_tracker_project', 'tracker.project is empty (a Jira project key)');
      const errors = issues.filter((issue) => issue.severity === 'error').map((issue) => issue.message);
      throw new TrackerError('tracker_payload_error', errors.join('; '));
    }
    const { JiraTracker } = await import('./adapter.js');
    return new JiraTracker(config, settings, context === undefined ? {} : { warn: context.warn });
  },
});
