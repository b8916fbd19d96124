/**
 * The `opencode` adapter: one `opencode run --format json` process per turn
 * through the shared fork-per-turn adapter. It holds no settings: each session
 * parses its own block and runs with the managed folders of its setup (`home.ts`),
 * prepared before anything is launched: a local folder, or for a session on an
 * SSH host a folder on that host (`remote-home.ts`). A local session given the tool
 * server gets it in its inline config; the values its references name reach the
 * CLI's environment through the shared adapter.
 */
import { AgentError, type StartSessionParams } from '../../domain/agent.js';
import { ForkPerTurnAdapter, type ForkPerTurnPlan } from '../core/fork-per-turn-adapter.js';
import type { LaunchTarget } from '../core/launch-target.js';
import { sessionDelivery } from '../core/tool-config.js';
import { renderInlineConfigJson } from '../core/tool-dialects/inline-config-json.js';
import { OPENCODE_DEFAULT_COMMAND, opencodeEnv } from './command.js';
import { type OpencodeConfig, opencodeBlock } from './config.js';
import { prepareManagedHome, storedSession } from './home.js';
import { prepareRemoteHome } from './remote-home.js';
import { OpencodeSession } from './session.js';
import { OPENCODE_USAGE_SOURCES } from './usage.js';

export class OpencodeAdapter extends ForkPerTurnAdapter<OpencodeConfig> {
  protected readonly kind = 'opencode';
  protected readonly block = opencodeBlock;
  protected readonly defaultCommand = OPENCODE_DEFAULT_COMMAND;
  protected readonly sources = OPENCODE_USAGE_SOURCES;

  protected async plan(
    config: OpencodeConfig,
    params: StartSessionParams,
    target: LaunchTarget,
  ): Promise<ForkPerTurnPlan> {
    const remote = params.remote ?? null;
    const homeInput = { env: params.env, command: params.agent.command };
    const home =
      remote === null
        ? prepareManagedHome(homeInput)
        : await prepareRemoteHome({ ...homeInput, host: remote });
    if (!home.ok) throw new AgentError('agent_not_found', home.message);
    const state = new OpencodeSession({
      config,
      resumeSessionId: params.resumeSessionId,
      workspacePath: target.workspacePath,
      // The database on a host cannot be read from here; the CLI's refusal would say so.
      lookup: remote === null ? (id) => storedSession(home.home, id) : null,
    });
    const env = opencodeEnv(params.env, {
      home: home.home,
      workspacePath: target.workspacePath,
      config,
      verification: params.credentialVerification ?? null,
      mcp: toolServers(params),
    });
    return { hooks: state.hooks(), sessionId: () => state.sessionId, env };
  }
}

/** The session's tool servers as the inline config's `mcp` entries; null when it gets none. */
function toolServers(params: StartSessionParams): Record<string, unknown> | null {
  const delivery = sessionDelivery(params);
  return delivery === null ? null : renderInlineConfigJson(delivery).mcp;
}

/** The adapter of the `opencode` kind. */
export function createOpencodeAdapter(): OpencodeAdapter {
  return new OpencodeAdapter();
}
