/**
 * The one error type of the workspace layer. Expected failures come back as values
 * carrying a closed kind, so the orchestrator decides what to do from the kind and
 * never from message text; a failed hook keeps its name and captured output so the
 * reason reaches the logs and the run record.
 */

export const WORKSPACE_ERROR_KINDS = [
  /** The identifier is empty: no workspace name can be made from it. */
  'invalid_key',
  /** Another issue's session is using the workspace directory right now. */
  'busy',
  /** The computed path is not a direct child of the workspace root. */
  'escape',
  /** Something other than a directory already sits at the workspace path. */
  'conflict',
  /** A symlink sits at the workspace path; it is never followed, reused or removed. */
  'symlink',
  /** A hook exited non-zero, was killed by a signal, aborted, or could not start. */
  'hook_failed',
  /** A hook ran past `hooks.timeoutMs` and its process group was killed. */
  'hook_timeout',
  /** A filesystem operation failed. */
  'io',
  /** The SSH worker host holding the workspace could not be reached (the workspace's state there is unknown). */
  'host_unreachable',
] as const;
export type WorkspaceErrorKind = (typeof WORKSPACE_ERROR_KINDS)[number];

export class WorkspaceError extends Error {
  override readonly name = 'WorkspaceError';
  readonly kind: WorkspaceErrorKind;
  /** The hook that failed (`after_create`, `before_run`, …); null when no hook is involved. */
  readonly hook: string | null;
  /** The hook's captured output (capped); '' when no hook is involved. */
  readonly output: string;

  constructor(
    kind: WorkspaceErrorKind,
    message: string,
    opts: { hook?: string | null; output?: string; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.kind = kind;
    this.hook = opts.hook ?? null;
    this.output = opts.output ?? '';
  }
}
