/**
 * Codex's argv, request parameters and environment. The default command is
 * `codex app-server`; a command naming `exec` runs `codex exec --json` instead,
 * one process per turn. The block's settings reach both the same way: the
 * thread-level ones (model, approval policy, sandbox) through the thread request
 * or flags, the reasoning effort on every turn, raw `config` overrides as `-c`
 * pairs on the process. The prompt never travels in argv: the app-server gets it
 * in `turn/start`, exec reads it from stdin (`-`), so issue text is never parsed
 * as an option. A verification session with reduced context also stops Codex
 * reading the project's AGENTS.md and persists nothing.
 */
import type { CodexConfig } from './config.js';

/** What the kind launches when `agent.command` is absent. */
export const CODEX_DEFAULT_COMMAND = 'codex app-server';

export type CodexMode = 'app-server' | 'exec';

/** The mode a command's leading arguments ask for, and those arguments without the subcommand. */
export function launchMode(args: readonly string[]): { mode: CodexMode; baseArgs: string[] } {
  const mode: CodexMode = args.includes('exec') ? 'exec' : 'app-server';
  return { mode, baseArgs: args.filter((a) => a !== 'exec' && a !== 'app-server') };
}

/**
 * A `-c` value as TOML: strings quoted (a TOML basic string reads JSON escapes), lists and maps
 * as inline arrays and tables (a structured approval policy), the rest as written.
 */
export function tomlValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(tomlValue).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    const pairs = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)} = ${tomlValue(v)}`);
    return `{ ${pairs.join(', ')} }`;
  }
  return String(value);
}

/** Set for a credential-verification session; `fullContext` false drops what can be dropped. */
export type Verification = { fullContext: boolean } | null;

const reduced = (v: Verification) => v !== null && !v.fullContext;

/** The `-c` pairs every process of the session carries. */
export function overrideArgs(config: CodexConfig, verification: Verification): string[] {
  const args: string[] = [];
  for (const [key, value] of Object.entries(config.configOverrides))
    args.push('-c', `${key}=${tomlValue(value)}`);
  // The project's AGENTS.md is context the verification request does not need.
  if (reduced(verification)) args.push('-c', 'project_doc_max_bytes=0');
  return args;
}

/** Arguments of the long-lived `app-server` process, after the command's own. */
export function appServerArgs(config: CodexConfig, verification: Verification): string[] {
  return ['app-server', ...overrideArgs(config, verification)];
}

/** Arguments of one `exec` turn, after the command's own; `threadId` resumes that thread. */
export function execTurnArgs(
  config: CodexConfig,
  turn: { threadId: string | null; verification: Verification },
): string[] {
  const args = ['exec', '--json', '--skip-git-repo-check', ...overrideArgs(config, turn.verification)];
  if (config.model !== null) args.push('-m', config.model);
  args.push('-s', config.sandbox);
  args.push('-c', `approval_policy=${tomlValue(config.approvalPolicy)}`);
  if (config.effort !== null) args.push('-c', `model_reasoning_effort=${tomlValue(config.effort)}`);
  if (reduced(turn.verification)) args.push('--ephemeral');
  // Flags go before `resume`: some builds refuse them after it.
  if (turn.threadId !== null) args.push('resume', turn.threadId);
  args.push('-');
  return args;
}

/** Parameters of `thread/start`, and of `thread/resume` with the thread id added. */
export function threadParams(
  config: CodexConfig,
  cwd: string,
  verification: Verification,
): Record<string, unknown> {
  return {
    cwd,
    approvalPolicy: config.approvalPolicy,
    sandbox: config.sandbox,
    ...(config.model === null ? {} : { model: config.model }),
    ...(reduced(verification) ? { ephemeral: true } : {}),
  };
}

/**
 * Parameters of `turn/start`: the prompt as the one text input, the effort and the configured
 * turn sandbox policy (as written) on every turn.
 */
export function turnParams(config: CodexConfig, threadId: string, prompt: string): Record<string, unknown> {
  return {
    threadId,
    input: [{ type: 'text', text: prompt, text_elements: [] }],
    ...(config.model === null ? {} : { model: config.model }),
    ...(config.effort === null ? {} : { effort: config.effort }),
    ...(config.turnSandboxPolicy === null ? {} : { sandboxPolicy: config.turnSandboxPolicy }),
  };
}

/** The client identity sent in `initialize`. */
export const CLIENT_INFO = {
  name: 'workflow_orchestrator',
  title: 'workflow-orchestrator',
  version: '0.1.0',
};

/** The runtime's environment: the session's, with the managed CODEX_HOME. */
export function codexEnv(base: Record<string, string>, home: string): Record<string, string> {
  return { ...base, CODEX_HOME: home };
}

/**
 * True when a process that exited before answering the handshake did so because
 * this Codex build has no `app-server` subcommand (its argument parser says so).
 */
export function lacksAppServer(exitCode: number | null, stderrLines: readonly string[]): boolean {
  if (exitCode === 0 || exitCode === null) return false;
  const text = stderrLines.join('\n');
  return (
    /app-server/.test(text) &&
    /unrecognized subcommand|unexpected argument|invalid subcommand|unknown (sub)?command/i.test(text)
  );
}

/** True when a `--help` text lists `name` among its subcommands. */
export function helpListsSubcommand(help: string, name: string): boolean {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^\\s+${escaped}(\\s|$)`, 'm').test(help);
}
