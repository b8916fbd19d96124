/**
 * Tokens a run spent count when they are reported, not when the run ends: a service killed
 * mid-turn must not let the spend escape the issue's budget or the totals. Each "crash" here
 * is a second owner opened on the same database while the first one's run is still open, as a
 * restart after SIGKILL would find it.
 */
import { describe, expect, it } from 'vitest';
import { HARNESS_WORKFLOW, harness, inputTokens } from './harness.js';

const tokens = inputTokens;
const never = new Promise<void>(() => undefined);
const WORKFLOW = HARNESS_WORKFLOW.replace('  max_turns: 1\n', '  max_turns: 1\n  max_tokens: 50000\n');

describe('spend of interrupted runs', () => {
  it('counts in the budget and the totals while the turn still runs, and stays counted after a crash', async () => {
    const first = harness({
      workflow: WORKFLOW,
      scripts: [{ usage: tokens(30_000), hold: never, error: null }],
    });
    await first.orchestrator.tick();
    await expect.poll(() => first.store.issueBudget('issue-1')?.tokens).toBe(30_000);
    expect(first.store.totals().tokens.totalTokens).toBe(30_000);

    // The restart: the open run is closed as interrupted, its spend kept.
    const second = harness({ workflow: WORKFLOW, dir: first.dir, scripts: [] });
    const [run] = second.store.runsForIssue('issue-1', 10);
    expect(run).toMatchObject({ exitKind: 'interrupted' });
    expect(run?.usage.totalTokens).toBe(30_000);
    expect(second.store.issueBudget('issue-1')?.tokens).toBe(30_000);
    expect(second.store.totals().tokens.totalTokens).toBe(30_000);
  });

  it('two interrupted runs of 30,000 exhaust a 50,000 budget: the third is never dispatched', async () => {
    const first = harness({
      workflow: WORKFLOW,
      scripts: [{ usage: tokens(30_000), hold: never, error: null }],
    });
    await first.orchestrator.tick();
    await expect.poll(() => first.store.issueBudget('issue-1')?.tokens).toBe(30_000);
    const second = harness({
      workflow: WORKFLOW,
      dir: first.dir,
      scripts: [{ usage: tokens(30_000), hold: never, error: null }],
    });
    await second.orchestrator.tick();
    await expect.poll(() => second.store.issueBudget('issue-1')?.tokens).toBe(60_000);

    const third = harness({ workflow: WORKFLOW, dir: first.dir, scripts: [{ error: null }] });
    await third.orchestrator.tick();
    expect(third.adapter.runs).toBe(0);
    expect(third.store.exhaustedIssues().map((b) => b.issueId)).toEqual(['issue-1']);
    const runs = third.store.runsForIssue('issue-1', 10);
    const sumOfRuns = runs.reduce((sum, r) => sum + r.usage.totalTokens, 0);
    expect(sumOfRuns).toBe(60_000);
    expect(third.store.totals().tokens.totalTokens).toBe(sumOfRuns);
  });

  it('a run that ends normally is counted once: progress and exit together equal the run', async () => {
    const s = harness({ workflow: WORKFLOW, scripts: [{ usage: tokens(12_000), error: null }] });
    await s.firstRun();
    const [run] = s.store.runsForIssue('issue-1', 10);
    expect(run?.usage.totalTokens).toBe(12_000);
    expect(s.store.issueBudget('issue-1')?.tokens).toBe(12_000);
    expect(s.store.totals().tokens.totalTokens).toBe(12_000);
    expect(s.orchestrator.snapshot().totals.tokens.totalTokens).toBe(12_000);
  });
});
