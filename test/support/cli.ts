/** Runs the real `orchestrator` CLI in a child process, from source through tsx or as built. */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';

export const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..');
const MAIN = path.join(REPO_ROOT, 'src', 'cli', 'main.ts');
/** The entry point `npm run build` ships, and the file the package's `orchestrator` bin names. */
export const BUILT_MAIN = path.join(REPO_ROOT, 'dist', 'cli', 'main.js');
const BUNDLE = path.join(REPO_ROOT, 'dist', 'cli', 'orchestrator.cjs');
/** Held while one test process builds, so files run in parallel never build over each other. */
const BUILD_LOCK = path.join(REPO_ROOT, 'dist', '.test-build-lock');
/** A lock this old was left by a killed run. */
const STALE_LOCK_MS = 5 * 60_000;
const BUILD_WAIT_MS = 170_000;
/** tsx's loader by URL, so a child started in any directory finds it. */
export const TSX_LOADER = import.meta.resolve('tsx');

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** The environment every CLI child gets: enough to start node, plus `env`. */
export function cliEnv(env: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env };
}

/** Runs `orchestrator <args>` with a hermetic environment plus `env`. */
export function runCli(
  args: readonly string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): CliResult {
  const result = spawnSync(process.execPath, ['--import', TSX_LOADER, MAIN, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: cliEnv(options.env),
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * Runs `orchestrator <args>` like `runCli`, without blocking this process: for a CLI that talks
 * to a fake server living in the test's own process.
 */
export function runCliAsync(
  args: readonly string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', TSX_LOADER, MAIN, ...args],
      { cwd: options.cwd ?? REPO_ROOT, env: cliEnv(options.env), encoding: 'utf8', timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({
          status: error === null ? 0 : typeof error.code === 'number' ? error.code : null,
          stdout,
          stderr,
        }),
    );
  });
}

function newestMs(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMs(p) : statSync(p).mtimeMs);
  }
  return newest;
}

function isBuilt(): boolean {
  return existsSync(BUNDLE) && statSync(BUNDLE).mtimeMs >= newestMs(path.join(REPO_ROOT, 'src'));
}

function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Builds dist/ when it is missing or older than src/, so a suite tests what `npm run build`
 * ships. One test process builds at a time; the others wait and then find it built.
 */
export function ensureBuilt(): void {
  if (isBuilt()) return;
  mkdirSync(path.dirname(BUILD_LOCK), { recursive: true });
  const deadline = Date.now() + BUILD_WAIT_MS;
  for (;;) {
    try {
      mkdirSync(BUILD_LOCK);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const lockedAtMs = statSync(BUILD_LOCK, { throwIfNoEntry: false })?.mtimeMs;
    if (lockedAtMs !== undefined && Date.now() - lockedAtMs > STALE_LOCK_MS) {
      rmSync(BUILD_LOCK, { recursive: true, force: true });
    }
    if (Date.now() > deadline) throw new Error('gave up waiting for another test process to build dist/');
    sleepMs(250);
  }
  try {
    if (isBuilt()) return;
    const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: REPO_ROOT, encoding: 'utf8' });
    if (build.status !== 0) throw new Error(`build failed: ${build.stdout}${build.stderr}`);
  } finally {
    rmSync(BUILD_LOCK, { recursive: true, force: true });
  }
}

/** Runs `node dist/cli/main.js <args>` (call ensureBuilt first) with a hermetic environment plus `env`. */
export function runBuilt(
  args: readonly string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): CliResult {
  const result = spawnSync(process.execPath, [BUILT_MAIN, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: cliEnv(options.env),
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
