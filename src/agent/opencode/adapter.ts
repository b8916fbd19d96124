/**
 * The `opencode` adapter: one `opencode run --format json` process per turn
 * through the shared fork-per-turn skeleton. It holds no settings: each session
 * parses its own block and runs with the managed folders of its setup (`home.ts`),
 * prepared before anything is launched: a local folder, or for a session on an
 * SSH host a folder on that host (`remote-home.ts`).
 */
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
import { OPENCODE_DEFAULT_COMMAND, opencodeEnv } from './command.js';
import { opencodeBlock } from './config.js';
import { prepareManagedHome, storedSession } from './home.js';
import { prepareRemoteHome } from './remote-home.js';
import { OpencodeSession } from './session.js';
import { OPENCODE_USAGE_SOURCES } from './usage.js';

interface OpencodeAgentSession extends AgentSession {
  fork: ForkPerTurnSession;
}

export interface OpencodeAdapterOptions {
  /** SIGTERM → SIGKILL grace for the process group. */
  stopGraceMs?: number;
}

export class OpencodeAdapter implements AgentAdapter {
  constructor(private readonly options: OpencodeAdapterOptions = {}) {}

  async startSession(params: StartSessionParams): Promise<AgentSession> {
    const parsed = opencodeBlock.parse(params.options);
    if (!parsed.ok) {
      throw new AgentError('agent_not_found', `opencode: ${parsed.issues.map((i) => i.message).join('; ')}`);
    }
    const config = parsed.config;
    const remote = params.remote ?? null;
    const launch = resolveLaunchTarget({
      workspacePath: params.workspacePath,
      workspaceRoot: params.workspaceRoot,
      command: params.agent.command,
      defaultCommand: OPENCODE_DEFAULT_COMMAND,
      env: params.env,
      remote,
    });
    if (!launch.ok) throw launch.error;
    const target = launch.target;
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
    });
    const fork = new ForkPerTurnSession(target, state.hooks(), {
      agent: params.agent,
      env,
      sources: OPENCODE_USAGE_SOURCES,
      ...(this.options.stopGraceMs === undefined ? {} : { stopGraceMs: this.options.stopGraceMs }),
    });
    const session: OpencodeAgentSession = {
      kind: 'opencode',
      fork,
      get sessionId() {
        return state.sessionId;
      },
    };
    return session;
  }

  runTurn(session: AgentSession, params: RunTurnParams): Promise<TurnOutcome> {
    return (session as OpencodeAgentSession).fork.runTurn(params);
  }

  async stopSession(session: AgentSession): Promise<void> {
    await (session as OpencodeAgentSession).fork.stop();
  }
}

/** The adapter of the `opencode` kind. */
export function createOpencodeAdapter(): OpencodeAdapter {
  return new OpencodeAdapter();
}
