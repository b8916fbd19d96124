/**
 * Registers the `linear` tracker kind: the issues of one Linear project, states as the
 * teams' workflow states. Registration only; the client is imported when a tracker is created.
 */
import { TrackerError } from '../../domain/errors.js';
import { reachHttp } from '../http/reach.js';
import { registerTracker } from '../registry.js';
import { checkLinearSettings, DEFAULT_ENDPOINT, parseLinearConfig } from './config.js';

registerTracker('linear', {
  requiresApiKey: true,
  apiKeyHelp:
    'set it to $LINEAR_API_KEY (a personal API key from Linear: Settings, Security & access) and export that variable',
  requiresProject: true,
  // Symphony's defaults, so a workflow written for it runs without listing states or the key.
  apiKeyEnv: 'LINEAR_API_KEY',
  defaultStates: {
    active: ['Todo', 'In Progress'],
    terminal: ['Closed', 'Cancelled', 'Canceled', 'Duplicate', 'Done'],
  },
  supportsAssignee: true,
  validateConfig: checkLinearSettings,
  async reach(settings, timeoutMs) {
    const endpoint = parseLinearConfig(settings).config?.endpoint ?? DEFAULT_ENDPOINT;
    return reachHttp(endpoint, endpoint, timeoutMs);
  },
  async create(settings, context) {
    const { config, issues } = parseLinearConfig(settings);
    if (config === null) {
      if (settings.apiKey.trim() === '')
        throw new TrackerError(
          'missing_tracker_api_key',
          'tracker.api_key is empty (set it to $LINEAR_API_KEY)',
        );
      if (settings.project === '')
        throw new TrackerError('missing_tracker_project', "tracker.project is empty (the project's slug id)");
      const errors = issues.filter((issue) => issue.severity === 'error').map((issue) => issue.message);
      throw new TrackerError('tracker_payload_error', errors.join('; '));
    }
    const { LinearTracker } = await import('./adapter.js');
    return new LinearTracker(config, settings, context === undefined ? {} : { warn: context.warn });
  },
});
