/**
 * The `gemini` adapter: one `gemini -p` process per turn through the shared
 * fork-per-turn adapter. It holds no settings: each session parses its own block and
 * runs with its own managed home (`home.ts`), prepared before anything is launched: a
 * local folder, or for a session on an SSH host a folder on that host
 * (`remote-home.ts`). A setup without a credential fails the session start as a
 * configuration error instead of failing every turn. A session given tool servers, on
 * this machine or on an SSH host, gets their `mcpServers` in the managed settings
 * (references only); the values the references name reach the CLI's environment
 * through the shared adapter (on a host, the session env sent over the channel).
 */
import { randomUUID } from 'node:crypto';
import { AgentError, type StartSessionParams } from '../../domain/agent.js';
import { ForkPerTurnAdapter, type ForkPerTurnPlan } from '../core/fork-per-turn-adapter.js';
import { sessionDelivery } from '../core/tool-config.js';
import { renderSettingsJson } from '../core/tool-dialects/settings-json.js';
import { GEMINI_DEFAULT_COMMAND, geminiEnv } from './command.js';
import { type GeminiConfig, geminiBlock } from './config.js';
import { prepareManagedHome, sessionStored } from './home.js';
import { prepareRemoteHome } from './remote-home.js';
import { GeminiSession } from './session.js';
import { GEMINI_USAGE_SOURCES } from './usage.js';

export class GeminiAdapter extends ForkPerTurnAdapter<GeminiConfig> {
  protected readonly kind = 'gemini';
  protected readonly block = geminiBlock;
  protected readonly defaultCommand = GEMINI_DEFAULT_COMMAND;
  protected readonly sources = GEMINI_USAGE_SOURCES;

  protected async plan(config: GeminiConfig, params: StartSessionParams): Promise<ForkPerTurnPlan> {
    const remote = params.remote ?? null;
    const homeInput = {
      config,
      env: params.env,
      command: params.agent.command,
      mcpServers: toolServers(params),
    };
    const home =
      remote === null
        ? prepareManagedHome(homeInput)
        : await prepareRemoteHome({ ...homeInput, host: remote });
    if (!home.ok) throw new AgentError('agent_not_found', home.message);
    const state = new GeminiSession({
      config,
      sessionId: params.resumeSessionId ?? randomUUID(),
      resumed: params.resumeSessionId !== null,
      // A record on a host cannot be looked for from here; the CLI's refusal would say so.
      isStored: remote === null ? (id) => sessionStored(home.home, id) : null,
    });
    return { hooks: state.hooks(), sessionId: () => state.sessionId, env: geminiEnv(params.env, home) };
  }
}

/** The session's tool servers as the settings' `mcpServers`; null when it gets none. */
function toolServers(params: StartSessionParams): Record<string, unknown> | null {
  const delivery = sessionDelivery(params);
  return delivery === null ? null : renderSettingsJson(delivery).mcpServers;
}

/** The adapter of the `gemini` kind. */
export function createGeminiAdapter(): GeminiAdapter {
  return new GeminiAdapter();
}
