import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bareRepository, fileAt, git } from '../support/git-repo.js';
import { freePort } from '../support/ports.js';
import {
  createProject,
  dbRuns,
  type IssueSpec,
  makeIssue,
  type Project,
  startService,
  useServiceCleanup,
  waitFor,
} from '../support/service.js';

useServiceCleanup();

const temporary: string[] = [];
afterEach(() => {
  for (const dir of temporary.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function withGit(
  issues: IssueSpec[],
  extra: (bare: string) => Record<string, unknown> = () => ({}),
): { project: Project; bare: string } {
  const root = mkdtempSync(path.join(tmpdir(), 'orch-origin-'));
  temporary.push(root);
  const bare = bareRepository(root);
  const project = createProject({
    issues,
    config: {
      hooks: { after_create: `git clone --quiet ${bare} .` },
      git: { pull_request: { enabled: false } },
      agent: { max_turns: 1 },
      ...extra(bare),
    },
  });
  return { project, bare };
}

describe('git handoff with the file tracker', () => {
  it('a run with no change is not handed off: one comment, parked (no second run) until a person changes the issue', {
    timeout: 120_000,
  }, async () => {
    const { project, bare } = withGit([makeIssue(1, '!ok nothing to do')]);
    const service = startService(project);
    await waitFor('the no-change comment', () => (project.issue('E-1').comments ?? []).length > 0, {
      timeoutMs: 60_000,
      explain: () => service.tail(),
    });
    // Several ticks later: still one run, one comment, not handed off, nothing pushed.
    await waitFor('ticks after the park', () => service.logsWith('tick completed').length >= 15, {
      explain: () => service.tail(),
    });
    const runs = dbRuns(project.dbPath, 'E-1');
    expect(runs.map((r) => r.exit_kind)).toEqual(['no_changes']);
    const comments = (project.issue('E-1').comments ?? []).map((c) => c.body);
    expect(comments).toHaveLength(1);
    expect(comments[0]).toContain('did not hand this issue off (require_changes)');
    expect(project.issue('E-1').state).toBe('Todo');
    expect(git(['-C', bare, 'for-each-ref', '--format=%(refname)', 'refs/heads'])).toBe('refs/heads/main');

    // A person rewrites the task so that it changes something: it runs and is handed off.
    project.editIssue('E-1', { description: '!write notes.txt done now\n!commit notes\n!ok wrote notes' });
    await waitFor('E-1 in Review', () => project.issue('E-1').state === 'Review', {
      timeoutMs: 60_000,
      explain: () => service.tail(),
    });
    expect(fileAt(bare, 'agent/e-1', 'notes.txt')).toBe('done now\n');
    expect(dbRuns(project.dbPath, 'E-1').map((r) => r.exit_kind)).toEqual(['no_changes', 'succeeded']);
    expect((await service.stop(30_000)).code).toBe(0);
  });

  it('self-review: iterate with a failing verification, a fix turn, then pass; the verdicts are in the API and the pushed branch has the fix', {
    timeout: 120_000,
  }, async () => {
    const { project, bare } = withGit(
      [
        makeIssue(
          1,
          [
            '!write feature.txt first draft',
            '!commit feature',
            '!verdict iterate pass',
            '!fix write fixed.txt yes',
            '!fix commit fix what the review found',
            '!ok feature written',
          ].join('\n'),
        ),
      ],
      (bare) => ({
        self_review: {
          enabled: true,
          max_iterations: 3,
          verification_commands: ['test -f fixed.txt'],
          verification_timeout_ms: 10_000,
        },
        hooks: {
          after_create: `git clone --quiet ${bare} .`,
          after_run: 'echo "$ORCHESTRATOR_SELF_REVIEW_STATUS" > ../review-status.txt',
        },
      }),
    );
    const port = await freePort();
    const service = startService(project, { args: ['--port', String(port)] });
    await waitFor('E-1 in Review', () => project.issue('E-1').state === 'Review', {
      timeoutMs: 60_000,
      explain: () => service.tail(),
    });
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/runs`);
    const { runs } = (await response.json()) as {
      runs: { issue_identifier: string; turns: number; self_review: Record<string, unknown> | null }[];
    };
    const run = runs.find((r) => r.issue_identifier === 'E-1');
    // One work turn, then review 1 (iterate), fix 1, review 2 (pass).
    expect(run?.turns).toBe(4);
    expect(run?.self_review).toMatchObject({
      status: 'passed',
      final_verdict: 'pass',
      turns: 3,
      iterations: [
        { iteration: 1, verdict: 'iterate', verification: [{ command: 'test -f fixed.txt', exit_code: 1 }] },
        { iteration: 2, verdict: 'pass', verification: [{ command: 'test -f fixed.txt', exit_code: 0 }] },
      ],
    });
    expect(fileAt(bare, 'agent/e-1', 'fixed.txt')).toBe('yes\n');
    expect(fileAt(bare, 'agent/e-1', 'feature.txt')).toBe('first draft\n');
    // The after_run hook saw how the review ended.
    expect(readFileSync(path.join(project.workspaceRoot, 'review-status.txt'), 'utf8')).toBe('passed\n');
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/orchestrator_self_reviews_total\{status="passed"\} 1/);
    expect(metrics).toMatch(/orchestrator_self_review_iterations_total 2/);
    expect((await service.stop(30_000)).code).toBe(0);
  });

  it('a status signal of "blocked" stops the run after its turn and parks the issue like a BLOCKED: answer', {
    timeout: 120_000,
  }, async () => {
    const { project } = withGit(
      [makeIssue(1, '!write half.txt started\n!status blocked\n!ok which API version?')],
      () => ({
        agent: { max_turns: 3 },
      }),
    );
    const service = startService(project);
    await waitFor('E-1 Blocked', () => project.issue('E-1').state === 'Blocked', {
      timeoutMs: 60_000,
      explain: () => service.tail(),
    });
    const runs = dbRuns(project.dbPath, 'E-1');
    expect(runs.map((r) => [r.exit_kind, r.turns])).toEqual([['blocked', 1]]);
    expect((project.issue('E-1').comments ?? []).map((c) => c.body).join('\n')).toContain(
      'which API version?',
    );
    expect((await service.stop(30_000)).code).toBe(0);
  });
  it('a status signal of "needs-human-review" ends the turns early and the work is pushed and handed off', {
    timeout: 120_000,
  }, async () => {
    const { project, bare } = withGit(
      [
        makeIssue(
          1,
          '!write draft.txt please look\n!commit draft\n!status needs-human-review\n!ok over to you',
        ),
      ],
      () => ({ agent: { max_turns: 3 } }),
    );
    const service = startService(project);
    await waitFor('E-1 in Review', () => project.issue('E-1').state === 'Review', {
      timeoutMs: 60_000,
      explain: () => service.tail(),
    });
    expect(dbRuns(project.dbPath, 'E-1').map((r) => [r.exit_kind, r.turns])).toEqual([['succeeded', 1]]);
    expect(fileAt(bare, 'agent/e-1', 'draft.txt')).toBe('please look\n');
    expect((await service.stop(30_000)).code).toBe(0);
  });
});
