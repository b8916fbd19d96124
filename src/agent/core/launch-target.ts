/**
 * Where and how an agent process is launched. The workspace check here is a
 * security boundary: the path must be an existing directory inside the
 * workspace root AFTER resolving symlinks, and it is checked again right before
 * every spawn, because a workspace can be swapped for a symlink between turns.
 */
import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { AgentError } from '../../domain/agent.js';
import type { AgentErrorKind } from '../../domain/errors.js';
import type { RemoteHost } from '../../domain/remote.js';
import { splitCommandLine } from '../../workflow/command-line.js';
import { startRemoteAgentProcess } from './process/remote.js';
import { type AgentProcess, type SpawnAgentProcessParams, spawnAgentProcess } from './process/spawn.js';

export interface LaunchTarget {
  /** Absolute path of the program to run; on a remote host, the program's name as written (the host's PATH finds it). */
  command: string;
  /** Leading arguments from a multi-token command (`codex app-server` → ["app-server"]). */
  args: string[];
  workspacePath: string;
  workspaceRoot: string;
  /** Variables removed from the agent's environment (e.g. one that would outrank a forwarded setting). */
  withheldEnv: string[];
  /** Where the process runs: here, or on a remote host whose workspace path is `workspacePath`. */
  location: { type: 'local' } | { type: 'remote'; host: RemoteHost };
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
  // `..x` is a legal name inside the root; only `..` itself or `../…` climbs out.
  if (rel === '' || rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) {
    return fail(`workspace ${workspacePath} resolves outside the workspace root ${workspaceRoot}`);
  }
  return { ok: true, realPath: real };
}

/** The words of a command (shell-like quoting, no expansion; see `splitCommandLine`); [] when it cannot be split. */
export function splitCommand(command: string): string[] {
  const split = splitCommandLine(command);
  return split.ok ? split.words : [];
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
  /** The host the agent runs on; absent or null for this machine. */
  remote?: RemoteHost | null;
}

/** Validates the workspace and resolves the program: a value, never a throw. */
export function resolveLaunchTarget(
  params: ResolveParams,
): { ok: true; target: LaunchTarget } | { ok: false; error: AgentError } {
  const commandText = params.command ?? params.defaultCommand;
  if (commandText === null || commandText.trim() === '') {
    return { ok: false, error: new AgentError('agent_not_found', 'no agent command: set agent.command') };
  }
  const split = splitCommandLine(commandText);
  if (!split.ok) {
    return {
      ok: false,
      error: new AgentError('agent_not_found', `agent command cannot be read: ${split.message}`),
    };
  }
  const [program, ...rest] = split.words;
  if (program === undefined || program === '') {
    return {
      ok: false,
      error: new AgentError('agent_not_found', `agent command names no program: ${commandText}`),
    };
  }
  const remote = params.remote ?? null;
  // The workspace and the program live on the host: both are checked there, at launch.
  if (remote !== null) {
    return {
      ok: true,
      target: {
        command: program,
        args: rest,
        workspacePath: params.workspacePath,
        workspaceRoot: params.workspaceRoot,
        withheldEnv: [],
        location: { type: 'remote', host: remote },
      },
    };
  }
  const ws = checkWorkspace(params.workspacePath, params.workspaceRoot);
  if (!ws.ok) return ws;
  const resolved = resolveOnPath(program, params.env.PATH);
  if (resolved === null) {
    return {
      ok: false,
      error: new AgentError('agent_not_found', `agent command not found on PATH: ${program}`),
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

/** Re-checks a local target's workspace (it may have become a symlink since); null when fine or remote. */
export function recheckWorkspace(target: LaunchTarget): AgentError | null {
  if (target.location.type === 'remote') return null;
  const ws = checkWorkspace(target.workspacePath, target.workspaceRoot);
  return ws.ok ? null : ws.error;
}

/** The process parameters a launch names, before the working directory is checked. */
export type ProcessLaunch = Omit<SpawnAgentProcessParams, 'command' | 'cwd'>;

/**
 * Starts the agent where the target says: locally after re-checking the workspace
 * (it may have been swapped for a symlink since the last turn), or on its host,
 * which checks the workspace there. Failures are values with the agent error kind.
 */
export async function startAgentProcess(
  target: LaunchTarget,
  launch: ProcessLaunch,
): Promise<{ ok: true; process: AgentProcess } | { ok: false; kind: AgentErrorKind; message: string }> {
  let cwd = target.workspacePath;
  if (target.location.type === 'local') {
    const ws = checkWorkspace(target.workspacePath, target.workspaceRoot);
    if (!ws.ok) return { ok: false, kind: ws.error.kind, message: ws.error.detail };
    cwd = ws.realPath;
  }
  const params = { ...launch, command: target.command, cwd };
  const started =
    target.location.type === 'local'
      ? await spawnAgentProcess(params)
      : await startRemoteAgentProcess(target.location.host, params);
  if (started.ok) return started;
  const kind: AgentErrorKind =
    started.code === 'not_found' || started.code === 'not_executable'
      ? 'agent_not_found'
      : started.code === 'bad_cwd'
        ? 'invalid_workspace_cwd'
        : 'port_exit';
  return { ok: false, kind, message: started.message };
}

/** A one-off command beside the agent (version probe, credential guard), re-checking the workspace first; local targets only. */
export function auxiliaryCommand(
  target: LaunchTarget,
  args: readonly string[],
): { ok: true; command: string; args: string[]; cwd: string } | { ok: false; error: AgentError } {
  if (target.location.type === 'remote') {
    return {
      ok: false,
      error: new AgentError(
        'agent_not_found',
        `cannot run a local probe for an agent on ${target.location.host.name}`,
      ),
    };
  }
  const ws = checkWorkspace(target.workspacePath, target.workspaceRoot);
  if (!ws.ok) return ws;
  return { ok: true, command: target.command, args: [...target.args, ...args], cwd: ws.realPath };
}
