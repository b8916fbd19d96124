/**
 * The first workflows an operator meets, run as shipped by the built CLI (`npm run build`) with
 * the mock runtime: nothing is added to them but `--port`. The README's first example once had
 * no handoff state, and `run --until-idle` on it with one plain issue never went idle: the
 * agent finished, the issue stayed active, and it was continued for ever (53 sessions and 1,060
 * turns in 7 minutes), while `validate` said nothing. That text is kept verbatim in the warning
 * corpus; it must now be warned about, and stop by itself at the no-progress cap, saying why in
 * the log, in a comment and in the state API. The example the README ships now
 * (`examples/minimal/`) hands off and validates clean.
 *
 * The built CLI, not the sources: each of the example's 100 turns starts the mock runtime, which
 * from source pays tsx's start-up every time (about 1.5 s a turn instead of 0.4 s).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BUILT_MAIN, cliEnv, ensureBuilt, REPO_ROOT, runBuilt } from '../support/cli.js';
import { freePort } from '../support/ports.js';
import { dbBudget, dbRuns, waitFor } from '../support/service.js';

const NO_HANDOFF = path.join(REPO_ROOT, 'testdata', 'workflows', 'warning', 'readme-minimal-no-handoff.md');
const EXAMPLE_DIR = path.join(REPO_ROOT, 'examples', 'minimal');
/** The default of agent.max_unchanged_sessions, as documented. */
const CAP = 5;
/** Generous: 100 mock turns on a loaded 2-core machine. */
const RUN_TIMEOUT_MS = 360_000;

interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  durationMs: number;
}

interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

const dirs: string[] = [];
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A folder holding `workflow` as WORKFLOW.md and the example's issues file; workspaces go below it too. */
function project(workflow: string): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'orch-minimal-')));
  dirs.push(dir);
  copyFileSync(workflow, path.join(dir, 'WORKFLOW.md'));
  copyFileSync(path.join(EXAMPLE_DIR, 'issues.json'), path.join(dir, 'issues.json'));
  return dir;
}

/** `<tmpdir>/orchestrator_workspaces`, the default workspace root, inside the project. */
const env = (dir: string) => cliEnv({ TMPDIR: dir });

