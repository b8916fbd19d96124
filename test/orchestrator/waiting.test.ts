/**
 * Issues the orchestrator knows of and is not running: the reasons come from the dispatch
 * plan (never a second opinion) and carry the figures behind them, and the owner keeps the
 * latest set from every tick, plus the issues it parked for a person.
 */
import { describe, expect, it, vi } from 'vitest';
import type { Issue } from '../../src/domain/issue.js';
import { planDispatch } from '../../src/orchestrator/plan.js';
import { budgetText, parkedEntry, waitingFromPlan } from '../../src/orchestrator/waiting.js';
import { SAMPLE_ISSUE } from '../../src/prompt/variables.js';
import { HARNESS_WORKFLOW, harness, inputTokens, T0 } from './harness.js';

function candidate(n: number, over: Partial<Issue> = {}): Issue {
  return {
    ...SAMPLE_ISSUE,
    id: `id-${n}`,
    identifier: `W-${n}`,
    title: `issue ${n}`,
    state: 'Todo',
    priority: 1,
    createdAt: `2026-01-01T00:00:0${n}Z`,
    blockedBy: [],
    ...over,
  };
}

const NO_LIMITS = { maxSessions: 0, maxTokens: 0, maxCostMicroUsd: 0 };

describe('waitingFromPlan', () => {
  it('each skipped row keeps the plan reason and says it with the figures behind it; busy and dispatched rows are left out', () => {
    const issues = [
      candidate(1),
      candidate(2, { blockedBy: [{ id: 'x', identifier: 'DEMO-1', state: 'Todo' }] }),
      candidate(3),
      candidate(4),
      candidate(5),
      candidate(6, { state: 'Backlog' }),
      candidate(7),
      candidate(8),
    ];
    const rows = planDispatch(
      issues,
      {
        activeStates: ['Todo'],
        terminalStates: ['Done'],
        busyIds: new Set(['id-5']),
        exhaustedIds: new Set(['id-3']),
        heldIds: new Set(['id-4']),
      },
      { maxConcurrentAgents: 2, maxConcurrentAgentsByState: {} },
    );
    const waiting = waitingFromPlan(rows, {
      seenAtMs: T0,
      exhausted: new Map([
        [
          'id-3',
          { sessions: 1, tokens: 60_000, costMicroUsd: 0, exhaustedReason: 'max_tokens: 60000 of 50000' },
        ],
      ]),
      limits: { maxSessions: 0, maxTokens: 50_000, maxCostMicroUsd: 0 },
      held: new Map([['id-4', { error: 'agent_not_found: no such binary', errorKind: 'agent_not_found' }]]),
    });
    expect(waiting.map((w) => [w.identifier, w.reason, w.detail])).toEqual([
      ['W-2', 'blocked', 'waiting on DEMO-1'],
      ['W-3', 'budget_exhausted', 'token budget 60,000 of 50,000'],
      ['W-4', 'held', 'held: agent_not_found'],
      ['W-6', 'not_active', 'state "Backlog" is not active'],
      ['W-8', 'no_slot', 'all 2 agent slots in use'],
    ]);
    expect(waiting[0]).toEqual({
      issueId: 'id-2',
      identifier: 'W-2',
      title: 'issue 2',
      state: 'Todo',
      reason: 'blocked',
      detail: 'waiting on DEMO-1',
      blockedBy: ['DEMO-1'],
      seenAtMs: T0,
    });
  });

  it('a stop the budget figures no longer explain (a limit raised since) reads as it was recorded', () => {
    const rows = planDispatch(
      [candidate(1)],
      { activeStates: ['Todo'], terminalStates: [], busyIds: new Set(), exhaustedIds: new Set(['id-1']) },
      { maxConcurrentAgents: 1, maxConcurrentAgentsByState: {} },
    );
    const [entry] = waitingFromPlan(rows, {
      seenAtMs: T0,
      exhausted: new Map([
        [
          'id-1',
          { sessions: 1, tokens: 60_000, costMicroUsd: 0, exhaustedReason: 'max_tokens: 60000 of 50000' },
        ],
      ]),
      limits: NO_LIMITS,
      held: new Map(),
    });
    expect(entry?.detail).toBe('max_tokens: 60000 of 50000');
  });
});

