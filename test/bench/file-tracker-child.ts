/**
 * The measuring process of `file-tracker` (run by it with `--expose-gc`; not a bench on
 * its own). Writes an issues file of BENCH_FILE_ISSUES issues (default 50,000) as
 * indented JSON, builds the tracker through the registry as the service does, and times
 * each operation the orchestrator calls on it. Prints plain lines.
 */
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TrackerSettings } from '../../src/domain/tracker.js';
import { trackerKind } from '../../src/tracker/registry.js';
import '../../src/tracker/kinds.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc');

const ISSUES = Number(process.env.BENCH_FILE_ISSUES ?? 50_000);
/** Longer than the tracker's window for timestamps too recent to trust, so warm reads are measured settled. */
const SETTLE_MS = 3_500;
const STATES = ['Todo', 'In Progress', 'Done', 'Human Review'];

function rawIssue(n: number): Record<string, unknown> {
  return {
    id: `id-${n}`,
    identifier: `BENCH-${n}`,
    title: `Issue number ${n}: something to fix in module ${n % 97}`,
    description: `Steps to reproduce ${n}. `.repeat(8),
    state: STATES[n % STATES.length],
    priority: n % 5,
    labels: ['bench', `area-${n % 13}`],
    created_at: '2025-01-01T00:00:00Z',
    ...(n % 10 === 0
      ? { comments: [{ id: 'c-1', author: 'ann', body: 'first look', created_at: '2025-01-02T00:00:00Z' }] }
      : {}),
    ...(n % 20 === 0 && n > 1 ? { blocked_by: [{ identifier: `BENCH-${n - 1}` }] } : {}),
  };
}

/** Milliseconds of each of `count` sequential calls of `op(i)`. */
async function timed(count: number, op: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await op(i);
    out.push(performance.now() - started);
  }
  return out;
}

function summary(label: string, samples: readonly number[]): void {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  console.log(
    `${label.padEnd(44)} median ${at(0.5).toFixed(1).padStart(8)} ms   max ${at(1).toFixed(1).padStart(8)} ms   (n=${sorted.length})`,
  );
}

function memory(label: string): void {
  gc?.();
  gc?.();
  const usage = process.memoryUsage();
  const peakMb = process.resourceUsage().maxRSS / 1024;
  console.log(
    `${label.padEnd(44)} heap used ${(usage.heapUsed / 2 ** 20).toFixed(0)} MB, RSS ${(usage.rss / 2 ** 20).toFixed(0)} MB, peak RSS ${peakMb.toFixed(0)} MB`,
  );
}

const pick = (i: number) => `id-${((i * 7_919) % ISSUES) + 1}`;

const dir = await mkdtemp(join(tmpdir(), 'bench-file-tracker-'));
try {
  const path = join(dir, 'issues.json');
  await writeFile(
    path,
    `${JSON.stringify(
      Array.from({ length: ISSUES }, (_, i) => rawIssue(i + 1)),
      null,
      2,
    )}\n`,
  );
  console.log(
    `${ISSUES} issues, ${((await stat(path)).size / 2 ** 20).toFixed(1)} MB of JSON; load average ${loadavg()[0]?.toFixed(1)}`,
  );
  memory('before the first read');
  const settings: TrackerSettings = {
    kind: 'file',
    endpoint: '',
    apiKey: '',
    project: '',
    queryFilter: '',
    assignee: null,
    requiredLabels: [],
    activeStates: ['Todo', 'In Progress'],
    terminalStates: ['Done'],
    handoffState: 'Human Review',
    inProgressState: 'In Progress',
    blockedState: null,
    options: { path },
    baseDir: dir,
  };
  const create = trackerKind('file')?.create;
  if (create === undefined) throw new Error('file tracker kind has no create');
  const tracker = await create(settings);
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

  summary('fetchCandidateIssues, first', await timed(1, () => tracker.fetchCandidateIssues()));
  summary('fetchCandidateIssues, file unchanged', await timed(5, () => tracker.fetchCandidateIssues()));
  summary('fetchIssueById, file unchanged', await timed(10, (i) => tracker.fetchIssueById(pick(i))));
  summary(
    'fetchIssueStatesByIds (10 ids), unchanged',
    await timed(5, (i) =>
      tracker.fetchIssueStatesByIds(Array.from({ length: 10 }, (_, j) => pick(i * 10 + j))),
    ),
  );
  const concurrent = performance.now();
  await Promise.all(Array.from({ length: 32 }, (_, i) => tracker.fetchIssueById(pick(i))));
  summary('32 concurrent fetchIssueById, all done', [performance.now() - concurrent]);
  memory('after the reads');

  summary(
    'transitionIssue',
    // Issues 4k start in Todo, so every transition changes the file.
    await timed(5, (i) => tracker.transitionIssue(`id-${4 * (i + 1) * 1_009}`, 'In Progress')),
  );
  summary('commentIssue', await timed(5, (i) => tracker.commentIssue(pick(i + 200), `bench comment ${i}`)));
  summary('fetchIssueById, right after a write', await timed(5, (i) => tracker.fetchIssueById(pick(i))));
  summary('fetchCandidateIssues, right after a write', await timed(1, () => tracker.fetchCandidateIssues()));
  memory('after the writes');
} finally {
  await rm(dir, { recursive: true, force: true });
}
