/**
 * Orchestrator throughput: 1,000 issues (BENCH_ISSUES scales it down) through the
 * `echo` kind with `delay_ms: 0` at `max_concurrent_agents: 32`, with every real
 * part (file tracker, SQLite store, workspace manager, pino logger, the real
 * `Orchestrator`), wired in-process from `dist/` as `src/cli/service.ts` wires
 * them; CLI start-up is not included. Wall time runs from `start()` until the
 * last issue's handoff transition has been written to the issues file.
 *
 * Baseline, same process: a plain pool that spawns the same echo runtime command
 * the same number of times at the same concurrency and reads each stdout to the
 * end, once before and once after the orchestrator run (the machine is shared;
 * the mean is used). The orchestrator also spawns the credential-verification
 * runs (one per worker that starts before the first proof is stored); the
 * baseline does not, so the raw ratio and one adjusted for those extra spawns
 * are both printed. Target: raw ratio at most 1.3×.
 *
 * BENCH_POLL_MS sets `polling.interval_ms` (default 1000): a slot freed by a
 * finished session is refilled only on the next tick, so the interval is part of
 * what is measured.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import {
  agentEnvironment,
  baselineSpawns,
  CONCURRENCY,
  envInt,
  loadDist,
  makeBenchDir,
  msSince,
  settled,
  startService,
} from './orchestrator-harness.js';

const TARGET_RATIO = 1.3;
const DEFAULT_POLL_MS = 1_000;

export async function orchestratorThroughput(): Promise<void> {
  const issues = envInt('BENCH_ISSUES', 1_000);
  const pollMs = envInt('BENCH_POLL_MS', DEFAULT_POLL_MS);
  const m = await loadDist();
  const bench = makeBenchDir(issues, pollMs);
  try {
    // The adapter's command and environment shape, run in a directory beside the workspaces.
    const env = agentEnvironment(process.env, m.orphans.OWNER_ENV, 'baseline');
    const cwd = path.join(bench.dir, 'baseline');
    mkdirSync(cwd);
    const before = await baselineSpawns(issues, CONCURRENCY, cwd, env);

    const setupStart = process.hrtime.bigint();
    const service = await startService(m, bench);
    const setupMs = msSince(setupStart);
    const cpuBefore = process.cpuUsage();
    const start = process.hrtime.bigint();
    service.orchestrator.start();
    await service.whenHandedOff(issues);
    const orchestratorMs = msSince(start);
    const cpu = process.cpuUsage(cpuBefore);
    await settled(service.orchestrator);
    const sessions = service.store.totals().runsFinished;
    const verifications = service.verifications();
    const ticks = service.orchestrator.snapshot().ticks;
    const problems = service.problems();
    const logLines = service.logLines();
    await service.shutdown();

    const after = await baselineSpawns(issues, CONCURRENCY, cwd, env);
    const baselineMs = (before + after) / 2;
    const ratio = orchestratorMs / baselineMs;
    const adjusted = orchestratorMs / ((baselineMs * (issues + verifications)) / issues);
    const rate = (ms: number) => `${((issues / ms) * 1000).toFixed(1)} issues/s`;
    console.log(
      `setup: ${issues} issues, echo delay_ms 0, max_concurrent_agents ${CONCURRENCY}, max_turns 1, ` +
        `polling.interval_ms ${pollMs}; in-process Orchestrator from dist/ ` +
        `(wiring ${setupMs.toFixed(0)} ms, not timed)`,
    );
    console.log(
      `orchestrator: ${orchestratorMs.toFixed(0)} ms to hand off all ${issues} (${rate(orchestratorMs)}); ` +
        `${sessions} sessions, ${verifications} credential verification spawn(s), ${ticks} ticks, ` +
        `${logLines} log lines; orchestrator process CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms`,
    );
    if (sessions > issues) {
      console.log(
        `  ${sessions - issues} issue(s) were dispatched again after their handoff (a stale candidate read)`,
      );
    }
    if (problems.count > 0) {
      console.log(
        `  ${problems.count} warning/error log line(s), first: ${problems.first[0]?.slice(0, 300)}`,
      );
    }
    console.log(
      `baseline:     ${baselineMs.toFixed(0)} ms for ${issues} plain echo runtime spawns (${rate(baselineMs)}; ` +
        `mean of ${before.toFixed(0)} ms before and ${after.toFixed(0)} ms after)`,
    );
    console.log(
      `ratio ${ratio.toFixed(2)}x (target <= ${TARGET_RATIO}x) ${ratio <= TARGET_RATIO ? 'MET' : 'MISSED'}; ` +
        `against a baseline of ${issues + verifications} spawns (the verification spawns added): ` +
        `${adjusted.toFixed(2)}x`,
    );
  } finally {
    bench.remove();
  }
}
