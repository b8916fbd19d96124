/**
 * Workspaces on an SSH worker host: the same lifecycle as the local manager (one
 * directory per issue directly under the root, after_create once, before_run and
 * after_run around each run, before_remove then deletion), but every filesystem
 * action is a fixed script run on the host, because the root exists only there and
 * its symlinks resolve only there. Nothing here touches the local filesystem. Two
 * traps shape it: the root's real location is learnt from the host (`cd -P`), so
 * containment is checked where the directories are; and a host that cannot be
 * reached is its own error kind (`host_unreachable`), never mistaken for a hook
 * that failed or a directory that is missing.
 */
import path from 'node:path';
import type { RemoteFailure, RemoteHost, RemoteScriptResult } from '../domain/remote.js';
import type { HooksConfig } from '../workflow/config.js';
import { WorkspaceError } from './errors.js';
import { DEFAULT_HOOK_TIMEOUT_MS, HOOK_OUTPUT_LIMIT_BYTES, type HookResult, hookEnv } from './hooks.js';
import { KeyLock } from './key-lock.js';
import { workspaceKey } from './keys.js';
import { HOOK_NAMES, hookError, isOwnKey, type PreparedWorkspace } from './manager.js';
import {
  DELETE_SCRIPT,
  INSPECT_SCRIPT,
  KEY_VAR,
  LIST_SCRIPT,
  PARENT_VAR,
  PREPARE_SCRIPT,
  parseAnswer,
  ROOT_VAR,
} from './remote-scripts.js';

/** Time allowed for creating, inspecting or listing on the host. */
export const REMOTE_CONTROL_TIMEOUT_MS = 60_000;
/** Time allowed for deleting a workspace on the host (a large checkout takes a while). */
export const REMOTE_DELETE_TIMEOUT_MS = 10 * 60_000;
/** Output kept from a control script (errors and one path). */
const CONTROL_OUTPUT_LIMIT_BYTES = 64 * 1024;
/** Output kept from the key listing: room for far more workspaces than any host holds. */
const LIST_OUTPUT_LIMIT_BYTES = 32 * 1024 * 1024;

export interface RemoteWorkspaceManagerOptions {
  /** The host the workspaces live on. */
  host: RemoteHost;
  /** Absolute workspace root on the host (`~` already resolved); not `/`. */
  root: string;
  hooks: HooksConfig;
  /** Called after every hook run (and for a hook refused or not run); must not throw. */
  onHook?: (event: { hook: string; issueIdentifier: string; result: HookResult }) => void;
}

type IssueRef = { id: string; identifier: string };
type Outcome<T> = { ok: true } & T;
type Failure = { ok: false; error: WorkspaceError };
/** A hook's result, and the host's message when it was not run because the host is unreachable. */
type HookRun = { result: HookResult; unreachable: string | null };
type Answer = { ok: true; status: string; payload: string } | Failure;

export class RemoteWorkspaceManager {
  readonly #host: RemoteHost;
  /** The root as configured, normalised (no trailing slash); its real location is learnt on the host. */
  readonly #root: string;
  readonly #hooks: HooksConfig;
  readonly #onHook: RemoteWorkspaceManagerOptions['onHook'];
  /** Creations and removals of one key never overlap in this process. */
  readonly #locks = new KeyLock();

  constructor(opts: RemoteWorkspaceManagerOptions) {
    this.#host = opts.host;
    this.#root = normaliseRoot(opts.root);
    this.#hooks = opts.hooks;
    this.#onHook = opts.onHook;
  }

  /**
   * The workspace path for an identifier under the root as configured (the host is
   * not asked, so symlinks in the root are not resolved; `prepare` returns the real
   * path). Fails with `escape` for a relative root or the root `/`.
   */
  pathFor(identifier: string): Outcome<{ path: string; key: string }> | Failure {
    const key = workspaceKey(identifier);
    if (!key.ok) return key;
    const rootProblem = this.#rootProblem();
    if (rootProblem !== null) return { ok: false, error: rootProblem };
    return { ok: true, path: `${this.#root}/${key.key}`, key: key.key };
  }

  /**
   * On the host: ensure the directory (atomic mkdir: createdNow only for the creator)
   * → after_create when createdNow (failure: the new dir is removed, error) →
   * before_run (failure: error, dir kept). An unreachable host fails with
   * `host_unreachable`. `signal` aborts a running hook.
   */
  async prepare(
    issue: IssueRef,
    attempt: number | null,
    signal?: AbortSignal,
  ): Promise<Outcome<{ workspace: PreparedWorkspace }> | Failure> {
    const planned = this.pathFor(issue.identifier);
    if (!planned.ok) return planned;
    const created = await this.#locks.run(planned.key, () =>
      this.#create(issue, planned.key, attempt, signal),
    );
    if (!created.ok) return created;
    const workspace = created.workspace;

