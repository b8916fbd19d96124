/**
 * The `claude-code` adapter: one `claude -p` process per turn through the shared
 * fork-per-turn skeleton. It holds no settings; each session parses its own block.
 * A block Claude Code would refuse to start with (bypassPermissions as root) fails
 * the session start as a configuration error instead of failing every turn.
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
import { startRefusal, withheldEnv } from './command.js';
import { claudeCodeBlock } from './config.js';
import { ClaudeCodeSession } from './session.js';
import { CLAUDE_CODE_USAGE_SOURCES } from './usage.js';

/** The program launched when `agent.command` is absent. */
export const CLAUDE_DEFAULT_COMMAND = 'claude';

interface ClaudeAgentSession extends AgentSession {
  fork: ForkPerTurnSession;
}

export interface ClaudeCodeAdapterOptions {
  /** The user id Claude Code will run as (root refuses bypassPermissions); default: this process's. */
  uid?: number | null;
  /** SIGTERM → SIGKILL grace for the process group. */
  stopGraceMs?: number;
}

export class ClaudeCodeAdapter implements AgentAdapter {
  constructor(private readonly options: ClaudeCodeAdapterOptions = {}) {}

  async startSession(params: StartSessionParams): Promise<AgentSession> {
    const parsed = claudeCodeBlock.parse(params.options);
    if (!parsed.ok) {
      throw new AgentError(
        'agent_not_found',
        `claude-code: ${parsed.issues.map((i) => i.message).join('; ')}`,
      );
    }
    const config = parsed.config;
    // On an SSH host the CLI runs as the login user, whose id is not known here: the host's
    // CLI then reports a refusal itself, as a failed turn.
    const uid = params.remote
      ? null
      : this.options.uid === undefined
        ? (process.getuid?.() ?? null)
        : this.options.uid;
    const refusal = startRefusal(config, params.env, uid);
    if (refusal !== null) throw new AgentError('agent_not_found', refusal);
    const launch = resolveLaunchTarget({
      workspacePath: params.workspacePath,
      workspaceRoot: params.workspaceRoot,
      command: params.agent.command,
      defaultCommand: CLAUDE_DEFAULT_COMMAND,
      env: params.env,
      remote: params.remote ?? null,
    });
    if (!launch.ok) throw launch.error;
    const target = { ...launch.target, withheldEnv: [...launch.target.withheldEnv, ...withheldEnv(config)] };
    const state = new ClaudeCodeSession({
      config,
      sessionId: params.resumeSessionId ?? randomUUID(),
      resumed: params.resumeSessionId !== null,
      verification: params.credentialVerification ?? null,
    });
    const fork = new ForkPerTurnSession(target, state.hooks(), {
      agent: params.agent,
      env: params.env,
      sources: CLAUDE_CODE_USAGE_SOURCES,
      ...(this.options.stopGraceMs === undefined ? {} : { stopGraceMs: this.options.stopGraceMs }),
    });
    const session: ClaudeAgentSession = {
      kind: 'claude-code',
      fork,
      get sessionId() {
        return state.sessionId;
      },
    };
    return session;
  }

  runTurn(session: AgentSession, params: RunTurnParams): Promise<TurnOutcome> {
    return (session as ClaudeAgentSession).fork.runTurn(params);
  }

  async stopSession(session: AgentSession): Promise<void> {
    await (session as ClaudeAgentSession).fork.stop();
  }
}

/** The adapter of the `claude-code` kind. */
export function createClaudeCodeAdapter(): ClaudeCodeAdapter {
  return new ClaudeCodeAdapter();
}
