/**
 * The workspace lifecycle, written once for every place workspaces live: one
 * directory per issue, created once and reused across retries (after_create only
 * for the creator, its failure removes the new directory), before_run and
 * after_run around each run, before_remove then deletion when the issue is done.
 * Creation and removal of one key are serialised, because two runs of one issue
 * must never create and remove its directory at once. A hook that could not be
 * run because the host was unreachable fails as `host_unreachable`, never as a
 * hook that failed. Observers of hook results can never change an outcome.
 *
 * A directory serves one issue's live session at a time: a key in use by one issue's
 * run is refused to any other issue (`busy`), for a run or a removal. A workspace
 * an earlier version named by the old, colliding rule is adopted (renamed to the
 * current key) only when the owner check says it was this issue's.
 */
import type { HooksConfig } from '../workflow/config.js';
import { WorkspaceError } from './errors.js';
import { type HookResult, hookEnv } from './hooks.js';
import { KeyLock } from './key-lock.js';
import { isWorkspaceKey, legacyWorkspaceKey, workspaceKey } from './keys.js';
import { type Failure, type HookRun, notRun, type Outcome, type WorkspacePlace } from './place.js';

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

/** Called after every hook run (and for a hook refused or not run); must not throw. */
export type HookObserver = (event: { hook: string; issueIdentifier: string; result: HookResult }) => void;

type IssueRef = { id: string; identifier: string };

/**
 * Whether the directory at `path`, named by the old key rule, was `issueId`'s own
 * (no other issue ever ran there); absent: old-named workspaces are never adopted.
 */
export type LegacyOwnerCheck = (issueId: string, path: string) => boolean;

/** What both managers pass to the lifecycle besides their place. */
export interface LifecycleOptions {
  hooks: HooksConfig;
  /** Called after every hook run (and for a hook refused or not run); must not throw. */
  onHook?: HookObserver;
  /** Whether an old-named workspace was the issue's own; absent: never adopted. */
  ownsLegacy?: LegacyOwnerCheck;
  /** Put in every hook's environment so a restarted service can find hooks left running; absent: none. */
  ownerTag?: string;
}

/** prepare, afterRun, remove and existingKeys on any `WorkspacePlace`; the base of both managers. */
export class WorkspaceLifecycle {
  readonly #place: WorkspacePlace;
  readonly #hooks: HooksConfig;
  readonly #onHook: HookObserver | undefined;
  /** Creations and removals of one key never overlap in this process. */
  readonly #locks = new KeyLock();
  /** Key → the issue whose run is using it, from `prepare` until `afterRun`. */
  readonly #live = new Map<string, IssueRef>();
  readonly #ownsLegacy: LegacyOwnerCheck | undefined;
  readonly #ownerTag: string | null;

  constructor(place: WorkspacePlace, options: LifecycleOptions) {
    this.#place = place;
    this.#hooks = options.hooks;
    this.#onHook = options.onHook;
    this.#ownsLegacy = options.ownsLegacy;
    this.#ownerTag = options.ownerTag ?? null;
  }

  /** The planned path for an identifier (escape-checked; how far the root is resolved is the place's affair). */
  pathFor(identifier: string): Outcome<{ path: string; key: string }> | Failure {
    const key = workspaceKey(identifier);
    if (!key.ok) return key;
    const planned = this.#place.pathOf(key.key);
    if (!planned.ok) return planned;
    return { ok: true, path: planned.path, key: key.key };
  }

