/**
 * Owns the directories agents work in: one per issue, a direct child of the root,
 * created once and reused across retries, removed only when the issue is done. The
 * identifier is untrusted, so every path is rebuilt from the sanitised key and checked
 * against the symlink-resolved root. A symlink at a workspace path is never followed,
 * reused or removed (it could point anywhere, even back inside the root), and deletion
 * is `fs.rm` on the directory itself, which unlinks symlinks inside it rather than
 * descending through them.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { HooksConfig } from '../workflow/config.js';
import { WorkspaceError } from './errors.js';
import { type HookResult, hookEnv, runHook } from './hooks.js';
import { KeyLock } from './key-lock.js';
import { workspaceKey } from './keys.js';

export type { HookResult } from './hooks.js';

/** A workspace ready for an agent. */
export interface PreparedWorkspace {
  /** Absolute, symlink-free path; a direct child of the root. */
  path: string;
  /** True only for the call that created the directory (after_create ran in it). */
  createdNow: boolean;
}

/** The hook names as WORKFLOW.md spells them; used in errors and `onHook` events. */
export const HOOK_NAMES = {
  afterCreate: 'after_create',
  beforeRun: 'before_run',
  afterRun: 'after_run',
  beforeRemove: 'before_remove',
} as const;

export interface WorkspaceManagerOptions {
  /** Workspace root; made absolute, and symlink-resolved as far as it exists. */
  root: string;
  hooks: HooksConfig;
  /** The orchestrator's environment; only the allow-listed variables reach hooks. */
  baseEnv: Record<string, string | undefined>;
  /** Called after every hook run (and for an after_run refused before it ran); must not throw. */
  onHook?: (event: { hook: string; issueIdentifier: string; result: HookResult }) => void;
}

type IssueRef = { id: string; identifier: string };
type Outcome<T> = { ok: true } & T;
type Failure = { ok: false; error: WorkspaceError };

export class WorkspaceManager {
  readonly #root: string;
  readonly #hooks: HooksConfig;
  readonly #baseEnv: Record<string, string | undefined>;
  readonly #onHook: WorkspaceManagerOptions['onHook'];
  /** Creations and removals of one key never overlap in this process. */
  readonly #locks = new KeyLock();

  constructor(opts: WorkspaceManagerOptions) {
    this.#root = path.resolve(opts.root);
    this.#hooks = opts.hooks;
    this.#baseEnv = opts.baseEnv;
    this.#onHook = opts.onHook;
  }

