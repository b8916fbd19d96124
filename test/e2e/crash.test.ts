/**
 * Crash safety of `orchestrator run`: the service is SIGKILLed at random points and
 * restarted on the same database, issues file and workspaces, again and again, then left to
 * finish. What must hold whatever the kill points were:
 *  - every issue reaches its expected final state (handoff or blocked state);
 *  - every run open at a kill is closed as `interrupted` by a later start;
 *  - no retry is lost: at every kill point, an issue whose newest run failed with a
 *    retryable error has a retry row (and at the end every failed run is followed by a
 *    later run, a retry row, or a final state);
 *  - no issue ever has two live agent processes at once, counting the agents a killed
 *    service left behind as live until they are really gone (the next start kills them).
 * Agent processes are followed through the tracing wrapper (spawn time + workspace), the pid
 * log and /proc sampling (see test/support/service.ts).
 *
 * The kill points come from a seeded PRNG; the seed is printed, and E2E_SEED=<n> replays it.
 */
import { describe, expect, it } from 'vitest';
import {
  AgentMonitor,
  createProject,
  dbRetries,
  dbRuns,
  makeIssue,
  ms,
  RETRYABLE_KINDS,
  type RunRow,
  type ServiceHandle,
  seededRandom,
  sleep,
  startService,
  useServiceCleanup,
  waitFor,
  waitIdle,
} from '../support/service.js';

useServiceCleanup();

const RETRYABLE = RETRYABLE_KINDS;

const KILLS = Number(process.env.E2E_KILLS ?? 20);

/** The orphans a restarted service reports having killed, with the time it says it did. */
function orphanKills(service: ServiceHandle): { pids: number[]; atMs: number }[] {
  return service
    .logsWith('killed processes left by an earlier orchestrator')
    .map((l) => ({ pids: (l.pids as number[]) ?? [], atMs: Date.parse(l.time) }));
}

