/** Registration of the `github` tracker kind (validation now; the adapter arrives with its client). */
import { registerTracker } from '../registry.js';
import { checkGithubSettings } from './config.js';

registerTracker('github', {
  requiresApiKey: true,
  requiresProject: true,
  validateConfig: checkGithubSettings,
});
