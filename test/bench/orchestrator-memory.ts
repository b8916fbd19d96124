/**
 * Orchestrator memory: RSS, and heap used after a forced GC, after 1k and after
 * 5k finished sessions (BENCH_CHECKPOINTS="1000,10000" asks for 10k: about
 * 15-20 minutes on a 2-core machine, so 5k is the default). Same set-up as
 * `orchestrator-throughput` (echo, `delay_ms: 0`, 32 concurrent, real parts from
 * `dist/`), but 100 issues (BENCH_MEMORY_ISSUES) cycle: handed off, re-opened,
 * handed off again. A small issues file keeps the file tracker's per-read cost
 * (which grows with the file) out of the way of the session count.
 *
 * Measured in a child `node --expose-gc` (loaded through tsx, whose loader is
 * resident at every checkpoint alike), each checkpoint taken with the service
 * settled. Target: RSS and heap flat within 20% between the two checkpoints.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT, requireBuild } from './orchestrator-harness.js';

const TARGET_GROWTH = 0.2;

interface Checkpoint {
  checkpoint: number;
  elapsedMs: number;
  sessions: number;
  verifications?: number;
  problems?: number;
  firstProblem?: string | null;
  rssMb: number;
  heapUsedMb: number;
}

export async function orchestratorMemory(): Promise<void> {
  requireBuild();
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', path.join(ROOT, 'test', 'bench', 'orchestrator-memory-child.ts')],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const points: Checkpoint[] = [];
  let buffered = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffered += chunk;
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const line = buffered.slice(0, nl).trim();
      buffered = buffered.slice(nl + 1);
      if (!line.startsWith('{')) {
        if (line !== '') console.log(`  child: ${line}`);
        continue;
      }
      const point = JSON.parse(line) as Checkpoint;
      points.push(point);
      const when =
        point.checkpoint === 0 ? 'wired, before the first dispatch' : `after ${point.sessions} sessions`;
      console.log(
        `${when}: RSS ${point.rssMb.toFixed(1)} MB, heap used ${point.heapUsedMb.toFixed(1)} MB` +
          (point.checkpoint === 0
            ? ''
            : ` (${(point.elapsedMs / 1000).toFixed(0)} s in; ${point.verifications ?? 0} verification ` +
              `spawn(s), ${point.problems ?? 0} warning/error log line(s))`),
      );
      if (point.firstProblem) console.log(`  first warning/error: ${point.firstProblem.slice(0, 300)}`);
    }
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`the measuring process exited ${code}`);
  const [, first, ...rest] = points;
  const last = rest[rest.length - 1];
  if (first === undefined || last === undefined) throw new Error('the measuring process reported too little');
  const growth = (a: number, b: number) => (b - a) / a;
  const rss = growth(first.rssMb, last.rssMb);
  const heap = growth(first.heapUsedMb, last.heapUsedMb);
  const verdict = (g: number) => (Math.abs(g) <= TARGET_GROWTH ? 'MET' : 'MISSED');
  const pct = (g: number) => `${g >= 0 ? '+' : ''}${(g * 100).toFixed(1)}%`;
  const perSecond = (last.sessions / last.elapsedMs) * 1000;
  console.log(
    `growth from ${first.sessions} to ${last.sessions} sessions: RSS ${pct(rss)} ${verdict(rss)}, ` +
      `heap used ${pct(heap)} ${verdict(heap)} (target within ${TARGET_GROWTH * 100}%)`,
  );
  if (last.sessions > last.checkpoint) {
    console.log(
      `  ${last.sessions - last.checkpoint} of the ${last.sessions} sessions were re-dispatches of an issue ` +
        'already handed off (a stale candidate read)',
    );
  }
  if (last.checkpoint < 10_000) {
    console.log(
      `measured up to ${last.checkpoint} sessions, not 10k: at ${perSecond.toFixed(1)} sessions/s 10k would take ` +
        `~${(10_000 / perSecond / 60).toFixed(0)} min here (BENCH_CHECKPOINTS=1000,10000 runs it)`,
    );
  }
}
