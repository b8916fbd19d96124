/**
 * The `codex` adapter. By default one long-lived `codex app-server` process per
 * session, spoken to over JSON-RPC through the shared persistent-session
 * skeleton; when the installed Codex has no `app-server`, or the command names
 * `exec`, one `codex exec --json` process per turn through the fork-per-turn
 * skeleton. It holds no settings: each session parses its own block and gets its
 * own managed CODEX_HOME, prepared before anything is launched: a local folder,
 * or for a session on an SSH host a folder on that host (`remote-home.ts`). A session
 * given tools has their values in its environment and their servers in its
 * configuration (`tool-tables.ts`): a local one in the managed config.toml, one on a
 * host as `-c` overrides of its own processes, since the host's config.toml is shared
 * by the setup's sessions and written by a script each one runs.
 */

import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  type AgentAdapter,
  AgentError,
  type AgentSession,
  type RunTurnParams,
  type StartSessionParams,
  type TurnOutcome,
} from '../../domain/agent.js';
import { runAuxiliary } from '../core/auxiliary.js';
import { ForkPerTurnSession } from '../core/fork-per-turn.js';
import { type LaunchTarget, resolveLaunchTarget } from '../core/launch-target.js';
import { PersistentSession } from '../core/persistent-session.js';
import { sessionDelivery, withToolEnv } from '../core/tool-config.js';
import { AppServerSession } from './app-server-session.js';
import {
  CODEX_DEFAULT_COMMAND,
  codexEnv,
  helpListsSubcommand,
  lacksAppServer,
  launchMode,
} from './command.js';
import { type CodexConfig, codexBlock } from './config.js';
import { ExecSession } from './exec-session.js';
import { prepareManagedHome } from './home.js';
import { prepareRemoteHome } from './remote-home.js';
import { disabledServers, placedTables, toolOverrideArgs, toolTables } from './tool-tables.js';
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
    const tools = sessionDelivery(params);
    // On a host the servers go on the command line, before the subcommand: Codex applies
    // overrides given there to every subcommand (app-server, the exec fallback, the probe).
    const servers = remote === null || tools === null ? [] : toolOverrideArgs(tools);
    const home =
      remote === null
        ? prepareManagedHome({ ...homeInput, toolTables: tools === null ? null : toolTables(tools) })
        : await prepareRemoteHome({ ...homeInput, host: remote });
    if (!home.ok) throw new AgentError('agent_not_found', home.message);
    const env = withToolEnv(codexEnv(params.env, home.home), tools);
    const { mode, baseArgs } = launchMode(launch.target.args);
    const target = { ...launch.target, args: [...baseArgs, ...servers] };
    const start = {
      config: remote === null && tools === null ? withoutPlacedServers(config, home.home) : config,
      resumeThreadId: params.resumeSessionId,
      verification: params.credentialVerification ?? null,
      cwd: target.workspacePath,
      toolServers: tools === null ? [] : Object.keys(tools.servers),
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

/** The block's servers switched off for a session without tools, which must not start them. */
function withoutPlacedServers(config: CodexConfig, home: string): CodexConfig {
  let text: string | null = null;
  try {
    text = readFileSync(path.join(home, 'config.toml'), 'utf8');
  } catch {
    // No configuration: no block either.
  }
  const off = disabledServers(placedTables(text));
  return Object.keys(off).length === 0
    ? config
    : { ...config, configOverrides: { ...config.configOverrides, ...off } };
}

/** How long the `--help` probe may take. */
const HELP_PROBE_TIMEOUT_MS = 15_000;

/**
 * Asks the installed Codex whether it has `app-server`, once its app-server process died
 * before the handshake without saying why: an old build may take the unknown word for a
 * prompt instead of refusing it. True only when the help lists subcommands and not that one.
 * The probe runs where the agent runs (on its SSH host, with the session's environment).
 */
async function helpLacksAppServer(target: LaunchTarget, env: Record<string, string>): Promise<boolean> {
  const help = await runAuxiliary(target, ['--help'], env, HELP_PROBE_TIMEOUT_MS);
  return help !== null && /^Commands:/m.test(help) && !helpListsSubcommand(help, 'app-server');
}

/** The adapter of the `codex` kind. */
export function createCodexAdapter(): CodexAdapter {
  return new CodexAdapter();
}
