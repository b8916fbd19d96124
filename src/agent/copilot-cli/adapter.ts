/**
 * The `copilot-cli` adapter: one `copilot --prompt=… --output-format json` process
 * per turn through the shared fork-per-turn adapter. It holds no settings; each
 * session parses its own block. A session on this machine also owns a private
 * temporary folder for the usage summaries the CLI writes at exit, removed when
 * the session stops; the CLI's own state (its session journal) stays under
 * COPILOT_HOME, which the adapter reads but never writes.
 */
import { randomUUID } from 'node:crypto';
import type { StartSessionParams } from '../../domain/agent.js';
import { ForkPerTurnAdapter, type ForkPerTurnPlan } from '../core/fork-per-turn-adapter.js';
import type { LaunchTarget } from '../core/launch-target.js';
import { commandLineTools } from '../core/tool-config.js';
import { WITHHELD_ENV } from './command.js';
import { type CopilotCliConfig, copilotCliBlock } from './config.js';
import { CopilotCliSession } from './session.js';
import { copilotHome, SessionFiles } from './session-files.js';
import { COPILOT_CLI_USAGE_SOURCES } from './usage.js';

/** The program launched when `agent.command` is absent. */
export const COPILOT_DEFAULT_COMMAND = 'copilot';

export class CopilotCliAdapter extends ForkPerTurnAdapter<CopilotCliConfig> {
  protected readonly kind = 'copilot-cli';
  protected readonly block = copilotCliBlock;
  protected readonly defaultCommand = COPILOT_DEFAULT_COMMAND;
  protected readonly sources = COPILOT_CLI_USAGE_SOURCES;

  protected plan(
    config: CopilotCliConfig,
    params: StartSessionParams,
    target: LaunchTarget,
  ): ForkPerTurnPlan {
    // The CLI's files are only readable when it runs here.
    const files = target.location.type === 'local' ? new SessionFiles(copilotHome(params.env)) : null;
    const state = new CopilotCliSession({
      config,
      sessionId: params.resumeSessionId ?? randomUUID(),
      resumed: params.resumeSessionId !== null,
      verification: params.credentialVerification ?? null,
      files,
      tools: commandLineTools('mcp-json', params),
    });
    return {
      hooks: state.hooks(),
      sessionId: () => state.sessionId,
      withheldEnv: WITHHELD_ENV,
      dispose: () => files?.dispose(),
    };
  }
}

/** The adapter of the `copilot-cli` kind. */
export function createCopilotCliAdapter(): CopilotCliAdapter {
  return new CopilotCliAdapter();
}
