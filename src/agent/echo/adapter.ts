/**
 * The echo adapter: simulate mode. Runs the echo runtime script as a real
 * subprocess through the fork-per-turn skeleton; it writes the built-in stream,
 * so it shares the stream session with the mock kind.
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
import { builtinRuntimeTarget } from '../mock/launch.js';
import { StreamSession } from '../mock/stream-session.js';
import { echoArgs, echoTurnEnv } from './command.js';
import { echoBlock } from './config.js';
import { ECHO_USAGE_SOURCES } from './usage.js';

interface EchoSession extends AgentSession {
  fork: ForkPerTurnSession;
}

export class EchoAdapter implements AgentAdapter {
  async startSession(params: StartSessionParams): Promise<AgentSession> {
    const parsed = echoBlock.parse(params.options);
    if (!parsed.ok)
      throw new AgentError('agent_not_found', `echo: ${parsed.issues.map((i) => i.message).join('; ')}`);
    const launch = builtinRuntimeTarget(import.meta.url, 'runtime', params);
    if (!launch.ok) throw launch.error;
    const stream = new StreamSession(ECHO_USAGE_SOURCES, params.resumeSessionId ?? `echo-${randomUUID()}`);
    const fork = new ForkPerTurnSession(
      launch.target,
      stream.hooks({ buildArgs: echoArgs, turnEnv: (ctx, base) => echoTurnEnv(parsed.config, ctx, base) }),
      { agent: params.agent, env: params.env, sources: ECHO_USAGE_SOURCES, stopGraceMs: 2_000 },
    );
    const session: EchoSession = {
      kind: 'echo',
      fork,
      get sessionId() {
        return stream.sessionId;
      },
    };
    return session;
  }

  runTurn(session: AgentSession, params: RunTurnParams): Promise<TurnOutcome> {
    return (session as EchoSession).fork.runTurn(params);
  }

  async stopSession(session: AgentSession): Promise<void> {
    await (session as EchoSession).fork.stop();
  }
}
