/**
 * The `claude-code` adapter: one `claude -p` process per turn through the shared
 * fork-per-turn adapter. It holds no settings; each session parses its own block.
 * A block Claude Code would refuse to start with (bypassPermissions as root) fails
 * the session start as a configuration error instead of failing every turn.
 */
import { randomUUID } from 'node:crypto';
import type { StartSessionParams } from '../../domain/agent.js';
import {
  ForkPerTurnAdapter,
  type ForkPerTurnAdapterOptions,
  type ForkPerTurnPlan,
} from '../core/fork-per-turn-adapter.js';
import { commandLineTools } from '../core/tool-config.js';
import { startRefusal, withheldEnv } from './command.js';
import { type ClaudeCodeConfig, claudeCodeBlock } from './config.js';
import { ClaudeCodeSession } from './session.js';
import { CLAUDE_CODE_USAGE_SOURCES } from './usage.js';

/** The program launched when `agent.command` is absent. */
export const CLAUDE_DEFAULT_COMMAND = 'claude';

export interface ClaudeCodeAdapterOptions extends ForkPerTurnAdapterOptions {
  /** The user id Claude Code will run as (root refuses bypassPermissions); default: this process's. */
  uid?: number | null;
}

export class ClaudeCodeAdapter extends ForkPerTurnAdapter<ClaudeCodeConfig> {
  protected readonly kind = 'claude-code';
  protected readonly block = claudeCodeBlock;
  protected readonly defaultCommand = CLAUDE_DEFAULT_COMMAND;
  protected readonly sources = CLAUDE_CODE_USAGE_SOURCES;

  constructor(private readonly claudeOptions: ClaudeCodeAdapterOptions = {}) {
    super(claudeOptions);
  }

  protected override refuse(config: ClaudeCodeConfig, params: StartSessionParams): string | null {
    // On an SSH host the CLI runs as the login user, whose id is not known here: the host's
    // CLI then reports a refusal itself, as a failed turn.
    const uid = params.remote
      ? null
      : this.claudeOptions.uid === undefined
        ? (process.getuid?.() ?? null)
        : this.claudeOptions.uid;
    return startRefusal(config, params.env, uid);
  }

  protected plan(config: ClaudeCodeConfig, params: StartSessionParams): ForkPerTurnPlan {
    const state = new ClaudeCodeSession({
      config,
      sessionId: params.resumeSessionId ?? randomUUID(),
      resumed: params.resumeSessionId !== null,
      verification: params.credentialVerification ?? null,
      tools: commandLineTools('mcp-json', params),
    });
    return { hooks: state.hooks(), sessionId: () => state.sessionId, withheldEnv: withheldEnv(config) };
  }
}

/** The adapter of the `claude-code` kind. */
export function createClaudeCodeAdapter(): ClaudeCodeAdapter {
  return new ClaudeCodeAdapter();
}
