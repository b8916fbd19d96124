/** Runs the real `orchestrator` CLI in a child process, from source through tsx. */
import { spawnSync } from 'node:child_process';
import path from 'node:path';

export const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..');
const MAIN = path.join(REPO_ROOT, 'src', 'cli', 'main.ts');
/** tsx's loader by URL, so a child started in any directory finds it. */
export const TSX_LOADER = import.meta.resolve('tsx');

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `orchestrator <args>` with a hermetic environment plus `env`. */
export function runCli(
  args: readonly string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): CliResult {
  const result = spawnSync(process.execPath, ['--import', TSX_LOADER, MAIN, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...options.env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
