/**
 * Where a built-in runtime script lives and how to start it: the compiled
 * `runtime.js` beside its adapter, or, when running from source, the `.ts` file
 * through tsx's loader. An operator's `agent.command` replaces it (tests use that
 * to substitute a fake runtime).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { AgentError, type StartSessionParams } from '../../domain/agent.js';
import { checkWorkspace, type LaunchTarget, resolveLaunchTarget } from '../core/launch-target.js';

/** The launch target of the runtime script `name` beside `moduleUrl`. */
export function builtinRuntimeTarget(
  moduleUrl: string,
  name: string,
  params: StartSessionParams,
): { ok: true; target: LaunchTarget } | { ok: false; error: AgentError } {
  if (params.agent.command !== null) {
    return resolveLaunchTarget({
      workspacePath: params.workspacePath,
      workspaceRoot: params.workspaceRoot,
      command: params.agent.command,
      defaultCommand: null,
      env: params.env,
      remote: params.remote ?? null,
    });
  }
  if (params.remote) {
    return {
      ok: false,
      error: new AgentError(
        'agent_not_found',
        `the built-in ${name} has no default command on ${params.remote.name}: set agent.command to how the host starts it`,
      ),
    };
  }
  const workspace = checkWorkspace(params.workspacePath, params.workspaceRoot);
  if (!workspace.ok) return workspace;
  const compiled = fileURLToPath(new URL(`./${name}.js`, moduleUrl));
  const args = existsSync(compiled)
    ? [compiled]
    : ['--import', import.meta.resolve('tsx'), fileURLToPath(new URL(`./${name}.ts`, moduleUrl))];
  return {
    ok: true,
    target: {
      command: process.execPath,
      args,
      workspacePath: workspace.realPath,
      workspaceRoot: params.workspaceRoot,
      withheldEnv: [],
      location: { type: 'local' },
    },
  };
}
