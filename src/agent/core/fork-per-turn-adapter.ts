/**
 * The adapter every fork-per-turn kind shares. Starting a session is the same sequence for all
 * of them: parse the kind's block (a bad block fails the start as a configuration error),
 * let the kind refuse a start it knows cannot work, resolve the launch target, let the kind
 * plan the session (its state, hooks, environment, any managed home), and run turns through
 * the fork-per-turn skeleton. A kind supplies only those decisions.
 */
import {
  type AgentAdapter,
  AgentError,
  type AgentSession,
  type RunTurnParams,
  type StartSessionParams,
  type TurnOutcome,
} from '../../domain/agent.js';
import type { ConfigBlock } from '../config-block.js';
import type { UsageSources } from '../usage/index.js';
import { type ForkPerTurnHooks, ForkPerTurnSession } from './fork-per-turn.js';
import { type LaunchTarget, resolveLaunchTarget } from './launch-target.js';
import { sessionDelivery, withToolEnv } from './tool-config.js';

/** What a kind decides for one session. */
export interface ForkPerTurnPlan {
  hooks: ForkPerTurnHooks;
  /** The session id as known now (a kind may learn it from the first turn). */
  sessionId(): string;
  /** The environment every turn starts from; the session's own when absent. */
  env?: Record<string, string>;
  /** Variables kept out of every turn's environment, beyond the target's own. */
  withheldEnv?: readonly string[];
  /** Releases what the session held, after its process work has stopped. */
  dispose?(): void;
}

export interface ForkPerTurnAdapterOptions {
  /** SIGTERM → SIGKILL grace for the process group. */
  stopGraceMs?: number;
}

interface ForkAgentSession extends AgentSession {
  fork: ForkPerTurnSession;
  dispose: (() => void) | null;
}

/** A fork-per-turn adapter; a kind extends it with its block, default command, sources and plan. */
export abstract class ForkPerTurnAdapter<C> implements AgentAdapter {
  protected abstract readonly kind: string;
  protected abstract readonly block: ConfigBlock<C>;
  protected abstract readonly defaultCommand: string;
  protected abstract readonly sources: UsageSources;

  constructor(protected readonly options: ForkPerTurnAdapterOptions = {}) {}

  /** Why a start with this config cannot work, before anything is resolved or launched; null to go on. */
  protected refuse(_config: C, _params: StartSessionParams): string | null {
    return null;
  }

  /** The session's state, hooks and environment; throws an AgentError to refuse the start. */
  protected abstract plan(
    config: C,
    params: StartSessionParams,
    target: LaunchTarget,
  ): ForkPerTurnPlan | Promise<ForkPerTurnPlan>;

  async startSession(params: StartSessionParams): Promise<AgentSession> {
    const parsed = this.block.parse(params.options);
    if (!parsed.ok) {
      throw new AgentError(
        'agent_not_found',
        `${this.kind}: ${parsed.issues.map((i) => i.message).join('; ')}`,
      );
    }
    const refusal = this.refuse(parsed.config, params);
    if (refusal !== null) throw new AgentError('agent_not_found', refusal);
    const launch = resolveLaunchTarget({
      workspacePath: params.workspacePath,
      workspaceRoot: params.workspaceRoot,
      command: params.agent.command,
      defaultCommand: this.defaultCommand,
      env: params.env,
      remote: params.remote ?? null,
    });
    if (!launch.ok) throw launch.error;
    const plan = await this.plan(parsed.config, params, launch.target);
    const target = {
      ...launch.target,
      withheldEnv: [...launch.target.withheldEnv, ...(plan.withheldEnv ?? [])],
    };
    const fork = new ForkPerTurnSession(target, plan.hooks, {
      agent: params.agent,
      env: withToolEnv(plan.env ?? params.env, sessionDelivery(params)),
      sources: this.sources,
      ...(this.options.stopGraceMs === undefined ? {} : { stopGraceMs: this.options.stopGraceMs }),
    });
    const session: ForkAgentSession = {
      kind: this.kind,
      fork,
      dispose: plan.dispose ?? null,
      get sessionId() {
        return plan.sessionId();
      },
    };
    return session;
  }

  runTurn(session: AgentSession, params: RunTurnParams): Promise<TurnOutcome> {
    return (session as ForkAgentSession).fork.runTurn(params);
  }

  async stopSession(session: AgentSession): Promise<void> {
    const own = session as ForkAgentSession;
    await own.fork.stop();
    own.dispose?.();
  }
}
