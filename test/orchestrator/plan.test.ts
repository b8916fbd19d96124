import { describe, expect, it } from 'vitest';
import type { Issue } from '../../src/domain/issue.js';
import type { EligibilityInput } from '../../src/orchestrator/eligibility.js';
import { HostPool } from '../../src/orchestrator/host-pool.js';
import { type PlanRow, planDispatch } from '../../src/orchestrator/plan.js';
import { SAMPLE_ISSUE } from '../../src/prompt/variables.js';

const issue = (n: number, over: Partial<Issue> = {}): Issue => ({
  ...SAMPLE_ISSUE,
  id: `id-${n}`,
  identifier: `E-${n}`,
  priority: n,
  state: 'Todo',
  comments: null,
  blockedBy: [],
  ...over,
});

const input: EligibilityInput = {
  activeStates: ['Todo'],
  terminalStates: ['Done'],
  busyIds: new Set(),
  exhaustedIds: new Set(),
};

const limits = (maxConcurrentAgents: number, byState: Record<string, number> = {}) => ({
  maxConcurrentAgents,
  maxConcurrentAgentsByState: byState,
});

function pool(hosts: readonly string[], cap: number, now = 0): HostPool {
  const p = new HostPool({ nowMs: () => now });
  p.configure(hosts, cap);
  return p;
}

/** identifier → host, or reason when skipped. */
const summary = (rows: PlanRow[]) =>
  rows.map((r) => [r.issue.identifier, r.dispatch ? r.host : r.reason] as const);

describe('dispatch plan with SSH hosts', () => {
  it('without hosts every dispatch runs locally (host null), exactly as before', () => {
    const rows = planDispatch([issue(1), issue(2)], input, limits(5));
    expect(summary(rows)).toEqual([
      ['E-1', null],
      ['E-2', null],
    ]);
    expect(summary(planDispatch([issue(1)], input, limits(5), pool([], 2)))).toEqual([['E-1', null]]);
    expect(summary(planDispatch([issue(1)], input, limits(5), null))).toEqual([['E-1', null]]);
  });

  it('spreads candidates over hosts least-loaded first, in configured order on ties', () => {
    const hosts = pool(['h1', 'h2'], 0);
    hosts.take('h1');
    const rows = planDispatch([issue(1), issue(2), issue(3)], input, limits(10), hosts);
    expect(summary(rows)).toEqual([
      ['E-1', 'h2'],
      ['E-2', 'h1'],
      ['E-3', 'h2'],
    ]);
  });

  it('a candidate that would dispatch but finds every host full is skipped as ssh_hosts_at_capacity, and so is every later one', () => {
    const rows = planDispatch(
      [issue(1), issue(2), issue(3), issue(4, { state: 'Done' })],
      input,
      limits(10),
      pool(['h1'], 1),
    );
    expect(summary(rows)).toEqual([
      ['E-1', 'h1'],
      ['E-2', 'ssh_hosts_at_capacity'],
      ['E-3', 'ssh_hosts_at_capacity'],
      ['E-4', 'terminal'],
    ]);
    const skip = rows[1];
    expect(skip?.dispatch === false && skip.detail).toBe(
      'no ssh host has a free slot (max_concurrent_agents_per_host 1: h1 1/1)',
    );
  });

  it('every host down is ssh_hosts_down, with each host and its failure in the detail', () => {
    const hosts = pool(['h1', 'h2'], 2);
    hosts.markDown('h1', 'connection refused');
    hosts.markDown('h2', 'host key mismatch');
    const [row] = planDispatch([issue(1)], input, limits(10), hosts);
    expect(row).toMatchObject({
      dispatch: false,
      reason: 'ssh_hosts_down',
      detail: 'every ssh host is down (h1: connection refused; h2: host key mismatch)',
    });
  });

  it('planning never takes the real slots: the pool the caller passes is unchanged', () => {
    const hosts = pool(['h1', 'h2'], 1);
    planDispatch([issue(1), issue(2), issue(3)], input, limits(10), hosts);
    expect([...hosts.usage()]).toEqual([
      ['h1', 0],
      ['h2', 0],
    ]);
  });

  it('the global and per-state limits still come first: a slot-less candidate reports no_slot, not a host', () => {
    const rows = planDispatch([issue(1), issue(2), issue(3)], input, limits(1), pool(['h1'], 0));
    expect(summary(rows)).toEqual([
      ['E-1', 'h1'],
      ['E-2', 'no_slot'],
      ['E-3', 'no_slot'],
    ]);
    const byState = planDispatch(
      [issue(1, { state: 'Review' }), issue(2, { state: 'Review' }), issue(3)],
      { ...input, activeStates: ['Todo', 'Review'] },
      limits(10, { review: 1 }),
      pool(['h1', 'h2'], 1),
    );
    expect(summary(byState)).toEqual([
      ['E-1', 'h1'],
      ['E-2', 'no_state_slot'],
      ['E-3', 'h2'],
    ]);
  });

  it('a skip for lack of hosts does not use up a global slot', () => {
    const hosts = pool(['h1', 'h2'], 1);
    hosts.markDown('h2', 'refused');
    const rows = planDispatch([issue(1), issue(2)], input, limits(2), hosts);
    expect(summary(rows)).toEqual([
      ['E-1', 'h1'],
      ['E-2', 'ssh_hosts_at_capacity'],
    ]);
    expect(rows[1]?.dispatch === false && rows[1].detail).toContain('h2 0/1 down');
  });

  it('ineligible candidates keep their own reason even when no host has room', () => {
    const rows = planDispatch(
      [issue(1, { id: 'busy' }), issue(2)],
      { ...input, busyIds: new Set(['busy']) },
      limits(5),
      pool(['h1'], 1),
    );
    expect(summary(rows)).toEqual([
      ['E-1', 'busy'],
      ['E-2', 'h1'],
    ]);
  });
});