  /** Absolute path for an identifier (root made absolute and symlink-resolved when it exists); escape-checked. */
  pathFor(identifier: string): Outcome<{ path: string; key: string }> | Failure {
    const key = workspaceKey(identifier);
    if (!key.ok) return key;
    const root = resolveExisting(this.#root);
    if (path.parse(root).root === root) {
      return fail(
        'escape',
        `workspace root ${root} is the filesystem root; refusing to place workspaces there`,
      );
    }
    const candidate = path.join(root, key.key);
    if (!isDirectChild(root, candidate)) {
      return fail('escape', `workspace path ${candidate} is not a direct child of the root ${root}`);
    }
    return { ok: true, path: candidate, key: key.key };
  }

  /**
   * Ensure dir (atomic mkdir: createdNow only for the creator) → after_create when
   * createdNow (failure: the new dir is removed, error) → before_run (failure: error,
   * dir kept). `signal` aborts a running hook (its group is killed; the hook fails).
   */
  async prepare(
    issue: IssueRef,
    attempt: number | null,
    signal?: AbortSignal,
  ): Promise<Outcome<{ workspace: PreparedWorkspace }> | Failure> {
    const planned = this.pathFor(issue.identifier);
    if (!planned.ok) return planned;
    const created = await this.#locks.run(planned.key, () => this.#create(issue, attempt, signal));
    if (!created.ok) return created;
    const workspace = created.workspace;

    const beforeRun = this.#hooks.beforeRun;
    if (beforeRun !== null) {
      const result = await this.#run(HOOK_NAMES.beforeRun, beforeRun, workspace.path, issue, attempt, signal);
      if (!result.ok) return { ok: false, error: hookError(HOOK_NAMES.beforeRun, result) };
    }
    return { ok: true, workspace };
  }

  /** after_run; failures and timeouts are reported via the returned result, never thrown; null when no hook. */
  async afterRun(workspace: string, issue: IssueRef, attempt: number | null): Promise<HookResult | null> {
    const afterRun = this.#hooks.afterRun;
    if (afterRun === null) return null;
    const problem = await this.#workspaceProblem(workspace);
    if (problem !== null) {
      const result: HookResult = {
        ok: false,
        exitCode: null,
        signal: null,
        timedOut: false,
        output: `[after_run not run: ${problem}]`,
        durationMs: 0,
      };
      this.#report(HOOK_NAMES.afterRun, issue.identifier, result);
      return result;
    }
    return this.#run(HOOK_NAMES.afterRun, afterRun, path.resolve(workspace), issue, attempt);
  }

  /**
   * before_remove (failure ignored) then delete the directory; only paths that are
   * direct children of the root and not symlinks are ever removed. `removed` is true
   * when a workspace directory existed and is gone afterwards; a missing one is not an error.
   */
  async remove(
    identifier: string,
    issueId?: string,
  ): Promise<{ removed: boolean; error: WorkspaceError | null }> {
    const planned = this.pathFor(identifier);
    if (!planned.ok) return { removed: false, error: planned.error };
    return this.#locks.run(planned.key, async () => {
      const target = this.pathFor(identifier);
      if (!target.ok) return { removed: false, error: target.error };
      const found = await inspect(target.path);
      if (found.kind === 'missing') return { removed: false, error: null };
      if (found.kind !== 'directory') return { removed: false, error: found.error };

      const beforeRemove = this.#hooks.beforeRemove;
      if (beforeRemove !== null) {
        const issue = { id: issueId ?? '', identifier };
        await this.#run(HOOK_NAMES.beforeRemove, beforeRemove, target.path, issue, null);
      }
      const error = await this.#deleteDirectory(target.path);
      return { removed: error === null, error };
    });
  }

  /** Keys that have a directory under the root, sorted (for start-up sweeps); [] when the root does not exist. */
  async existingKeys(): Promise<string[]> {
    const root = resolveExisting(this.#root);
    let entries: fs.Dirent[];
    try {
      entries = await fsp.readdir(root, { withFileTypes: true });
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return [];
      throw new WorkspaceError('io', `cannot list workspace root ${root}: ${errorMessage(error)}`, {
        cause: error,
      });
    }
    return entries
      .filter((entry) => entry.isDirectory() && isOwnKey(entry.name))
      .map((entry) => entry.name)
      .sort();
  }

  /** Root → directory → after_create, under the key's lock. */
  async #create(
    issue: IssueRef,
    attempt: number | null,
    signal: AbortSignal | undefined,
  ): Promise<Outcome<{ workspace: PreparedWorkspace }> | Failure> {
    const unresolvedRoot = resolveExisting(this.#root);
    try {
      await fsp.mkdir(unresolvedRoot, { recursive: true });
    } catch (error) {
      return fail('io', `cannot create workspace root ${unresolvedRoot}: ${errorMessage(error)}`, error);
    }
    // Recomputed now the root exists, so the path is built on its real location.
    const target = this.pathFor(issue.identifier);
    if (!target.ok) return target;

    let createdNow = false;
    try {
      await fsp.mkdir(target.path);
      createdNow = true;
    } catch (error) {
      if (errnoCode(error) !== 'EEXIST') {
        return fail('io', `cannot create workspace ${target.path}: ${errorMessage(error)}`, error);
      }
      const found = await inspect(target.path);
      if (found.kind !== 'directory') {
        return {
          ok: false,
          error:
            found.kind === 'missing'
              ? new WorkspaceError('io', `workspace ${target.path} vanished while being prepared`)
              : found.error,
        };
      }
    }
    const workspace = { path: target.path, createdNow };

    const afterCreate = this.#hooks.afterCreate;
    if (createdNow && afterCreate !== null) {
      const result = await this.#run(
        HOOK_NAMES.afterCreate,
        afterCreate,
        workspace.path,
        issue,
        attempt,
        signal,
      );
      if (!result.ok) {
        const error = hookError(HOOK_NAMES.afterCreate, result);
        const cleanup = await this.#deleteDirectory(workspace.path);
        if (cleanup === null) return { ok: false, error };
        return {
          ok: false,
          error: new WorkspaceError(
            error.kind,
            `${error.message}; removing the new workspace failed: ${cleanup.message}`,
            {
              hook: error.hook,
              output: error.output,
            },
          ),
        };
      }
    }
    return { ok: true, workspace };
  }

  /** Deletes a workspace directory after re-checking it is a real directory directly under the root. */
  async #deleteDirectory(workspace: string): Promise<WorkspaceError | null> {
    const root = resolveExisting(this.#root);
    if (!isDirectChild(root, workspace)) {
      return new WorkspaceError(
        'escape',
        `refusing to remove ${workspace}: not a direct child of the root ${root}`,
      );
    }
    const found = await inspect(workspace);
    if (found.kind === 'missing') return null;
    if (found.kind !== 'directory') return found.error;
    try {
      await fsp.rm(workspace, { recursive: true, force: true, maxRetries: 2 });
      return null;
    } catch (error) {
      return new WorkspaceError('io', `cannot remove workspace ${workspace}: ${errorMessage(error)}`, {
        cause: error,
      });
    }
  }

  /** Why `workspace` is not a usable workspace directory, or null when it is. */
  async #workspaceProblem(workspace: string): Promise<string | null> {
    if (!path.isAbsolute(workspace)) return `workspace path ${workspace} is not absolute`;
    const root = resolveExisting(this.#root);
    const resolved = path.resolve(workspace);
    if (!isDirectChild(root, resolved))
      return `${resolved} is not a direct child of the workspace root ${root}`;
    const found = await inspect(resolved);
    if (found.kind === 'missing') return `workspace ${resolved} does not exist`;
    if (found.kind !== 'directory') return found.error.message;
    return null;
  }

  async #run(
    hook: string,
    script: string,
    cwd: string,
    issue: IssueRef,
    attempt: number | null,
    signal?: AbortSignal,
  ): Promise<HookResult> {
    const env = hookEnv(this.#baseEnv, {
      issueId: issue.id,
      identifier: issue.identifier,
      workspace: cwd,
      attempt,
    });
    const result = await runHook(script, {
      cwd,
      env,
      timeoutMs: this.#hooks.timeoutMs,
      ...(signal === undefined ? {} : { signal }),
    });
    this.#report(hook, issue.identifier, result);
    return result;
  }

  #report(hook: string, issueIdentifier: string, result: HookResult): void {
    try {
      this.#onHook?.({ hook, issueIdentifier, result });
    } catch {
      // An observer's bug must not change a workspace operation's outcome.
    }
  }
}

