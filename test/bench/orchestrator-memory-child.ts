/**
 * The measuring process of `orchestrator-memory` (run by it with `--expose-gc`;
 * not a bench on its own). The set-up of `orchestrator-throughput`, but sessions
 * cycle: BENCH_MEMORY_ISSUES issues (default 100) are handed off, then all are
 * re-opened (written back to the active state) and handed off again, round after
 * round. At each checkpoint the service is let settle (nothing running, nothing
 * queued), the heap is collected twice, and RSS and heap used are read.
 *
 * Prints one JSON line per checkpoint: `{"checkpoint": n, ...}`.
 */
import {
  envInt,
  loadDist,
  makeBenchDir,
  msSince,
  settled,
  startService,
  writeIssues,
} from './orchestrator-harness.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');

const issues = envInt('BENCH_MEMORY_ISSUES', 100);
const checkpoints = (process.env.BENCH_CHECKPOINTS ?? '1000,5000')
  .split(',')
  .map((s) => Number(s.trim()))
  .sort((a, b) => a - b);
const pollMs = envInt('BENCH_POLL_MS', 1_000);
for (const c of checkpoints) {
  if (!Number.isInteger(c) || c <= 0 || c % issues !== 0)
    throw new Error(`checkpoint ${c} must be a positive multiple of ${issues} (the issues per round)`);
}

function measure(): { rssMb: number; heapUsedMb: number } {
  gc?.();
  gc?.();
  const usage = process.memoryUsage();
  return { rssMb: usage.rss / 2 ** 20, heapUsedMb: usage.heapUsed / 2 ** 20 };
}

const m = await loadDist();
const bench = makeBenchDir(issues, pollMs);
try {
  const service = await startService(m, bench);
  console.log(JSON.stringify({ checkpoint: 0, elapsedMs: 0, sessions: 0, ...measure() }));
  const start = process.hrtime.bigint();
  service.orchestrator.start();
  const last = checkpoints[checkpoints.length - 1] ?? 0;
  for (let done = issues; done <= last; done += issues) {
    await service.whenHandedOff(done);
    await settled(service.orchestrator);
    if (checkpoints.includes(done)) {
      const elapsedMs = msSince(start);
      console.log(
        JSON.stringify({
          checkpoint: done,
          elapsedMs,
          sessions: service.store.totals().runsFinished,
          verifications: service.verifications(),
          problems: service.problems().count,
          firstProblem: service.problems().first[0] ?? null,
          ...measure(),
        }),
      );
    }
    if (done < last) writeIssues(bench.issuesPath, issues);
  }
  await service.shutdown();
} finally {
  bench.remove();
}
