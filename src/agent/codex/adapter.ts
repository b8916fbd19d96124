/**
 * The `codex` adapter. By default one long-lived `codex app-server` process per
 * session, spoken to over JSON-RPC through the shared persistent-session
 * skeleton; when the installed Codex has no `app-server`, or the command names
 * `exec`, one `codex exec --json` process per turn through the fork-per-turn
 * skeleton. It holds no settings: each session parses its own block and gets its
 * own managed CODEX_HOME, prepared before anything is launched: a local folder,
 * or for a session on an SSH host a folder on that host (`remote-home.ts`).
 */

import { execFile } from 'node:child_process';
import {
  type AgentAdapter,
  AgentError,
  type AgentSession,
  type RunTurnParams,
  type StartSessionParams,
  type TurnOutcome,
} from '../../domain/agent.js';
import { ForkPerTurnSession } from '../core/fork-per-turn.js';
import { auxiliaryCommand, type LaunchTarget, resolveLaunchTarget } from '../core/launch-target.js';
import { PersistentSession } from '../core/persistent-session.js';
import { AppServerSession } from './app-server-session.js';
import {
  CODEX_DEFAULT_COMMAND,
  codexEnv,
  helpListsSubcommand,
  lacksAppServer,
  launchMode,
} from './command.js';
import { codexBlock } from './config.js';
import { ExecSession } from './exec-session.js';
import { prepareManagedHome } from './home.js';
import { prepareRemoteHome } from './remote-home.js';
import { CODEX_USAGE_SOURCES } from './usage.js';

interface CodexAgentSession extends AgentSession {
  run(params: RunTurnParams): Promise<TurnOutcome>;
  stop(): Promise<void>;
  /** `app-server` until a build without it hands the session to `exec`. */
  readonly mode: 'app-server' | 'exec';
}

export interface CodexAdapterOptions {
  /** SIGTERM → SIGKILL grace for the process group, and for an interrupted turn to end. */
  stopGraceMs?: number;
}

export class CodexAdapter implements AgentAdapter {
  constructor(private readonly options: CodexAdapterOptions = {}) {}

  async startSession(params: StartSessionParams): Promise<AgentSession> {
    const parsed = codexBlock.parse(params.options);
    if (!parsed.ok) {
      throw new AgentError('agent_not_found', `codex: ${parsed.issues.map((i) => i.message).join('; ')}`);
    }
    const config = parsed.config;
    const remote = params.remote ?? null;
    const launch = resolveLaunchTarget({
      workspacePath: params.workspacePath,
      workspaceRoot: params.workspaceRoot,
      command: params.agent.command,
      defaultCommand: CODEX_DEFAULT_COMMAND,
      env: params.env,
      remote,
    });
    if (!launch.ok) throw launch.error;
    // On a host the managed home is a folder there, prepared by a script run on it.
    const homeInput = { config, env: params.env, command: params.agent.command };
    const home =
      remote === null
        ? prepareManagedHome(homeInput)
        : await prepareRemoteHome({ ...homeInput, host: remote });
    if (!home.ok) throw new AgentError('agent_not_found', home.message);
    const env = codexEnv(params.env, home.home);
    const { mode, baseArgs } = launchMode(launch.target.args);
    const target = { ...launch.target, args: baseArgs };
    const start = {
      config,
      resumeThreadId: params.resumeSessionId,
      verification: params.credentialVerification ?? null,
      cwd: target.workspacePath,
    };
    const grace = this.options.stopGraceMs === undefined ? {} : { stopGraceMs: this.options.stopGraceMs };
    const exec = new ExecSession(start);
    const fork = new ForkPerTurnSession(target, exec.hooks(), {
      agent: params.agent,
      env,
      sources: CODEX_USAGE_SOURCES,
      ...grace,
    });
    if (mode === 'exec') {
      const session: CodexAgentSession = {
        kind: 'codex',
        mode: 'exec',
        run: (p) => fork.runTurn(p),
        stop: () => fork.stop(),
        get sessionId() {
          return exec.threadId ?? '';
        },
      };
      return session;
    }
    const appServer = new AppServerSession(start);
    const persistent = new PersistentSession(target, appServer.hooks(), {
      agent: params.agent,
      env,
      sources: CODEX_USAGE_SOURCES,
      ...grace,
      fallback: {
        protocolMissing: async (exit, stderrLines) =>
          lacksAppServer(exit.exitCode, stderrLines) || (await helpLacksAppServer(target, env)),
        runTurn: (p) => fork.runTurn(p),
        stop: () => fork.stop(),
      },
    });
    const session: CodexAgentSession = {
      kind: 'codex',
      get mode() {
        return persistent.usingFallback ? 'exec' : 'app-server';
      },
      run: (p) => persistent.runTurn(p),
      stop: () => persistent.stop(),
      get sessionId() {
        return (persistent.usingFallback ? exec.threadId : appServer.threadId) ?? '';
      },
    };
    return session;
  }

