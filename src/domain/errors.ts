/**
 * Error kinds and the one retry table. The orchestrator decides what to do with a
 * failure by reading the kind here, never by matching message text.
 */

export const TRACKER_ERROR_KINDS = [
  'unsupported_tracker_kind',
  'missing_tracker_api_key',
  'missing_tracker_project',
  'tracker_auth_error',
  'tracker_not_found',
  'tracker_payload_error',
  'tracker_transport_error',
  'tracker_api_error',
  'tracker_missing_end_cursor',
] as const;
export type TrackerErrorKind = (typeof TRACKER_ERROR_KINDS)[number];

export const AGENT_ERROR_KINDS = [
  'agent_not_found',
  'invalid_workspace_cwd',
  'response_timeout',
  'turn_timeout',
  'port_exit',
  'response_error',
  'turn_failed',
  'turn_cancelled',
  'turn_input_required',
  'credential_unverified',
  'usage_limit',
  /** The runtime's sandbox cannot run the agent's commands with this setup. */
  'sandbox_unusable',
] as const;
export type AgentErrorKind = (typeof AGENT_ERROR_KINDS)[number];

export const WORKER_ERROR_KINDS = [
  /** A workspace hook failed or timed out. */
  'workspace_hook_failed',
  /** The workspace could not be created or read (permissions, a read-only or full file system). */
  'workspace_io_failed',
  /** The workspace path is unusable (bad key, escape, symlink, conflict). */
  'workspace_invalid',
  /** The workspace directory is in use by another issue's live session; tried again later. */
  'workspace_busy',
  /** The prompt template could not be rendered for this issue. */
  'prompt_render_failed',
  /** The SSH host chosen for the run could not be reached; the retry goes to another host. */
  'host_unreachable',
  /** A git command in the workspace failed (checkout, commit, push); tried again later. */
  'git_failed',
  /** The remote refused the push's credentials (the tracker token cannot push). */
  'git_auth_failed',
  /** `git:` is set, and the workspace is not a git work tree (no clone in after_create). */
  'git_not_a_repository',
] as const;
export type WorkerErrorKind = (typeof WORKER_ERROR_KINDS)[number];

export type ErrorKind = TrackerErrorKind | AgentErrorKind | WorkerErrorKind;

/** How the orchestrator reacts to a failure of a given kind. */
export type RetryDecision =
  /** Back off exponentially and try again. */
  | 'retry'
  /** Release the claim; trying again cannot help without a human. */
  | 'release'
  /** Wait until the reported reset time, then try again. */
  | 'wait_for_reset';

/** The one retry classification table. */
export const RETRY_TABLE: Readonly<Record<ErrorKind, RetryDecision>> = {
  unsupported_tracker_kind: 'release',
  missing_tracker_api_key: 'release',
  missing_tracker_project: 'release',
  tracker_auth_error: 'release',
  tracker_not_found: 'release',
  tracker_payload_error: 'release',
  tracker_transport_error: 'retry',
  tracker_api_error: 'retry',
  tracker_missing_end_cursor: 'retry',
  agent_not_found: 'release',
  invalid_workspace_cwd: 'release',
  response_timeout: 'retry',
  turn_timeout: 'retry',
  port_exit: 'retry',
  response_error: 'retry',
  turn_failed: 'retry',
  turn_cancelled: 'release',
  turn_input_required: 'release',
  credential_unverified: 'release',
  usage_limit: 'wait_for_reset',
  sandbox_unusable: 'release',
  workspace_hook_failed: 'retry',
  workspace_io_failed: 'retry',
  workspace_invalid: 'release',
  workspace_busy: 'retry',
  prompt_render_failed: 'release',
  host_unreachable: 'retry',
  git_failed: 'retry',
  git_auth_failed: 'release',
  git_not_a_repository: 'release',
};

/**
 * What lets an issue held after a failure a retry cannot fix run again. Every hold
 * ends when the issue changes; a failure the workflow owns (its command, template,
 * kind settings, workspace or tracker settings) also ends when a reload of
 * WORKFLOW.md changes the workflow, since that is where the fix is made.
 */
export type HoldRelease = 'issue_change' | 'issue_or_workflow_change';

const WORKFLOW_OWNED: ReadonlySet<ErrorKind> = new Set<ErrorKind>([
  'unsupported_tracker_kind',
  'missing_tracker_api_key',
  'missing_tracker_project',
  'tracker_auth_error',
  'agent_not_found',
  'invalid_workspace_cwd',
  'credential_unverified',
  'sandbox_unusable',
  'turn_input_required',
  'workspace_invalid',
  'prompt_render_failed',
  'git_auth_failed',
  'git_not_a_repository',
]);

/** What releases a hold made after a failure of `kind` (unknown kinds: only an issue change). */
export function holdRelease(kind: ErrorKind | null | undefined): HoldRelease {
  return kind != null && WORKFLOW_OWNED.has(kind) ? 'issue_or_workflow_change' : 'issue_change';
}

/** The retry decision for a kind; an unclassified failure is retried. */
export function retryDecision(kind: ErrorKind | undefined): RetryDecision {
  return kind === undefined ? 'retry' : RETRY_TABLE[kind];
}

/** True when the failure may succeed on a later attempt (waiting for a reset counts). */
export function isRetryable(kind: ErrorKind | undefined): boolean {
  return retryDecision(kind) !== 'release';
}

/** A tracker failure as a value: what went wrong, and the kind that decides the retry. */
export class TrackerError extends Error {
  override readonly name = 'TrackerError';
  constructor(
    readonly kind: TrackerErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`tracker: ${kind}: ${message}`, options);
  }
}
