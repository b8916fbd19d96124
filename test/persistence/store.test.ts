import { spawnSync } from 'node:child_process';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { ProofStore } from '../../src/agent/core/verify-credential.js';
import { PersistenceError } from '../../src/persistence/errors.js';
import type { FinishRunInput, RunRecord } from '../../src/persistence/records.js';
import { openStore, type Store } from '../../src/persistence/store.js';
import { counts, retryEntry, runInput, turnInput, useTempDirs } from './support.js';

const temp = useTempDirs();

function fileStore(name = 'state.db', nowMs?: () => number): { store: Store; file: string } {
  const file = path.join(temp.dir(), name);
  return { store: temp.track(openStore(file, nowMs === undefined ? {} : { nowMs })), file };
}

function reopen(store: Store): Store {
  store.close();
  return temp.track(openStore(store.path));
}

function caught(fn: () => unknown): PersistenceError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(PersistenceError);
    return error as PersistenceError;
  }
  throw new Error('expected a PersistenceError, but nothing was thrown');
}

function finish(overrides: Partial<FinishRunInput> = {}): FinishRunInput {
  return {
    endedAt: '2025-01-01T00:05:00.000Z',
    exitKind: 'succeeded',
    errorKind: null,
    error: null,
    turns: 2,
    usage: counts(5_000, 900, 1_200, 80),
    usageByModel: { 'model-a': counts(4_000, 800, 1_000, 80), 'model-b': counts(1_000, 100, 200) },
    costMicroUsd: 98_765,
    provenance: 'reported',
    unaccountedTurns: 0,
    sessionId: 'sess-final',
    ...overrides,
  };
}

/** `chattr +i` (root on ext4 and most local file systems): the file cannot be written by anyone. */
function immutable(file: string, on: boolean): boolean {
  const result = spawnSync('chattr', [on ? '+i' : '-i', file]);
  return result.status === 0;
}
const CAN_CHATTR = process.getuid?.() === 0;
if (!CAN_CHATTR && process.env.CI === undefined)
  console.warn('skipping the read-only database test: needs root for chattr');

describe('a database that cannot be written', () => {
  it.skipIf(!CAN_CHATTR && process.env.CI === undefined)(
    'is refused at open with read_only, instead of failing at the first record after start-up',
    () => {
      const { store, file } = fileStore();
      store.close();
      expect(immutable(file, true)).toBe(true);
      try {
        const error = caught(() => openStore(file));
        expect(error.code).toBe('read_only');
        expect(error.message).toContain(file);
      } finally {
        immutable(file, false);
      }
    },
  );
});

