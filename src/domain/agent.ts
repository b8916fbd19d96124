/**
 * The agent contract: what an agent adapter promises the orchestrator. Every
 * runtime (a real CLI, the mock, the echo simulator) is seen only through these
 * types, so usage figures and turn outcomes mean the same thing for all of them.
 */

import type { AgentErrorKind } from './errors.js';
import type { Issue } from './issue.js';
import type { RemoteHost } from './remote.js';
import type { ToolDelivery } from './tool-delivery.js';

/** Token counts of a run, normalised: `inputTokens` includes cache reads and writes. */
export interface TokenCounts {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** input + output. */
  totalTokens: number;
}

/** A reported amount in some unit (USD or a vendor unit), kept in integer millionths. */
export interface ReportedAmount {
  /** `USD`, or a vendor unit's plural display name ("credits"). */
  unit: string;
  /** The amount in millionths of the unit (micro-dollars for USD). */
  micros: number;
}

/** Where a turn's spend figure comes from. */
export type UsageProvenance =
  /** The runtime reported the figure. */
  | 'reported'
  /** Derived from an estimated history position (a resumed session). */
  | 'token_estimate'
  /** Measured locally, without a model (mock and echo runtimes). */
  | 'local'
  /** No figure at all. */
  | 'unmeasured';

export type ToolKind = 'shell' | 'read' | 'edit' | 'skill';

/** One window of a provider rate limit as the runtime last reported it. */
export interface RateLimitWindow {
  /** The runtime's name for the window (`primary`, `secondary`, `five_hour`, …). */
  window: string;
  /** Share of the window already used, in percent (0–100); null when not reported. */
  usedPercent: number | null;
  /** Length of the window in minutes; null when not reported. */
  windowMinutes: number | null;
  /** When the window resets, epoch ms; null when not reported. */
  resetsAtMs: number | null;
}

interface EventBase {
  /** ISO-8601 UTC time the event was observed. */
  at: string;
  /** Pid of the agent process, "" when none. */
  agentPid: string;
}

export type AgentEvent =
  | (EventBase & { type: 'session_started'; sessionId: string })
  | (EventBase & {
      type: 'token_usage';
      /** Run-cumulative for this session: turn 2 includes turn 1. */
      usage: TokenCounts;
      /** Run-cumulative per model, as the runtime spells model names; {} when it names none. */
      usageByModel: Record<string, TokenCounts>;
      model: string | null;
    })
  | (EventBase & {
      type: 'tool_result';
      toolName: string;
      toolKind: ToolKind | null;
      /** Sanitised main argument (command, path, skill), null when none. */
      toolArgument: string | null;
      toolDurationMs: number;
      toolError: boolean;
    })
  | (EventBase & { type: 'notification'; message: string })
  | (EventBase & { type: 'malformed'; message: string })
  | (EventBase & { type: 'warning'; message: string })
  | (EventBase & { type: 'tool_channel_gap'; message: string })
  /**
   * The provider's rate limit as it stands: one limit (`limitId`, as the runtime names it)
   * with every window it reported. A later report of the same limit replaces this one.
   */
  | (EventBase & { type: 'rate_limits'; limitId: string; windows: RateLimitWindow[] })
  | (EventBase & { type: 'turn_completed'; message: string })
  | (EventBase & { type: 'turn_failed'; message: string; errorKind: AgentErrorKind })
  | (EventBase & { type: 'turn_cancelled'; message: string })
  | (EventBase & { type: 'turn_input_required'; message: string });

export type AgentEventType = AgentEvent['type'];

/** How a turn ended. */
export type ExitReason = 'turn_completed' | 'turn_failed' | 'turn_cancelled' | 'turn_input_required';

export interface TurnResult {
  /** The id the runtime would continue the session under; "" when unknown. */
  sessionId: string;
  exitReason: ExitReason;
  /** Run-cumulative usage of the session so far. */
  usage: TokenCounts;
  usageByModel: Record<string, TokenCounts>;
  /** True once the runtime has reported any usage figure for the session. */
  usageMeasured: boolean;
  /** The turn reached the model and its figure cannot be proven complete. */
  spendUnaccounted: boolean;
  /** Unaccounted only for lack of a figure, so a later session total can cover it. */
  spendCoverable: boolean;
  /** This turn's figure is a session total that covers every earlier turn. */
  coversSession: boolean;
  usageProvenance: UsageProvenance;
  /** Amounts the runtime reported for the session so far, one entry per unit. */
  reportedAmounts: ReportedAmount[];
  /** The runtime's final message, "" when none. */
  finalMessage: string;
}

/** An agent failure: the kind decides what the orchestrator does next. */
export class AgentError extends Error {
  override readonly name = 'AgentError';
  constructor(
    readonly kind: AgentErrorKind,
    message: string,
    options?: {
      cause?: unknown;
      /** For usage_limit: when the runtime says the limit resets (epoch ms), null when unknown. */
      resetAtMs?: number | null;
    },
  ) {
    super(`agent: ${kind}: ${message}`, options?.cause === undefined ? undefined : { cause: options.cause });
    this.resetAtMs = options?.resetAtMs ?? null;
    this.detail = message;
  }
  readonly resetAtMs: number | null;
  /** The message without the `agent: <kind>:` prefix. */
  readonly detail: string;
}

export interface TurnOutcome {
  result: TurnResult;
  error?: AgentError;
}

/** The agent slice of the workflow config that adapters read. */
export interface AgentSettings {
  kind: string;
  /** null = the kind's default command. */
  command: string | null;
  turnTimeoutMs: number;
  readTimeoutMs: number;
  /** 0 disables. */
  stallTimeoutMs: number;
  /** Added CPU niceness of a local agent process (`agent.nice`); absent = 0, the service's own priority. */
  niceness?: number;
}

export interface StartSessionParams {
  /** Absolute path of the issue's workspace. */
  workspacePath: string;
  /** The workspace root the path must stay inside (checked again right before every spawn). */
  workspaceRoot: string;
  agent: AgentSettings;
  /** The kind's own pass-through block, {} when absent. Read-only. */
  options: Record<string, unknown>;
  /** Session id to resume, null for a new session. */
  resumeSessionId: string | null;
  /** Environment the agent process starts from (secrets the operator withheld are already gone). */
  env: Record<string, string>;
  /** Set for the credential-verification session. */
  credentialVerification?: { fullContext: boolean };
  /** The SSH host the agent runs on (its workspace path is a path there); absent or null for this machine. */
  remote?: RemoteHost | null;
  /** The tool servers the runtime is pointed at; absent or null = none (verification sessions never get any). */
  tools?: ToolDelivery | null;
}

export interface RunTurnParams {
  prompt: string;
  issue: Issue;
  /** Receives every event, synchronously, only while runTurn runs. */
  onEvent(event: AgentEvent): void;
  /** Aborting cancels the turn. */
  signal: AbortSignal;
}

/** Opaque per-session state owned by the adapter. */
export interface AgentSession {
  /** Session id known so far; "" until the runtime names one. */
  readonly sessionId: string;
  readonly kind: string;
}

export interface AgentAdapter {
  startSession(params: StartSessionParams): Promise<AgentSession>;
  runTurn(session: AgentSession, params: RunTurnParams): Promise<TurnOutcome>;
  /** Idempotent; safe after a failure. */
  stopSession(session: AgentSession): Promise<void>;
}

/** Zero counts, for runs that have measured nothing yet. */
export const ZERO_TOKENS: Readonly<TokenCounts> = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  totalTokens: 0,
});
