/**
 * Workspaces on an SSH worker host: the same lifecycle as the local manager (one
 * directory per issue directly under the root, after_create once, before_run and
 * after_run around each run, before_remove then deletion), on a `RemotePlace`,
 * where every filesystem action is a fixed script run on the host and an
 * unreachable host is `host_unreachable`, never a failed hook or a missing directory.
 */
import type { RemoteHost } from '../domain/remote.js';
import type { HooksConfig } from '../workflow/config.js';
import { type HookObserver, type LegacyOwnerCheck, WorkspaceLifecycle } from './lifecycle.js';
import { RemotePlace } from './remote-place.js';

export { REMOTE_CONTROL_TIMEOUT_MS, REMOTE_DELETE_TIMEOUT_MS } from './remote-place.js';

export interface RemoteWorkspaceManagerOptions {
  /** The host the workspaces live on. */
  host: RemoteHost;
  /** Absolute workspace root on the host (`~` already resolved); not `/`. */
  root: string;
  hooks: HooksConfig;
  /** Called after every hook run (and for a hook refused or not run); must not throw. */
  onHook?: HookObserver;
  /** Whether an old-named workspace was the issue's own; absent: never adopted. */
  ownsLegacy?: LegacyOwnerCheck;
  /** The service's owner tag, put in every hook's environment as agents on the host get it; absent: none. */
  ownerTag?: string;
}

/** Workspaces under a root on one SSH worker host; `pathFor` keeps the root as configured, `prepare` returns the real path. */
export class RemoteWorkspaceManager extends WorkspaceLifecycle {
  constructor(opts: RemoteWorkspaceManagerOptions) {
    super(new RemotePlace(opts.host, opts.root), opts);
  }
}