describe('connection settings', () => {
  it('a file store runs in WAL with synchronous=NORMAL, foreign keys on and the busy timeout set', () => {
    const { store, file } = fileStore();
    expect(store.connectionSettings()).toEqual({
      journalMode: 'wal',
      synchronous: 'normal',
      foreignKeys: true,
      busyTimeoutMs: 5_000,
    });
    // WAL is a property of the file: another connection sees it too.
    const raw = new Database(file, { readonly: true });
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    raw.close();
  });

  it('an in-memory store works for tests without touching the disk', () => {
    const store = temp.track(openStore(':memory:'));
    expect(store.path).toBe(':memory:');
    store.saveRetry(retryEntry());
    expect(store.loadRetries()).toHaveLength(1);
  });

  it('a write blocked by another writer fails as busy after the timeout instead of hanging', () => {
    const file = path.join(temp.dir(), 'state.db');
    const store = temp.track(openStore(file, { busyTimeoutMs: 50 }));
    const other = new Database(file);
    other.exec('BEGIN IMMEDIATE');
    try {
      const started = Date.now();
      const error = caught(() => store.saveRetry(retryEntry()));
      expect(error.code).toBe('busy');
      expect(error.message).toContain(file);
      expect(Date.now() - started).toBeGreaterThanOrEqual(40);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    store.saveRetry(retryEntry());
    expect(store.loadRetries()).toHaveLength(1);
  });

  it('a store used after close fails with a coded error rather than a raw TypeError; close is idempotent', () => {
    const { store } = fileStore();
    store.close();
    store.close();
    expect(store.isOpen).toBe(false);
    expect(caught(() => store.loadRetries()).code).toBe('closed');
    expect(caught(() => store.proofs.get('k')).code).toBe('closed');
    expect(caught(() => store.transaction(() => 1)).code).toBe('closed');
  });
});

describe('runs and turns', () => {
  it('a run and its turns read back exactly as written, nulls, JSON maps and booleans included', () => {
    const { store } = fileStore();
    const runId = store.startRun(runInput({ host: null, sessionId: null }));
    const first = turnInput({
      sessionId: 'sess-1',
      usage: counts(1_000, 200, 300, 50),
      usageByModel: {},
      usageMeasured: false,
      spendUnaccounted: true,
      spendCoverable: true,
      coversSession: false,
      usageProvenance: 'unmeasured',
      reportedAmounts: [],
      finalMessage: '',
      exitReason: 'turn_failed',
      errorKind: 'turn_failed',
      error: 'agent: turn_failed: the model said no — ünïcödé 🚀',
    });
    const second = turnInput({
      sessionId: 'sess-1',
      usage: counts(5_000, 900, 1_200, 80),
      usageByModel: { 'model-a': counts(4_000, 800, 1_000, 80), 'model-b': counts(1_000, 100, 200) },
      usageMeasured: true,
      spendUnaccounted: false,
      spendCoverable: false,
      coversSession: true,
      usageProvenance: 'token_estimate',
      reportedAmounts: [
        { unit: 'USD', micros: 98_765 },
        { unit: 'credits', micros: 3_000_000 },
      ],
      finalMessage: 'multi\nline\tmessage',
      endedAt: '2025-01-01T00:03:00.000Z',
    });
    store.recordTurn(runId, 1, '2025-01-01T00:00:00.000Z', first);
    store.recordTurn(runId, 2, '2025-01-01T00:01:30.000Z', second);
    store.finishRun(
      runId,
      finish({ costMicroUsd: null, errorKind: 'turn_failed', error: 'x', exitKind: 'failed' }),
    );

    const reread = reopen(store);
    expect(reread.turnsForRun(runId)).toStrictEqual([
      { runId, turn: 1, startedAt: '2025-01-01T00:00:00.000Z', ...first },
      { runId, turn: 2, startedAt: '2025-01-01T00:01:30.000Z', ...second },
    ]);
    const expected: RunRecord = {
      id: runId,
      ...runInput({ host: null, sessionId: 'sess-final' }),
      sessionId: 'sess-final',
      endedAt: '2025-01-01T00:05:00.000Z',
      exitKind: 'failed',
      errorKind: 'turn_failed',
      error: 'x',
      turns: 2,
      usage: counts(5_000, 900, 1_200, 80),
      usageByModel: { 'model-a': counts(4_000, 800, 1_000, 80), 'model-b': counts(1_000, 100, 200) },
      costMicroUsd: null,
      provenance: 'reported',
      unaccountedTurns: 0,
      reaction: null,
      review: null,
    };
    expect(reread.run(runId)).toStrictEqual(expected);
  });

  it('a known cost of zero stays zero and is not confused with an unknown (null) cost', () => {
    const { store } = fileStore();
    const free = store.startRun(runInput());
    store.finishRun(free, finish({ costMicroUsd: 0 }));
    const unknown = store.startRun(runInput());
    store.finishRun(unknown, finish({ costMicroUsd: null }));
    expect(store.run(free)?.costMicroUsd).toBe(0);
    expect(store.run(unknown)?.costMicroUsd).toBeNull();
  });

  it('a model named __proto__ in a usage map survives as data, not as a prototype', () => {
    const { store } = fileStore();
    const runId = store.startRun(runInput());
    const usageByModel = JSON.parse(
      '{"__proto__": {"inputTokens":1,"outputTokens":2,"cacheReadTokens":0,"cacheWriteTokens":0,"totalTokens":3}}',
    );
    store.recordTurn(runId, 1, '2025-01-01T00:00:00.000Z', turnInput({ usageByModel }));
    const [turn] = store.turnsForRun(runId);
    expect(Object.keys(turn?.usageByModel ?? {})).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(turn?.usageByModel)).toBe(Object.prototype);
  });

  it('an open run carries its last turn usage and session id, so a crash mid-run keeps the figure', () => {
    const { store } = fileStore();
    const runId = store.startRun(runInput({ sessionId: 'resumed' }));
    expect(store.run(runId)).toMatchObject({ turns: 0, sessionId: 'resumed', endedAt: null, exitKind: null });
    store.recordTurn(
      runId,
      1,
      '2025-01-01T00:00:00.000Z',
      turnInput({ sessionId: '', usage: counts(10, 1) }),
    );
    expect(store.run(runId)).toMatchObject({ turns: 1, sessionId: 'resumed', usage: counts(10, 1) });
    store.recordTurn(
      runId,
      2,
      '2025-01-01T00:00:00.000Z',
      turnInput({ sessionId: 'new-id', usage: counts(30, 4) }),
    );
    expect(store.run(runId)).toMatchObject({ turns: 2, sessionId: 'new-id', usage: counts(30, 4) });
  });

  it('a turn for a finished or unknown run is refused, and a repeated turn number is not silently overwritten', () => {
    const { store } = fileStore();
    const runId = store.startRun(runInput());
    store.recordTurn(runId, 1, '2025-01-01T00:00:00.000Z', turnInput());
    const repeated = caught(() =>
      store.recordTurn(runId, 1, '2025-01-01T00:00:00.000Z', turnInput({ finalMessage: 'b' })),
    );
    expect(repeated.code).toBe('constraint');
    expect(store.turnsForRun(runId).map((t) => t.finalMessage)).toEqual(['done']);

    expect(caught(() => store.recordTurn(9_999, 1, '2025-01-01T00:00:00.000Z', turnInput())).code).toBe(
      'run_not_open',
    );
    store.finishRun(runId, finish());
    expect(caught(() => store.recordTurn(runId, 2, '2025-01-01T00:00:00.000Z', turnInput())).code).toBe(
      'run_not_open',
    );
    expect(store.turnsForRun(runId)).toHaveLength(1);
  });

  it('finishing a run twice is refused instead of rewriting its recorded outcome', () => {
    const { store } = fileStore();
    const runId = store.startRun(runInput());
    store.finishRun(runId, finish({ exitKind: 'succeeded' }));
    const error = caught(() => store.finishRun(runId, finish({ exitKind: 'failed' })));
    expect(error.code).toBe('run_not_open');
    expect(error.message).toContain(`run ${runId}`);
    expect(store.run(runId)?.exitKind).toBe('succeeded');
  });

  it('a fractional token count is rejected at the write, not stored as a float', () => {
    const { store } = fileStore();
    const runId = store.startRun(runInput());
    const error = caught(() =>
      store.recordTurn(runId, 1, '2025-01-01T00:00:00.000Z', turnInput({ usage: counts(1.5, 2) })),
    );
    expect(error.code).toBe('constraint');
    expect(store.turnsForRun(runId)).toEqual([]);
    expect(store.run(runId)?.turns).toBe(0);
  });

  it('restart recovery closes only the runs left open, as interrupted, and only once', () => {
    const { store } = fileStore();
    const done = store.startRun(runInput({ issueId: 'a', identifier: 'A-1' }));
    store.finishRun(done, finish());
    const doneBefore = store.run(done);
    const openWithTurn = store.startRun(runInput({ issueId: 'b', identifier: 'B-1' }));
    store.recordTurn(openWithTurn, 1, '2025-01-01T00:00:00.000Z', turnInput({ usage: counts(77, 7) }));
    const openBare = store.startRun(runInput({ issueId: 'c', identifier: 'C-1' }));
    expect(store.openRuns().map((r) => r.id)).toEqual([openWithTurn, openBare]);

    const recovered = reopen(store);
    expect(recovered.closeInterruptedRuns('2025-01-02T00:00:00.000Z')).toBe(2);
    expect(recovered.openRuns()).toEqual([]);
    expect(recovered.run(done)).toStrictEqual(doneBefore);
    expect(recovered.run(openWithTurn)).toMatchObject({
      exitKind: 'interrupted',
      endedAt: '2025-01-02T00:00:00.000Z',
      turns: 1,
      usage: counts(77, 7),
      error: expect.stringContaining('stopped'),
    });
    expect(recovered.run(openBare)).toMatchObject({ exitKind: 'interrupted', turns: 0 });
    expect(recovered.closeInterruptedRuns('2025-01-03T00:00:00.000Z')).toBe(0);
    expect(recovered.run(openBare)?.endedAt).toBe('2025-01-02T00:00:00.000Z');
  });

  it('history queries return newest first, honour the limit, page by id and find the latest by identifier', () => {
    const { store } = fileStore();
    const ids = [
      store.startRun(runInput({ issueId: 'a', identifier: 'A-1', attempt: 1 })),
      store.startRun(runInput({ issueId: 'b', identifier: 'B-1', attempt: 1 })),
      store.startRun(runInput({ issueId: 'a', identifier: 'A-1', attempt: 2 })),
      store.startRun(runInput({ issueId: 'a', identifier: 'A-1', attempt: 3 })),
    ];
    const [a1, b1, a2, a3] = ids as [number, number, number, number];
    expect(store.runsForIssue('a', 10).map((r) => r.attempt)).toEqual([3, 2, 1]);
    expect(store.runsForIssue('a', 2).map((r) => r.id)).toEqual([a3, a2]);
    expect(store.runsForIssue('zzz', 10)).toEqual([]);
    expect(store.recentRuns(2).map((r) => r.id)).toEqual([a3, a2]);
    expect(store.recentRuns(2, a2).map((r) => r.id)).toEqual([b1, a1]);
    expect(store.recentRuns(2, a1)).toEqual([]);
    expect(store.runByIdentifier('A-1')?.id).toBe(a3);
    expect(store.runByIdentifier('B-1')?.id).toBe(b1);
    expect(store.runByIdentifier('nope')).toBeNull();
    expect(store.run(12_345)).toBeNull();
  });

  it('a damaged enumerated or JSON column is reported as corrupt, naming table, column and row', () => {
    const { store, file } = fileStore();
    const runId = store.startRun(runInput());
    store.finishRun(runId, finish());
    const raw = new Database(file);
    raw.prepare("UPDATE runs SET exit_kind = 'exploded' WHERE id = ?").run(runId);
    raw.close();
    const badKind = caught(() => store.run(runId));
    expect(badKind.code).toBe('corrupt');
    expect(badKind.message).toContain(`runs.exit_kind of run ${runId}`);
    expect(badKind.message).toContain(file);

    const raw2 = new Database(file);
    raw2
      .prepare("UPDATE runs SET exit_kind = 'succeeded', usage_by_model = '{not json' WHERE id = ?")
      .run(runId);
    raw2.close();
    expect(caught(() => store.recentRuns(5)).message).toContain('runs.usage_by_model');
  });

  it('session counts for many issues come from one query, with 0 for issues that never ran', () => {
    const { store } = fileStore();
    for (const issueId of ['a', 'a', 'a', 'b']) store.startRun(runInput({ issueId }));
    const finished = store.startRun(runInput({ issueId: 'b' }));
    store.finishRun(finished, finish({ exitKind: 'failed' }));
    store.closeInterruptedRuns('2025-01-02T00:00:00.000Z');
    expect(store.countSessions(['a', 'b', 'c', 'a'])).toEqual(
      new Map([
        ['a', 3],
        ['b', 2],
        ['c', 0],
      ]),
    );
    expect(store.countSessions([])).toEqual(new Map());
  });

  it('a session-count batch larger than SQLite bound-variable limit still works', () => {
    const store = temp.track(openStore(':memory:'));
    store.startRun(runInput({ issueId: 'issue-39999' }));
    const ids = Array.from({ length: 40_000 }, (_, i) => `issue-${i}`);
    const result = store.countSessions(ids);
    expect(result.size).toBe(40_000);
    expect(result.get('issue-39999')).toBe(1);
    expect(result.get('issue-0')).toBe(0);
  });
});

