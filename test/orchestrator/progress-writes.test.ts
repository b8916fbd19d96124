/**
 * Spend reported mid-turn is written soon, not per event: a runtime that reports usage on
 * every streamed line made one database commit per line, and 200 sessions streaming made
 * hundreds of commits a second on the owner's event loop. The bound: what is reported
 * reaches the database within PROGRESS_WRITE_INTERVAL_MS, and at once when the turn or the
 * run ends. The store here is the real one, with its progress writes counted.
 */
import { describe, expect, it } from 'vitest';
import { PROGRESS_WRITE_INTERVAL_MS } from '../../src/orchestrator/orchestrator.js';
import { HARNESS_WORKFLOW, harness, inputTokens, interceptStore } from './harness.js';

const tokens = inputTokens;
const never = new Promise<void>(() => undefined);
const WORKFLOW = HARNESS_WORKFLOW.replace('  max_turns: 1\n', '  max_turns: 1\n  max_tokens: 500000\n');
/** Run-cumulative usage after each of 100 reports of 1,000 tokens. */
const STEPS = Array.from({ length: 100 }, (_, i) => tokens((i + 1) * 1_000));

/** The real store, counting the runs whose progress it was asked to write. */
function counting(writes: { runs: number }) {
  return interceptStore((method) => {
    if (method === 'recordRunProgress') writes.runs += 1;
  });
}

describe('mid-turn spend writes', () => {
  it('a burst of usage reports is written once at once and once more at the end of the interval, not once per report', async () => {
    const writes = { runs: 0 };
    const s = harness({
      workflow: WORKFLOW,
      scripts: [{ usageSteps: STEPS, hold: never, error: null }],
      wrapStore: counting(writes),
    });
    await s.orchestrator.tick();
    await expect.poll(() => s.orchestrator.snapshot().totals.tokens.totalTokens).toBe(100_000);
    // The first report is written at once; the other 99 wait for the interval's end.
    expect(writes.runs).toBe(1);
    expect(s.store.issueBudget('issue-1')?.tokens).toBe(1_000);

    s.clock.advanceTo(s.clock.now + PROGRESS_WRITE_INTERVAL_MS);
    expect(writes.runs).toBe(2);
    expect(s.store.issueBudget('issue-1')?.tokens).toBe(100_000);
    expect(s.store.totals().tokens.totalTokens).toBe(100_000);
    const [run] = s.store.runsForIssue('issue-1', 10);
    expect(run?.usage.totalTokens).toBe(100_000);

    // Nothing new reported: the next interval writes nothing.
    s.clock.advanceTo(s.clock.now + PROGRESS_WRITE_INTERVAL_MS);
    expect(writes.runs).toBe(2);
  });

  it('spend still waiting for the interval is written when the run ends, counted once', async () => {
    const writes = { runs: 0 };
    const s = harness({
      workflow: WORKFLOW,
      scripts: [{ usageSteps: STEPS, usage: tokens(120_000), error: null }],
      wrapStore: counting(writes),
    });
    await s.firstRun();
    // No clock moved: the run's end wrote what the interval still held.
    expect(writes.runs).toBe(2);
    const [run] = s.store.runsForIssue('issue-1', 10);
    expect(run?.usage.totalTokens).toBe(120_000);
    expect(s.store.issueBudget('issue-1')?.tokens).toBe(120_000);
    expect(s.store.totals().tokens.totalTokens).toBe(120_000);
    expect(s.orchestrator.snapshot().totals.tokens.totalTokens).toBe(120_000);
  });

  it('spend still waiting for the interval is written when its turn ends, before the next turn', async () => {
    const writes = { runs: 0 };
    const s = harness({
      workflow: WORKFLOW.replace('  max_turns: 1\n', '  max_turns: 2\n'),
      scripts: [
        { usageSteps: STEPS, error: null },
        { hold: never, error: null },
      ],
      wrapStore: counting(writes),
    });
    await s.orchestrator.tick();
    await expect.poll(() => s.adapter.runs).toBe(2);
    expect(writes.runs).toBe(2);
    expect(s.store.issueBudget('issue-1')?.tokens).toBe(100_000);
    expect(s.store.turnsForRun(s.store.runsForIssue('issue-1', 10)[0]?.id ?? 0)).toHaveLength(1);
  });

  it('a crash within the interval keeps everything reported before it began', async () => {
    const first = harness({
      workflow: WORKFLOW,
      scripts: [{ usageSteps: STEPS, hold: never, error: null }],
    });
    await first.orchestrator.tick();
    await expect.poll(() => first.orchestrator.snapshot().totals.tokens.totalTokens).toBe(100_000);
    first.clock.advanceTo(first.clock.now + PROGRESS_WRITE_INTERVAL_MS);

    const second = harness({ workflow: WORKFLOW, dir: first.dir, scripts: [] });
    const [run] = second.store.runsForIssue('issue-1', 10);
    expect(run).toMatchObject({ exitKind: 'interrupted' });
    expect(run?.usage.totalTokens).toBe(100_000);
    expect(second.store.issueBudget('issue-1')?.tokens).toBe(100_000);
    expect(second.store.totals().tokens.totalTokens).toBe(100_000);
  });
});
