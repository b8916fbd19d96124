/**
 * `tracker.required_labels`: an issue is dispatched only while it carries every required label,
 * and a running session whose issue loses one is stopped like one whose issue left the active
 * states: released, not retried, with the reason in the waiting list.
 */
import { describe, expect, it } from 'vitest';
import type { Issue } from '../../src/domain/issue.js';
import { ineligibility } from '../../src/orchestrator/eligibility.js';
import { missingLabels, missingLabelsText } from '../../src/orchestrator/required-labels.js';
import { SAMPLE_ISSUE } from '../../src/prompt/variables.js';
import { HARNESS_WORKFLOW, harness } from './harness.js';

/** A turn that lasts until `finish` is called. */
function gate(): { hold: Promise<void>; finish: () => void } {
  let finish: () => void = () => undefined;
  const hold = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return { hold, finish };
}

const WORKFLOW = HARNESS_WORKFLOW.replace(
  '  terminal_states: [Done]\n',
  '  terminal_states: [Done]\n  required_labels: [" Agent ", ready]\n',
);

describe('missingLabels', () => {
  it.each([
    ['every label carried', ['agent', 'ready', 'bug'], ['agent', 'ready'], []],
    ['case and blanks around either side do not matter', ['  AGENT', 'Ready '], [' agent ', 'READY'], []],
    ['one missing is named', ['agent'], ['agent', 'ready'], ['ready']],
    ['no requirement admits an issue without labels', [], [], []],
    [
      'a blank required label matches nothing, not even a blank label',
      ['', ' ', 'agent'],
      ['', 'agent'],
      [''],
    ],
  ] as const)('%s', (_what, carried, required, missing) => {
    expect(missingLabels(carried, required)).toEqual(missing);
  });

  it('says which labels are missing, a blank one visibly', () => {
    expect(missingLabelsText(['ready'])).toBe('missing required label: ready');
    expect(missingLabelsText(['ready', ''])).toBe('missing required labels: ready, "" (blank)');
  });
});

describe('eligibility with required labels', () => {
  const issue = (labels: string[]): Issue => ({ ...SAMPLE_ISSUE, state: 'Todo', blockedBy: [], labels });
  const input = (requiredLabels: string[]) => ({
    activeStates: ['Todo'],
    terminalStates: ['Done'],
    busyIds: new Set<string>(),
    exhaustedIds: new Set<string>(),
    requiredLabels,
  });

  it('an issue without a required label is not dispatched, and the reason names the label', () => {
    expect(ineligibility(issue(['agent']), input(['agent', 'ready']))).toEqual({
      reason: 'missing_labels',
      detail: 'missing required label: ready',
      missing: ['ready'],
    });
  });

  it('an issue with every required label (in any case) is eligible', () => {
    expect(ineligibility(issue(['Ready', 'AGENT']), input(['agent', 'ready']))).toBeNull();
  });
});

describe('the orchestrator and required labels', () => {
  it('does not dispatch an issue missing a required label, says why, and dispatches it once labelled', async () => {
    const h = harness({ workflow: WORKFLOW, scripts: [{ error: null }] });
    h.issue.labels = ['agent'];
    await h.firstRun();
    expect(h.adapter.runs).toBe(0);
    expect(h.orchestrator.snapshot().waiting).toEqual([
      expect.objectContaining({
        identifier: 'ENG-1',
        reason: 'missing_labels',
        detail: 'missing required label: ready',
      }),
    ]);

    h.issue.labels = ['agent', 'READY'];
    await h.orchestrator.tick();
    await h.orchestrator.idle();
    expect(h.adapter.runs).toBe(1);
  });

  it('stops a running session whose issue lost a required label, releases it without a retry, and shows why', async () => {
    const { hold, finish } = gate();
    const h = harness({ workflow: WORKFLOW, scripts: [{ error: null, hold }] });
    h.issue.labels = ['agent', 'ready'];
    await h.orchestrator.tick();
    await expect.poll(() => h.orchestrator.snapshot().running.length).toBe(1);

    h.issue.labels = ['agent'];
    await h.orchestrator.tick();
    const [running] = h.orchestrator.snapshot().running;
    expect(running?.cancelReason).toBe('unlabelled');
    finish();
    await h.orchestrator.idle();

    const snapshot = h.orchestrator.snapshot();
    expect(snapshot.running).toEqual([]);
    expect(snapshot.retries).toEqual([]);
    expect(h.store.runsForIssue('issue-1', 5)[0]?.exitKind).toBe('cancelled');
    await h.orchestrator.tick();
    expect(h.adapter.runs).toBe(1);
    expect(h.orchestrator.snapshot().waiting).toEqual([
      expect.objectContaining({ reason: 'missing_labels', detail: 'missing required label: ready' }),
    ]);
  });

  it('keeps a running session whose issue still carries every required label', async () => {
    const { hold, finish } = gate();
    const h = harness({ workflow: WORKFLOW, scripts: [{ error: null, hold }] });
    h.issue.labels = ['agent', 'ready', 'extra'];
    await h.orchestrator.tick();
    await expect.poll(() => h.orchestrator.snapshot().running.length).toBe(1);
    await h.orchestrator.tick();
    expect(h.orchestrator.snapshot().running[0]?.cancelReason).toBeNull();
    finish();
    await h.orchestrator.idle();
    expect(h.store.runsForIssue('issue-1', 5)[0]?.exitKind).toBe('succeeded');
  });
});
