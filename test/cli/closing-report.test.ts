import { describe, expect, it } from 'vitest';
import { type ClosingFacts, closingRows, formatClosingTable } from '../../src/cli/closing-report.js';
import type { WaitingEntry } from '../../src/orchestrator/waiting.js';

const waiting = (issueId: string, identifier: string, state: string, detail: string): WaitingEntry => ({
  issueId,
  identifier,
  title: `title of ${identifier}`,
  state,
  reason: 'blocked',
  detail,
  blockedBy: [],
  seenAtMs: 0,
});

const facts = (over: Partial<ClosingFacts>): ClosingFacts => ({
  dispatched: new Map(),
  waiting: [],
  states: new Map(),
  lastRuns: new Map(),
  handoffState: 'Review',
  terminalStates: ['Done', 'Cancelled'],
  ...over,
});

const run = (attempt: number, exitKind: string, errorKind: string | null = null) =>
  ({ attempt, exitKind, errorKind }) as never;

describe('closing table of run --until-idle', () => {
  it.each([
    ['a handed-off issue', 'Review', run(2, 'succeeded'), 'handed off to Review'],
    ['an issue a person closed meanwhile', 'Done', run(1, 'cancelled'), 'closed as Done'],
    [
      'an agent question without a blocked state',
      'In Progress',
      run(1, 'blocked'),
      'held: the agent asked a question and needs an answer',
    ],
    [
      'a failure no retry can fix',
      'In Progress',
      run(1, 'failed', 'agent_not_found'),
      'failed: agent_not_found',
    ],
    [
      'an issue stopped when it moved',
      'Backlog',
      run(1, 'cancelled'),
      'stopped when the issue moved to Backlog',
    ],
  ])('says why %s ended where it did', (_name, state, last, reason) => {
    const rows = closingRows(
      facts({
        dispatched: new Map([['1', 'E-1']]),
        states: new Map([['1', state]]),
        lastRuns: new Map([['1', last]]),
      }),
    );
    expect(rows).toEqual([
      { identifier: 'E-1', state, attempt: (last as { attempt: number }).attempt, reason },
    ]);
  });

  it("takes the owner's waiting reason over its own, lists waiting issues never dispatched, and orders E-2 before E-10", () => {
    const rows = closingRows(
      facts({
        dispatched: new Map([
          ['10', 'E-10'],
          ['5', 'E-5'],
          ['9', 'E-9'],
        ]),
        waiting: [
          waiting('5', 'E-5', 'In Progress', 'token budget 60,000 of 50,000'),
          waiting('2', 'E-2', 'Todo', 'waiting on E-10'),
        ],
        states: new Map([['10', 'Review']]),
        lastRuns: new Map([
          ['10', run(1, 'succeeded')],
          ['5', run(1, 'budget_exhausted')],
        ]),
      }),
    );
    expect(rows).toEqual([
      { identifier: 'E-2', state: 'Todo', attempt: null, reason: 'waiting on E-10' },
      { identifier: 'E-5', state: 'In Progress', attempt: 1, reason: 'token budget 60,000 of 50,000' },
      { identifier: 'E-9', state: null, attempt: null, reason: 'no longer in the tracker' },
      { identifier: 'E-10', state: 'Review', attempt: 1, reason: 'handed off to Review' },
    ]);
  });

  it('formats aligned columns with a heading, and nothing at all for no rows', () => {
    expect(formatClosingTable([])).toBe('');
    expect(
      formatClosingTable([
        { identifier: 'DEMO-1', state: 'Review', attempt: 1, reason: 'handed off to Review' },
        { identifier: 'DEMO-6', state: 'Todo', attempt: null, reason: 'waiting on DEMO-1' },
        { identifier: 'X-1', state: null, attempt: 12, reason: 'no longer in the tracker' },
      ]),
    ).toBe(
      [
        'Issue   State   Attempt  Why it ended there',
        'DEMO-1  Review        1  handed off to Review',
        'DEMO-6  Todo          -  waiting on DEMO-1',
        'X-1     -            12  no longer in the tracker',
        '',
      ].join('\n'),
    );
  });
});