    const beforeRun = this.#hooks.beforeRun;
    if (beforeRun !== null) {
      const run = await this.#run(HOOK_NAMES.beforeRun, beforeRun, workspace.path, issue, attempt, signal);
      if (!run.result.ok) return { ok: false, error: runError(HOOK_NAMES.beforeRun, run) };
    }
    return { ok: true, workspace };
  }

  /**
   * after_run, once the workspace is checked on the host to still be a directory
   * directly under the root; failures, timeouts and an unreachable host come back
   * in the result, never thrown; null when no hook is configured.
   */
  async afterRun(workspace: string, issue: IssueRef, attempt: number | null): Promise<HookResult | null> {
    const afterRun = this.#hooks.afterRun;
    if (afterRun === null) return null;
    const problem = await this.#workspaceProblem(workspace);
    if (problem !== null) {
      const result = notRun(
        problem.unreachable
          ? `[hook not run: ${problem.message}]`
          : `[after_run not run: ${problem.message}]`,
      );
      this.#report(HOOK_NAMES.afterRun, issue.identifier, result);
      return result;
    }
    const run = await this.#run(HOOK_NAMES.afterRun, afterRun, normaliseWorkspace(workspace), issue, attempt);
    return run.result;
  }

  /**
   * On the host: before_remove (failure ignored) then delete the directory, only
   * when it is a real directory directly under the root. `removed` is true when it
   * existed and is gone afterwards; a missing one is not an error.
   */
  async remove(
    identifier: string,
    issueId?: string,
  ): Promise<{ removed: boolean; error: WorkspaceError | null }> {
    const planned = this.pathFor(identifier);
    if (!planned.ok) return { removed: false, error: planned.error };
    const key = planned.key;
    return this.#locks.run(key, async () => {
      const found = await this.#script(INSPECT_SCRIPT, { [KEY_VAR]: key, [PARENT_VAR]: this.#root });
      if (!found.ok) return { removed: false, error: found.error };
      switch (found.status) {
        case 'no_root':
        case 'missing':
          return { removed: false, error: null };
        case 'directory':
          break;
        default:
          return { removed: false, error: inspectionError(found.status, found.payload, planned.path) };
      }

      const beforeRemove = this.#hooks.beforeRemove;
      if (beforeRemove !== null) {
        const issue = { id: issueId ?? '', identifier };
        await this.#run(HOOK_NAMES.beforeRemove, beforeRemove, found.payload, issue, null);
      }
      const error = await this.#delete(key);
      return { removed: error === null, error };
    });
  }

  /**
   * Keys that have a real directory under the root on the host, sorted; [] when
   * the root does not exist. Throws a WorkspaceError (`io`, `escape` or
   * `host_unreachable`) when the root cannot be listed.
   */
  async existingKeys(): Promise<string[]> {
    const rootProblem = this.#rootProblem();
    if (rootProblem !== null) throw rootProblem;
    const listed = await this.#script(LIST_SCRIPT, {}, { maxOutputBytes: LIST_OUTPUT_LIMIT_BYTES });
    if (!listed.ok) throw listed.error;
    switch (listed.status) {
      case 'no_root':
        return [];
      case 'keys':
        return listed.payload
          .split('\n')
          .filter((name) => name !== '' && isOwnKey(name))
          .sort();
      case 'io':
        throw new WorkspaceError('io', listed.payload);
      default:
        throw unexpected(listed.status, 'listing the workspace root');
    }
  }

  /** Root → directory → after_create, under the key's lock. */
  async #create(
    issue: IssueRef,
    key: string,
    attempt: number | null,
    signal: AbortSignal | undefined,
  ): Promise<Outcome<{ workspace: PreparedWorkspace }> | Failure> {
    const answer = await this.#script(PREPARE_SCRIPT, { [KEY_VAR]: key });
    if (!answer.ok) return answer;
    let createdNow: boolean;
    switch (answer.status) {
      case 'created':
        createdNow = true;
        break;
      case 'existing':
        createdNow = false;
        break;
      case 'fs_root':
        return fail(
          'escape',
          `workspace root ${this.#root} resolves to the filesystem root on ${this.#host.name}; refusing to place workspaces there`,
        );
      case 'symlink':
      case 'conflict':
        return { ok: false, error: inspectionError(answer.status, answer.payload, answer.payload) };
      case 'io':
        return fail('io', `${answer.payload} (on ${this.#host.name})`);
      default:
        return { ok: false, error: unexpected(answer.status, 'creating the workspace') };
    }
    const realRoot = answer.payload;
    if (!path.posix.isAbsolute(realRoot) || realRoot === '/') {
      return fail('escape', `${this.#host.name} reported ${JSON.stringify(realRoot)} as the workspace root`);
    }
    const workspace = { path: `${realRoot}/${key}`, createdNow };

    const afterCreate = this.#hooks.afterCreate;
    if (createdNow && afterCreate !== null) {
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
        const cleanup = await this.#delete(key);
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

  /** Deletes the key's directory on the host when it is a real directory; gone already is not an error. */
  async #delete(key: string): Promise<WorkspaceError | null> {
    const answer = await this.#script(
      DELETE_SCRIPT,
      { [KEY_VAR]: key },
      { timeoutMs: REMOTE_DELETE_TIMEOUT_MS },
    );
    if (!answer.ok) return answer.error;
    switch (answer.status) {
      case 'removed':
      case 'gone':
        return null;
      case 'symlink':
      case 'conflict':
        return inspectionError(answer.status, answer.payload, answer.payload);
      case 'io':
        return new WorkspaceError('io', `${answer.payload} (on ${this.#host.name})`);
      default:
        return unexpected(answer.status, 'removing the workspace');
    }
  }

  /** Why `workspace` is not a usable workspace directory on the host, or null when it is. */
  async #workspaceProblem(workspace: string): Promise<{ message: string; unreachable: boolean } | null> {
    const problem = (message: string) => ({ message, unreachable: false });
    if (!path.posix.isAbsolute(workspace)) return problem(`workspace path ${workspace} is not absolute`);
    const rootProblem = this.#rootProblem();
    if (rootProblem !== null) return problem(rootProblem.message);
    const normalised = normaliseWorkspace(workspace);
    const name = path.posix.basename(normalised);
    const parent = path.posix.dirname(normalised);
    const notChild = problem(`${normalised} is not a direct child of the workspace root ${this.#root}`);
    if (!isOwnKey(name)) return notChild;
    const found = await this.#script(INSPECT_SCRIPT, { [KEY_VAR]: name, [PARENT_VAR]: parent });
    if (!found.ok) {
      return { message: found.error.message, unreachable: found.error.kind === 'host_unreachable' };
    }
    switch (found.status) {
      case 'directory':
        return null;
      case 'no_root':
        return problem(`workspace root ${this.#root} does not exist on ${this.#host.name}`);
      case 'outside':
        return notChild;
      case 'missing':
        return problem(`workspace ${normalised} does not exist on ${this.#host.name}`);
      default:
        return problem(inspectionError(found.status, found.payload, normalised).message);
    }
  }

  /** Runs a control script with the root in its environment and reads its framed answer. */
  async #script(
    script: string,
    vars: Record<string, string>,
    opts: { timeoutMs?: number; maxOutputBytes?: number } = {},
  ): Promise<Answer> {
    const ran = await this.#host.run({
      script,
      cwd: null,
      env: { [ROOT_VAR]: this.#root, ...vars },
      timeoutMs: opts.timeoutMs ?? REMOTE_CONTROL_TIMEOUT_MS,
      maxOutputBytes: opts.maxOutputBytes ?? CONTROL_OUTPUT_LIMIT_BYTES,
    });
    if (!ran.ok) return { ok: false, error: this.#hostError(ran) };
    const answer = parseAnswer(ran.result.output);
    if (answer === null) {
      return fail(
        'io',
        `workspace script on ${this.#host.name} ${describeEnd(ran.result)} without an answer: ${tail(ran.result.output)}`,
      );
    }
    return { ok: true, ...answer };
  }

  /** Runs a hook on the host in `cwd` and reports it. */
  async #run(
    hook: string,
    script: string,
    cwd: string,
    issue: IssueRef,
    attempt: number | null,
    signal?: AbortSignal,
  ): Promise<HookRun> {
    const run = await this.#runOnHost(script, cwd, issue, attempt, signal);
    this.#report(hook, issue.identifier, run.result);
    return run;
  }

  async #runOnHost(
    script: string,
    cwd: string,
    issue: IssueRef,
    attempt: number | null,
    signal: AbortSignal | undefined,
  ): Promise<HookRun> {
    if (signal?.aborted) {
      return { result: notRun('[hook could not start: aborted before it started]'), unreachable: null };
    }
    const timeoutMs =
      Number.isFinite(this.#hooks.timeoutMs) && this.#hooks.timeoutMs > 0
        ? this.#hooks.timeoutMs
        : DEFAULT_HOOK_TIMEOUT_MS;
    // The host's login supplies PATH, HOME and the like; nothing of this machine's environment goes.
    const env = hookEnv(
      {},
      {
        issueId: issue.id,
        identifier: issue.identifier,
        workspace: cwd,
        attempt,
        sshHost: this.#host.name,
      },
    );
    const ran = await this.#host.run({
      script,
      cwd,
      env,
      timeoutMs,
      maxOutputBytes: HOOK_OUTPUT_LIMIT_BYTES,
      ...(signal === undefined ? {} : { signal }),
    });
    if (!ran.ok) {
      return {
        result: notRun(`[hook not run: ${ran.message}]`),
        unreachable: ran.reason === 'unreachable' ? ran.message : null,
      };
    }
    const { exitCode, timedOut } = ran.result;
    const aborted = signal?.aborted === true && !timedOut && exitCode === null;
    const notes: string[] = [];
    const cut = Buffer.byteLength(ran.result.output, 'utf8') >= HOOK_OUTPUT_LIMIT_BYTES;
    // A host may note the cut itself; the contract only promises the head is kept.
    if (cut && !ran.result.output.includes('[output truncated at ')) {
      notes.push(`[output truncated at ${HOOK_OUTPUT_LIMIT_BYTES} bytes]`);
    }
    if (timedOut) notes.push(`[hook timed out after ${timeoutMs} ms; its process group was killed]`);
    if (aborted) notes.push('[hook aborted; its process group was killed]');
    return {
      result: {
        ok: exitCode === 0 && !timedOut && !aborted,
        exitCode,
        signal: ran.result.signal,
        timedOut,
        output: [ran.result.output, ...notes].filter((part) => part !== '').join('\n'),
        durationMs: ran.result.durationMs,
      },
      unreachable: null,
    };
  }

  #hostError(failure: RemoteFailure): WorkspaceError {
    switch (failure.reason) {
      case 'unreachable':
        return new WorkspaceError('host_unreachable', failure.message);
      case 'bad_cwd':
      case 'failed':
        return new WorkspaceError('io', `workspace script on ${this.#host.name} failed: ${failure.message}`);
      default:
        return assertNever(failure.reason);
    }
  }

  #rootProblem(): WorkspaceError | null {
    if (!path.posix.isAbsolute(this.#root)) {
      return new WorkspaceError(
        'escape',
        `workspace root ${this.#root} on ${this.#host.name} is not absolute`,
      );
    }
    if (this.#root === '/') {
      return new WorkspaceError(
        'escape',
        `workspace root ${this.#root} is the filesystem root; refusing to place workspaces there`,
      );
    }
    return null;
  }

  #report(hook: string, issueIdentifier: string, result: HookResult): void {
    try {
      this.#onHook?.({ hook, issueIdentifier, result });
    } catch {
      // An observer's bug must not change a workspace operation's outcome.
    }
  }
}

