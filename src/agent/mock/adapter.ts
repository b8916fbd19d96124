/**
 * The mock adapter: runs the mock runtime script as a real subprocess through
 * the fork-per-turn skeleton, so the directive table exercises the same process,
 * parsing, usage and disposition code every real CLI goes through.
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
import { mockArgs, mockTurnEnv } from './command.js';
import { mockBlock } from './config.js';
import { builtinRuntimeTarget } from './launch.js';
import { StreamSession } from './stream-session.js';
import { MOCK_USAGE_SOURCES } from './usage.js';

interface MockSession extends AgentSession {
  fork: ForkPerTurnSession;
  stream: StreamSession;
}

export class MockAdapter implements AgentAdapter {
  async startSession(params: StartSessionParams): Promise<AgentSession> {
    const parsed = mockBlock.parse(params.options);
    if (!parsed.ok)
      throw new AgentError('agent_not_found', `mock: ${parsed.issues.map((i) => i.message).join('; ')}`);
    const launch = builtinRuntimeTarget(import.meta.url, 'runtime', params);
    if (!launch.ok) throw launch.error;
    const stream = new StreamSession(MOCK_USAGE_SOURCES, params.resumeSessionId ?? `mock-${randomUUID()}`);
    const fork = new ForkPerTurnSession(
      launch.target,
      stream.hooks({
        buildArgs: mockArgs,
        turnEnv: (_ctx, base) => mockTurnEnv(parsed.config, stream.sessionId, base),
      }),
      { agent: params.agent, env: params.env, sources: MOCK_USAGE_SOURCES, stopGraceMs: 2_000 },
    );
    const session: MockSession = {
      kind: 'mock',
      fork,
      stream,
      get sessionId() {
        return stream.sessionId;
      },
    };
    return session;
  }

  runTurn(session: AgentSession, params: RunTurnParams): Promise<TurnOutcome> {
    return (session as MockSession).fork.runTurn(params);
  }

  async stopSession(session: AgentSession): Promise<void> {
    await (session as MockSession).fork.stop();
  }
}
