/**
 * Workspaces on an SSH worker host: every filesystem action is a fixed script run
 * on the host, because the root exists only there and its symlinks resolve only
 * there. Nothing here touches the local filesystem. Two traps shape it: the root's
 * real location is learnt from the host (`cd -P`), so containment is checked where
 * the directories are; and a host that cannot be reached is its own error kind
 * (`host_unreachable`), never mistaken for a hook that failed or a directory that
 * is missing.
 */
import path from 'node:path';
import type { RemoteFailure, RemoteHost, RemoteScriptResult } from '../domain/remote.js';
import { WorkspaceError } from './errors.js';
import { DEFAULT_HOOK_TIMEOUT_MS, HOOK_OUTPUT_LIMIT_BYTES } from './hooks.js';
import { isWorkspaceKey } from './keys.js';
import {
  type Checked,
  type Failure,
  type Found,
  type HookRun,
  notRun,
  type Outcome,
  type PlacedWorkspace,
  type WorkspacePlace,
} from './place.js';
import {
  DELETE_SCRIPT,
  INSPECT_SCRIPT,
  KEY_VAR,
  LIST_SCRIPT,
  PARENT_VAR,
  PREPARE_SCRIPT,
  parseAnswer,
  RENAME_SCRIPT,
  ROOT_VAR,
  TARGET_KEY_VAR,
} from './remote-scripts.js';

/** Time allowed for creating, inspecting or listing on the host. */
export const REMOTE_CONTROL_TIMEOUT_MS = 60_000;
/** Time allowed for deleting a workspace on the host (a large checkout takes a while). */
export const REMOTE_DELETE_TIMEOUT_MS = 10 * 60_000;
/** Output kept from a control script (errors and one path). */
const CONTROL_OUTPUT_LIMIT_BYTES = 64 * 1024;
/** Output kept from the key listing: room for far more workspaces than any host holds. */
const LIST_OUTPUT_LIMIT_BYTES = 32 * 1024 * 1024;

type Answer = { ok: true; status: string; payload: string } | Failure;

export class RemotePlace implements WorkspacePlace {
  /** The host's login supplies PATH, HOME and the like; nothing of this machine's environment goes. */
  readonly hookBaseEnv: Record<string, string | undefined> = {};
  readonly hostName: string;
  readonly #host: RemoteHost;
  /** The root as configured, normalised (no trailing slash); its real location is learnt on the host. */
  readonly #root: string;

  /** `root` is absolute on the host (`~` already resolved) and not `/`; other roots fail every call. */
  constructor(host: RemoteHost, root: string) {
    this.#host = host;
    this.hostName = host.name;
    this.#root = normalise(root);
  }

  /**
   * The key's path under the root as configured (the host is not asked, so symlinks
   * in the root are not resolved; `ensure` returns the real path). Fails with
   * `escape` for a relative root or the root `/`.
   */
  pathOf(key: string): Outcome<{ path: string }> | Failure {
    const rootProblem = this.#rootProblem();
    if (rootProblem !== null) return { ok: false, error: rootProblem };
    return { ok: true, path: `${this.#root}/${key}` };
  }

  /** Runs the prepare script; the path is under the root's real location on the host. */
  async ensure(key: string): Promise<Outcome<{ path: string; createdNow: boolean }> | Failure> {
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
    return { ok: true, path: `${realRoot}/${key}`, createdNow };
  }

  /** Runs the inspect script on the key under the root; an unreachable host is `refused`. */
  async find(key: string): Promise<Found> {
    const found = await this.#script(INSPECT_SCRIPT, { [KEY_VAR]: key, [PARENT_VAR]: this.#root });
    if (!found.ok) return { kind: 'refused', error: found.error };
    switch (found.status) {
      case 'no_root':
      case 'missing':
        return { kind: 'missing' };
      case 'directory':
        return { kind: 'directory', path: found.payload };
      default:
        return {
          kind: 'refused',
          error: inspectionError(found.status, found.payload, `${this.#root}/${key}`),
        };
    }
  }