describe('workspace users', () => {
  it('an old workspace counts as an issue’s own only when no other issue ran there', () => {
    const { store } = fileStore();
    expect(store.onlyIssueUsedWorkspace('issue-1', '/ws/A_B')).toBe(false);
    store.startRun(runInput({ issueId: 'issue-1', workspace: '/ws/A_B' }));
    store.startRun(runInput({ issueId: 'issue-1', workspace: '/ws/A_B' }));
    expect(store.onlyIssueUsedWorkspace('issue-1', '/ws/A_B')).toBe(true);
    expect(store.onlyIssueUsedWorkspace('issue-2', '/ws/A_B')).toBe(false);
    store.startRun(runInput({ issueId: 'issue-2', workspace: '/ws/A_B' }));
    expect(store.onlyIssueUsedWorkspace('issue-1', '/ws/A_B')).toBe(false);
    store.close();
  });
});

describe('retry queue', () => {
  it('a saved retry reads back exactly after reopening, and saving again replaces it (one per issue)', () => {
    const { store } = fileStore('state.db', () => Date.parse('2025-03-01T00:00:00.000Z'));
    const entry = retryEntry({
      sessionId: 'sess-9',
      previousHost: null,
      lastError: null,
      reason: 'continuation',
    });
    store.saveRetry(entry);
    store.saveRetry({ ...entry, attempt: 3, dueAtMs: entry.dueAtMs + 10_000, reason: 'usage_limit' });
    const reread = reopen(store);
    expect(reread.loadRetries()).toStrictEqual([
      {
        ...entry,
        attempt: 3,
        dueAtMs: entry.dueAtMs + 10_000,
        reason: 'usage_limit',
        updatedAt: '2025-03-01T00:00:00.000Z',
      },
    ]);
    expect(reread.retryFor(entry.issueId)?.attempt).toBe(3);
    expect(reread.retryFor('other')).toBeNull();
  });

  it('retries load soonest due first, ties broken by issue id, whatever the insertion order', () => {
    const { store } = fileStore();
    store.saveRetry(retryEntry({ issueId: 'c', dueAtMs: 3_000 }));
    store.saveRetry(retryEntry({ issueId: 'b', dueAtMs: 1_000 }));
    store.saveRetry(retryEntry({ issueId: 'a', dueAtMs: 3_000 }));
    store.saveRetry(retryEntry({ issueId: 'd', dueAtMs: 2_000 }));
    store.saveRetry(retryEntry({ issueId: 'b', dueAtMs: 4_000 }));
    expect(store.loadRetries().map((r) => [r.issueId, r.dueAtMs])).toEqual([
      ['d', 2_000],
      ['a', 3_000],
      ['c', 3_000],
      ['b', 4_000],
    ]);
  });

  it('deleting a retry removes only that issue and reports whether there was one', () => {
    const { store } = fileStore();
    store.saveRetry(retryEntry({ issueId: 'a' }));
    store.saveRetry(retryEntry({ issueId: 'b' }));
    expect(store.deleteRetry('a')).toBe(true);
    expect(store.deleteRetry('a')).toBe(false);
    expect(store.loadRetries().map((r) => r.issueId)).toEqual(['b']);
  });

  it('an attempt number below 1 is refused rather than queued', () => {
    const { store } = fileStore();
    expect(caught(() => store.saveRetry(retryEntry({ attempt: 0 }))).code).toBe('constraint');
    expect(store.loadRetries()).toEqual([]);
  });
});