  runTurn(session: AgentSession, params: RunTurnParams): Promise<TurnOutcome> {
    return (session as CodexAgentSession).run(params);
  }

  async stopSession(session: AgentSession): Promise<void> {
    await (session as CodexAgentSession).stop();
  }
}

/** How long the `--help` probe may take. */
const HELP_PROBE_TIMEOUT_MS = 15_000;

/**
 * Asks the installed Codex whether it has `app-server`, once its app-server process died
 * before the handshake without saying why: an old build may take the unknown word for a
 * prompt instead of refusing it. True only when the help lists subcommands and not that one.
 * For an agent on a host the probe runs there, with the session's environment.
 */
async function helpLacksAppServer(target: LaunchTarget, env: Record<string, string>): Promise<boolean> {
  const help =
    target.location.type === 'remote' ? await remoteHelp(target, env) : await localHelp(target, env);
  return help !== null && /^Commands:/m.test(help) && !helpListsSubcommand(help, 'app-server');
}

/** The local program's `--help` output, null when it failed. */
function localHelp(target: LaunchTarget, env: Record<string, string>): Promise<string | null> {
  const command = auxiliaryCommand(target, ['--help']);
  if (!command.ok) return Promise.resolve(null);
  return new Promise((resolve) => {
    execFile(
      command.command,
      command.args,
      { cwd: command.cwd, env, timeout: HELP_PROBE_TIMEOUT_MS, maxBuffer: 1024 * 1024 },
      (error, stdout) => resolve(error === null ? String(stdout) : null),
    );
  });
}

/**
 * The host program's `--help` output (stdout only), null when it failed. The program
 * and its leading arguments reach the script as variables, so the text names none of them.
 */
async function remoteHelp(target: LaunchTarget, env: Record<string, string>): Promise<string | null> {
  if (target.location.type !== 'remote') return null;
  const argVars = target.args.map((_, i) => `ORCH_PROBE_ARG_${i}`);
  const vars: Record<string, string> = { ...env, ORCH_PROBE_PROGRAM: target.command };
  target.args.forEach((arg, i) => {
    vars[`ORCH_PROBE_ARG_${i}`] = arg;
  });
  const words = ['"$ORCH_PROBE_PROGRAM"', ...argVars.map((v) => `"$${v}"`), '--help'];
  try {
    const ran = await target.location.host.run({
      // A leading ~/ is expanded as the launch's shell would.
      script: [
        'case $ORCH_PROBE_PROGRAM in "~/"*) ORCH_PROBE_PROGRAM=$HOME/${ORCH_PROBE_PROGRAM#"~/"};; esac',
        `exec ${words.join(' ')} 2>/dev/null`,
      ].join('\n'),
      cwd: target.workspacePath,
      env: vars,
      timeoutMs: HELP_PROBE_TIMEOUT_MS,
      maxOutputBytes: 1024 * 1024,
    });
    if (!ran.ok || ran.result.exitCode !== 0 || ran.result.timedOut) return null;
    return ran.result.output;
  } catch {
    return null;
  }
}

/** The adapter of the `codex` kind. */
export function createCodexAdapter(): CodexAdapter {
  return new CodexAdapter();
}
