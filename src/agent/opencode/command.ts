/**
 * OpenCode's argv and environment for one turn. The prompt travels on stdin,
 * which is then closed: as an argument OpenCode would wrap it in literal quotes
 * (it re-quotes positional words that hold a space), and with stdin left open it
 * waits for more input forever. A turn that creates its session names it with
 * `--title`, which is also what stops OpenCode's separate title request to the
 * model, whose spend it never prints; a later turn continues the session by id
 * (`--session`). The working folder is given as PWD as well as the cwd: OpenCode
 * takes its project folder from PWD when that is set, and an inherited PWD would
 * point it at the orchestrator's own folder.
 *
 * A session given the tool server finds it in the inline config's `mcp` section, as
 * `{env:NAME}` references OpenCode fills in from its own environment as it loads the
 * config (it starts a local server with that environment too); the values are in the
 * environment only. Its tools are allowed by name pattern (`<server>_*`, how OpenCode
 * names a server's tools), after the block's rules, so a `"*": deny` there does not
 * hide them: nobody could approve them in a run.
 */
import type { Issue } from '../../domain/issue.js';
import type { OpencodeConfig, PermissionPolicy, PermissionRule } from './config.js';
import { xdgEnv } from './home.js';

/** The program launched when `agent.command` is absent. */
export const OPENCODE_DEFAULT_COMMAND = 'opencode';

/**
 * Variables OpenCode reads as provider credentials, in launch order: the keys of the
 * providers most used with it, AWS's for Bedrock, Google's application credentials for
 * Vertex, OpenCode Zen's key, and `OPENCODE_AUTH_CONTENT`, which stands in for the
 * whole `auth.json`.
 */
export const OPENCODE_CREDENTIAL_ENV = [
  'ANTHROPIC_API_KEY',
  'OPENAI_API_KEY',
  'OPENROUTER_API_KEY',
  'GEMINI_API_KEY',
  'GOOGLE_GENERATIVE_AI_API_KEY',
  'GOOGLE_API_KEY',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'XAI_API_KEY',
  'GROQ_API_KEY',
  'DEEPSEEK_API_KEY',
  'MISTRAL_API_KEY',
  'CEREBRAS_API_KEY',
  'FIREWORKS_API_KEY',
  'TOGETHER_API_KEY',
  'AZURE_API_KEY',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_BEARER_TOKEN_BEDROCK',
  'OPENCODE_API_KEY',
  'OPENCODE_AUTH_CONTENT',
] as const;

/**
 * Variables removed from the CLI's environment: each would move its config, its database
 * or its sharing away from what the managed home and the block decide.
 */
export const WITHHELD_ENV: readonly string[] = [
  'OPENCODE_CONFIG',
  'OPENCODE_CONFIG_DIR',
  'OPENCODE_DB',
  'OPENCODE_AUTO_SHARE',
  'OPENCODE_TEST_HOME',
];

/** Switches set on every launch: no update check, sharing, model-list or LSP downloads, outside prompts or skills. */
export const OPENCODE_SWITCHES: Readonly<Record<string, string>> = Object.freeze({
  OPENCODE_DISABLE_AUTOUPDATE: '1',
  OPENCODE_DISABLE_SHARE: '1',
  OPENCODE_DISABLE_MODELS_FETCH: '1',
  OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
  OPENCODE_DISABLE_CLAUDE_CODE: '1',
  OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
  OPENCODE_DISABLE_CHANNEL_DB: '1',
});

/** The permission rules of a reduced verification session: every tool refused, so none is offered. */
export const NO_TOOLS = Object.freeze({ '*': 'deny' });

/** Longest session title given to `--title`. */
const TITLE_MAX_CHARS = 100;

export interface TurnArgsInput {
  /** Continue this session (`--session`); null starts a new one. */
  resumeSessionId: string | null;
  /** The new session's title; read only when `resumeSessionId` is null. */
  title: string;
}

/** The arguments of one turn, after the launch target's own leading arguments. */
export function buildTurnArgs(config: OpencodeConfig, turn: TurnArgsInput): string[] {
  const args = ['run', '--format', 'json'];
  if (config.model !== null) args.push('-m', config.model);
  if (config.agent !== null) args.push('--agent', config.agent);
  if (config.variant !== null) args.push('--variant', config.variant);
  if (turn.resumeSessionId !== null) args.push('--session', turn.resumeSessionId);
  else args.push('--title', turn.title);
  return args;
}

/** A session title naming the issue, on one line; never empty (an empty title asks the model for one). */
export function sessionTitle(issue: Pick<Issue, 'identifier' | 'title'>): string {
  const title = `${issue.identifier} ${issue.title}`.replace(/\s+/g, ' ').trim();
  return (title === '' ? 'orchestrator session' : title).slice(0, TITLE_MAX_CHARS);
}

export interface EnvInput {
  /** The managed folder holding the four XDG folders. */
  home: string;
  /** The folder the turn runs in (the validated workspace). */
  workspacePath: string;
  config: OpencodeConfig;
  /** Set for a credential-verification session; `fullContext` false refuses every tool. */
  verification: { fullContext: boolean } | null;
  /** The session's tool servers: the rendered `mcp` entries by server name; absent or null = none. */
  mcp?: Readonly<Record<string, unknown>> | null;
}

/**
 * The inline config: the block's, with no snapshots unless it asks, updates and sharing off,
 * and the session's tool servers added to the block's own (ours win a name they share).
 */
export function inlineConfig(
  config: OpencodeConfig,
  mcp: Readonly<Record<string, unknown>> | null = null,
): Record<string, unknown> {
  const withTools = mcp === null ? {} : { mcp: { ...blockMcp(config), ...mcp } };
  return { snapshot: false, ...config.config, ...withTools, autoupdate: false, share: 'disabled' };
}

function blockMcp(config: OpencodeConfig): Record<string, unknown> {
  const own = config.config.mcp;
  return own !== null && typeof own === 'object' && !Array.isArray(own)
    ? (own as Record<string, unknown>)
    : {};
}

/** The permission rules sent to the CLI: the block's, then every tool of the session's servers allowed. */
export function permissionRules(
  permission: PermissionPolicy,
  servers: readonly string[],
): Record<string, PermissionRule> {
  const rules: Record<string, PermissionRule> = { ...permission };
  for (const server of servers) {
    const pattern = `${toolNamePart(server)}_*`;
    // Deleted first so the rule comes last: OpenCode applies the last rule that matches.
    delete rules[pattern];
    rules[pattern] = 'allow';
  }
  return rules;
}

/** A server's name as OpenCode puts it in its tools' names. */
function toolNamePart(server: string): string {
  return server.replace(/[^a-zA-Z0-9_-]/g, '_');
}

/** The CLI's environment for a turn: the launch environment with the managed folders and the block's settings. */
export function opencodeEnv(base: Record<string, string>, input: EnvInput): Record<string, string> {
  const env: Record<string, string> = { ...base };
  for (const name of WITHHELD_ENV) delete env[name];
  const reduced = input.verification !== null && !input.verification.fullContext;
  // A credential check gets no tool server, whatever it was given.
  const mcp = input.verification === null ? (input.mcp ?? null) : null;
  return {
    ...env,
    ...xdgEnv(input.home),
    PWD: input.workspacePath,
    ...OPENCODE_SWITCHES,
    OPENCODE_CONFIG_CONTENT: JSON.stringify(inlineConfig(input.config, mcp)),
    OPENCODE_PERMISSION: JSON.stringify(
      reduced ? NO_TOOLS : permissionRules(input.config.permission, Object.keys(mcp ?? {})),
    ),
  };
}
