/**
 * Memory and speed of one long agent turn: a turn printing many small stdout lines, read
 * by the orchestrator process. Two set-ups, each in a child node whose old-space heap is
 * capped at HEAP_LIMIT_MB (BENCH_AGENT_HEAP_MB), at two turn lengths:
 *   - skeleton: a flood writer (one short JSON line each) through the fork-per-turn skeleton
 *     with hooks that keep nothing, so the figures are the skeleton's own;
 *   - mock: the mock kind acting out `!loop` (a tool call and its result per step), through
 *     the real adapter, parser and event path.
 * Heap used and RSS are sampled every 20 ms during the turn, and every 200 ms the heap is
 * also measured right after a full collection (`--expose-gc`): that live heap is what the
 * turn keeps, the other two mostly show how lazily garbage is collected. Target: every turn
 * finishes in the capped heap, and the long turn's live-heap peak is within 25% of the short
 * one's, so what is kept does not follow the number of lines.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { envInt, ROOT } from './orchestrator-harness.js';

const HEAP_LIMIT_MB = envInt('BENCH_AGENT_HEAP_MB', 64);
const TARGET_GROWTH = 0.25;

interface TurnFigures {
  exitReason: string;
  parsed: number;
  events: number;
  elapsedMs: number;
  heapBytes: number;
  rssBytes: number;
  liveHeapBytes: number | null;
}

const SETUPS = [
  {
    name: 'skeleton',
    script: path.join(ROOT, 'test', 'agent', 'core', 'skeleton', 'long-turn-child.ts'),
    /** Lines printed for a turn of `lines`. */
    arg: (lines: number) => String(lines),
  },
  {
    name: 'mock',
    script: path.join(ROOT, 'test', 'bench', 'agent-output-mock-child.ts'),
    arg: (lines: number) => String(lines / 2),
  },
];

function runTurn(script: string, arg: string): Promise<TurnFigures | { failed: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [`--max-old-space-size=${HEAP_LIMIT_MB}`, '--expose-gc', '--import', 'tsx', script, arg],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-2_000);
    });
    child.once('error', reject);
    child.once('close', (code) => {
      const last = stdout.trim().split('\n').at(-1) ?? '';
      if (code === 0 && last.startsWith('{')) resolve(JSON.parse(last) as TurnFigures);
      else
        resolve({
          failed: /heap out of memory/.test(stderr)
            ? 'heap out of memory'
            : `exit ${code}: ${stderr.slice(-300)}`,
        });
    });
  });
}

export async function agentOutput(): Promise<void> {
  const lengths = [100_000, 1_000_000];
  const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
  for (const setup of SETUPS) {
    const heaps: number[] = [];
    for (const lines of lengths) {
      const figures = await runTurn(setup.script, setup.arg(lines));
      if ('failed' in figures) {
        console.log(
          `${setup.name}, ${lines} lines: FAILED in a ${HEAP_LIMIT_MB} MB heap (${figures.failed})`,
        );
        continue;
      }
      heaps.push(figures.liveHeapBytes ?? Number.NaN);
      const linesPerSecond = (figures.parsed / figures.elapsedMs) * 1000;
      console.log(
        `${setup.name}, ${lines} lines: ${figures.exitReason} in ${(figures.elapsedMs / 1000).toFixed(1)} s ` +
          `(${Math.round(linesPerSecond).toLocaleString('en')} lines/s, ${figures.events} events); ` +
          `peaks: live heap ${mb(figures.liveHeapBytes ?? Number.NaN)} MB, heap used ` +
          `${mb(figures.heapBytes)} MB, RSS ${mb(figures.rssBytes)} MB`,
      );
    }
    const [short, long] = heaps;
    if (short === undefined || long === undefined) {
      console.log(`${setup.name}: target MISSED (a turn did not finish in a ${HEAP_LIMIT_MB} MB heap)`);
      continue;
    }
    const growth = (long - short) / short;
    console.log(
      `${setup.name}: live heap peak ${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(1)}% from 100k to 1M lines ` +
        `${growth <= TARGET_GROWTH ? 'MET' : 'MISSED'} (target within ${TARGET_GROWTH * 100}%, ` +
        `every turn finished in a ${HEAP_LIMIT_MB} MB heap)`,
    );
  }
}