/** Starts `orchestrator run WORKFLOW.md --log-format json <args>` in `dir`. */
function run(dir: string, args: string[]): { child: ChildProcess; done: Promise<Finished> } {
  const startedMs = Date.now();
  const child = spawn(process.execPath, [BUILT_MAIN, 'run', 'WORKFLOW.md', '--log-format', 'json', ...args], {
    cwd: dir,
    env: env(dir),
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const done = new Promise<Finished>((resolve) => {
    child.once('close', (code, signal) =>
      resolve({ code, signal, stdout, stderr, durationMs: Date.now() - startedMs }),
    );
  });
  return { child, done };
}

/** `run --until-idle`, killed (and failed) if it is still running after `timeoutMs`. */
async function runUntilIdle(dir: string, timeoutMs = RUN_TIMEOUT_MS): Promise<Finished> {
  const { child, done } = run(dir, ['--until-idle', '--port', '0']);
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const finished = await done;
  clearTimeout(timer);
  return finished;
}

function logLines(stdout: string): LogLine[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

function issues(dir: string): { identifier: string; state: string; comments?: { body: string }[] }[] {
  return JSON.parse(readFileSync(path.join(dir, 'issues.json'), 'utf8'));
}

const explain = (f: Finished) => `exit ${f.code} ${f.signal ?? ''}\n${f.stderr}\n${f.stdout.slice(-4_000)}`;

describe('the README first workflows, run as shipped', () => {
  beforeAll(() => ensureBuilt(), 300_000);

  it('the old example without a handoff state is warned about by validate, and run --until-idle stops by itself at the no-progress cap, saying why in the log, a comment and the state API', {
    timeout: 2 * RUN_TIMEOUT_MS,
  }, async () => {
    const dir = project(NO_HANDOFF);
    const validate = runBuilt(['validate', 'WORKFLOW.md'], { cwd: dir, env: env(dir) });
    expect(validate.status, validate.stdout + validate.stderr).toBe(0);
    expect(validate.stdout).toContain('WORKFLOW.md:3:3 warning tracker.handoff_state.unbounded:');
    expect(validate.stdout).toContain(`after ${CAP} sessions in a row`);
    expect(validate.stdout).toContain('WORKFLOW.md: 0 errors, 1 warning');
    expect(runBuilt(['validate', 'WORKFLOW.md', '--strict'], { cwd: dir, env: env(dir) }).status).toBe(1);

    const first = await runUntilIdle(dir);
    expect(first.code, explain(first)).toBe(0);
    const logs = logLines(first.stdout);
    expect(logs.filter((l) => l.msg === 'worker exited')).toHaveLength(CAP);
    const stop = logs.find((l) => l.msg === 'issue budget exhausted');
    expect(stop, explain(first)).toMatchObject({
      issue_identifier: 'MY-1',
      limit: 'max_unchanged_sessions',
      detail: `${CAP} of ${CAP} sessions in a row ended with the issue still in "Todo"`,
    });
    // A clean stop: nothing fails after the store closes (a retry timer used to fire then).
    expect(
      logs.filter((l) => l.level >= 50),
      explain(first),
    ).toEqual([]);
    expect(first.stdout).not.toContain('store_unavailable');
    expect(logs.at(-1)?.msg).toBe('orchestrator stopped');
    expect(dbRuns(path.join(dir, '.orchestrator.db'), 'MY-1')).toHaveLength(CAP);
    const [issue] = issues(dir);
    expect(issue?.state).toBe('Todo');
    expect(issue?.comments?.map((c) => c.body)).toEqual([
      expect.stringContaining(`${CAP} of ${CAP} sessions in a row ended with the issue still in "Todo"`),
    ]);
    const comment = issue?.comments?.[0]?.body ?? '';
    expect(comment).toContain('raise agent.max_unchanged_sessions');
    expect(comment).toContain('tracker.handoff_state');
    // Figures for the record: how long the stop took to come.
    console.info(
      `the old minimal example stopped after ${CAP} sessions in ${Math.round(first.durationMs / 1000)} s`,
    );

    // The stop is kept in the database: a restart runs nothing and comments no more.
    const again = await runUntilIdle(dir, 120_000);
    expect(again.code, explain(again)).toBe(0);
    expect(logLines(again.stdout).filter((l) => l.msg === 'dispatching')).toEqual([]);
    expect(dbRuns(path.join(dir, '.orchestrator.db'), 'MY-1')).toHaveLength(CAP);
    expect(issues(dir)[0]?.comments).toHaveLength(1);
    expect(dbBudget(path.join(dir, '.orchestrator.db'), '1')).toMatchObject({ unchanged_sessions: CAP });

    // And the service says why it leaves the issue alone.
    const port = await freePort();
    const service = run(dir, ['--port', String(port)]);
    const waiting = await waitFor(
      'MY-1 in the state document as stopped by the cap',
      async () => {
        const state = await fetch(`http://127.0.0.1:${port}/api/v1/state`)
          .then(
            (r) =>
              r.json() as Promise<{
                waiting?: { issue_identifier: string; reason: string; detail: string }[];
              }>,
          )
          .catch(() => null);
        return state?.waiting?.find((w) => w.issue_identifier === 'MY-1');
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    // A budget stop, as the dispatch plan names it; the words say which limit and why.
    expect(waiting.reason).toBe('budget_exhausted');
    expect(waiting.detail).toContain('sessions in a row ended with the issue still in "Todo"');
    service.child.kill('SIGTERM');
    expect((await service.done).code).toBe(0);
  });

  it('the example the README ships (examples/minimal) validates clean, and run --until-idle hands its issue off and exits', {
    timeout: RUN_TIMEOUT_MS,
  }, async () => {
    const dir = project(path.join(EXAMPLE_DIR, 'WORKFLOW.md'));
    const validate = runBuilt(['validate', 'WORKFLOW.md', '--strict'], { cwd: dir, env: env(dir) });
    expect(validate.status, validate.stdout).toBe(0);
    expect(validate.stdout).toContain('WORKFLOW.md: 0 errors, 0 warnings');

    const finished = await runUntilIdle(dir, RUN_TIMEOUT_MS - 30_000);
    expect(finished.code, explain(finished)).toBe(0);
    expect(issues(dir)[0]?.state).toBe('Review');
    expect(dbRuns(path.join(dir, '.orchestrator.db'), 'MY-1')).toMatchObject([{ exit_kind: 'succeeded' }]);
    expect(logLines(finished.stdout).filter((l) => l.level >= 50)).toEqual([]);
  });
});
