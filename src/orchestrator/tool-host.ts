/**
 * The tool sessions of running agents: one opened per run whose kind can reach the tool
 * server, closed when the run's worker exits (its token then refused), with every call
 * logged, counted and recorded against the run.
 */
import type { AgentKind } from '../agent/registry.js';
import type { RemoteHost } from '../domain/remote.js';
import { OWN_TOOL_SERVER, type ToolDelivery } from '../domain/tool-delivery.js';
import type { TrackerAdapter } from '../domain/tracker.js';
import type { PromptTool } from '../prompt/variables.js';
import type { ToolErrorCode } from '../tools/call.js';
import { offeredTools } from '../tools/catalog.js';
import type { ToolRunStatus, ToolSession } from '../tools/ports.js';
import { TOOL_TOKEN_ENV, TOOL_URL_ENV } from '../tools/relay.js';
import { TOOL_ENDPOINT_PATH, type ToolSessions } from '../tools/sessions.js';
import type { Workflow } from '../workflow/load.js';
import type { IssueSpend } from './budget.js';
import type { Observer } from './observations.js';
import type { Logger, OrchestratorStore } from './ports.js';
import { budgetsLeft, toolBackend } from './tool-backend.js';

/** Where the tool endpoint is and how a runtime on this machine reaches it. */
export interface ToolEndpointDeps {
  sessions: ToolSessions;
  /** The endpoint's URL on this machine's loopback. */
  url: string;
  /** The endpoint's port on this machine's loopback (an SSH host's forward reaches it). */
  port: number;
  /** The stdio relay a local runtime starts (`orchestrator mcp-server`): program and arguments. */
  relay: { command: string; args: readonly string[] };
  /** Reported in the MCP handshake. */
  version: string;
  /** Masks a session's token while it lives; absent = nothing to mask with (tests). */
  masking?: { add(token: string): void; remove(token: string): void };
}

/** What the host reads of a running run. */
export interface ToolRun {
  issue: { id: string; identifier: string };
  runId: number;
  startedAtMs: number;
  turn: number;
  usage: { inputTokens: number; outputTokens: number; totalTokens: number };
  costMicroUsd: number | null;
  /** Set by `ask_human`: the worker parks the issue after the turn. */
  question: string | null;
  toolToken: string | null;
  /** The issue's spend when the run started, this run's session counted; null = none recorded. */
  spendBefore: IssueSpend | null;
}

export interface ToolHostDeps {
  endpoint: ToolEndpointDeps;
  tracker: TrackerAdapter;
  store: Pick<OrchestratorStore, 'runsForIssue' | 'toolCalls'>;
  workflow: () => Workflow;
  /** The running run of the issue, if any. */
  running: (issueId: string) => ToolRun | undefined;
  log: Logger;
  observe: Observer;
  nowMs: () => number;
}

/** What a run gets: its delivery, a gap (tools on, but this session cannot reach them), or nothing. */
export type ToolOpening =
  /** `tools`: what the session's prompt may list (our server's tools, when it is delivered). */
  | { type: 'delivered'; delivery: ToolDelivery; tools: PromptTool[] }
  | { type: 'gap'; reason: string }
  | { type: 'off' };

/** How a runtime reaches our server: the stdio relay here, or HTTP on a host's forwarded port. */
type Reach = { type: 'relay' } | { type: 'forward'; remotePort: number };

/** Opens and closes the tool sessions of runs. */
export class ToolHost {
  private readonly backend;

  constructor(private readonly deps: ToolHostDeps) {
    this.backend = toolBackend({
      tracker: deps.tracker,
      states: () => configuredStates(deps.workflow()),
      runs: (issueId, limit) => deps.store.runsForIssue(issueId, limit),
      runStatus: (session) => this.runStatus(session),
      parkAfterTurn: (session, question) => {
        const run = this.runOf(session);
        if (run !== undefined) run.question = question;
      },
    });
  }

  /**
   * Opens the run's tool session and says how its runtime reaches it (`host`: the SSH host it
   * runs on, null for this machine); a gap when tools are on but this session cannot reach
   * them (a kind with no channel, a host that refuses the forward).
   */
  async open(
    run: ToolRun,
    kind: AgentKind,
    workflow: Workflow,
    host: RemoteHost | null,
  ): Promise<ToolOpening> {
    const { config } = workflow;
    const theirs = config.agent.mcpServers;
    const wanted = config.tools.enabled || Object.keys(theirs.servers).length > 0;
    if (!wanted || kind.runtime?.callsNoTools === true) return { type: 'off' };
    if ((kind.runtime?.mcpDialect ?? 'none') === 'none') {
      const why = kind.runtime?.mcpDialectNoneReason ?? 'it declares no tool channel';
      return { type: 'gap', reason: `agent kind "${kind.name}" cannot reach the tool server: ${why}` };
    }
    let reach: Reach = { type: 'relay' };
    if (config.tools.enabled && host !== null) {
      // Before the session opens, so a host that refuses the forward leaves no token behind.
      const forwarded = await host.forwardToLocal(this.deps.endpoint.port);
      if (!forwarded.ok) {
        return {
          type: 'gap',
          reason: `the tool server cannot be reached from ${host.name}: ${forwarded.message}`,
        };
      }
      reach = { type: 'forward', remotePort: forwarded.remotePort };
    }
    // The operator's servers come with ours or alone (`tools.enabled: false`); a clash of names
    // was refused when the workflow loaded.
    const ours = config.tools.enabled ? this.openOwn(run, workflow, reach) : { servers: {}, env: {} };
    const delivery = { servers: { ...ours.servers, ...theirs.servers }, env: { ...theirs.env, ...ours.env } };
    return { type: 'delivered', delivery, tools: advertisedTools(delivery, this.deps.tracker.queryTool) };
  }