describe('crash safety (SIGKILL at random points, restart on the same state)', () => {
  it(`${KILLS} random SIGKILLs and restarts lose no issue, no retry and no open run, and never run two agents for one issue`, {
    timeout: 300_000,
  }, async () => {
    const seed = Number(process.env.E2E_SEED ?? Date.now() % 2 ** 31);
    console.log(`crash test seed: ${seed} (replay with E2E_SEED=${seed})`);
    const random = seededRandom(seed);

    const issues = [
      makeIssue(1, '!usage 1200 300\n!toolcall Write\n!ok used some tokens'),
      makeIssue(2, '!crash once\n!ok recovered after a crash'),
      makeIssue(3, '!silent 2500\n!ok slow but steady'),
      makeIssue(4, '!loop 3\n!ok took several tool calls'),
      makeIssue(5, '!blocked which release date?'),
      makeIssue(6, '!crash once\n!usage 10 10\n!ok crashed once too'),
    ];
    const expected: Record<string, string> = {
      'E-1': 'Review',
      'E-2': 'Review',
      'E-3': 'Review',
      'E-4': 'Review',
      'E-5': 'Blocked',
      'E-6': 'Review',
    };
    const project = createProject({
      issues,
      traceAgents: true,
      config: {
        tracker: { in_progress_state: 'In Progress', comments: { on_completion: true } },
        polling: { interval_ms: 200 },
        agent: {
          // Every session runs a continuation turn (turn 2) before its handoff.
          max_turns: 2,
          max_concurrent_agents: 4,
          // Above `!silent 2500` plus a slow tsx start on a loaded machine.
          stall_timeout_ms: 15_000,
          max_retry_backoff_ms: 500,
        },
      },
    });
    const isFinal = (identifier: string) => project.issue(identifier).state === expected[identifier];
    const monitor = new AgentMonitor(project).start();

    const openAtKill = new Map<number, number>(); // run id → kill time
    const lostRetries: string[] = [];
    const notes: string[] = [];
    for (let k = 1; k <= KILLS; k++) {
      const service = startService(project, { logName: `instance-${String(k).padStart(2, '0')}.jsonl` });
      const delayMs = Math.round(200 + random() * 2_800);
      // Counted from the service being up (its first log line), so most kills land in the
      // middle of work rather than in node/tsx start-up; a few instances never get that far.
      await service
        .waitForLog('the service to start', (l) => l.msg === 'orchestrator starting', { timeoutMs: 30_000 })
        .catch(() => undefined);
      if (k === 1) {
        // Warm-up: the first instance lives until one working turn started, so the credential
        // proof is stored and later instances get to real work within their short lives.
        await service.waitForLog('a first working turn', (l) => l.msg === 'turn started', {
          timeoutMs: 90_000,
        });
      }
      // The random kill point itself (not a wait for a condition).
      await sleep(delayMs);
      service.kill('SIGKILL');
      const status = await service.exit;
      const killedAt = Date.now();
      monitor.sample();
      for (const kill of orphanKills(service)) monitor.noteKilled(kill.pids, kill.atMs);
      const runs = dbRuns(project.dbPath);
      const open = runs.filter((r) => r.ended_at === null);
      for (const run of open) openAtKill.set(run.id, killedAt);
      const retryIds = new Set(dbRetries(project.dbPath).map((r) => r.issue_id));
      for (const issue of issues) {
        const newest = runs.filter((r) => r.issue_id === issue.id).at(-1);
        if (newest === undefined || newest.ended_at === null || newest.exit_kind !== 'failed') continue;
        if (!RETRYABLE.has(newest.error_kind ?? '') || isFinal(issue.identifier)) continue;
        if (!retryIds.has(issue.id)) lostRetries.push(`kill ${k}: run ${newest.id} of ${issue.identifier}`);
      }
      const kinds = runs.reduce<Record<string, number>>((acc, r) => {
        acc[r.exit_kind ?? 'open'] = (acc[r.exit_kind ?? 'open'] ?? 0) + 1;
        return acc;
      }, {});
      notes.push(
        `kill ${k} ${delayMs} ms after start (${status.signal}): runs ${JSON.stringify(kinds)}, ` +
          `retries ${retryIds.size}, live agents ${monitor.liveNow().length}, ` +
          `final ${issues.filter((i) => isFinal(i.identifier)).length}/${issues.length}`,
      );
    }

    const final = startService(project, { logName: 'final.jsonl' });
    const explain = () =>
      `${notes.join('\n')}\n${final.tail()}\n${JSON.stringify(project.readIssues().map((i) => [i.identifier, i.state]))}`;
    await waitFor('every issue to reach its final state', () => Object.keys(expected).every(isFinal), {
      timeoutMs: 150_000,
      explain,
    });
    // Let the last exits finish their tracker writes before the graceful stop (a stop racing
    // an exit's actions is its own test in run.test.ts).
    await waitIdle(final);
    const stopped = await final.stop(30_000);
    for (const kill of orphanKills(final)) monitor.noteKilled(kill.pids, kill.atMs);
    monitor.stop();
    console.log(notes.join('\n'));

    // 1. Every issue reached its expected state.
    for (const [identifier, state] of Object.entries(expected)) {
      expect(project.issue(identifier).state, identifier).toBe(state);
    }
    expect(
      (project.issue('E-5').comments ?? []).some((c) => c.body.includes('which release date?')),
      'the blocked question was posted',
    ).toBe(true);

    // 2. Every run open at a kill was closed as interrupted by a later start; nothing is open now.
    const runs = dbRuns(project.dbPath);
    const byId = new Map(runs.map((r) => [r.id, r]));
    for (const [id, killedAt] of openAtKill) {
      const run = byId.get(id) as RunRow;
      expect(run.exit_kind, `run ${id}`).toBe('interrupted');
      expect(ms(run.ended_at), `run ${id} closed after the kill`).toBeGreaterThanOrEqual(killedAt - 1_000);
    }
    expect(runs.filter((r) => r.ended_at === null)).toEqual([]);
    expect(runs.filter((r) => r.exit_kind === 'interrupted').length).toBe(openAtKill.size);

    // 3. No retry was lost.
    expect(lostRetries).toEqual([]);
    const retries = dbRetries(project.dbPath);
    for (const run of runs.filter((r) => r.exit_kind === 'failed')) {
      const identifier = run.identifier;
      const later = runs.some((r) => r.issue_id === run.issue_id && r.id > run.id);
      const queued = retries.some((r) => r.issue_id === run.issue_id);
      expect(later || queued || isFinal(identifier), `failed run ${run.id} of ${identifier}`).toBe(true);
    }
    expect(retries, 'every issue is final: nothing left queued').toEqual([]);

    // 4. Never two live agents for one issue, and none left alive.
    const processes = monitor.processes();
    expect(
      processes.filter((p) => p.issueKey === null),
      monitor.describe(),
    ).toEqual([]);
    for (const [issueKey, live] of monitor.maxLivePerIssue()) {
      expect(live.max, `${issueKey}: pids ${live.pids.join(', ')} at ${live.at}\n${monitor.describe()}`).toBe(
        1,
      );
    }
    expect(monitor.liveNow()).toEqual([]);

    // 5. The final, idle service stopped cleanly.
    expect(stopped, final.tail()).toMatchObject({ code: 0, killed: false });
  });

  it('a kill right after a failed run is closed does not lose its retry (the run and its retry are saved before any tracker call)', {
    timeout: 120_000,
  }, async () => {
    const cap = 30_000;
    // A large unrelated issue makes each write of the issues file (the failure comment) take a while.
    const project = createProject({
      issues: [
        makeIssue(1, '!crash'),
        makeIssue(2, 'padding', { state: 'Done', padding: 'x'.repeat(2 << 20) }),
      ],
      config: { tracker: { comments: { on_failure: true } }, agent: { max_retry_backoff_ms: cap } },
    });
    const service = startService(project);
    // `worker exited` is logged after the run row is closed and before the exit's actions run.
    await waitFor(
      'the failed run to be closed',
      () => service.logs().some((l) => l.msg === 'worker exited' && l.exit === 'failed'),
      { intervalMs: 2, timeoutMs: 60_000, explain: () => service.tail() },
    );
    service.kill('SIGKILL');
    await service.exit;

    const runs = dbRuns(project.dbPath, 'E-1');
    expect(runs.map((r) => [r.exit_kind, r.error_kind])).toEqual([['failed', 'port_exit']]);
    const retry = dbRetries(project.dbPath).find((r) => r.issue_id === '1');
    expect(retry, 'the retry decided for the failed run is in the database').toBeDefined();
    expect(retry).toMatchObject({ attempt: 2, reason: 'error' });
    const due = retry!.due_at_ms;
    expect(due - ms(runs[0]!.ended_at)).toBeGreaterThanOrEqual(10_000);

    // A restart honours the backoff: E-1 is not dispatched again before its retry is due.
    const restarted = startService(project);
    await waitFor('a few ticks after the restart', () => restarted.logsWith('tick completed').length >= 5, {
      timeoutMs: 60_000,
      explain: () => restarted.tail(),
    });
    const early = dbRuns(project.dbPath, 'E-1').filter((r) => r.id > runs[0]!.id && ms(r.started_at) < due);
    expect(early).toEqual([]);
    await restarted.stop();
  });
  it('a retry queued before a crash survives it: after the restart it fires at its due time, not early and not never', {
    timeout: 150_000,
  }, async () => {
    const cap = 5_000;
    const project = createProject({
      issues: [makeIssue(1, '!crash once\n!ok recovered')],
      config: { agent: { max_retry_backoff_ms: cap } },
    });
    const service = startService(project);
    const queued = await waitFor(
      'the retry row of E-1',
      () => dbRetries(project.dbPath).find((r) => r.issue_id === '1'),
      {
        timeoutMs: 60_000,
        explain: () => service.tail(),
      },
    );
    service.kill('SIGKILL');
    await service.exit;
    const [failed] = dbRuns(project.dbPath, 'E-1');
    expect(failed).toMatchObject({ exit_kind: 'failed', error_kind: 'port_exit' });
    expect(queued).toMatchObject({ attempt: 2, reason: 'error' });
    expect(queued.due_at_ms - ms(failed!.ended_at)).toBeGreaterThanOrEqual(cap);

    const restarted = startService(project);
    await waitFor('E-1 to reach Review', () => project.issue('E-1').state === 'Review', {
      timeoutMs: 90_000,
      explain: () => restarted.tail(),
    });
    const stopped = await restarted.stop();
    expect(stopped, restarted.tail()).toMatchObject({ code: 0, killed: false });

    const runs = dbRuns(project.dbPath, 'E-1');
    expect(runs.map((r) => [r.attempt, r.exit_kind])).toEqual([
      [1, 'failed'],
      [2, 'succeeded'],
    ]);
    expect(ms(runs[1]!.started_at)).toBeGreaterThanOrEqual(queued.due_at_ms - 5);
    expect(dbRetries(project.dbPath)).toEqual([]);
  });
});