describe('sessions', () => {
  it('the latest session id per issue is kept for resume, replaced on save and gone after delete', () => {
    const { store } = fileStore('state.db', () => Date.parse('2025-04-01T00:00:00.000Z'));
    expect(store.sessionFor('a')).toBeNull();
    store.saveSession('a', 'sess-1', 'mock');
    store.saveSession('a', 'sess-2', 'echo');
    store.saveSession('b', 'sess-b', 'mock');
    const reread = reopen(store);
    expect(reread.sessionFor('a')).toStrictEqual({
      issueId: 'a',
      sessionId: 'sess-2',
      agentKind: 'echo',
      updatedAt: '2025-04-01T00:00:00.000Z',
    });
    expect(reread.deleteSession('a')).toBe(true);
    expect(reread.deleteSession('a')).toBe(false);
    expect(reread.sessionFor('a')).toBeNull();
    expect(reread.sessionFor('b')?.sessionId).toBe('sess-b');
  });
});

describe('credential proofs', () => {
  it('proofs fit the verifier proof store, return null when unknown, replace on put and survive a restart', () => {
    const { store } = fileStore();
    const proofs: ProofStore = store.proofs;
    expect(proofs.get('kind:fingerprint')).toBeNull();
    proofs.put('kind:fingerprint', 1_700_000_000_000);
    proofs.put('kind:fingerprint', 1_700_000_100_000);
    proofs.put('other', 5);
    const reread = reopen(store);
    expect(reread.proofs.get('kind:fingerprint')).toBe(1_700_000_100_000);
    expect(reread.proofs.get('other')).toBe(5);
  });
});