type Inspection = { kind: 'missing' } | { kind: 'directory' } | { kind: 'refused'; error: WorkspaceError };

/** What sits at a workspace path, without following a symlink there. */
async function inspect(workspace: string): Promise<Inspection> {
  let info: fs.Stats;
  try {
    info = await fsp.lstat(workspace);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return { kind: 'missing' };
    return {
      kind: 'refused',
      error: new WorkspaceError('io', `cannot inspect workspace ${workspace}: ${errorMessage(error)}`, {
        cause: error,
      }),
    };
  }
  if (info.isSymbolicLink()) {
    return {
      kind: 'refused',
      error: new WorkspaceError(
        'symlink',
        `workspace path ${workspace} is a symlink; refusing to use or remove it`,
      ),
    };
  }
  if (!info.isDirectory()) {
    return {
      kind: 'refused',
      error: new WorkspaceError('conflict', `workspace path ${workspace} exists and is not a directory`),
    };
  }
  return { kind: 'directory' };
}

/**
 * `p` made absolute with its longest existing prefix symlink-resolved, so the same
 * root gives the same paths before and after it is created.
 */
function resolveExisting(p: string): string {
  const missing: string[] = [];
  let current = path.resolve(p);
  for (;;) {
    try {
      return path.join(fs.realpathSync.native(current), ...missing);
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return path.resolve(p);
      missing.unshift(path.basename(current));
      current = parent;
    }
  }
}

/** True when `candidate` is exactly one segment below `root` (never the root itself, never outside). */
function isDirectChild(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return (
    relative !== '' &&
    relative !== '.' &&
    relative !== '..' &&
    !relative.startsWith(`..${path.sep}`) &&
    !path.isAbsolute(relative) &&
    !relative.includes(path.sep) &&
    path.dirname(candidate) === root
  );
}

/** True for a directory name the manager could have made: its own key. */
export function isOwnKey(name: string): boolean {
  const key = workspaceKey(name);
  return key.ok && key.key === name;
}

/** The error for a hook result that is not ok: `hook_timeout` or `hook_failed`, with the hook's output. */
export function hookError(hook: string, result: HookResult): WorkspaceError {
  const what = result.timedOut
    ? 'timed out'
    : result.exitCode !== null
      ? `exited with code ${result.exitCode}`
      : result.signal !== null
        ? `was killed by ${result.signal}`
        : 'did not run';
  return new WorkspaceError(result.timedOut ? 'hook_timeout' : 'hook_failed', `${hook} hook ${what}`, {
    hook,
    output: result.output,
  });
}

function fail(kind: WorkspaceError['kind'], message: string, cause?: unknown): Failure {
  return { ok: false, error: new WorkspaceError(kind, message, cause === undefined ? {} : { cause }) };
}

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
