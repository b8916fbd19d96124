import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUILT_MAIN, ensureBuilt, REPO_ROOT, runCli } from '../support/cli.js';

function runDist(args: string[]) {
  const r = spawnSync(process.execPath, [BUILT_MAIN, ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('the built CLI (bundle with code cache)', () => {
  // The suite tests what `npm run build` ships; built when missing or older than the sources.
  beforeAll(() => ensureBuilt(), 180_000);

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