  /** Opens the run's session on our server and says how its runtime reaches it from where it runs. */
  private openOwn(run: ToolRun, workflow: Workflow, reach: Reach): ToolDelivery {
    const { config } = workflow;
    const { endpoint } = this.deps;
    const session: ToolSession = {
      issueId: run.issue.id,
      identifier: run.issue.identifier,
      runId: run.runId,
      startedAtMs: run.startedAtMs,
    };
    const token = endpoint.sessions.open({
      session,
      backend: this.backend,
      policy: {
        configuredStates: configuredStates(workflow),
        allowOtherIssues: config.tools.allowOtherIssues,
        maxCommentChars: config.tools.maxCommentChars,
      },
      version: endpoint.version,
      onCall: (tool, outcome, durationMs) => this.called(session, tool, outcome, durationMs),
    });
    run.toolToken = token;
    endpoint.masking?.add(token);
    if (reach.type === 'forward') {
      // On a host the relay is not installed: the runtime speaks HTTP to the forwarded port.
      return {
        servers: {
          [OWN_TOOL_SERVER]: {
            transport: 'http',
            url: `http://127.0.0.1:${reach.remotePort}${TOOL_ENDPOINT_PATH}`,
            headers: { Authorization: { prefix: 'Bearer ', variable: TOOL_TOKEN_ENV } },
          },
        },
        env: { [TOOL_TOKEN_ENV]: token },
      };
    }
    return {
      servers: {
        [OWN_TOOL_SERVER]: {
          transport: 'stdio',
          command: endpoint.relay.command,
          args: endpoint.relay.args,
          envNames: [TOOL_URL_ENV, TOOL_TOKEN_ENV],
        },
      },
      env: { [TOOL_URL_ENV]: endpoint.url, [TOOL_TOKEN_ENV]: token },
    };
  }

  /** Ends the run's tool session: its token is refused from now on. */
  close(run: ToolRun): void {
    if (run.toolToken === null) return;
    this.deps.endpoint.sessions.close(run.toolToken);
    this.deps.endpoint.masking?.remove(run.toolToken);
    run.toolToken = null;
  }

  private runOf(session: ToolSession): ToolRun | undefined {
    const run = this.deps.running(session.issueId);
    return run?.runId === session.runId ? run : undefined;
  }

  private runStatus(session: ToolSession): ToolRunStatus | null {
    const run = this.runOf(session);
    if (run === undefined) return null;
    const { agent } = this.deps.workflow().config;
    // As the budget check between turns counts: the spend before the run plus the run's own.
    const before = run.spendBefore;
    return {
      turn: run.turn,
      elapsedMs: Math.max(0, this.deps.nowMs() - run.startedAtMs),
      tokens: { input: run.usage.inputTokens, output: run.usage.outputTokens, total: run.usage.totalTokens },
      costUsd: run.costMicroUsd === null ? null : run.costMicroUsd / 1e6,
      budgets: budgetsLeft(
        {
          maxTurns: agent.maxTurns,
          maxSessions: agent.maxSessions,
          maxTokens: agent.maxTokens,
          maxCostMicroUsd: Math.round(agent.maxCostUsd * 1e6),
        },
        {
          turns: run.turn,
          sessions: before?.sessions ?? 1,
          tokens: (before?.tokens ?? 0) + run.usage.totalTokens,
          costMicroUsd:
            run.costMicroUsd === null || before?.costMicroUsd === null
              ? null
              : (before?.costMicroUsd ?? 0) + run.costMicroUsd,
        },
      ),
    };
  }

  private called(
    session: ToolSession,
    tool: string,
    outcome: 'ok' | ToolErrorCode,
    durationMs: number,
  ): void {
    const fields = {
      issue_id: session.issueId,
      issue_identifier: session.identifier,
      run_id: session.runId,
      tool,
      outcome,
      duration_ms: Math.round(durationMs),
    };
    if (outcome === 'ok') this.deps.log.info(fields, 'tool call');
    else this.deps.log.warn(fields, 'tool call refused or failed');
    try {
      this.deps.store.toolCalls.add(session.runId, tool, outcome);
    } catch (error) {
      // The count is a record, not a decision: a full disk must not fail the agent's call.
      this.deps.log.warn({ ...fields, error: String(error) }, 'tool call not recorded');
    }
    this.deps.observe({ type: 'tool_call', tool, outcome, durationMs });
  }
}

/** The tools a session given `delivery` can call, as its prompt may list them (with the tracker's query tool, if any). */
export function advertisedTools(
  delivery: ToolDelivery,
  queryTool?: { name: string; description: string },
): PromptTool[] {
  if (!Object.hasOwn(delivery.servers, OWN_TOOL_SERVER)) return [];
  return offeredTools(queryTool).map((t) => ({
    server: OWN_TOOL_SERVER,
    name: t.name,
    description: t.description,
  }));
}

/** Every state the workflow names, first spelling kept: where a tool may move an issue. */
export function configuredStates(workflow: Workflow): string[] {
  const t = workflow.config.tracker;
  const all = [
    ...t.activeStates,
    ...t.terminalStates,
    t.handoffState,
    t.inProgressState,
    t.blockedState,
  ].filter((s): s is string => s !== null && s.trim() !== '');
  const seen = new Set<string>();
  return all.filter((s) => {
    const key = s.toLowerCase();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