describe('budgetText', () => {
  it.each([
    [{ sessions: 2, tokens: 0, costMicroUsd: 0 }, { ...NO_LIMITS, maxSessions: 2 }, 'session budget 2 of 2'],
    [
      { sessions: 1, tokens: 1_234_567, costMicroUsd: 0 },
      { ...NO_LIMITS, maxTokens: 50_000 },
      'token budget 1,234,567 of 50,000',
    ],
    [
      { sessions: 1, tokens: 0, costMicroUsd: 1_500_000 },
      { ...NO_LIMITS, maxCostMicroUsd: 1_000_000 },
      'cost budget $1.500000 of $1.000000',
    ],
    [{ sessions: 1, tokens: 10, costMicroUsd: null }, { ...NO_LIMITS, maxTokens: 50_000 }, null],
  ])('%j under %j reads %j', (spend, limits, text) => {
    expect(budgetText(spend, limits)).toBe(text);
  });
});

describe('parkedEntry', () => {
  it('names the state it waits in and the question, clipped', () => {
    const entry = parkedEntry(candidate(1), 'Blocked', ` ${'why? '.repeat(100)}`, T0);
    expect(entry).toMatchObject({ reason: 'parked', state: 'Blocked', blockedBy: [], seenAtMs: T0 });
    expect(entry.detail.startsWith('waiting for an answer in Blocked: why? why?')).toBe(true);
    expect(entry.detail.length).toBeLessThan(360);
    expect(parkedEntry(candidate(1), 'Blocked', '', T0).detail).toBe('waiting for an answer in Blocked');
  });
});

const BUDGET_WORKFLOW = HARNESS_WORKFLOW.replace('  max_turns: 1\n', '  max_turns: 1\n  max_tokens: 50000\n');
const BLOCKED_WORKFLOW = HARNESS_WORKFLOW.replace(
  '  terminal_states: [Done]\n',
  '  terminal_states: [Done]\n  blocked_state: Blocked\n',
);

