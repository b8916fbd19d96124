/**
 * Workspaces on this machine's filesystem. The identifier is untrusted, so every
 * path is rebuilt from the sanitised key and checked against the symlink-resolved
 * root. A symlink at a workspace path is never followed, reused or removed (it
 * could point anywhere, even back inside the root), and deletion is `fs.rm` on the
 * directory itself, which unlinks symlinks inside it rather than descending
 * through them.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { WorkspaceError } from './errors.js';
import { runHook } from './hooks.js';
import type { Checked, Failure, Found, HookRun, Outcome, PlacedWorkspace, WorkspacePlace } from './place.js';

export class LocalPlace implements WorkspacePlace {
  readonly hookBaseEnv: Record<string, string | undefined>;
  readonly hostName = null;
  /** The root made absolute; symlink-resolved (as far as it exists) on every use. */
  readonly #root: string;

  /** `baseEnv` is the orchestrator's environment; only the allow-listed variables reach hooks. */
  constructor(root: string, baseEnv: Record<string, string | undefined>) {
    this.#root = path.resolve(root);
    this.hookBaseEnv = baseEnv;
  }

  /** The key's path under the symlink-resolved root; `escape` for the filesystem root. */
  pathOf(key: string): Outcome<{ path: string }> | Failure {
    const root = resolveExisting(this.#root);
    if (path.parse(root).root === root) {
      return fail(
        'escape',
        `workspace root ${root} is the filesystem root; refusing to place workspaces there`,
      );
    }
    const candidate = path.join(root, key);
    if (!isDirectChild(root, candidate)) {
      return fail('escape', `workspace path ${candidate} is not a direct child of the root ${root}`);
    }
    return { ok: true, path: candidate };
  }

  /** Creates the root (`mkdir -p`) then the key's directory (plain `mkdir`, so only one caller creates it). */
  async ensure(key: string): Promise<Outcome<{ path: string; createdNow: boolean }> | Failure> {
    const unresolvedRoot = resolveExisting(this.#root);
    try {
      await fsp.mkdir(unresolvedRoot, { recursive: true });
    } catch (error) {
      return fail('io', `cannot create workspace root ${unresolvedRoot}: ${errorMessage(error)}`, error);
    }
    // Recomputed now the root exists, so the path is built on its real location.
    const target = this.pathOf(key);
    if (!target.ok) return target;

    try {
      await fsp.mkdir(target.path);
      return { ok: true, path: target.path, createdNow: true };
    } catch (error) {
      if (errnoCode(error) !== 'EEXIST') {
        return fail('io', `cannot create workspace ${target.path}: ${errorMessage(error)}`, error);
      }
    }
    const found = await inspect(target.path);
    switch (found.kind) {
      case 'directory':
        return { ok: true, path: target.path, createdNow: false };
      case 'missing':
        return fail('io', `workspace ${target.path} vanished while being prepared`);
      case 'refused':
        return { ok: false, error: found.error };
    }
  }

  /** What sits at the key's path under the root as it resolves now. */
  async find(key: string): Promise<Found> {
    const target = this.pathOf(key);
    if (!target.ok) return { kind: 'refused', error: target.error };
    return inspect(target.path);
  }

  /** Absolute, directly under the root, and a real directory; the path comes back resolved. */
  async check(workspace: string): Promise<Checked> {
    const problem = (message: string): Checked => ({ ok: false, message, unreachable: false });
    if (!path.isAbsolute(workspace)) return problem(`workspace path ${workspace} is not absolute`);
    const root = resolveExisting(this.#root);
    const resolved = path.resolve(workspace);
    if (!isDirectChild(root, resolved)) {
      return problem(`${resolved} is not a direct child of the workspace root ${root}`);
    }
    const found = await inspect(resolved);
    switch (found.kind) {
      case 'directory':
        return { ok: true, path: resolved };
      case 'missing':
        return problem(`workspace ${resolved} does not exist`);
      case 'refused':
        return problem(found.error.message);
    }
  }

  /** Deletes a workspace directory after re-checking it is a real directory directly under the root. */
  async delete(workspace: PlacedWorkspace): Promise<WorkspaceError | null> {
    const root = resolveExisting(this.#root);
    if (!isDirectChild(root, workspace.path)) {
      return new WorkspaceError(
        'escape',
        `refusing to remove ${workspace.path}: not a direct child of the root ${root}`,
      );
    }
    const found = await inspect(workspace.path);
    if (found.kind === 'missing') return null;
    if (found.kind === 'refused') return found.error;
    try {
      await fsp.rm(workspace.path, { recursive: true, force: true, maxRetries: 2 });
      return null;
    } catch (error) {
      return new WorkspaceError('io', `cannot remove workspace ${workspace.path}: ${errorMessage(error)}`, {
        cause: error,
      });
    }
  }

  /** Renames `from`'s directory to `to` when `from` is a real directory and nothing is at `to`. */
  async rename(from: string, to: string): Promise<Outcome<{ path: string }> | Failure> {
    const source = this.pathOf(from);
    if (!source.ok) return source;
    const target = this.pathOf(to);
    if (!target.ok) return target;
    const found = await inspect(source.path);
    if (found.kind === 'refused') return { ok: false, error: found.error };
    if (found.kind === 'missing') return fail('conflict', `workspace ${source.path} does not exist`);
    // rename(2) would replace an empty directory at the target: it must not exist at all.
    if ((await inspect(target.path)).kind !== 'missing') {
      return fail('conflict', `cannot rename ${source.path}: ${target.path} exists`);
    }
    try {
      await fsp.rename(source.path, target.path);
      return { ok: true, path: target.path };
    } catch (error) {
      return fail('io', `cannot rename workspace ${source.path}: ${errorMessage(error)}`, error);
    }
  }

  /** Directory names under the root; [] when it does not exist; throws `io` when it cannot be read. */
  async listNames(): Promise<string[]> {
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
    return entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  }

  /** `runHook` in its own process group; this machine is always reachable. */
  async runHook(
    script: string,
    opts: { cwd: string; env: Record<string, string>; timeoutMs: number; signal?: AbortSignal },
  ): Promise<HookRun> {
    return { result: await runHook(script, opts), unreachable: null };
  }
}

/** What sits at a workspace path, without following a symlink there. */
async function inspect(workspace: string): Promise<Found> {
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
  return { kind: 'directory', path: workspace };
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

function fail(kind: WorkspaceError['kind'], message: string, cause?: unknown): Failure {
  return { ok: false, error: new WorkspaceError(kind, message, cause === undefined ? {} : { cause }) };
}

function errnoCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
