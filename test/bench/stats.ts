/** Small statistics helpers shared by the benchmarks. */
import { spawnSync } from 'node:child_process';

/** Median of a non-empty list. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Wall time of one child process run, in milliseconds; throws when it fails. */
export function timeCommand(command: string, args: readonly string[], cwd: string): number {
  const start = process.hrtime.bigint();
  const result = spawnSync(command, args, { cwd, stdio: 'ignore' });
  const elapsedMs = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${result.status}`);
  return elapsedMs;
}