describe('issue budgets', () => {
  it('spend accumulates across calls and restarts instead of being overwritten', () => {
    const { store } = fileStore();
    expect(store.issueBudget('a')).toBeNull();
    expect(store.addIssueSpend('a', { sessions: 1, tokens: 1_000, costMicroUsd: 2_500 })).toMatchObject({
      sessions: 1,
      tokens: 1_000,
      costMicroUsd: 2_500,
    });
    store.addIssueSpend('a', { sessions: 1, tokens: 500, costMicroUsd: 0 });
    const reread = reopen(store);
    reread.addIssueSpend('a', { sessions: 0, tokens: 1, costMicroUsd: 1 });
    expect(reread.issueBudget('a')).toStrictEqual({
      issueId: 'a',
      sessions: 2,
      tokens: 1_501,
      costMicroUsd: 2_501,
      exhaustedAt: null,
      exhaustedReason: null,
      parkedFingerprint: null,
      exhaustionReported: false,
      unchangedSessions: 0,
      unchangedState: null,
    });
  });

  it('an exhausted issue is reported once, not once per tick or per restart', () => {
    const { store } = fileStore();
    store.addIssueSpend('a', { sessions: 3, tokens: 10, costMicroUsd: 10 });
    expect(store.markExhaustionReported('a')).toBe(false);
    expect(store.markExhausted('a', 'max_sessions', '2025-01-01T00:00:00.000Z')).toBe(true);
    expect(store.markExhausted('a', 'max_tokens', '2025-01-02T00:00:00.000Z')).toBe(false);
    const claims = [store.markExhaustionReported('a'), store.markExhaustionReported('a')];
    const reread = reopen(store);
    claims.push(reread.markExhaustionReported('a'));
    expect(claims).toEqual([true, false, false]);
    expect(reread.issueBudget('a')).toMatchObject({
      sessions: 3,
      exhaustedAt: '2025-01-01T00:00:00.000Z',
      exhaustedReason: 'max_sessions',
      exhaustionReported: true,
    });
    expect(reread.exhaustedIssues().map((b) => b.issueId)).toEqual(['a']);
  });

  it('an issue exhausted before it spent anything gets a budget record, and lifting exhaustion allows a new report', () => {
    const { store } = fileStore();
    expect(store.markExhausted('new', 'max_cost_usd', '2025-01-01T00:00:00.000Z')).toBe(true);
    expect(store.issueBudget('new')).toMatchObject({ sessions: 0, tokens: 0, costMicroUsd: 0 });
    expect(store.markExhaustionReported('new')).toBe(true);
    expect(store.clearExhaustion('new')).toBe(true);
    expect(store.clearExhaustion('new')).toBe(false);
    expect(store.exhaustedIssues()).toEqual([]);
    expect(store.markExhausted('new', 'max_turns', '2025-01-05T00:00:00.000Z')).toBe(true);
    expect(store.markExhaustionReported('new')).toBe(true);
  });

  it('the run of unchanged sessions is kept beside the spend, across a reopen, without touching it', () => {
    const { store } = fileStore();
    store.setUnchangedRun('fresh', { sessions: 1, state: 'Todo' });
    store.addIssueSpend('a', { sessions: 2, tokens: 40, costMicroUsd: 3 });
    store.setUnchangedRun('a', { sessions: 4, state: 'In Progress' });
    const reread = reopen(store);
    expect(reread.issueBudget('fresh')).toMatchObject({
      sessions: 0,
      unchangedSessions: 1,
      unchangedState: 'Todo',
    });
    expect(reread.issueBudget('a')).toMatchObject({
      sessions: 2,
      tokens: 40,
      costMicroUsd: 3,
      unchangedSessions: 4,
      unchangedState: 'In Progress',
    });
    reread.setUnchangedRun('a', { sessions: 0, state: null });
    expect(reread.issueBudget('a')).toMatchObject({ tokens: 40, unchangedSessions: 0, unchangedState: null });
  });
});

