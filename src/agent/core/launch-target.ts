/**
 * Where and how an agent process is launched. The workspace check here is a
 * security boundary: the path must be an existing directory inside the
 * workspace root AFTER resolving symlinks, and it is checked again right before
 * every spawn, because a workspace can be swapped for a symlink between turns.
 */
import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { AgentError } from '../../domain/agent.js';

export interface LaunchTarget {
  /** Absolute path of the program to run. */
  command: string;
  /** Leading arguments from a multi-token command (`codex app-server` → ["app-server"]). */
  args: string[];
  workspacePath: string;
  workspaceRoot: string;
  /** Variables removed from the agent's environment (e.g. one that would outrank a forwarded setting). */
  withheldEnv: string[];
  /** Where the process runs; the SSH seam fills `remote` later. */
  location: { type: 'local' } | { type: 'remote'; host: string };
}

/** Resolves the workspace to its real path and checks it is a directory inside the root. */
export function checkWorkspace(
  workspacePath: string,
  workspaceRoot: string,
): { ok: true; realPath: string } | { ok: false; error: AgentError } {
  const fail = (message: string) => ({
    ok: false as const,
    error: new AgentError('invalid_workspace_cwd', message),
  });
  if (!path.isAbsolute(workspacePath)) return fail(`workspace path is not absolute: ${workspacePath}`);
  let real: string;
  let realRoot: string;
  try {
    real = realpathSync(workspacePath);
    realRoot = realpathSync(workspaceRoot);
  } catch {
    return fail(`workspace does not exist: ${workspacePath}`);
  }
  try {
    if (!statSync(real).isDirectory()) return fail(`workspace is not a directory: ${workspacePath}`);
  } catch {
    return fail(`workspace cannot be read: ${workspacePath}`);
  }
  const rel = path.relative(realRoot, real);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) {
    return fail(`workspace ${workspacePath} resolves outside the workspace root ${workspaceRoot}`);
  }
  return { ok: true, realPath: real };
}

/** Splits a command on whitespace (no shell): the first token is the program. */
export function splitCommand(command: string): string[] {
  return command
    .trim()
    .split(/\s+/)
    .filter((t) => t !== '');
}

/** Finds a program on PATH (or checks an explicit path); null when not found or not executable. */
export function resolveOnPath(program: string, envPath: string | undefined): string | null {
  const isExecutable = (p: string) => {
    try {
      const st = statSync(p);
      return st.isFile() && (st.mode & 0o111) !== 0;
    } catch {
      return false;
    }
  };
  if (program.includes('/')) return isExecutable(path.resolve(program)) ? path.resolve(program) : null;
  for (const dir of (envPath ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    const candidate = path.join(dir, program);
    if (isExecutable(candidate)) return candidate;
  }
  return null;
}

export interface ResolveParams {
  workspacePath: string;
  workspaceRoot: string;
  /** `agent.command`, null for the kind's default. */
  command: string | null;
  defaultCommand: string | null;
  env: Record<string, string>;
}

/** Validates the workspace and resolves the program: a value, never a throw. */
export function resolveLaunchTarget(
  params: ResolveParams,
): { ok: true; target: LaunchTarget } | { ok: false; error: AgentError } {
  const ws = checkWorkspace(params.workspacePath, params.workspaceRoot);
  if (!ws.ok) return ws;
  const commandText = params.command ?? params.defaultCommand;
  if (commandText === null || commandText.trim() === '') {
    return { ok: false, error: new AgentError('agent_not_found', 'no agent command: set agent.command') };
  }
  const [program, ...rest] = splitCommand(commandText);
  const resolved = program === undefined ? null : resolveOnPath(program, params.env.PATH);
  if (resolved === null) {
    return {
      ok: false,
      error: new AgentError('agent_not_found', `agent command not found on PATH: ${program ?? commandText}`),
    };
  }
  return {
    ok: true,
    target: {
      command: resolved,
      args: rest,
      workspacePath: ws.realPath,
      workspaceRoot: params.workspaceRoot,
      withheldEnv: [],
      location: { type: 'local' },
    },
  };
}

/** The environment a launch gets: the session env minus withheld variables. */
export function launchEnv(target: LaunchTarget, env: Record<string, string>): Record<string, string> {
  const out = { ...env };
  for (const name of target.withheldEnv) delete out[name];
  return out;
}

/** A one-off command beside the agent (version probe, credential guard), re-checking the workspace first. */
export function auxiliaryCommand(
  target: LaunchTarget,
  args: readonly string[],
): { ok: true; command: string; args: string[]; cwd: string } | { ok: false; error: AgentError } {
  const ws = checkWorkspace(target.workspacePath, target.workspaceRoot);
  if (!ws.ok) return ws;
  return { ok: true, command: target.command, args: [...target.args, ...args], cwd: ws.realPath };
}
