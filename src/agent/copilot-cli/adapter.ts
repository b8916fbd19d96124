/**
 * The `copilot-cli` adapter: one `copilot --prompt=… --output-format json` process
 * per turn through the shared fork-per-turn skeleton. It holds no settings; each
 * session parses its own block. A session on this machine also owns a private
 * temporary folder for the usage summaries the CLI writes at exit, removed when
 * the session stops; the CLI's own state (its session journal) stays under
 * COPILOT_HOME, which the adapter reads but never writes.
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
import { WITHHELD_ENV } from './command.js';
import { copilotCliBlock } from './config.js';
import { CopilotCliSession } from './session.js';
import { copilotHome, SessionFiles } from './session-files.js';
import { COPILOT_CLI_USAGE_SOURCES } from './usage.js';

/** The program launched when `agent.command` is absent. */
export const COPILOT_DEFAULT_COMMAND = 'copilot';

interface CopilotAgentSession extends AgentSession {
  fork: ForkPerTurnSession;
  files: SessionFiles | null;
}

export interface CopilotCliAdapterOptions {
  /** SIGTERM → SIGKILL grace for the process group. */
  stopGraceMs?: number;
}

export class CopilotCliAdapter implements AgentAdapter {
  constructor(private readonly options: CopilotCliAdapterOptions = {}) {}

  async startSession(params: StartSessionParams): Promise<AgentSession> {
    const parsed = copilotCliBlock.parse(params.options);
    if (!parsed.ok) {
      throw new AgentError(
        'agent_not_found',
        `copilot-cli: ${parsed.issues.map((i) => i.message).join('; ')}`,
      );
    }
    const launch = resolveLaunchTarget({
      workspacePath: params.workspacePath,
      workspaceRoot: params.workspaceRoot,
      command: params.agent.command,
      defaultCommand: COPILOT_DEFAULT_COMMAND,
      env: params.env,
      remote: params.remote ?? null,
    });
    if (!launch.ok) throw launch.error;
    const target = { ...launch.target, withheldEnv: [...launch.target.withheldEnv, ...WITHHELD_ENV] };
    // The CLI's files are only readable when it runs here.
    const files = target.location.type === 'local' ? new SessionFiles(copilotHome(params.env)) : null;
    const state = new CopilotCliSession({
      config: parsed.config,
      sessionId: params.resumeSessionId ?? randomUUID(),
      resumed: params.resumeSessionId !== null,
      verification: params.credentialVerification ?? null,
      files,
    });
    const fork = new ForkPerTurnSession(target, state.hooks(), {
      agent: params.agent,
      env: params.env,
      sources: COPILOT_CLI_USAGE_SOURCES,
      ...(this.options.stopGraceMs === undefined ? {} : { stopGraceMs: this.options.stopGraceMs }),
    });
    const session: CopilotAgentSession = {
      kind: 'copilot-cli',
      fork,
      files,
      get sessionId() {
        return state.sessionId;
      },
    };
    return session;
  }

  runTurn(session: AgentSession, params: RunTurnParams): Promise<TurnOutcome> {
    return (session as CopilotAgentSession).fork.runTurn(params);
  }

  async stopSession(session: AgentSession): Promise<void> {
    const own = session as CopilotAgentSession;
    await own.fork.stop();
    own.files?.dispose();
  }
}

/** The adapter of the `copilot-cli` kind. */
export function createCopilotCliAdapter(): CopilotCliAdapter {
  return new CopilotCliAdapter();
}
