/**
 * The chaos suite: `orchestrator run` over a workload with handoffs, a crash-then-retry, a
 * stall, budgets, a blocker, a BLOCKED question and hooks, while it is SIGKILLed at random
 * moments, its agents and hooks are SIGKILLed at random, and the disk under its database
 * fills and frees again; and a second run against the fake GitHub answering one call in five
 * with a server error or a refusal, while it is SIGKILLed at random. After every kill and at
 * the end it checks what an operator relies on:
 *  - no retry is lost and no run stays open after a restart;
 *  - never two live agents, nor two live hooks, for one issue;
 *  - every finished turn is recorded once; totals and budgets equal the sum of the runs;
 *  - no handoff is lost: every issue ends where it must, nothing pending;
 *  - the issues file stays valid, unchanged outside the fields the service writes, and no
 *    temp file is left behind.
 * The CI form is bounded (CHAOS_KILLS, default 6, under 5 minutes); `npm run chaos` runs the
 * full form (30 kills). The seed is printed; CHAOS_SEED=<n> replays the fault schedule.
 * Needs root (a tmpfs for the disk faults): CI runs as root; elsewhere it skips with a reason.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ownerTag } from '../../src/orchestrator/orphans.js';
import { fillDisk } from '../support/disk.js';
import { type FakeGithub, fakeGithubTracker, startFakeGithub } from '../support/fake-github/server.js';
import {
  AgentMonitor,
  createProject,
  dbRetries,
  dbRuns,
  makeIssue,
  RETRYABLE_KINDS,
  readDb,
  seededRandom,
  sleep,
  startService,
  useServiceCleanup,
  waitFor,
  waitIdle,
} from '../support/service.js';

useServiceCleanup();

const ROOT = process.getuid?.() === 0;
const SKIP = !ROOT && process.env.CI === undefined;
if (SKIP) console.warn('skipping the chaos suite: it needs root (a tmpfs under the database)');

const KILLS = Number(process.env.CHAOS_KILLS ?? 6);
const RETRYABLE = RETRYABLE_KINDS;
/** Fields of an issue the service may write; everything else must stay byte-for-byte as it was. */
const WRITTEN_FIELDS = new Set(['state', 'comments', 'updated_at']);

const TOKEN = 'ghp_chaosSecretToken_5d2e8f1a9b3c';
const mounts: string[] = [];
const fakes: FakeGithub[] = [];
afterEach(async () => {
  for (const dir of mounts.splice(0)) spawnSync('umount', ['-l', dir]);
  for (const fake of fakes.splice(0)) await fake.close();
});

/** Live hook process groups per issue, sampled from /proc (hooks carry the issue id and the owner tag). */
class HookMonitor {
  /** Per issue: the most distinct hook process groups seen alive at once, and when. */
  readonly most = new Map<string, { groups: number[]; atMs: number }>();
  private timer: NodeJS.Timeout | null = null;
  constructor(private readonly tag: string) {}
  start(): this {
    this.timer = setInterval(() => this.sample(), 40);
    return this;
  }
  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
  }
  /** Hook processes alive now, by pid, with their issue and process group. */
  live(): { pid: number; issueId: string; group: number }[] {
    const found: { pid: number; issueId: string; group: number }[] = [];
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      try {
        const env = readFileSync(`/proc/${name}/environ`, 'utf8').split('\0');
        if (!env.includes(`ORCHESTRATOR_OWNER=${this.tag}`)) continue;
        const issue = env.find((e) => e.startsWith('ORCHESTRATOR_ISSUE_ID='));
        if (issue === undefined) continue;
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        if (fields[0] === 'Z') continue;
        found.push({
          pid: Number(name),
          issueId: issue.slice(issue.indexOf('=') + 1),
          group: Number(fields[2]),
        });
      } catch {
        // Gone between the listing and the read.
      }
    }
    return found;
  }
  sample(): void {
    const byIssue = new Map<string, Set<number>>();
    for (const p of this.live()) byIssue.set(p.issueId, (byIssue.get(p.issueId) ?? new Set()).add(p.group));
    for (const [issueId, groups] of byIssue) {
      if (groups.size > (this.most.get(issueId)?.groups.length ?? 0)) {
        this.most.set(issueId, { groups: [...groups], atMs: Date.now() });
      }
    }
  }
}

