/**
 * The adapter shared by the built-in runtimes (mock and echo): both run a
 * runtime script through the fork-per-turn skeleton and write the built-in
 * stream; they differ only in their block, usage declaration and environment.
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
import type { ConfigBlock } from '../config-block.js';
import { ForkPerTurnSession, type TurnContext } from '../core/fork-per-turn.js';
import type { UsageSources } from '../usage/index.js';
import { builtinRuntimeTarget } from './launch.js';
import { StreamSession } from './stream-session.js';

/** What distinguishes one built-in runtime kind from another. */
export interface StreamKind<C> {
  kind: string;
  block: ConfigBlock<C>;
  sources: UsageSources;
  /** URL of the module the runtime script sits beside (`import.meta.url` of the kind's folder). */
  moduleUrl: string;
  turnEnv(
    config: C,
    ctx: TurnContext,
    sessionId: string,
    base: Record<string, string>,
  ): Record<string, string>;
}

interface StreamAgentSession extends AgentSession {
  fork: ForkPerTurnSession;
}

const STOP_GRACE_MS = 2_000;

export class StreamRuntimeAdapter<C> implements AgentAdapter {
  constructor(private readonly spec: StreamKind<C>) {}

  async startSession(params: StartSessionParams): Promise<AgentSession> {
    const { spec } = this;
    const parsed = spec.block.parse(params.options);
    if (!parsed.ok)
      throw new AgentError(
        'agent_not_found',
        `${spec.kind}: ${parsed.issues.map((i) => i.message).join('; ')}`,
      );
    const launch = builtinRuntimeTarget(spec.moduleUrl, 'runtime', params);
    if (!launch.ok) throw launch.error;
    const stream = new StreamSession(spec.sources, params.resumeSessionId ?? `${spec.kind}-${randomUUID()}`);
    const fork = new ForkPerTurnSession(
      launch.target,
      stream.hooks({
        buildArgs: () => [],
        turnEnv: (ctx, base) => spec.turnEnv(parsed.config, ctx, stream.sessionId, base),
      }),
      { agent: params.agent, env: params.env, sources: spec.sources, stopGraceMs: STOP_GRACE_MS },
    );
    const session: StreamAgentSession = {
      kind: spec.kind,
      fork,
      get sessionId() {
        return stream.sessionId;
      },
    };
    return session;
  }

  runTurn(session: AgentSession, params: RunTurnParams): Promise<TurnOutcome> {
    return (session as StreamAgentSession).fork.runTurn(params);
  }

  async stopSession(session: AgentSession): Promise<void> {
    await (session as StreamAgentSession).fork.stop();
  }
}
