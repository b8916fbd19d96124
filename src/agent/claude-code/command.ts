/**
 * Claude Code's argv for one turn. The prompt travels on stdin, never in argv, so
 * issue text cannot be read as an option and no argument length limit applies.
 * The first turn of a session the run creates names the session up front
 * (`--session-id`), so its id is known before any output; every later turn, and
 * every turn of a session resumed from an earlier run, continues it (`--resume`).
 * The permission mode is always passed explicitly, so a user or project setting
 * can never switch an unattended run to a mode that asks.
 */
import type { CommandLineTools } from '../core/tool-config.js';
import type { ClaudeCodeConfig } from './config.js';

/** The variable Claude Code reads its effort level from; it would outrank `--effort`, so it is withheld. */
export const EFFORT_ENV = 'CLAUDE_CODE_EFFORT_LEVEL';

/** The system prompt of a reduced-context verification session. */
export const VERIFICATION_SYSTEM_PROMPT = 'You answer one short request to prove that the credential works.';

export interface TurnArgsInput {
  sessionId: string;
  /** Continue an existing session (`--resume`) instead of creating it (`--session-id`). */
  resume: boolean;
  /** Set for a credential-verification session; `fullContext` false drops tools, instructions and the system prompt. */
  verification: { fullContext: boolean } | null;
  /** The session's tool servers: the rendered `mcpServers` JSON and the servers' names; null = none. */
  tools: CommandLineTools | null;
}

/** The arguments of one turn, after the launch target's own leading arguments. */
export function buildTurnArgs(config: ClaudeCodeConfig, turn: TurnArgsInput): string[] {
  const args = ['-p', '--output-format', 'stream-json', '--verbose'];
  args.push(turn.resume ? '--resume' : '--session-id', turn.sessionId);
  args.push('--permission-mode', config.permissionMode);
  if (config.model !== null) args.push('--model', config.model);
  if (config.fallbackModel !== null) args.push('--fallback-model', config.fallbackModel);
  if (config.maxTurns !== null) args.push('--max-turns', String(config.maxTurns));
  if (config.maxBudgetUsd !== null) args.push('--max-budget-usd', String(config.maxBudgetUsd));
  if (config.effort !== null) args.push('--effort', config.effort);
  const tools = turn.verification === null ? turn.tools : null;
  // A JSON string, not a file: it holds no secret (the token is a `${…}` reference resolved
  // from the environment), and a string reaches an SSH host as the rest of argv does.
  if (tools !== null) args.push('--mcp-config', tools.config);
  // The servers' tools are allowed by name (`mcp__<server>`): under acceptEdits an unlisted
  // tool would be refused, since no person is there to approve it.
  const allowed = [...config.allowedTools, ...(tools?.servers.map((s) => `mcp__${s}`) ?? [])];
  // One comma-separated value: the options are variadic and must not swallow what follows.
  if (allowed.length > 0) args.push('--allowedTools', allowed.join(','));
  if (config.disallowedTools.length > 0) args.push('--disallowedTools', config.disallowedTools.join(','));
  const reduced = turn.verification !== null && !turn.verification.fullContext;
  if (reduced) {
    // No tools, no CLAUDE.md, skills, hooks or MCP servers, and a one-line system prompt.
    args.push('--safe-mode', '--tools', '', '--system-prompt', VERIFICATION_SYSTEM_PROMPT);
  } else if (config.appendSystemPrompt !== null) {
    args.push('--append-system-prompt', config.appendSystemPrompt);
  }
  if (!config.sessionPersistence || turn.verification !== null) args.push('--no-session-persistence');
  return args;
}

/** Variables removed from the CLI's environment for this block. */
export function withheldEnv(config: ClaudeCodeConfig): string[] {
  return config.effort === null ? [] : [EFFORT_ENV];
}

/**
 * Why Claude Code will refuse to start with this block on this machine, or null.
 * It refuses `bypassPermissions` to a root user unless the environment declares a
 * sandbox (`IS_SANDBOX=1`); caught here, that is a configuration error at session
 * start instead of a silent exit 1 on every turn.
 */
export function startRefusal(
  config: ClaudeCodeConfig,
  env: Readonly<Record<string, string>>,
  uid: number | null,
): string | null {
  if (config.permissionMode !== 'bypassPermissions' || uid !== 0 || env.IS_SANDBOX === '1') return null;
  return (
    'claude-code.permission_mode bypassPermissions is refused by Claude Code when it runs as root; ' +
    'use acceptEdits with allowed_tools, or set IS_SANDBOX=1 in the agent environment if this machine is a sandbox'
  );
}