describe.skipIf(SKIP)('chaos', () => {
  it(`${KILLS} random SIGKILLs, agent and hook kills and disk fills lose nothing and break no rule`, {
    timeout: 30 * 60_000,
  }, async () => {
    const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 2 ** 31);
    console.log(`chaos seed: ${seed} (replay with CHAOS_SEED=${seed})`);
    const random = seededRandom(seed);
    const issues = [
      makeIssue(1, '!usage 1200 300\n!toolcall Write\n!ok used some tokens'),
      makeIssue(2, '!crash once\n!ok recovered after a crash'),
      makeIssue(3, '!silent 6000\n!ok never reached: stalls until its sessions run out'),
      makeIssue(4, '!usage 30000 0\n!crash'),
      makeIssue(5, '!blocked which release date?'),
      makeIssue(6, '!ok shipped after E-1', { blocked_by: [{ id: '1', identifier: 'E-1' }] }),
    ];
    const budgetStopped = new Set(['E-3', 'E-4']);
    const expected: Record<string, string> = {
      'E-1': 'Done',
      'E-2': 'Review',
      'E-5': 'Blocked',
      'E-6': 'Review',
    };
    const project = createProject({
      issues,
      traceAgents: true,
      config: {
        tracker: { in_progress_state: 'In Progress', comments: { on_completion: true, on_failure: true } },
        polling: { interval_ms: 200 },
        db_path: 'db/state.db',
        hooks: { after_create: 'echo made > made.txt', before_run: 'sleep 0.8', timeout_ms: 10_000 },
        agent: {
          max_turns: 1,
          max_concurrent_agents: 4,
          stall_timeout_ms: 3_000,
          max_retry_backoff_ms: 500,
          max_tokens: 50_000,
          // Enough sessions for every kill to interrupt each issue once, and E-3 to stop on it.
          max_sessions: KILLS + 6,
        },
      },
    });
    const original = JSON.parse(readFileSync(project.issuesPath, 'utf8')) as Record<string, unknown>[];
    const dbDir = path.join(project.dir, 'db');
    mkdirSync(dbDir);
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', dbDir]).status).toBe(0);
    mounts.push(dbDir);
    const dbPath = path.join(dbDir, 'state.db');
    const isFinal = (identifier: string) =>
      budgetStopped.has(identifier)
        ? (
            readDb(dbPath, (db) =>
              db
                .prepare('SELECT exhausted_at FROM issue_budgets WHERE issue_id = ?')
                .get(identifier.slice(2)),
            ) as { exhausted_at: string | null } | undefined | null
          )?.exhausted_at != null
        : project.issue(identifier).state === expected[identifier];
    const monitor = new AgentMonitor(project).start();
    const hooks = new HookMonitor(ownerTag(dbPath)).start();
    const counts = { kills: 0, agentKills: 0, hookKills: 0, diskFills: 0, checks: 0 };
    const violations: string[] = [];
    const notes: string[] = [];

    for (let k = 1; k <= KILLS; k++) {
      const service = startService(project, { logName: `instance-${String(k).padStart(2, '0')}.jsonl` });
      await service
        .waitForLog('the service to start', (l) => l.msg === 'orchestrator starting', { timeoutMs: 30_000 })
        .catch(() => undefined);
      if (k === 1) {
        await service.waitForLog('a first working turn', (l) => l.msg === 'turn started', {
          timeoutMs: 90_000,
        });
      }
      const lifeMs = Math.round(500 + random() * 3_000);
      // Every kind of fault happens in the CI form too: some on a fixed rhythm, more at random.
      const agentKillAt = k % 2 === 1 || random() < 0.5 ? random() * lifeMs : null;
      const hookKillAt = k % 3 === 0 || random() < 0.4 ? random() * lifeMs : null;
      const fillAt = k % 3 === 2 || random() < 0.3 ? random() * lifeMs : null;
      const freeBeforeKill = random() < 0.5;
      let fillers: string[] = [];
      const started = Date.now();
      const events = [
        {
          atMs: agentKillAt,
          run: () => {
            const live = monitor.liveNow();
            const victim = live[Math.floor(random() * live.length)];
            if (victim !== undefined) {
              process.kill(victim.pid, 'SIGKILL');
              counts.agentKills += 1;
            }
          },
        },
        {
          atMs: hookKillAt,
          run: () => {
            const live = hooks.live();
            const victim = live[Math.floor(random() * live.length)];
            if (victim !== undefined) {
              try {
                process.kill(victim.pid, 'SIGKILL');
                counts.hookKills += 1;
              } catch {
                // Ended on its own meanwhile.
              }
            }
          },
        },
        {
          atMs: fillAt,
          run: () => {
            fillers = [fillDisk(dbDir)];
            counts.diskFills += 1;
          },
        },
      ]
        .filter((e): e is { atMs: number; run: () => void } => e.atMs !== null)
        .sort((a, b) => a.atMs - b.atMs);
      for (const event of events) {
        await sleep(Math.max(0, event.atMs - (Date.now() - started)));
        event.run();
      }
      if (fillers.length > 0 && freeBeforeKill) {
        await sleep(300);
        for (const f of fillers.splice(0)) rmSync(f, { force: true });
      }
      await sleep(Math.max(0, lifeMs - (Date.now() - started)));
      service.kill('SIGKILL');
      const status = await service.exit;
      counts.kills += 1;
      for (const f of fillers.splice(0)) rmSync(f, { force: true });
      monitor.sample();
      for (const line of service.logsWith('killed processes left by an earlier orchestrator')) {
        monitor.noteKilled((line.pids as number[]) ?? [], Date.parse(line.time));
      }

      // A person merges E-1 once it is handed off, which unblocks E-6 (while no service runs,
      // so this edit never races the service's own writes).
      if (project.issue('E-1').state === 'Review') project.editIssue('E-1', { state: 'Done' });
      // At every kill point: a failed run with a retryable error has its retry (or a later run).
      const runs = dbRuns(dbPath);
      const retryIds = new Set(dbRetries(dbPath).map((r) => r.issue_id));
      for (const issue of issues) {
        const newest = runs.filter((r) => r.issue_id === issue.id).at(-1);
        counts.checks += 1;
        if (newest === undefined || newest.ended_at === null || newest.exit_kind !== 'failed') continue;
        if (!RETRYABLE.has(newest.error_kind ?? '') || isFinal(issue.identifier)) continue;
        if (!retryIds.has(issue.id))
          violations.push(`kill ${k}: retry lost for run ${newest.id} of ${issue.identifier}`);
      }
      notes.push(
        `kill ${k} after ${lifeMs} ms (${status.signal}; agent kill ${agentKillAt !== null}, hook kill ${hookKillAt !== null}, ` +
          `disk fill ${fillAt !== null}${fillAt !== null ? (freeBeforeKill ? ' freed' : ' held to the kill') : ''}): ` +
          `${runs.length} runs, ${retryIds.size} retries`,
      );
    }

    const final = startService(project, { logName: 'final.jsonl' });
    await waitFor('E-1 handed off', () => ['Review', 'Done'].includes(project.issue('E-1').state), {
      timeoutMs: 120_000,
      explain: () => final.tail(),
    });
    if (project.issue('E-1').state === 'Review') {
      // Stop, merge, restart: the edit never races the service's writes.
      await final.stop(30_000);
      project.editIssue('E-1', { state: 'Done' });
    }
    const closing = final.exitStatus() === null ? final : startService(project, { logName: 'final-2.jsonl' });
    const explain = () =>
      `${notes.join('\n')}\n${closing.tail()}\n${JSON.stringify(project.readIssues().map((i) => [i.identifier, i.state]))}`;
    await waitFor(
      'every issue to reach its final state',
      () => [...Object.keys(expected), ...budgetStopped].every(isFinal),
      { timeoutMs: 240_000, explain },
    );
    await waitIdle(closing);
    const stopped = await closing.stop(30_000);
    for (const line of closing.logsWith('killed processes left by an earlier orchestrator')) {
      monitor.noteKilled((line.pids as number[]) ?? [], Date.parse(line.time));
    }
    monitor.stop();
    hooks.sample();
    hooks.stop();
    console.log(notes.join('\n'));

    // Final states and nothing pending.
    for (const [identifier, state] of Object.entries(expected)) {
      expect(project.issue(identifier).state, identifier).toBe(state);
    }
    for (const identifier of budgetStopped)
      expect(isFinal(identifier), `${identifier} stopped by its budget`).toBe(true);
    const runs = dbRuns(dbPath);
    expect(
      runs.filter((r) => r.ended_at === null),
      'no run left open',
    ).toEqual([]);
    expect(
      readDb(dbPath, (db) => db.prepare('SELECT COUNT(*) AS n FROM pending_transitions').get()),
      'no handoff left pending',
    ).toEqual({ n: 0 });
    // Every finished turn recorded once.
    const duplicates = readDb(dbPath, (db) =>
      db.prepare('SELECT run_id, turn, COUNT(*) AS n FROM turns GROUP BY run_id, turn HAVING n > 1').all(),
    );
    expect(duplicates, 'turns recorded twice').toEqual([]);
    // Totals and budgets equal the sum of the runs.
    const sum = (list: typeof runs) => list.reduce((s, r) => s + r.total_tokens, 0);
    const totals = readDb(dbPath, (db) =>
      db.prepare('SELECT total_tokens, runs_started, runs_finished FROM totals').get(),
    ) as { total_tokens: number; runs_started: number; runs_finished: number };
    expect(totals.total_tokens, 'total tokens = the sum of the runs').toBe(sum(runs));
    expect(totals.runs_started, 'runs started = the runs').toBe(runs.length);
    for (const issue of issues) {
      const budget = readDb(dbPath, (db) =>
        db.prepare('SELECT tokens, sessions FROM issue_budgets WHERE issue_id = ?').get(issue.id),
      ) as { tokens: number; sessions: number } | undefined;
      const own = runs.filter((r) => r.issue_id === issue.id);
      expect(budget?.tokens ?? 0, `${issue.identifier} budget tokens`).toBe(sum(own));
      expect(budget?.sessions ?? 0, `${issue.identifier} budget sessions`).toBe(own.length);
    }
    // Never two live agents or hooks for one issue.
    for (const [issueKey, live] of monitor.maxLivePerIssue()) {
      if (live.max > 1)
        violations.push(`${issueKey}: ${live.max} live agents at once (${live.pids.join(', ')})`);
    }
    for (const [issueId, most] of hooks.most) {
      if (most.groups.length > 1)
        violations.push(`issue ${issueId}: ${most.groups.length} live hooks at once`);
    }
    expect(monitor.liveNow(), 'no agent left alive').toEqual([]);
    // The issues file: valid, unchanged outside what the service writes, no temp file left.
    const after = JSON.parse(readFileSync(project.issuesPath, 'utf8')) as Record<string, unknown>[];
    expect(after.map((i) => i.id)).toEqual(original.map((i) => i.id));
    for (const [index, before] of original.entries()) {
      const now = after[index] as Record<string, unknown>;
      for (const key of new Set([...Object.keys(before), ...Object.keys(now)])) {
        if (WRITTEN_FIELDS.has(key)) continue;
        expect(now[key], `${String(before.identifier)}.${key}`).toEqual(before[key]);
      }
    }
    expect(
      readdirSync(project.dir).filter((n) => n.endsWith('.tmp')),
      'temp files left',
    ).toEqual([]);
    expect(violations, notes.join('\n')).toEqual([]);
    expect(stopped, closing.tail()).toMatchObject({ code: 0, killed: false });
    console.log(
      `chaos figures: ${counts.kills} orchestrator kills, ${counts.agentKills} agent kills, ${counts.hookKills} hook kills, ` +
        `${counts.diskFills} disk fills, ${runs.length} runs, ${counts.checks} retry checks, ${violations.length} violations`,
    );
  });

  it(`a tracker failing up to 20 % of its calls, with ${Math.ceil(KILLS / 2)} random SIGKILLs, loses no handoff and no retry`, {
    timeout: 20 * 60_000,
  }, async () => {
    const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 2 ** 31) + 1;
    console.log(`chaos (tracker faults) seed: ${seed}`);
    const random = seededRandom(seed);
    const fake: FakeGithub = await startFakeGithub({ token: TOKEN });
    fakes.push(fake);
    for (const label of ['Todo', 'In Progress', 'Review', 'Blocked', 'Done']) fake.addLabel(label);
    const numbers = [
      fake.addIssue({ title: 'one', body: '!ok one', labels: ['Todo'] }),
      fake.addIssue({ title: 'two', body: '!crash once\n!ok two', labels: ['Todo'] }),
      fake.addIssue({ title: 'three', body: '!usage 100 10\n!ok three', labels: ['Todo'] }),
      fake.addIssue({ title: 'four', body: '!blocked which one?', labels: ['Todo'] }),
    ];
    const expected = new Map([
      [numbers[0], 'review'],
      [numbers[1], 'review'],
      [numbers[2], 'review'],
      [numbers[3], 'blocked'],
    ]);
    // One request in ten fails as a server error (which the client retries), and one write in
    // ten more is refused (which it does not).
    const faults = { serverErrors: 0, refusals: 0 };
    let draw = 1;
    fake.failNext(Number.MAX_SAFE_INTEGER, 502, () => {
      draw = random();
      if (draw < 0.1) faults.serverErrors += 1;
      return draw < 0.1;
    });
    // Refusals only for writes: a read never answers 422, and a refused read of an issue is
    // (by the retry table) a payload error that holds the issue until it changes.
    fake.failNext(Number.MAX_SAFE_INTEGER, 422, (method) => {
      const refused = method !== 'GET' && draw >= 0.1 && draw < 0.2;
      if (refused) faults.refusals += 1;
      return refused;
    });
    const project = createProject({
      issues: [],
      traceAgents: true,
      config: {
        tracker: fakeGithubTracker(fake),
        file: null,
        github: { min_write_interval_ms: 0, max_rate_limit_wait_ms: 5_000 },
        polling: { interval_ms: 200 },
        agent: { max_turns: 1, max_concurrent_agents: 4, max_retry_backoff_ms: 500 },
      },
    });
    const monitor = new AgentMonitor(project).start();
    const label = (n: number) =>
      fake
        .issue(n)
        .labels.map((l) => l.toLowerCase())
        .find((l) => ['review', 'blocked', 'todo', 'in progress'].includes(l));
    const done = () => [...expected].every(([n, want]) => label(n as number) === want);
    const violations: string[] = [];
    const rounds = Math.ceil(KILLS / 2);
    for (let k = 1; k <= rounds; k++) {
      const service = startService(project, {
        logName: `gh-${String(k).padStart(2, '0')}.jsonl`,
        env: { GITHUB_TOKEN: TOKEN },
      });
      await service
        .waitForLog('the service to start', (l) => l.msg === 'orchestrator starting', { timeoutMs: 30_000 })
        .catch(() => undefined);
      await sleep(Math.round(500 + random() * 3_000));
      service.kill('SIGKILL');
      await service.exit;
      monitor.sample();
      for (const line of service.logsWith('killed processes left by an earlier orchestrator')) {
        monitor.noteKilled((line.pids as number[]) ?? [], Date.parse(line.time));
      }
      const runs = dbRuns(project.dbPath);
      const retryIds = new Set(dbRetries(project.dbPath).map((r) => r.issue_id));
      for (const issueId of new Set(runs.map((r) => r.issue_id))) {
        const newest = runs.filter((r) => r.issue_id === issueId).at(-1);
        if (newest === undefined || newest.exit_kind !== 'failed' || !RETRYABLE.has(newest.error_kind ?? ''))
          continue;
        if (!retryIds.has(issueId)) violations.push(`round ${k}: retry lost for run ${newest.id}`);
      }
    }
    const final = startService(project, { logName: 'gh-final.jsonl', env: { GITHUB_TOKEN: TOKEN } });
    await waitFor('every issue handed off or blocked', done, {
      timeoutMs: 180_000,
      explain: () => final.tail(),
    });
    await waitIdle(final);
    const stopped = await final.stop(30_000);
    monitor.stop();
    for (const [n, want] of expected) expect(label(n as number), `issue #${n}`).toBe(want);
    const runs = dbRuns(project.dbPath);
    expect(
      runs.filter((r) => r.ended_at === null),
      'no run left open',
    ).toEqual([]);
    expect(
      readDb(project.dbPath, (db) => db.prepare('SELECT COUNT(*) AS n FROM pending_transitions').get()),
    ).toEqual({ n: 0 });
    const totals = readDb(project.dbPath, (db) =>
      db.prepare('SELECT total_tokens, runs_started FROM totals').get(),
    ) as {
      total_tokens: number;
      runs_started: number;
    };
    expect(totals.total_tokens).toBe(runs.reduce((sum, r) => sum + r.total_tokens, 0));
    expect(totals.runs_started).toBe(runs.length);
    for (const [issueKey, live] of monitor.maxLivePerIssue()) {
      if (live.max > 1) violations.push(`${issueKey}: ${live.max} live agents at once`);
    }
    expect(violations).toEqual([]);
    expect(stopped, final.tail()).toMatchObject({ code: 0, killed: false });
    console.log(
      `chaos figures (tracker faults): ${rounds} kills, ${faults.serverErrors} server errors and ${faults.refusals} refusals injected, ${runs.length} runs, ${violations.length} violations`,
    );
  });
});
