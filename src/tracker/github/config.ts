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
