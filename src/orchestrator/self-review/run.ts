/**
 * The self-review loop wired to a real workspace: the diff from git (against the base when
 * the workflow has one, so committed work is reviewed too), verification commands run the way
 * hooks run, the verdict file read defensively, and review and fix turns played on the run's
 * own session through the worker's turn function (so they are recorded and budgeted like any
 * other turn).
 */
import type { TurnOutcome, TurnResult } from '../../domain/agent.js';
import type { Issue } from '../../domain/issue.js';
import type { ServiceConfig } from '../../workflow/config.js';
import type { WorkspaceGit } from '../../workspace/git/git.js';
import {
  readJsonSignal,
  readStatusSignal,
  removeSignalFile,
  SIGNAL_DIR,
  VERDICT_MAX_BYTES,
} from '../../workspace/signals.js';
import type { BudgetVerdict } from '../budget.js';
import type { Workspaces } from '../ports.js';
import { runSelfReview, type SelfReviewOutcome } from './loop.js';

const VERDICT_FILE = 'review_verdict.json';

export interface SelfReviewRun {
  repo: WorkspaceGit;
  /** What the diff is taken against; null: the work tree against HEAD. */
  baseRef: string | null;
  settings: ServiceConfig['selfReview'];
  issue: Issue;
  attempt: number;
  workspace: string;
  workspaces: Workspaces;
  signal: AbortSignal;
  playTurn(prompt: string): Promise<TurnOutcome>;
  budgetAfterTurn(result: TurnResult): BudgetVerdict;
}

/** Runs the loop to its end; a failed turn or a spent budget ends it, never the run. */
export async function selfReview(run: SelfReviewRun): Promise<SelfReviewOutcome> {
  const { settings, workspace } = run;
  return runSelfReview(
    {
      maxIterations: settings.max_iterations,
      title: run.issue.title,
      description: run.issue.description ?? '',
      verdictPath: `${SIGNAL_DIR}/${VERDICT_FILE}`,
    },
    {
      diff: async () => {
        if (!(await run.repo.isRepository())) return null;
        const diff = await run.repo.diff(settings.max_diff_bytes, run.baseRef ?? 'HEAD');
        return diff.ok ? diff.value : null;
      },
      verify: async () => {
        const results = [];
        for (const command of settings.verification_commands ?? []) {
          const ran = await run.workspaces.runCommand(workspace, run.issue, run.attempt, {
            script: command,
            timeoutMs: settings.verification_timeout_ms,
            signal: run.signal,
          });
          results.push({
            command,
            exitCode: ran.exitCode,
            timedOut: ran.timedOut,
            output: ran.output,
            durationMs: ran.durationMs,
          });
        }
        return results;
      },
      clearVerdict: () => removeSignalFile(workspace, VERDICT_FILE),
      readVerdict: () => readJsonSignal(workspace, VERDICT_FILE, VERDICT_MAX_BYTES),
      runTurn: async (prompt) => {
        if (run.signal.aborted) return { ok: false, detail: 'cancelled' };
        const outcome = await run.playTurn(prompt);
        if (outcome.error !== undefined)
          return { ok: false, detail: `${outcome.error.kind}: ${outcome.error.detail}` };
        const budget = run.budgetAfterTurn(outcome.result);
        if (budget.exhausted)
          return { ok: false, detail: `budget exhausted (${budget.limit}: ${budget.detail})` };
        return { ok: true };
      },
      stopRequested: () => readStatusSignal(workspace).kind === 'read',
    },
  );
}
