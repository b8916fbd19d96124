/**
 * Checks the tracker part of a workflow: the generic requirements a kind declares
 * (an API key, a project) and then the kind's own rules.
 */
import type { ConfigIssue } from '../domain/diagnostic.js';
import type { TrackerSettings } from '../domain/tracker.js';
import { trackerKind } from './registry.js';

/** Every issue with the tracker settings of a known kind. */
export function checkTrackerSettings(settings: TrackerSettings): ConfigIssue[] {
  const kind = trackerKind(settings.kind);
  if (kind === undefined) return [];
  const issues: ConfigIssue[] = [];
  if (kind.requiresApiKey && settings.apiKey === '') {
    issues.push({
      severity: 'error',
      code: 'tracker.api_key.missing',
      message: `tracker kind "${settings.kind}" needs tracker.api_key${kind.apiKeyHelp !== undefined ? `: ${kind.apiKeyHelp}` : ''}`,
      path: ['tracker', 'api_key'],
    });
  }
  if (kind.requiresProject && settings.project === '') {
    issues.push({
      severity: 'error',
      code: 'tracker.project.missing',
      message: `tracker kind "${settings.kind}" needs tracker.project`,
      path: ['tracker', 'project'],
    });
  }
  if (settings.assignee !== null && kind.supportsAssignee !== true) {
    issues.push({
      severity: 'warning',
      code: 'tracker.assignee.unsupported',
      message: `tracker kind "${settings.kind}" cannot route issues by assignee: tracker.assignee has no effect`,
      path: ['tracker', 'assignee'],
    });
  }
  return [...issues, ...kind.validateConfig(settings)];
}