  /** The path must name one of our keys whose parent resolves, on the host, to the root's real location. */
  async check(workspace: string): Promise<Checked> {
    const problem = (message: string): Checked => ({ ok: false, message, unreachable: false });
    if (!path.posix.isAbsolute(workspace)) return problem(`workspace path ${workspace} is not absolute`);
    const rootProblem = this.#rootProblem();
    if (rootProblem !== null) return problem(rootProblem.message);
    const normalised = normalise(workspace);
    const name = path.posix.basename(normalised);
    const parent = path.posix.dirname(normalised);
    const notChild = problem(`${normalised} is not a direct child of the workspace root ${this.#root}`);
    if (!isWorkspaceKey(name)) return notChild;
    const found = await this.#script(INSPECT_SCRIPT, { [KEY_VAR]: name, [PARENT_VAR]: parent });
    if (!found.ok) {
      return {
        ok: false,
        message: found.error.message,
        unreachable: found.error.kind === 'host_unreachable',
      };
    }
    switch (found.status) {
      case 'directory':
        return { ok: true, path: normalised };
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

  /** Runs the delete script on the key (it re-checks on the host that it is a real directory). */
  async delete(workspace: PlacedWorkspace): Promise<WorkspaceError | null> {
    const answer = await this.#script(
      DELETE_SCRIPT,
      { [KEY_VAR]: workspace.key },
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

  /** Runs the rename script (it checks on the host that `from` is a real directory and `to` is free). */
  async rename(from: string, to: string): Promise<Outcome<{ path: string }> | Failure> {
    const answer = await this.#script(RENAME_SCRIPT, { [KEY_VAR]: from, [TARGET_KEY_VAR]: to });
    if (!answer.ok) return answer;
    switch (answer.status) {
      case 'renamed':
        return { ok: true, path: answer.payload };
      case 'io':
        return fail('io', `${answer.payload} (on ${this.#host.name})`);
      case 'missing':
      case 'taken':
        return fail('conflict', `cannot rename a workspace to ${answer.payload}: ${answer.status}`);
      default:
        return { ok: false, error: unexpected(answer.status, 'renaming a workspace') };
    }
  }

  /** Runs the list script; throws `io`, `escape` or `host_unreachable` when the root cannot be listed. */
  async listNames(): Promise<string[]> {
    const rootProblem = this.#rootProblem();
    if (rootProblem !== null) throw rootProblem;
    const listed = await this.#script(LIST_SCRIPT, {}, { maxOutputBytes: LIST_OUTPUT_LIMIT_BYTES });
    if (!listed.ok) throw listed.error;
    switch (listed.status) {
      case 'no_root':
        return [];
      case 'keys':
        return listed.payload.split('\n').filter((name) => name !== '');
      case 'io':
        throw new WorkspaceError('io', listed.payload);
      default:
        throw unexpected(listed.status, 'listing the workspace root');
    }
  }

  /** Runs the hook through `host.run`; a host that cannot be reached comes back as `unreachable`. */
  async runHook(
    script: string,
    opts: { cwd: string; env: Record<string, string>; timeoutMs: number; signal?: AbortSignal },
  ): Promise<HookRun> {
    const { signal } = opts;
    if (signal?.aborted) {
      return { result: notRun('[hook could not start: aborted before it started]'), unreachable: null };
    }
    const timeoutMs =
      Number.isFinite(opts.timeoutMs) && opts.timeoutMs > 0 ? opts.timeoutMs : DEFAULT_HOOK_TIMEOUT_MS;
    const ran = await this.#host.run({
      script,
      cwd: opts.cwd,
      env: opts.env,
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
      // The host went away under the hook: that is the host's failure, not the hook's.
      unreachable: ran.result.connectionLost
        ? `the connection to ${this.#host.name} was lost during the hook`
        : null,
    };
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
}

/** The error for what an inspection found at a workspace path, worded as the local place words it. */
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

/** A POSIX path normalised, without a trailing slash ('' stays '', so it is refused as relative). */
function normalise(p: string): string {
  if (p === '') return p;
  const normalised = path.posix.normalize(p);
  return normalised.length > 1 && normalised.endsWith('/') ? normalised.slice(0, -1) : normalised;
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
