/**
 * Owns the directories agents work in on this machine: one per issue, a direct
 * child of the root, created once and reused across retries, removed only when the
 * issue is done. The lifecycle is `WorkspaceLifecycle`'s; what is local (the
 * symlink-resolved root, `fs` with symlinks never followed, hooks in their own
 * process group with an allow-listed environment) is `LocalPlace`'s.
 */
import type { HooksConfig } from '../workflow/config.js';
import { type HookObserver, type LegacyOwnerCheck, WorkspaceLifecycle } from './lifecycle.js';
import { LocalPlace } from './local-place.js';

export type { HookResult } from './hooks.js';
export { HOOK_NAMES, type PreparedWorkspace } from './lifecycle.js';

export interface WorkspaceManagerOptions {
  /** Workspace root; made absolute, and symlink-resolved as far as it exists. */
  root: string;
  hooks: HooksConfig;
  /** The orchestrator's environment; only the allow-listed variables reach hooks. */
  baseEnv: Record<string, string | undefined>;
  /** Called after every hook run (and for an after_run refused before it ran); must not throw. */
  onHook?: HookObserver;
  /** Whether an old-named workspace was the issue's own; absent: never adopted. */
  ownsLegacy?: LegacyOwnerCheck;
  /** The service's owner tag, put in every hook's environment for the start-up reaper; absent: none. */
  ownerTag?: string;
}

/** Workspaces under a root on this machine. */
export class WorkspaceManager extends WorkspaceLifecycle {
  constructor(opts: WorkspaceManagerOptions) {
    super(new LocalPlace(opts.root, opts.baseEnv), opts);
  }
}
