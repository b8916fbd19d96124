/**
 * A database that stops taking writes mid-run (a full disk, a file made read-only) must not
 * crash the service or lose a finished run: nothing new is dispatched, results wait in memory
 * in order, and all of it is recorded once the database takes writes again. The store here is
 * the real one behind a switch that makes every write fail as SQLite does on a full disk.
 */
import { describe, expect, it } from 'vitest';
import { STORE_RETRY_MS } from '../../src/orchestrator/orchestrator.js';
import { PersistenceError } from '../../src/persistence/index.js';
import { WorkspaceError } from '../../src/workspace/errors.js';
import { HARNESS_WORKFLOW, harness, inputTokens, interceptStore } from './harness.js';

const WRITES = new Set([
  'startRun',
  'setRunWorkspace',
  'transaction',
  'recordTurn',
  'recordRunProgress',
  'finishRun',
  'saveRetry',
  'deleteRetry',
  'saveSession',
  'addIssueSpend',
  'addTotals',
  'markExhausted',
  'markExhaustionReported',
  'savePendingTransition',
  'deletePendingTransition',
]);

/** The real store, whose writes fail with `io_failed` while `disk.full` is true. */
function switchable(disk: { full: boolean }) {
  return interceptStore((method) => {
    if (disk.full && WRITES.has(method)) {
      throw new PersistenceError('io_failed', `${method} on state.db: database or disk is full`);
    }
  });
}

const tokens = inputTokens;
const WORKFLOW = HARNESS_WORKFLOW.replace(
  '  terminal_states: [Done]\n',
  '  terminal_states: [Done]\n  handoff_state: Review\n',
);

describe('a database that stops taking writes', () => {
  it('mid-run: the finished run waits in memory, nothing new starts, and all of it is recorded once writes work again', async () => {
    const disk = { full: false };
    let finish: () => void = () => undefined;
    const hold = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const s = harness({
      workflow: WORKFLOW,
      scripts: [{ usage: tokens(700), hold, error: null }],
      wrapStore: switchable(disk),
    });
    await s.orchestrator.tick();
    await expect.poll(() => s.store.issueBudget('issue-1')?.tokens).toBe(700);

    disk.full = true;
    finish();
    await s.orchestrator.idle();
    const waiting = s.orchestrator.snapshot().store;
    expect(waiting).toMatchObject({ available: false, sinceMs: s.clock.now });
    expect(waiting.pendingWrites).toBeGreaterThan(0);
    expect(waiting.lastError).toContain('disk is full');
    // Not recorded yet, and nothing new starts while the database refuses writes.
    expect(s.store.runsForIssue('issue-1', 5)[0]?.endedAt).toBeNull();
    s.issue.state = 'Todo';
    await s.orchestrator.tick();
    expect(s.adapter.runs).toBe(1);

    disk.full = false;
    s.clock.advanceTo(s.clock.now + STORE_RETRY_MS);
    expect(s.orchestrator.snapshot().store).toEqual({
      available: true,
      sinceMs: null,
      pendingWrites: 0,
      lastError: null,
    });
    const [run] = s.store.runsForIssue('issue-1', 5);
    expect(run).toMatchObject({ exitKind: 'succeeded' });
    expect(run?.usage.totalTokens).toBe(700);
    expect(s.store.totals()).toMatchObject({ runsStarted: 1, runsFinished: 1 });
    expect(s.store.totals().tokens.totalTokens).toBe(700);
    expect(s.store.loadPendingTransitions()).toEqual([]);
  });

  it('at dispatch: the run is not started, the service keeps ticking, and dispatches again once writes work', async () => {
    const disk = { full: true };
    const s = harness({ workflow: WORKFLOW, scripts: [{ error: null }], wrapStore: switchable(disk) });
    await s.orchestrator.tick();
    await s.orchestrator.tick();
    expect(s.adapter.runs).toBe(0);
    expect(s.orchestrator.snapshot().store.available).toBe(false);
    expect(s.store.runsForIssue('issue-1', 5)).toEqual([]);

    disk.full = false;
    s.clock.advanceTo(s.clock.now + STORE_RETRY_MS);
    expect(s.orchestrator.snapshot().store.available).toBe(true);
    await s.firstRun();
    expect(s.adapter.runs).toBe(1);
    expect(s.store.runsForIssue('issue-1', 5)[0]).toMatchObject({ exitKind: 'succeeded' });
  });

  it('a stop while writes still fail ends cleanly and says how many were lost', async () => {
    const disk = { full: false };
    const s = harness({ workflow: WORKFLOW, scripts: [{ error: null }], wrapStore: switchable(disk) });
    await s.orchestrator.tick();
    disk.full = true;
    await s.orchestrator.idle();
    await s.orchestrator.stop();
    expect(s.orchestrator.unrecordedWrites()).toBeGreaterThan(0);
  });
});

describe('a workspace that cannot be created', () => {
  it.each([
    ['EACCES: permission denied', 'io', 'workspace_io_failed'],
    ['EROFS: read-only file system', 'io', 'workspace_io_failed'],
    ['a file is in the way', 'conflict', 'workspace_invalid'],
    ['after_create exited with code 3', 'hook_failed', 'workspace_hook_failed'],
  ] as const)('%s is %s → %s, not a hook failure when no hook failed', async (message, kind, errorKind) => {
    const s = harness({
      scripts: [],
      workspaces: { prepare: async () => ({ ok: false, error: new WorkspaceError(kind, message) }) },
    });
    await s.firstRun();
    expect(s.store.runsForIssue('issue-1', 5)[0]).toMatchObject({ errorKind });
  });
});

describe('starting a run', () => {
  it('is one write: when its last part is refused, no run row is left without its count', async () => {
    const failTotals = { on: true };
    const s = harness({
      scripts: [{ error: null }],
      wrapStore: interceptStore((method) => {
        if (method === 'addTotals' && failTotals.on) {
          throw new PersistenceError('io_failed', 'add totals on state.db: disk I/O error');
        }
      }),
    });
    await s.orchestrator.tick();
    expect(s.store.runsForIssue('issue-1', 5)).toEqual([]);
    expect(s.store.totals().runsStarted).toBe(0);
    expect(s.store.issueBudget('issue-1')?.sessions ?? 0).toBe(0);
  });
});