describe('totals', () => {
  it('totals accumulate partial deltas and survive a restart', () => {
    const { store } = fileStore('state.db', () => Date.parse('2025-05-01T00:00:00.000Z'));
    store.addTotals({ runsStarted: 1 });
    store.addTotals({
      tokens: counts(100, 20, 30, 4),
      costMicroUsd: 1_234,
      secondsRunning: 12.5,
      runsFinished: 1,
    });
    const reread = reopen(store);
    reread.addTotals({ tokens: counts(1, 1), secondsRunning: 0.25, runsStarted: 1 });
    expect(reread.totals()).toStrictEqual({
      tokens: {
        inputTokens: 101,
        outputTokens: 21,
        cacheReadTokens: 30,
        cacheWriteTokens: 4,
        totalTokens: 122,
      },
      costMicroUsd: 1_234,
      secondsRunning: 12.75,
      runsStarted: 2,
      runsFinished: 1,
      updatedAt: expect.any(String),
    });
  });
});

describe('transactions', () => {
  it('writes grouped in a transaction that throws are all rolled back, and the error passes through as is', () => {
    const { store } = fileStore();
    const boom = new Error('policy bug');
    expect(() =>
      store.transaction(() => {
        store.saveRetry(retryEntry({ issueId: 'a' }));
        store.addTotals({ runsStarted: 1 });
        throw boom;
      }),
    ).toThrow(boom);
    expect(store.loadRetries()).toEqual([]);
    expect(store.totals().runsStarted).toBe(0);
  });

  it('a nested transaction that fails rolls back only its own writes', () => {
    const { store } = fileStore();
    const runId = store.transaction(() => {
      const id = store.startRun(runInput());
      try {
        store.transaction(() => {
          store.saveRetry(retryEntry());
          throw new Error('inner');
        });
      } catch {
        // the inner savepoint is rolled back; the outer transaction goes on
      }
      store.addTotals({ runsStarted: 1 });
      return id;
    });
    expect(store.run(runId)).not.toBeNull();
    expect(store.loadRetries()).toEqual([]);
    expect(store.totals().runsStarted).toBe(1);
  });
});