  /**
   * Ensure dir (atomic mkdir: createdNow only for the creator) → after_create when
   * createdNow (failure: the new dir is removed, error) → before_run (failure: error,
   * dir kept). `signal` aborts a running hook (its group is killed; the hook fails).
   */
  async prepare(
    issue: IssueRef,
    attempt: number,
    signal?: AbortSignal,
  ): Promise<Outcome<{ workspace: PreparedWorkspace }> | Failure> {
    const planned = this.pathFor(issue.identifier);
    if (!planned.ok) return planned;
    const key = planned.key;
    const created = await this.#locks.run(key, async () => {
      const user = this.#live.get(key);
      if (user !== undefined && !sameIssue(user, issue)) {
        return { ok: false as const, error: busyError(planned.path, user) };
      }
      const made = await this.#create(issue, key, attempt, signal);
      if (made.ok) this.#live.set(key, { id: issue.id, identifier: issue.identifier });
      return made;
    });
    if (!created.ok) return created;
    const workspace = created.workspace;

    const beforeRun = this.#hooks.beforeRun;
    if (beforeRun !== null) {
      const run = await this.#run(HOOK_NAMES.beforeRun, beforeRun, workspace.path, issue, attempt, signal);
      if (!run.result.ok) {
        this.#release(key, issue);
        return { ok: false, error: runError(HOOK_NAMES.beforeRun, run) };
      }
    }
    return { ok: true, workspace };
  }

  /** Ends `issue`'s use of the key (a run's end); another issue's use is left alone. */
  #release(key: string, issue: IssueRef): void {
    const user = this.#live.get(key);
    if (user !== undefined && sameIssue(user, issue)) this.#live.delete(key);
  }

  /**
   * after_run, once the workspace is checked to still be a directory directly under
   * the root; failures, timeouts and an unreachable host come back in the result,
   * never thrown; null when no hook is configured.
   */
  async afterRun(
    workspace: string,
    issue: IssueRef,
    attempt: number,
    extraEnv: Record<string, string> = {},
  ): Promise<HookResult | null> {
    try {
      return await this.#afterRun(workspace, issue, attempt, extraEnv);
    } finally {
      const key = workspaceKey(issue.identifier);
      if (key.ok) this.#release(key.key, issue);
    }
  }

  async #afterRun(
    workspace: string,
    issue: IssueRef,
    attempt: number,
    extraEnv: Record<string, string>,
  ): Promise<HookResult | null> {
    const afterRun = this.#hooks.afterRun;
    if (afterRun === null) return null;
    const checked = await this.#place.check(workspace);
    if (!checked.ok) {
      const result = notRun(
        checked.unreachable
          ? `[hook not run: ${checked.message}]`
          : `[after_run not run: ${checked.message}]`,
      );
      this.#report(HOOK_NAMES.afterRun, issue.identifier, result);
      return result;
    }
    const run = await this.#run(
      HOOK_NAMES.afterRun,
      afterRun,
      checked.path,
      issue,
      attempt,
      undefined,
      extraEnv,
    );
    return run.result;
  }

  /**
   * Runs a command in the issue's workspace the way hooks run (process group, exactly the hook
   * environment, capped output) with its own timeout: the self-review's verification commands.
   */
  async runCommand(
    workspace: string,
    issue: IssueRef,
    attempt: number,
    command: { script: string; timeoutMs: number; signal?: AbortSignal },
  ): Promise<HookResult> {
    const env = hookEnv(this.#place.hookBaseEnv, {
      issueId: issue.id,
      identifier: issue.identifier,
      workspace,
      attempt,
      sshHost: this.#place.hostName,
      ownerTag: this.#ownerTag,
    });
    const run = await this.#place.runHook(command.script, {
      cwd: workspace,
      env,
      timeoutMs: command.timeoutMs,
      ...(command.signal === undefined ? {} : { signal: command.signal }),
    });
    return run.result;
  }

  /**
   * before_remove (failure ignored) then delete the directory; only real directories
   * directly under the root are ever removed. `removed` is true when a workspace
   * directory existed and is gone afterwards; a missing one is not an error.
   */
  async remove(
    identifier: string,
    issueId?: string,
  ): Promise<{ removed: boolean; error: WorkspaceError | null }> {
    const planned = this.pathFor(identifier);
    if (!planned.ok) return { removed: false, error: planned.error };
    const key = planned.key;
    return this.#locks.run(key, async () => {
      // The issue's own workspace is removed only after its run ended (the owner's order);
      // another issue's live session in it is never removed from under it.
      const user = this.#live.get(key);
      if (user !== undefined && !sameIssue(user, { id: issueId ?? user.id, identifier })) {
        return { removed: false, error: busyError(planned.path, user) };
      }
      const found = await this.#place.find(key);
      if (found.kind === 'missing') return { removed: false, error: null };
      if (found.kind === 'refused') return { removed: false, error: found.error };

      const beforeRemove = this.#hooks.beforeRemove;
      if (beforeRemove !== null) {
        const issue = { id: issueId ?? '', identifier };
        await this.#run(HOOK_NAMES.beforeRemove, beforeRemove, found.path, issue, null);
      }
      const error = await this.#place.delete({ key, path: found.path });
      return { removed: error === null, error };
    });
  }

  /** Keys that have a real directory under the root, sorted (for start-up sweeps); [] when the root does not exist. */
  async existingKeys(): Promise<string[]> {
    return (await this.#place.listNames()).filter(isWorkspaceKey).sort();
  }

  /**
   * Renames the issue's old-named workspace to its key when there is one, nothing is at
   * the key yet, no run uses the old name and the owner check says it was this issue's.
   * A failed adoption leaves the old directory alone; a new workspace is made instead.
   */
  async #adoptLegacy(issue: IssueRef, key: string): Promise<void> {
    const legacy = legacyWorkspaceKey(issue.identifier);
    if (legacy === null || this.#ownsLegacy === undefined) return;
    await this.#locks.run(legacy, async () => {
      if (this.#live.has(legacy)) return;
      const old = await this.#place.find(legacy);
      if (old.kind !== 'directory' || (await this.#place.find(key)).kind !== 'missing') return;
      if (!this.#ownerCheck(issue.id, old.path)) return;
      await this.#place.rename(legacy, key);
    });
  }

  /** The owner check's answer; a check that fails (a store error) is a no. */
  #ownerCheck(issueId: string, path: string): boolean {
    try {
      return this.#ownsLegacy?.(issueId, path) === true;
    } catch {
      return false;
    }
  }

  /** Root → directory → after_create, under the key's lock. */
  async #create(
    issue: IssueRef,
    key: string,
    attempt: number,
    signal: AbortSignal | undefined,
  ): Promise<Outcome<{ workspace: PreparedWorkspace }> | Failure> {
    await this.#adoptLegacy(issue, key);
    const ensured = await this.#place.ensure(key);
    if (!ensured.ok) return ensured;
    const workspace = { path: ensured.path, createdNow: ensured.createdNow };

    const afterCreate = this.#hooks.afterCreate;
    if (workspace.createdNow && afterCreate !== null) {
      const run = await this.#run(
        HOOK_NAMES.afterCreate,
        afterCreate,
        workspace.path,
        issue,
        attempt,
        signal,
      );
      if (!run.result.ok) {
        const error = runError(HOOK_NAMES.afterCreate, run);
        const cleanup = await this.#place.delete({ key, path: workspace.path });
        if (cleanup === null) return { ok: false, error };
        return {
          ok: false,
          error: new WorkspaceError(
            error.kind,
            `${error.message}; removing the new workspace failed: ${cleanup.message}`,
            { hook: error.hook, output: error.output },
          ),
        };
      }
    }
    return { ok: true, workspace };
  }

  /** Runs a hook in `cwd` with the restricted hook environment, and reports it. */
  async #run(
    hook: string,
    script: string,
    cwd: string,
    issue: IssueRef,
    /** null for a hook outside any run (before_remove). */
    attempt: number | null,
    signal?: AbortSignal,
    extraEnv: Record<string, string> = {},
  ): Promise<HookRun> {
    const env = {
      ...hookEnv(this.#place.hookBaseEnv, {
        issueId: issue.id,
        identifier: issue.identifier,
        workspace: cwd,
        attempt,
        sshHost: this.#place.hostName,
        ownerTag: this.#ownerTag,
      }),
      ...extraEnv,
    };
    const run = await this.#place.runHook(script, {
      cwd,
      env,
      timeoutMs: this.#hooks.timeoutMs,
      ...(signal === undefined ? {} : { signal }),
    });
    this.#report(hook, issue.identifier, run.result);
    return run;
  }

  #report(hook: string, issueIdentifier: string, result: HookResult): void {
    try {
      this.#onHook?.({ hook, issueIdentifier, result });
    } catch {
      // An observer's bug must not change a workspace operation's outcome.
    }
  }
}

/** The error for a workspace another issue's run is using. */
function busyError(path: string, user: IssueRef): WorkspaceError {
  return new WorkspaceError('busy', `workspace ${path} is in use by the run of ${user.identifier}`);
}

function sameIssue(a: IssueRef, b: IssueRef): boolean {
  return a.id === b.id && a.identifier === b.identifier;
}

/** The error for a hook result that is not ok: `hook_timeout` or `hook_failed`, with the hook's output. */
function hookError(hook: string, result: HookResult): WorkspaceError {
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

/** The error for a hook that did not succeed: `host_unreachable` when the host was down, else `hookError`. */
function runError(hook: string, run: HookRun): WorkspaceError {
  if (run.unreachable === null) return hookError(hook, run.result);
  return new WorkspaceError('host_unreachable', `${hook} hook not run: ${run.unreachable}`, {
    hook,
    output: run.result.output,
  });
}