/** The error for a hook that did not succeed: `host_unreachable` when the host was down, else as locally. */
function runError(hook: string, run: HookRun): WorkspaceError {
  if (run.unreachable === null) return hookError(hook, run.result);
  return new WorkspaceError('host_unreachable', `${hook} hook not run: ${run.unreachable}`, {
    hook,
    output: run.result.output,
  });
}

/** The error for what an inspection found at a workspace path, worded as the local manager words it. */
function inspectionError(status: string, found: string, workspace: string): WorkspaceError {
  const where = found === '' ? workspace : found;
  switch (status) {
    case 'symlink':
      return new WorkspaceError(
        'symlink',
        `workspace path ${where} is a symlink; refusing to use or remove it`,
      );
    case 'conflict':
      return new WorkspaceError('conflict', `workspace path ${where} exists and is not a directory`);
    case 'outside':
      return new WorkspaceError('escape', `workspace path ${workspace} is not under the root ${where}`);
    default:
      return unexpected(status, `inspecting ${workspace}`);
  }
}

function unexpected(status: string, doing: string): WorkspaceError {
  return new WorkspaceError('io', `unexpected answer ${JSON.stringify(status)} while ${doing}`);
}

function notRun(output: string): HookResult {
  return { ok: false, exitCode: null, signal: null, timedOut: false, output, durationMs: 0 };
}

function normaliseRoot(root: string): string {
  if (root === '') return root;
  const normalised = path.posix.normalize(root);
  return normalised.length > 1 && normalised.endsWith('/') ? normalised.slice(0, -1) : normalised;
}

function normaliseWorkspace(workspace: string): string {
  return normaliseRoot(workspace);
}

function describeEnd(result: RemoteScriptResult): string {
  if (result.timedOut) return 'timed out';
  if (result.exitCode !== null) return `exited with code ${result.exitCode}`;
  if (result.signal !== null) return `was killed by ${result.signal}`;
  return 'ended';
}

/** The last few hundred characters of a script's output, for an error message. */
function tail(output: string): string {
  const trimmed = output.trim();
  return trimmed.length <= 500 ? trimmed || '(no output)' : `…${trimmed.slice(-500)}`;
}

function fail(kind: WorkspaceError['kind'], message: string): Failure {
  return { ok: false, error: new WorkspaceError(kind, message) };
}

function assertNever(value: never): never {
  throw new Error(`unexpected value: ${String(value)}`);
}
