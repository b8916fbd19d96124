/**
 * One worker attempt for one issue: in-progress transition, workspace and
 * hooks, sandbox and credential proofs, an agent session, turns until the issue leaves an
 * active state, `max_turns`, a budget, a `BLOCKED:` question or an error, then
 * `after_run`. A worker never touches the orchestrator's state: it reports
 * events, turns and its exit through callbacks, and the owner decides.
 */
import { checkSandbox } from '../agent/core/sandbox-check.js';
import {
  type ProofStore,
  proofKey,
  verificationTimeoutMs,
  verifyCredential,
} from '../agent/core/verify-credential.js';
import type { AgentKind } from '../agent/registry.js';
import {
  type AgentAdapter,
  AgentError,
  type AgentEvent,
  type AgentSession,
  type TurnOutcome,
  type TurnResult,
  ZERO_TOKENS,
} from '../domain/agent.js';
import { type ErrorKind, TrackerError } from '../domain/errors.js';
import type { ForgeAdapter } from '../domain/forge.js';
import type { Issue } from '../domain/issue.js';
import type { RemoteHost } from '../domain/remote.js';
import type { TrackerAdapter } from '../domain/tracker.js';
import { turnPromptBounded } from '../prompt/bounded-render.js';
import type { ReactionVariables } from '../prompt/reaction-variables.js';
import { promptVariables } from '../prompt/variables.js';
import type { Workflow } from '../workflow/load.js';
import { WorkspaceGit } from '../workspace/git/git.js';
import { prepareSignalDir, readStatusSignal, SIGNAL_DIR, type StatusSignal } from '../workspace/signals.js';
import type { BudgetVerdict } from './budget.js';
import { BLOCKED_PREFIX, type WorkerExit } from './exit-policy.js';
import type { Observer } from './observations.js';
import type { Logger, TurnRecord, Workspaces } from './ports.js';
import { branchName, type PublishedWork, publishWork } from './publish.js';
import type { SelfReviewOutcome } from './self-review/loop.js';
import { selfReview } from './self-review/run.js';
import { stateClassifier } from './states.js';
import type { ToolOpening } from './tool-host.js';

export interface WorkerJob {
  issue: Issue;
  /** 1-based: the first run of a claim is attempt 1. */
  attempt: number;
  resumeSessionId: string | null;
  /** The workflow frozen for this attempt: a reload applies to the next dispatch. */
  workflow: Workflow;
  /** The feedback a reaction run carries to its prompts; null for a run from the tracker. */
  reaction?: ReactionVariables | null;
}

export interface WorkerDeps {
  tracker: TrackerAdapter;
  adapter: AgentAdapter;
  kind: AgentKind;
  /** The workspaces on the host the worker runs on. */
  workspaces: Workspaces;
  /** The SSH host that runs the agent and its workspace; null for this machine. */
  host: RemoteHost | null;
  proofs: ProofStore;
  /** The agent's environment: already stripped of secrets it must not see. */
  agentEnv: Record<string, string>;
  /** Credential values of the kind (for the proof key only; hashed). */
  credentialValues: string[];
  log: Logger;
  nowMs(): number;
  /** Told of the worker's own tracker writes (in-progress transition, dispatch comment). */
  observe: Observer;
  onEvent(event: AgentEvent): void;
  onWorkspace(path: string): void;
  /** A turn is about to start (the number it will have). */
  onTurnStart(turn: number): void;
  onTurn(record: TurnRecord): void;
  /** Checked between turns with the session's run-cumulative result so far. */
  budgetAfterTurn(result: TurnResult): BudgetVerdict;
  /** Where pull requests are opened (`git.pull_request`); null when the tracker has no forge. */
  forge?: ForgeAdapter | null;
  /** The token a push authenticates with (the tracker's); '' when the remote asks none. */
  forgeToken?: string;
  /**
   * Opens the run's tool session once the workspace is ready (never for the verification
   * session); absent or null = no tools.
   */
  openTools?: (() => Promise<ToolOpening>) | null;
  /** The question the agent asked through `ask_human` so far; null = none. */
  question?: () => string | null;
}