describe('the owner keeps the issues it is not running, with why', () => {
  it('a candidate waiting on an open blocker is listed with it after the tick, the dispatched one is not', async () => {
    const blocked = candidate(2, { blockedBy: [{ id: 'issue-1', identifier: 'ENG-1', state: 'Todo' }] });
    let release: () => void = () => undefined;
    const s = harness({
      scripts: [{ error: null, hold: new Promise<void>((resolve) => (release = resolve)) }],
      tracker: {
        fetchCandidateIssues: async () => [
          ...(s.issue.state === 'Todo' ? [{ ...s.issue }] : []),
          { ...blocked },
        ],
      },
    });
    await s.orchestrator.tick();
    const snapshot = s.orchestrator.snapshot();
    expect(snapshot.running.map((r) => r.issue.identifier)).toEqual(['ENG-1']);
    expect(snapshot.waiting).toEqual([
      {
        issueId: 'id-2',
        identifier: 'W-2',
        title: 'issue 2',
        state: 'Todo',
        reason: 'blocked',
        detail: 'waiting on ENG-1',
        blockedBy: ['ENG-1'],
        seenAtMs: T0,
      },
    ]);
    release();
    await s.orchestrator.idle();
  });

  it('a failure no retry can fix is listed as held with its kind once the next tick sees it', async () => {
    const s = harness({ scripts: [{ error: { kind: 'agent_not_found' } }] });
    await s.firstRun();
    expect(s.orchestrator.snapshot().held.map((h) => h.identifier)).toEqual(['ENG-1']);
    await s.orchestrator.tick();
    expect(s.orchestrator.snapshot().waiting).toMatchObject([
      { identifier: 'ENG-1', reason: 'held', detail: 'held: agent_not_found' },
    ]);
  });

  it('an issue whose tokens ran past max_tokens is listed with the budget it spent', async () => {
    const s = harness({ workflow: BUDGET_WORKFLOW, scripts: [{ usage: inputTokens(60_000), error: null }] });
    await s.firstRun();
    await s.orchestrator.tick();
    expect(s.orchestrator.snapshot().waiting).toMatchObject([
      { identifier: 'ENG-1', reason: 'budget_exhausted', detail: 'token budget 60,000 of 50,000' },
    ]);
  });

  it('an issue moved to the blocked state with a question is listed as parked until the tracker shows it elsewhere', async () => {
    const s = harness({
      workflow: BLOCKED_WORKFLOW,
      scripts: [{ error: null, finalMessage: 'BLOCKED: which release date?' }],
    });
    await s.firstRun();
    expect(s.transitions).toContain('Blocked');
    expect(s.orchestrator.snapshot().waiting).toMatchObject([
      {
        identifier: 'ENG-1',
        state: 'Blocked',
        reason: 'parked',
        detail: 'waiting for an answer in Blocked: which release date?',
      },
    ]);
    // Still in the blocked state at the next poll: still listed.
    await s.orchestrator.tick();
    expect(s.orchestrator.snapshot().waiting.map((w) => w.reason)).toEqual(['parked']);
    // A person closes it: the tracker shows it elsewhere, and it is forgotten.
    s.issue.state = 'Done';
    await s.orchestrator.tick();
    expect(s.orchestrator.snapshot().waiting).toEqual([]);
  });

  it('a poll while the move to the blocked state is still in flight keeps the issue parked (it still reads as active then)', async () => {
    let moved: () => void = () => undefined;
    const moving = new Promise<void>((resolve) => (moved = resolve));
    const s = harness({
      workflow: BLOCKED_WORKFLOW,
      scripts: [{ error: null, finalMessage: 'BLOCKED: which release date?' }],
      tracker: {
        transitionIssue: async (_id: string, state: string) => {
          await moving;
          s.issue.state = state;
        },
      },
    });
    await s.orchestrator.tick();
    const reasons = () => s.orchestrator.snapshot().waiting.map((w) => w.reason);
    await vi.waitFor(() => expect(reasons()).toEqual(['parked']), { timeout: 10_000, interval: 5 });
    // Still Todo in the tracker and still claimed: this poll reads it among the candidates.
    await s.orchestrator.tick();
    expect(reasons()).toEqual(['parked']);
    moved();
    await s.orchestrator.idle();
    await s.orchestrator.tick();
    expect(s.issue.state).toBe('Blocked');
    expect(reasons()).toEqual(['parked']);
  });

  it('a candidate left without a slot is listed as no_slot, and leaves the list when a later tick dispatches it', async () => {
    let release: () => void = () => undefined;
    const s = harness({
      workflow: BUDGET_WORKFLOW.replace('  max_tokens: 50000\n', '  max_concurrent_agents: 1\n'),
      scripts: [{ error: null, hold: new Promise<void>((resolve) => (release = resolve)) }, { error: null }],
      tracker: { fetchCandidateIssues: async () => [{ ...s.issue }, candidate(2, { priority: 4 })] },
    });
    await s.orchestrator.tick();
    expect(s.orchestrator.snapshot().waiting).toMatchObject([{ identifier: 'W-2', reason: 'no_slot' }]);
    release();
    await s.orchestrator.idle();
    await s.orchestrator.tick();
    expect(s.orchestrator.snapshot().running.map((r) => r.issue.identifier)).toEqual(['W-2']);
    expect(s.orchestrator.snapshot().waiting.map((w) => w.identifier)).not.toContain('W-2');
    await s.orchestrator.idle();
  });
});
