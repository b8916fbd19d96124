/**
 * Where workspaces live: the place-specific half of the workspace lifecycle. The
 * lifecycle (which hook runs when, what a failure keeps or removes, the per-key
 * lock, reporting) is the same on this machine and on an SSH host; only these
 * operations differ. A place answers with values, never by throwing (listing
 * aside), and keeps its own containment checks: the lifecycle trusts a path only
 * when a place returned it.
 */
import type { WorkspaceError } from './errors.js';
import type { HookResult } from './hooks.js';

export type Outcome<T> = { ok: true } & T;
export type Failure = { ok: false; error: WorkspaceError };

/** A workspace directory a place vouched for: its key and its real path. */
export interface PlacedWorkspace {
  key: string;
  path: string;
}

/** What sits at a key's path, without following a symlink there. */
export type Found =
  | { kind: 'missing' }
  | { kind: 'directory'; path: string }
  | { kind: 'refused'; error: WorkspaceError };

/** Whether a caller's workspace path is still a directory directly under the root. */
export type Checked =
  | { ok: true; path: string }
  /** `unreachable`: the place could not be asked at all (the host is down). */
  | { ok: false; message: string; unreachable: boolean };

/** A hook's result, and the host's message when it was not run because the host is unreachable. */
export interface HookRun {
  result: HookResult;
  unreachable: string | null;
}

/** The operations the lifecycle needs from where workspaces live (this machine, an SSH host). */
export interface WorkspacePlace {
  /** What hooks may inherit (through the allow-list in `hookEnv`); {} when the host's login supplies it. */
  readonly hookBaseEnv: Record<string, string | undefined>;
  /** The host for ORCHESTRATOR_SSH_HOST; null on this machine. */
  readonly hostName: string | null;
  /** The planned path for a key, touching nothing; `escape` when the root cannot hold workspaces. */
  pathOf(key: string): Outcome<{ path: string }> | Failure;
  /** Creates the root and the key's directory atomically: `createdNow` only for the creator; the real path. */
  ensure(key: string): Promise<Outcome<{ path: string; createdNow: boolean }> | Failure>;
  /** What sits at the key's path now; a missing root is `missing`. */
  find(key: string): Promise<Found>;
  /** Whether `workspace` (as a caller gave it) is a real directory directly under the root. */
  check(workspace: string): Promise<Checked>;
  /** Deletes the workspace when it is a real directory under the root; already gone is not an error. */
  delete(workspace: PlacedWorkspace): Promise<WorkspaceError | null>;
  /**
   * Renames the directory of key `from` to key `to` when `from` is a real directory and
   * nothing is at `to`; the real path of `to`. Used once, to adopt an old-named workspace.
   */
  rename(from: string, to: string): Promise<Outcome<{ path: string }> | Failure>;
  /** Names of the real directories under the root; [] without a root; throws a WorkspaceError when unlistable. */
  listNames(): Promise<string[]>;
  /** Runs a hook script in `cwd` with exactly `env`; never rejects. `timeoutMs` ≤ 0 means the default. */
  runHook(
    script: string,
    opts: { cwd: string; env: Record<string, string>; timeoutMs: number; signal?: AbortSignal },
  ): Promise<HookRun>;
}

/** A hook result for a hook that never ran; `output` says why. */
export function notRun(output: string): HookResult {
  return { ok: false, exitCode: null, signal: null, timedOut: false, output, durationMs: 0 };
}