export interface WorkerOutcome {
  exit: WorkerExit;
  /** The issue's state as last seen (after the in-progress transition and each turn). */
  lastState: string;
  /** The issue's state when the first turn started (after the in-progress transition); null when no turn ran. */
  firstTurnState: string | null;
  workspace: string | null;
  /** The session's final figures (run-cumulative); null when no turn ran. */
  lastResult: TurnResult | null;
  unaccountedTurns: number;
  /** What was pushed and opened after the run; null when nothing was (no `git:`, a failure). */
  published?: PublishedWork | null;
  /** The self-review loop's record; null when it did not run. */
  review?: SelfReviewOutcome | null;
}

/** Runs one attempt; resolves with its exit, never rejects for expected failures. */
export async function runWorker(
  job: WorkerJob,
  deps: WorkerDeps,
  signal: AbortSignal,
): Promise<WorkerOutcome> {
  const { config, template } = job.workflow;
  const { issue } = job;
  const fields = { issue_id: issue.id, issue_identifier: issue.identifier, attempt: job.attempt };
  let lastState = issue.state;
  let firstTurnState: string | null = null;
  let lastResult: TurnResult | null = null;
  let unaccountedTurns = 0;
  let turns = 0;
  let sessionId: string | null = job.resumeSessionId;
  let workspacePath: string | null = null;
  let published: PublishedWork | null = null;
  let review: SelfReviewOutcome | null = null;
  const classify = stateClassifier(config.tracker);
  const isActive = (state: string) => classify(state) === 'active';
  const finish = (exit: WorkerExit): WorkerOutcome => ({
    exit,
    lastState,
    firstTurnState,
    workspace: workspacePath,
    lastResult,
    unaccountedTurns,
    published,
    review,
  });
  const failed = (
    kind: ErrorKind | undefined,
    message: string,
    resetAtMs: number | null = null,
  ): WorkerOutcome => finish({ type: 'failed', kind, message, resetAtMs, sessionId, turns });
  const cancelled = (): WorkerOutcome =>
    finish({ type: 'cancelled', reason: String(signal.reason ?? 'cancelled'), sessionId, turns });

  const inProgress = config.tracker.inProgressState;
  if (inProgress !== null && issue.state.toLowerCase() !== inProgress.toLowerCase()) {
    try {
      await deps.tracker.transitionIssue(issue.id, inProgress);
      lastState = inProgress;
      deps.observe({ type: 'transition', purpose: 'in_progress', result: 'success' });
    } catch (error) {
      deps.observe({ type: 'transition', purpose: 'in_progress', result: 'error' });
      deps.log.warn({ ...fields, error: describe(error) }, 'in-progress transition failed');
    }
  }
  if (config.tracker.comments.onDispatch) {
    const body = dispatchComment(config.agent.kind, job.attempt);
    const comment = { type: 'comment', issueId: issue.id, lifecycle: 'dispatch', body } as const;
    await deps.tracker
      .commentIssue(issue.id, body)
      .then(() => deps.observe({ ...comment, result: 'success' }))
      .catch((error: unknown) => {
        deps.observe({ ...comment, result: 'error' });
        deps.log.warn({ ...fields, error: describe(error) }, 'dispatch comment failed');
      });
  }
  if (signal.aborted) return cancelled();

  const prepared = await deps.workspaces.prepare(issue, job.attempt, signal);
  if (!prepared.ok) {
    const kind: ErrorKind =
      prepared.error.kind === 'host_unreachable'
        ? 'host_unreachable'
        : prepared.error.kind === 'busy'
          ? 'workspace_busy'
          : prepared.error.kind === 'io'
            ? 'workspace_io_failed'
            : prepared.error.kind === 'hook_failed' || prepared.error.kind === 'hook_timeout'
              ? 'workspace_hook_failed'
              : 'workspace_invalid';
    return failed(kind, prepared.error.message);
  }
  const workspace = prepared.workspace.path;
  workspacePath = workspace;
  deps.onWorkspace(workspace);

  // Signal files and git live in a workspace on this machine; on an SSH host neither is read.
  const local = deps.host === null;
  const git = local ? config.git : null;
  const maxTurns = Math.max(1, config.agent.maxTurns);
  const opening: ToolOpening = (await deps.openTools?.()) ?? { type: 'off' };
  if (opening.type === 'gap') {
    // Once per session, so an operator sees why an agent told of no tools has none.
    deps.onEvent({
      type: 'tool_channel_gap',
      at: new Date(deps.nowMs()).toISOString(),
      agentPid: '',
      message: opening.reason,
    });
  }
  const tools = opening.type === 'delivered' ? opening.delivery : null;
  // Only a session given the tool server is told of the tools, so none is told of a tool it cannot call.
  const advertised = opening.type === 'delivered' ? opening.tools : [];
  const varsFor = (turn: number) =>
    promptVariables({
      issue,
      attempt: job.attempt,
      turn,
      maxTurns,
      workspacePath: workspace,
      reaction: job.reaction ?? null,
      tools: advertised,
    });
  try {
    if (signal.aborted) return cancelled();
    if (local) {
      try {
        prepareSignalDir(workspace);
      } catch (error) {
        return failed('workspace_io_failed', `preparing ${SIGNAL_DIR} failed: ${describe(error)}`);
      }
    }
    let branch = '';
    const repo = git === null ? null : new WorkspaceGit(workspace);
    if (git !== null && repo !== null) {
      if (!(await repo.isRepository())) {
        return failed(
          'git_not_a_repository',
          `git: is set, but the workspace ${workspace} is not a git work tree: clone the repository in hooks.after_create`,
        );
      }
      const named = branchName(git, varsFor(1));
      if (!named.ok) return failed('prompt_render_failed', named.message);
      branch = named.branch;
      if (job.reaction?.merge_conflict) {
        // The agent merges the base in; it has no token to fetch it, so the orchestrator does.
        const fetched = await repo.fetch(git.remote, git.baseBranch, deps.forgeToken ?? '');
        if (!fetched.ok) return failed(fetched.code, fetched.message);
      }
      const checkedOut = await repo.checkoutBranch(branch, git.baseBranch, git.remote);
      if (!checkedOut.ok) return failed(checkedOut.code, checkedOut.message);
    }
    if (signal.aborted) return cancelled();
    const start = {
      workspacePath: workspace,
      workspaceRoot: config.workspaceRoot,
      agent: {
        kind: config.agent.kind,
        command: config.agent.command,
        turnTimeoutMs: config.agent.turnTimeoutMs,
        readTimeoutMs: config.agent.readTimeoutMs,
        stallTimeoutMs: config.agent.stallTimeoutMs,
        niceness: config.agent.niceness,
      },
      options: config.agentOptions,
      resumeSessionId: job.resumeSessionId,
      env: deps.agentEnv,
      remote: deps.host,
    };
    // Start-up proved the sandbox of the setup it started with; a reloaded setup is probed here.
    // On an SSH host the runtime is not asked (start-up said so).
    if (deps.host === null && deps.kind.runtime !== undefined) {
      const sandbox = await checkSandbox({
        kind: config.agent.kind,
        runtime: deps.kind.runtime,
        command: config.agent.command,
        options: config.agentOptions,
        env: deps.agentEnv,
        workspacePath: workspace,
        store: deps.proofs,
        nowMs: deps.nowMs,
      });
      if (!sandbox.ok) {
        deps.log.warn({ ...fields, error: sandbox.message }, 'sandbox unusable');
        return failed('sandbox_unusable', sandbox.message);
      }
      if (signal.aborted) return cancelled();
    }
    const verification = await verifyCredential({
      adapter: deps.adapter,
      start,
      key: proofKey(
        config.agent.kind,
        config.agent.command,
        config.agentOptions,
        deps.credentialValues,
        deps.host?.name ?? null,
      ),
      store: deps.proofs,
      issue,
      nowMs: deps.nowMs,
      timeoutMs: verificationTimeoutMs(config.agent),
    });
    if (!verification.ok) {
      deps.log.warn({ ...fields, error: verification.error.message }, 'credential verification failed');
      return failed(verification.error.kind, verification.error.detail, verification.error.resetAtMs);
    }
    if (signal.aborted) return cancelled();

    let session: AgentSession;
    try {
      session = await deps.adapter.startSession({ ...start, tools });
    } catch (error) {
      if (error instanceof AgentError) return failed(error.kind, error.detail, error.resetAtMs);
      return failed('response_error', describe(error));
    }
    /** Runs one turn on the session and records it; the caller decides what follows. */
    const playTurn = async (prompt: string): Promise<TurnOutcome> => {
      const turn = turns + 1;
      const startedAt = new Date(deps.nowMs()).toISOString();
      firstTurnState ??= lastState;
      deps.onTurnStart(turn);
      deps.log.info({ ...fields, turn, session_id: session.sessionId }, 'turn started');
      const outcome = await deps.adapter.runTurn(session, { prompt, issue, onEvent: deps.onEvent, signal });
      turns = turn;
      lastResult = outcome.result;
      if (outcome.result.sessionId !== '') sessionId = outcome.result.sessionId;
      if (outcome.result.spendUnaccounted) unaccountedTurns += 1;
      if (outcome.result.spendUnaccounted && !outcome.result.usageMeasured) {
        // The runtime produced output but no usage figure: the spend is unknown, not zero.
        deps.log.warn(
          { ...fields, turn, session_id: sessionId, kind: config.agent.kind },
          'spend_unreported',
        );
      }
      deps.onTurn({
        turn,
        startedAt,
        endedAt: new Date(deps.nowMs()).toISOString(),
        result: outcome.result,
        errorKind: outcome.error?.kind ?? null,
        error: outcome.error?.detail ?? null,
      });
      deps.log.info(
        {
          ...fields,
          turn,
          session_id: sessionId,
          exit_reason: outcome.result.exitReason,
          error_kind: outcome.error?.kind,
        },
        'turn ended',
      );
      return outcome;
    };
    /** The agent's status signal after a turn (read on this machine only). */
    const statusSignal = (): StatusSignal | null => {
      if (!local) return null;
      const read = readStatusSignal(workspace);
      if (read.kind === 'ignored') deps.log.warn({ ...fields, reason: read.reason }, 'status signal ignored');
      return read.kind === 'read' ? read.value : null;
    };
    try {
      let finalMessage = '';
      let askedForReview = false;
      for (let turn = 1; turn <= maxTurns; turn++) {
        if (signal.aborted) return cancelled();
        // Bounded: a runaway template must not freeze the API and the other workers.
        const rendered = await turnPromptBounded(template, varsFor(turn));
        if (!rendered.ok) {
          return failed('prompt_render_failed', rendered.diagnostics.map((d) => d.message).join('; '));
        }
        const outcome = await playTurn(rendered.text);
        if (signal.aborted) return cancelled();
        if (outcome.error !== undefined) {
          return failed(outcome.error.kind, outcome.error.detail, outcome.error.resetAtMs);
        }
        finalMessage = outcome.result.finalMessage;
        if (finalMessage.trim().startsWith(BLOCKED_PREFIX)) {
          return finish({ type: 'completed', finalMessage, sessionId, turns });
        }
        const asked = deps.question?.() ?? null;
        if (asked !== null) {
          // `ask_human` posted the question already; the exit parks the issue without a second comment.
          deps.log.info({ ...fields, turn }, 'the agent asked a person a question');
          return finish({
            type: 'completed',
            finalMessage: `${BLOCKED_PREFIX} ${asked}`,
            sessionId,
            turns,
            questionPosted: true,
          });
        }
        const status = statusSignal();
        if (status === 'blocked') {
          deps.log.info({ ...fields, turn, signal: status }, 'the agent signalled a stop');
          const question = finalMessage.trim() || `the agent wrote "blocked" to ${SIGNAL_DIR}/status`;
          return finish({
            type: 'completed',
            finalMessage: `${BLOCKED_PREFIX} ${question}`,
            sessionId,
            turns,
          });
        }
        const budget = deps.budgetAfterTurn(outcome.result);
        if (budget.exhausted) {
          return finish({
            type: 'budget_exhausted',
            limit: budget.limit,
            detail: budget.detail,
            sessionId,
            turns,
          });
        }
        try {
          const states = await deps.tracker.fetchIssueStatesByIds([issue.id]);
          const current = states.find((s) => s.id === issue.id);
          if (current === undefined) {
            lastState = '';
            return finish({ type: 'completed', finalMessage, sessionId, turns });
          }
          lastState = current.state;
        } catch (error) {
          const kind = error instanceof TrackerError ? error.kind : 'tracker_transport_error';
          return failed(kind, `refreshing the issue state failed: ${describe(error)}`);
        }
        if (status === 'needs-human-review') {
          deps.log.info({ ...fields, turn, signal: status }, 'the agent signalled a stop');
          askedForReview = true;
          break;
        }
        if (!isActive(lastState)) break;
      }

      if (config.selfReview.enabled && local && !askedForReview) {
        review = await selfReview({
          repo: repo ?? new WorkspaceGit(workspace),
          baseRef: git === null ? null : await (repo as WorkspaceGit).baseRef(git.baseBranch, git.remote),
          settings: config.selfReview,
          issue,
          attempt: job.attempt,
          workspace,
          workspaces: deps.workspaces,
          signal,
          playTurn,
          budgetAfterTurn: deps.budgetAfterTurn,
        });
        deps.log.info(
          {
            ...fields,
            status: review.status,
            iterations: review.iterations.length,
            verdict: review.finalVerdict,
          },
          'self-review ended',
        );
        if (signal.aborted) return cancelled();
        if (review.status === 'stopped' && statusSignal() === 'blocked') {
          const question =
            (lastResult as TurnResult | null)?.finalMessage.trim() ||
            `the agent wrote "blocked" to ${SIGNAL_DIR}/status`;
          return finish({
            type: 'completed',
            finalMessage: `${BLOCKED_PREFIX} ${question}`,
            sessionId,
            turns,
          });
        }
      }

      if (git !== null && repo !== null) {
        const outcome = await publishWork(
          { issue, git, branch, workspace, vars: varsFor(turns) },
          { git: repo, forge: deps.forge ?? null, token: deps.forgeToken ?? '', nowMs: deps.nowMs },
        );
        if (outcome.type === 'failed') {
          deps.log.warn(
            { ...fields, error_kind: outcome.kind, error: outcome.message },
            'publishing the work failed',
          );
          return failed(outcome.kind, outcome.message);
        }
        if (outcome.type === 'no_changes') {
          deps.log.info({ ...fields, branch }, 'the run left no commit and no change');
          if (git.requireChanges) return finish({ type: 'no_changes', sessionId, turns });
        } else {
          published = outcome.work;
          deps.log.info(
            {
              ...fields,
              branch,
              head_sha: outcome.work.headSha,
              pushed: outcome.work.pushed,
              pull_request: outcome.work.pullRequest?.number ?? null,
            },
            outcome.work.pullRequest?.opened ? 'pull request opened' : 'work published',
          );
        }
      }
      // A self-review turn may have been the last: its message is the run's.
      const last = lastResult as TurnResult | null;
      return finish({
        type: 'completed',
        finalMessage: last?.finalMessage ?? finalMessage,
        sessionId,
        turns,
      });
    } finally {
      await deps.adapter.stopSession(session).catch(() => undefined);
    }
  } finally {
    const hook = await deps.workspaces.afterRun(workspace, issue, job.attempt, {
      ORCHESTRATOR_SELF_REVIEW_STATUS: review?.status ?? 'disabled',
    });
    if (hook !== null && !hook.ok) {
      deps.log.warn(
        { ...fields, hook: 'after_run', exit_code: hook.exitCode, timed_out: hook.timedOut },
        'after_run hook failed',
      );
    }
  }
}

/** The usage of a worker that ran no turn. */
export const NO_USAGE = ZERO_TOKENS;

function dispatchComment(kind: string, attempt: number): string {
  return ['Orchestrator session started.', `Agent: ${kind}`, `Attempt: ${attempt}`].join('\n');
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
