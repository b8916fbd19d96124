/**
 * The GitHub tracker's settings: `tracker.project` as `owner/repo`, an optional
 * Enterprise endpoint, and the `github:` block. One parser for the adapter and
 * for `validate`.
 */
import type { ConfigIssue } from '../../domain/diagnostic.js';
import type { TrackerSettings } from '../../domain/tracker.js';

const PROJECT = /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\/[A-Za-z0-9._-]+$/;
const BLOCK_KEYS = ['etag_cache_size', 'max_pages'];

/** Rules of the github kind beyond "needs an API key and a project". */
export function checkGithubSettings(settings: TrackerSettings): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  if (settings.project !== '' && !PROJECT.test(settings.project)) {
    issues.push({
      severity: 'error',
      code: 'github.project.format',
      message: `tracker.project must be "owner/repo", got "${settings.project}"`,
      path: ['tracker', 'project'],
    });
  }
  if (settings.endpoint !== '' && !/^https?:\/\//.test(settings.endpoint)) {
    issues.push({
      severity: 'error',
      code: 'github.endpoint.invalid',
      message: `tracker.endpoint must be an http(s) URL, got "${settings.endpoint}"`,
      path: ['tracker', 'endpoint'],
    });
  }
  if (/^(gh[pousr]_|github_pat_)/.test(settings.apiKey) && settings.apiKey.length > 0) {
    issues.push({
      severity: 'warning',
      code: 'github.api_key.literal',
      message: 'tracker.api_key holds a literal token: use $GITHUB_TOKEN so the secret stays out of the file',
      path: ['tracker', 'api_key'],
    });
  }
  for (const [key, value] of Object.entries(settings.options)) {
    if (!BLOCK_KEYS.includes(key)) {
      issues.push({
        severity: 'warning',
        code: 'config.unknown_key',
        message: `unknown key "github.${key}"`,
        path: ['github', key],
      });
    } else if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
      issues.push({
        severity: 'error',
        code: `github.${key}.invalid`,
        message: `github.${key} must be a non-negative integer`,
        path: ['github', key],
      });
    }
  }
  return issues;
}
