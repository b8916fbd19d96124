import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatPlan } from '../../src/cli/run-command.js';
import type { Issue } from '../../src/domain/issue.js';
import type { PlanRow } from '../../src/orchestrator/plan.js';
import { SAMPLE_ISSUE } from '../../src/prompt/variables.js';
import type { ServiceConfig } from '../../src/workflow/config.js';
import { runCli } from '../support/cli.js';

const issue = (n: number): Issue => ({
  ...SAMPLE_ISSUE,
  id: `id-${n}`,
  identifier: `E-${n}`,
  title: `issue ${n}`,
  state: 'Todo',
  comments: null,
  blockedBy: [],
});

function config(sshHosts: string[], perHost: number): Pick<ServiceConfig, 'agent' | 'worker'> {
  return {
    agent: { kind: 'mock', maxConcurrentAgents: 4 } as ServiceConfig['agent'],
    worker: {
      sshHosts,
      maxConcurrentAgentsPerHost: perHost,
      sshStrictHostKeyChecking: 'accept-new',
      identityFile: null,
      knownHostsFile: '/tmp/known_hosts',
      user: null,
      connectTimeoutMs: 30_000,
      forwardEnv: [],
    },
  };
}

describe('dry-run plan text', () => {
  it('without SSH hosts the lines are unchanged: no host, no host summary', () => {
    const rows: PlanRow[] = [
      { issue: issue(1), dispatch: true, host: null },
      { issue: issue(2), dispatch: false, reason: 'no_slot', detail: 'all 1 agent slots in use' },
    ];
    expect(formatPlan(rows, config([], 0)).split('\n')).toEqual([
      'E-1         dispatch  [Todo] issue 1',
      'E-2         skip      [Todo] no_slot: all 1 agent slots in use',
      '2 candidates, 1 would be dispatched to agent "mock" (max_concurrent_agents 4)',
      '',
    ]);
  });

  it('with SSH hosts each dispatch names its host and a host-less skip says why', () => {
    const rows: PlanRow[] = [
      { issue: issue(1), dispatch: true, host: 'b1' },
      { issue: issue(2), dispatch: true, host: 'ci@b2:2222' },
      {
        issue: issue(3),
        dispatch: false,
        reason: 'ssh_hosts_at_capacity',
        detail: 'no ssh host has a free slot (max_concurrent_agents_per_host 1: b1 1/1, ci@b2:2222 1/1)',
      },
    ];
    expect(formatPlan(rows, config(['b1', 'ci@b2:2222'], 1)).split('\n')).toEqual([
      'E-1         dispatch  [Todo] issue 1  (ssh_host b1)',
      'E-2         dispatch  [Todo] issue 2  (ssh_host ci@b2:2222)',
      'E-3         skip      [Todo] ssh_hosts_at_capacity: no ssh host has a free slot (max_concurrent_agents_per_host 1: b1 1/1, ci@b2:2222 1/1)',
      '3 candidates, 2 would be dispatched to agent "mock" (max_concurrent_agents 4) on 2 ssh hosts (max_concurrent_agents_per_host 1)',
      '',
    ]);
  });

  it('a per-host cap of 0 is reported as no cap, not as a limit of 0', () => {
    const text = formatPlan([{ issue: issue(1), dispatch: true, host: 'b1' }], config(['b1'], 0));
    expect(text).toContain('on 1 ssh host (no per-host cap)');
  });
});

describe('orchestrator run --dry-run with SSH hosts', () => {
  it('assigns hosts least-loaded first and skips the rest as ssh_hosts_at_capacity, connecting to nothing', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cli-dry-run-'));
    const issues = [1, 2, 3, 4].map((n) => ({
      id: String(n),
      identifier: `E-${n}`,
      title: `issue ${n}`,
      state: 'Todo',
      priority: n,
      created_at: '2026-01-01T00:00:00Z',
    }));
    writeFileSync(path.join(dir, 'issues.json'), JSON.stringify(issues));
    // .invalid never resolves: a dry run that tried to connect would fail or hang.
    writeFileSync(
      path.join(dir, 'WORKFLOW.md'),
      `---
tracker:
  kind: file
  active_states: [Todo]
  terminal_states: [Done]
file:
  path: issues.json
agent:
  kind: mock
  max_concurrent_agents: 10
worker:
  ssh_hosts: [a.invalid, b.invalid]
  max_concurrent_agents_per_host: 1
---
Work on {{ issue.title }}.
`,
    );
    const result = runCli(['run', path.join(dir, 'WORKFLOW.md'), '--dry-run'], { cwd: dir });
    expect(result.status, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^E-1\s+dispatch\s+\[Todo\] issue 1 {2}\(ssh_host a\.invalid\)$/);
    expect(lines[1]).toMatch(/^E-2\s+dispatch\s+\[Todo\] issue 2 {2}\(ssh_host b\.invalid\)$/);
    expect(lines[2]).toMatch(/^E-3\s+skip\s+\[Todo\] ssh_hosts_at_capacity: /);
    expect(lines[3]).toMatch(/^E-4\s+skip\s+\[Todo\] ssh_hosts_at_capacity: /);
    expect(lines.at(-1)).toBe(
      '4 candidates, 2 would be dispatched to agent "mock" (max_concurrent_agents 10) on 2 ssh hosts (max_concurrent_agents_per_host 1)',
    );
  });
});
