/**
 * The end of a successful run when `git:` is set: the work becomes commits on the issue's
 * branch, the branch is pushed with the orchestrator's token, and a pull request is opened or
 * updated. A run that changed nothing is reported as such (the handoff-evidence rule decides
 * what happens to it). The agent never holds the token: the push runs here, after its turns.
 */
import type { ErrorKind } from '../domain/errors.js';
import { TrackerError } from '../domain/errors.js';
import type { ForgeAdapter } from '../domain/forge.js';
import type { Issue } from '../domain/issue.js';
import { firstProblem, renderText } from '../prompt/issue-text.js';
import type { PromptVariables } from '../prompt/variables.js';
import type { GitConfig } from '../workflow/config.js';
import type { GitFailureCode, WorkspaceGit } from '../workspace/git/git.js';
import { sanitiseBranchName } from '../workspace/git/ref-name.js';
import { writeSignalFile } from '../workspace/signals.js';

/** What was pushed and opened, as recorded in SQLite and `.orchestrator/scm.json`. */
export interface PublishedWork {
  branch: string;
  base: string;
  headSha: string;
  /** Commits on the branch beyond the base. */
  commits: number;
  pushed: boolean;
  pullRequest: { number: number; url: string; opened: boolean } | null;
  pushedAtMs: number;
}

export type PublishOutcome =
  | { type: 'published'; work: PublishedWork }
  /** No commit beyond the base and nothing uncommitted. */
  | { type: 'no_changes' }
  | { type: 'failed'; kind: ErrorKind; message: string };

export interface PublishInput {
  issue: Issue;
  git: GitConfig;
  branch: string;
  workspace: string;
  /** The run's template variables, for the pull request's title and body. */
  vars: PromptVariables;
}

export interface PublishDeps {
  git: WorkspaceGit;
  /** null: the tracker has no forge (or pull requests are off): push only. */
  forge: ForgeAdapter | null;
  /** The forge token the push authenticates with ('' for a remote that asks none). */
  token: string;
  nowMs(): number;
}

/** The issue's branch name from `git.branch`, made a valid ref; a failure names the key. */
export function branchName(
  git: GitConfig,
  vars: PromptVariables,
): { ok: true; branch: string } | { ok: false; message: string } {
  const rendered = renderText(git.branchTemplate, vars, { file: 'git.branch', line: 1, column: 1 });
  if (!rendered.ok) return { ok: false, message: `git.branch: ${firstProblem(rendered.diagnostics)}` };
  const branch = sanitiseBranchName(rendered.text.trim());
  if (branch === '')
    return {
      ok: false,
      message: `git.branch renders to "${rendered.text}", which leaves no valid branch name`,
    };
  return { ok: true, branch };
}

/** Commits what the agent left, then pushes and opens or updates the pull request. */
export async function publishWork(input: PublishInput, deps: PublishDeps): Promise<PublishOutcome> {
  const { git, issue, branch } = input;
  const committed = await deps.git.commitAll(`${issue.identifier}: changes the agent left uncommitted`);
  if (!committed.ok) return gitFailure(committed);
  const baseRef = await deps.git.baseRef(git.baseBranch, git.remote);
  const commits = await deps.git.commitsBeyond(baseRef);
  if (!commits.ok) return gitFailure(commits);
  if (commits.value === 0) return { type: 'no_changes' };
  const head = await deps.git.headSha();
  if (!head.ok) return gitFailure(head);

  const work: PublishedWork = {
    branch,
    base: git.baseBranch,
    headSha: head.value,
    commits: commits.value,
    pushed: false,
    pullRequest: null,
    pushedAtMs: deps.nowMs(),
  };
  if (git.push) {
    const pushed = await deps.git.push(git.remote, branch, deps.token);
    if (!pushed.ok) return gitFailure(pushed);
    work.pushed = true;
    work.pushedAtMs = deps.nowMs();
    if (deps.forge !== null && git.pullRequest.enabled) {
      const opened = await openPullRequest(input, deps.forge);
      if (!opened.ok) return { type: 'failed', kind: opened.kind, message: opened.message };
      work.pullRequest = opened.value;
    }
  }
  writeScmFile(input.workspace, work);
  return { type: 'published', work };
}

async function openPullRequest(
  input: PublishInput,
  forge: ForgeAdapter,
): Promise<
  | { ok: true; value: NonNullable<PublishedWork['pullRequest']> }
  | { ok: false; kind: ErrorKind; message: string }
> {
  const { git, issue, vars } = input;
  const title = renderText(git.pullRequest.titleTemplate, vars, {
    file: 'git.pull_request.title',
    line: 1,
    column: 1,
  });
  const body = renderText(git.pullRequest.bodyTemplate, vars, {
    file: 'git.pull_request.body',
    line: 1,
    column: 1,
  });
  if (!title.ok || !body.ok) {
    const failed = !title.ok ? title : body;
    return {
      ok: false,
      kind: 'prompt_render_failed',
      message: firstProblem(failed.ok ? [] : failed.diagnostics),
    };
  }
  const link = git.pullRequest.linkIssue ? forge.closingReference(issue.id) : null;
  const text = [body.text.trim(), link ?? ''].filter((part) => part !== '').join('\n\n');
  try {
    const pull = await forge.openOrUpdatePullRequest({
      branch: input.branch,
      base: git.baseBranch,
      // A blank title is refused by forges; the identifier is always there.
      title: title.text.trim() === '' ? issue.identifier : title.text.trim().slice(0, 250),
      body: text,
      draft: git.pullRequest.draft,
      labels: git.pullRequest.labels,
    });
    return { ok: true, value: { number: pull.number, url: pull.url, opened: pull.opened } };
  } catch (error) {
    if (error instanceof TrackerError) return { ok: false, kind: error.kind, message: error.message };
    return { ok: false, kind: 'tracker_transport_error', message: String(error) };
  }
}

/** `.orchestrator/scm.json`: what hooks and the agent's next run can read about the branch. */
function writeScmFile(workspace: string, work: PublishedWork): void {
  const file = {
    branch: work.branch,
    base: work.base,
    head_sha: work.headSha,
    pushed: work.pushed,
    pushed_at: work.pushed ? new Date(work.pushedAtMs).toISOString() : null,
    pr_number: work.pullRequest?.number ?? null,
    pr_url: work.pullRequest?.url ?? null,
  };
  try {
    writeSignalFile(workspace, 'scm.json', `${JSON.stringify(file, null, 2)}\n`);
  } catch {
    // A record for hooks only: the same facts are in SQLite, so a failed write loses nothing.
  }
}

function gitFailure(failed: { code: GitFailureCode; message: string }): PublishOutcome {
  return { type: 'failed', kind: failed.code, message: failed.message };
}
