/**
 * Gemini CLI's argv and environment for one turn. The prompt travels on stdin,
 * never in argv, so issue text cannot be read as an option and no argument
 * length limit applies; `-p ''` is what makes the run headless, and the CLI puts
 * what it read on stdin in front of that empty prompt. The first turn of a
 * session names it up front (`--session-id`), so its id is known before any
 * output; a later turn continues it (`--resume`). The approval mode is always
 * passed, so no user or workspace setting can switch an unattended run to a mode
 * that asks.
 */
import type { GeminiConfig } from './config.js';

/** The program launched when `agent.command` is absent. */
export const GEMINI_DEFAULT_COMMAND = 'gemini';

export interface TurnArgsInput {
  sessionId: string;
  /** Continue the stored session (`--resume`) instead of starting it (`--session-id`). */
  resume: boolean;
}

/** The arguments of one turn, after the launch target's own leading arguments. */
export function buildTurnArgs(config: GeminiConfig, turn: TurnArgsInput): string[] {
  const args = ['-p', '', '--output-format', 'stream-json', '--approval-mode', config.approvalMode];
  if (config.model !== null) args.push('-m', config.model);
  args.push(turn.resume ? '--resume' : '--session-id', turn.sessionId);
  return args;
}

/**
 * The CLI's environment: the session's, with the managed home, the setup's temp
 * folder for the CLI's error reports, no relaunch into a second node process (which
 * would hide the real pid and double the start-up), and the workspace trusted, so the
 * headless run neither refuses the folder nor drops to a restricted mode.
 */
export function geminiEnv(
  base: Record<string, string>,
  home: { home: string; tmpDir: string },
): Record<string, string> {
  return {
    ...base,
    GEMINI_CLI_HOME: home.home,
    TMPDIR: home.tmpDir,
    GEMINI_CLI_NO_RELAUNCH: 'true',
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
  };
}
