/**
 * Copilot CLI's argv and environment for one turn. The prompt is passed attached
 * (`--prompt=<text>`): as a separate word after `-p`, a prompt that starts with a
 * dash is read as an option and the CLI refuses to start. A session the run
 * creates is named up front (`--session-id`), so its id, and with it the session's
 * files, are known before any output; every later turn, and every turn of a
 * session resumed from an earlier run, continues it (`--resume=<id>`). Auto-update
 * and client telemetry are switched off on every launch, and the agent mode is
 * always explicit, so no saved setting can change what an unattended run does.
 */
import type { CommandLineTools } from '../core/tool-config.js';
import type { CopilotCliConfig } from './config.js';

/**
 * The variables the CLI reads as its credential: the login tokens in its own order
 * of precedence, then a bring-your-own-key provider's key or bearer token.
 */
export const CREDENTIAL_ENV: readonly string[] = [
  'COPILOT_GITHUB_TOKEN',
  'GH_TOKEN',
  'GITHUB_TOKEN',
  'COPILOT_PROVIDER_API_KEY',
  'COPILOT_PROVIDER_BEARER_TOKEN',
];

/** Variables removed from the CLI's environment: the block alone decides the tool posture. */
export const WITHHELD_ENV: readonly string[] = ['COPILOT_ALLOW_ALL'];

/**
 * A tool name no Copilot tool has: `--available-tools` with only this name leaves the
 * model no tool at all, which is how a reduced verification request drops them.
 */
export const NO_TOOLS = 'orchestrator-verification-no-tools';

export interface TurnArgsInput {
  prompt: string;
  sessionId: string;
  /** Continue an existing session (`--resume`) instead of creating it (`--session-id`). */
  resume: boolean;
  /** Set for a credential-verification session; `fullContext` false drops tools, instructions and MCP servers. */
  verification: { fullContext: boolean } | null;
  /** Where the CLI writes its usage report at exit; null when it cannot be read back (a remote host). */
  usageReport: string | null;
  /** The session's tool servers: the rendered `mcpServers` JSON and the servers' names; null = none. */
  tools: CommandLineTools | null;
}

/** The arguments of one turn, after the launch target's own leading arguments. */
export function buildTurnArgs(config: CopilotCliConfig, turn: TurnArgsInput): string[] {
  const args = [
    `--prompt=${turn.prompt}`,
    '--output-format',
    'json',
    '--no-auto-update',
    '--disable-client-telemetry',
    '--no-ask-user',
  ];
  // A verification request is one question: no autopilot continuations after the answer.
  const mode = turn.verification === null ? config.mode : 'interactive';
  args.push('--mode', mode);
  if (mode === 'autopilot' && config.maxAutopilotContinues !== null) {
    args.push('--max-autopilot-continues', String(config.maxAutopilotContinues));
  }
  const tools = turn.verification === null ? turn.tools : null;
  // A JSON string, not a file: it holds no secret (the token is a `${…}` reference the CLI
  // expands from its environment), and a string reaches an SSH host as the rest of argv does.
  if (tools !== null) args.push(`--additional-mcp-config=${tools.config}`);
  if (config.allowAllTools) args.push('--allow-all-tools');
  // The `=` form: the options take a variable number of values and must not swallow what follows.
  for (const pattern of config.allowedTools) args.push(`--allow-tool=${pattern}`);
  // A server's name approves all its tools. Allowed even beside --allow-all-tools, so a block
  // that turns that off keeps them: in -p mode an unapproved tool is refused, not asked about.
  for (const server of tools?.servers ?? []) args.push(`--allow-tool=${server}`);
  for (const pattern of config.deniedTools) args.push(`--deny-tool=${pattern}`);
  if (config.allowAllPaths) args.push('--allow-all-paths');
  if (config.allowAllUrls) args.push('--allow-all-urls');
  const reduced = turn.verification !== null && !turn.verification.fullContext;
  if (reduced) {
    // No tools, no AGENTS.md or user instructions, no built-in MCP servers.
    args.push(`--available-tools=${NO_TOOLS}`, '--no-custom-instructions', '--disable-builtin-mcps');
  } else {
    for (const tool of config.availableTools) args.push(`--available-tools=${tool}`);
    // A list narrows what the model sees, and our servers' tools would vanish with the rest.
    if (config.availableTools.length > 0) {
      for (const server of tools?.servers ?? []) args.push(`--available-tools=${server}`);
    }
    for (const tool of config.excludedTools) args.push(`--excluded-tools=${tool}`);
  }
  if (config.model !== null) args.push('--model', config.model);
  if (config.agent !== null) args.push('--agent', config.agent);
  if (config.effort !== null) args.push('--reasoning-effort', config.effort);
  args.push(turn.resume ? `--resume=${turn.sessionId}` : `--session-id=${turn.sessionId}`);
  if (turn.usageReport !== null) args.push('--usage-output-file', turn.usageReport);
  return args;
}

/** The CLI's environment for a turn: the launch environment with auto-update forced off. */
export function turnEnv(base: Record<string, string>): Record<string, string> {
  return { ...base, COPILOT_AUTO_UPDATE: 'false' };
}
