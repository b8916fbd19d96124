import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runCli } from '../support/cli.js';

const MAIN = path.join(REPO_ROOT, 'dist', 'cli', 'main.js');
const BUNDLE = path.join(REPO_ROOT, 'dist', 'cli', 'orchestrator.cjs');

function newestSourceMs(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSourceMs(p) : statSync(p).mtimeMs);
  }
  return newest;
}

function runDist(args: string[]) {
  const r = spawnSync(process.execPath, [MAIN, ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('the built CLI (bundle with code cache)', () => {
  beforeAll(() => {
    // The suite tests what `npm run build` ships; build it when missing or older than the sources.
    if (!existsSync(BUNDLE) || statSync(BUNDLE).mtimeMs < newestSourceMs(path.join(REPO_ROOT, 'src'))) {
      const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: REPO_ROOT, encoding: 'utf8' });
      if (build.status !== 0) throw new Error(`build failed: ${build.stderr}`);
    }
  }, 180_000);

  it('validates the example like the source CLI does', () => {
    const built = runDist(['validate', 'WORKFLOW.example.md', '--format', 'json']);
    const source = runCli(['validate', 'WORKFLOW.example.md', '--format', 'json']);
    expect(built.status).toBe(0);
    expect(JSON.parse(built.stdout)).toEqual(JSON.parse(source.stdout));
  });

  it('reports diagnostics and exit codes through the bundle', () => {
    const bad = runDist(['validate', 'testdata/workflows/invalid/agent-kind-missing.md']);
    expect(bad.status).toBe(1);
    expect(bad.stdout).toContain('agent.kind.missing');
    expect(runDist(['no-such-command']).status).toBe(2);
  });

  it('the bundle still finds every registered kind and the lazily loaded commands', () => {
    const adapters = runDist(['adapters', '--json']);
    expect(adapters.status).toBe(0);
    const kinds = (JSON.parse(adapters.stdout) as { adapters: { kind: string }[] }).adapters.map(
      (a) => a.kind,
    );
    expect(kinds).toEqual(expect.arrayContaining(['mock', 'echo', 'claude-code', 'codex']));
    const plan = runDist(['run', '--dry-run', 'testdata/workflows/valid/all-hooks.md']);
    expect(plan.status).toBe(0);
    expect(plan.stdout).toMatch(/candidates, \d+ would be dispatched/);
  });
});
