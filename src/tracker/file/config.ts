/**
 * The `file:` block of the workflow config. One parser serves both `validate` and
 * adapter creation, so a config that validates is exactly a config that starts.
 */
import { homedir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import type { ConfigIssue } from '../../domain/diagnostic.js';
import type { TrackerSettings } from '../../domain/tracker.js';
import { unknownKeyIssues } from '../../workflow/zod-issues.js';

/** The file tracker's own settings. */
export interface FileTrackerConfig {
  /** Absolute path of the issues file. */
  path: string;
}

/** The parsed block (null when an error was found) and every problem found, warnings included. */
export interface FileConfigResult {
  config: FileTrackerConfig | null;
  issues: ConfigIssue[];
}

const KNOWN_KEYS = ['path'];

/** Parses `settings.options` (the `file:` block); a relative path resolves against `settings.baseDir`. */
export function parseFileConfig(settings: Pick<TrackerSettings, 'options' | 'baseDir'>): FileConfigResult {
  const issues: ConfigIssue[] = unknownKeyIssues(settings.options, KNOWN_KEYS, ['file']);
  const raw = settings.options.path;
  if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) {
    issues.push({
      severity: 'error',
      code: 'file.path.missing',
      message: 'file.path is required: the path of the issues file (JSON or YAML)',
      path: ['file', 'path'],
    });
    return { config: null, issues };
  }
  if (typeof raw !== 'string') {
    issues.push({
      severity: 'error',
      code: 'file.path.invalid',
      message: `file.path must be a string, got ${Array.isArray(raw) ? 'a list' : typeof raw}`,
      path: ['file', 'path'],
    });
    return { config: null, issues };
  }
  return { config: { path: resolvePath(raw.trim(), settings.baseDir) }, issues };
}

function resolvePath(path: string, baseDir: string): string {
  if (path === '~') return homedir();
  if (path.startsWith('~/')) return resolve(homedir(), path.slice(2));
  return isAbsolute(path) ? path : resolve(baseDir, path);
}
