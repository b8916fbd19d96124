/**
 * The `gemini` adapter: one `gemini -p` process per turn through the shared
 * fork-per-turn skeleton. It holds no settings: each session parses its own
 * block and runs with its own managed home (`home.ts`), prepared before anything
 * is launched: a local folder, or for a session on an SSH host a folder on that
 * host (`remote-home.ts`). A setup without a credential fails the session start as
 * a configuration error instead of failing every turn.
 */
import { randomUUID } from 'node:crypto';
import {
  type AgentAdapter,
  AgentError,
  type AgentSession,
  type RunTurnParams,
  type StartSessionParams,
  type TurnOutcome,
} from '../../domain/agent.js';
import { ForkPerTurnSession } from '../core/fork-per-turn.js';
import { resolveLaunchTarget } from '../core/launch-target.js';
import { GEMINI_DEFAULT_COMMAND, geminiEnv } from './command.js';
import { geminiBlock } from './config.js';
import { prepareManagedHome, sessionStored } from './home.js';
import { prepareRemoteHome } from './remote-home.js';
import { GeminiSession } from './session.js';
import { GEMINI_USAGE_SOURCES } from './usage.js';

interface GeminiAgentSession extends AgentSession {
  fork: ForkPerTurnSession;
}

export interface GeminiAdapterOptions {
  /** SIGTERM → SIGKILL grace for the process group. */
  stopGraceMs?: number;
}

export class GeminiAdapter implements AgentAdapter {
  constructor(private readonly options: GeminiAdapterOptions = {}) {}

  async startSession(params: StartSessionParams): Promise<AgentSession> {
    const parsed = geminiBlock.parse(params.options);
    if (!parsed.ok) {
      throw new AgentError('agent_not_found', `gemini: ${parsed.issues.map((i) => i.message).join('; ')}`);
    }
    const config = parsed.config;
    const remote = params.remote ?? null;
    const launch = resolveLaunchTarget({
      workspacePath: params.workspacePath,
      workspaceRoot: params.workspaceRoot,
      command: params.agent.command,
      defaultCommand: GEMINI_DEFAULT_COMMAND,
      env: params.env,
      remote,
    });
    if (!launch.ok) throw launch.error;
    const homeInput = { config, env: params.env, command: params.agent.command };
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
    const fork = new ForkPerTurnSession(launch.target, state.hooks(), {
      agent: params.agent,
      env: geminiEnv(params.env, home),
      sources: GEMINI_USAGE_SOURCES,
      ...(this.options.stopGraceMs === undefined ? {} : { stopGraceMs: this.options.stopGraceMs }),
    });
    const session: GeminiAgentSession = {
      kind: 'gemini',
      fork,
      get sessionId() {
        return state.sessionId;
      },
    };
    return session;
  }

  runTurn(session: AgentSession, params: RunTurnParams): Promise<TurnOutcome> {
    return (session as GeminiAgentSession).fork.runTurn(params);
  }

  async stopSession(session: AgentSession): Promise<void> {
    await (session as GeminiAgentSession).fork.stop();
  }
}

/** The adapter of the `gemini` kind. */
export function createGeminiAdapter(): GeminiAdapter {
  return new GeminiAdapter();
}
