/**
 * `ORCHESTRATOR_*` overrides: an operator can change a key without editing the
 * file (containers, CI). An override replaces the raw YAML value before the schema
 * runs; a value that cannot be coerced is an error that names the variable.
 */
import type { ConfigIssue } from '../domain/diagnostic.js';
import type { Env } from './env-vars.js';

type Coercion = 'string' | 'int' | 'number' | 'bool' | 'list' | 'path';

/** Variable name → key path and how its text is read. */
export const ENV_OVERRIDES: ReadonlyArray<{ variable: string; path: readonly string[]; as: Coercion }> = [
  ...(
    [
      'kind',
      'endpoint',
      'api_key',
      'project',
      'query_filter',
      'handoff_state',
      'in_progress_state',
      'blocked_state',
    ] as const
  ).map((key) => ({
    variable: `ORCHESTRATOR_TRACKER_${key.toUpperCase()}`,
    path: ['tracker', key],
    as: 'string' as const,
  })),
  { variable: 'ORCHESTRATOR_TRACKER_ACTIVE_STATES', path: ['tracker', 'active_states'], as: 'list' },
  { variable: 'ORCHESTRATOR_TRACKER_TERMINAL_STATES', path: ['tracker', 'terminal_states'], as: 'list' },
  ...(['on_dispatch', 'on_completion', 'on_failure', 'on_blocked'] as const).map((key) => ({
    variable: `ORCHESTRATOR_TRACKER_COMMENTS_${key.toUpperCase()}`,
    path: ['tracker', 'comments', key],
    as: 'bool' as const,
  })),
  { variable: 'ORCHESTRATOR_POLLING_INTERVAL_MS', path: ['polling', 'interval_ms'], as: 'int' },
  { variable: 'ORCHESTRATOR_WORKSPACE_ROOT', path: ['workspace', 'root'], as: 'path' },
  { variable: 'ORCHESTRATOR_AGENT_KIND', path: ['agent', 'kind'], as: 'string' },
  { variable: 'ORCHESTRATOR_AGENT_COMMAND', path: ['agent', 'command'], as: 'string' },
  ...(
    [
      'turn_timeout_ms',
      'read_timeout_ms',
      'stall_timeout_ms',
      'max_concurrent_agents',
      'max_turns',
      'max_retry_backoff_ms',
      'max_sessions',
      'max_tokens',
      'max_unchanged_sessions',
    ] as const
  ).map((key) => ({
    variable: `ORCHESTRATOR_AGENT_${key.toUpperCase()}`,
    path: ['agent', key],
    as: 'int' as const,
  })),
  { variable: 'ORCHESTRATOR_AGENT_MAX_COST_USD', path: ['agent', 'max_cost_usd'], as: 'number' },
  { variable: 'ORCHESTRATOR_DB_PATH', path: ['db_path'], as: 'path' },
  { variable: 'ORCHESTRATOR_SERVER_PORT', path: ['server', 'port'], as: 'int' },
  { variable: 'ORCHESTRATOR_SERVER_HOST', path: ['server', 'host'], as: 'string' },
  { variable: 'ORCHESTRATOR_SERVER_ALLOWED_HOSTS', path: ['server', 'allowed_hosts'], as: 'list' },
  { variable: 'ORCHESTRATOR_LOGGING_LEVEL', path: ['logging', 'level'], as: 'string' },
  { variable: 'ORCHESTRATOR_LOGGING_FORMAT', path: ['logging', 'format'], as: 'string' },
  { variable: 'ORCHESTRATOR_WORKER_SSH_HOSTS', path: ['worker', 'ssh_hosts'], as: 'list' },
  {
    variable: 'ORCHESTRATOR_WORKER_MAX_CONCURRENT_AGENTS_PER_HOST',
    path: ['worker', 'max_concurrent_agents_per_host'],
    as: 'int',
  },
  {
    variable: 'ORCHESTRATOR_WORKER_SSH_STRICT_HOST_KEY_CHECKING',
    path: ['worker', 'ssh_strict_host_key_checking'],
    as: 'string',
  },
  { variable: 'ORCHESTRATOR_WORKER_SSH_IDENTITY_FILE', path: ['worker', 'ssh_identity_file'], as: 'path' },
  {
    variable: 'ORCHESTRATOR_WORKER_SSH_KNOWN_HOSTS_FILE',
    path: ['worker', 'ssh_known_hosts_file'],
    as: 'path',
  },
  { variable: 'ORCHESTRATOR_WORKER_SSH_USER', path: ['worker', 'ssh_user'], as: 'string' },
  {
    variable: 'ORCHESTRATOR_WORKER_SSH_CONNECT_TIMEOUT_MS',
    path: ['worker', 'ssh_connect_timeout_ms'],
    as: 'int',
  },
  { variable: 'ORCHESTRATOR_WORKER_SSH_FORWARD_ENV', path: ['worker', 'ssh_forward_env'], as: 'list' },
];

export interface OverrideResult {
  /** Dotted path → the variable its value came from (never `$`-expanded later). */
  overridden: Map<string, string>;
  issues: ConfigIssue[];
}

/** Applies every non-empty override to `raw` in place. */
export function applyEnvOverrides(raw: Record<string, unknown>, env: Env): OverrideResult {
  const overridden = new Map<string, string>();
  const issues: ConfigIssue[] = [];
  for (const { variable, path, as } of ENV_OVERRIDES) {
    const text = env[variable];
    if (text === undefined || text.trim() === '') continue;
    const value = coerce(text, as);
    if (value === undefined) {
      issues.push({
        severity: 'error',
        code: 'env_override.invalid',
        message: `${variable}=${JSON.stringify(text)}: ${path.join('.')} expects ${describe(as)}`,
        path,
      });
      continue;
    }
    setIn(raw, path, value);
    overridden.set(path.join('.'), variable);
  }
  return { overridden, issues };
}

function coerce(text: string, as: Coercion): unknown {
  const trimmed = text.trim();
  switch (as) {
    case 'string':
    case 'path':
      return trimmed;
    case 'int':
      return /^[-+]?\d+$/.test(trimmed) ? Number(trimmed) : undefined;
    case 'number':
      return Number.isFinite(Number(trimmed)) ? Number(trimmed) : undefined;
    case 'bool': {
      const lower = trimmed.toLowerCase();
      if (lower === 'true' || lower === '1') return true;
      if (lower === 'false' || lower === '0') return false;
      return undefined;
    }
    case 'list':
      return trimmed
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');
  }
}

function describe(as: Coercion): string {
  switch (as) {
    case 'int':
      return 'an integer';
    case 'number':
      return 'a number';
    case 'bool':
      return 'true, false, 1 or 0';
    case 'list':
      return 'a comma-separated list';
    default:
      return 'text';
  }
}

function setIn(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1] as string] = value;
}
