/**
 * Registers the `file` tracker kind: issues kept in a local JSON or YAML file.
 * Registration only; the adapter is imported when a tracker is created.
 */
import { TrackerError } from '../../domain/errors.js';
import { registerTracker } from '../registry.js';
import { parseFileConfig } from './config.js';

registerTracker('file', {
  requiresApiKey: false,
  requiresProject: false,
  validateConfig: (settings) => parseFileConfig(settings).issues,
  localFiles(settings) {
    const { config } = parseFileConfig(settings);
    return config === null ? [] : [{ path: config.path, key: ['file', 'path'], what: 'the issues file' }];
  },
  async create(settings) {
    const { config, issues } = parseFileConfig(settings);
    if (config === null) {
      const errors = issues.filter((issue) => issue.severity === 'error').map((issue) => issue.message);
      throw new TrackerError('tracker_payload_error', errors.join('; '));
    }
    const { FileTracker } = await import('./adapter.js');
    return new FileTracker(config, settings);
  },
});
