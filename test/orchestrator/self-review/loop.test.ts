import { describe, expect, it } from 'vitest';
import {
  runSelfReview,
  type SelfReviewDeps,
  type VerdictFile,
} from '../../../src/orchestrator/self-review/loop.js';

const settings = {
  maxIterations: 3,
  title: 'Fix it',
  description: '',
  verdictPath: '.orchestrator/review_verdict.json',
};

/** Deps whose review turns write the given verdicts in order, with a verification that passes from `passFrom` on. */
function scripted(
  verdicts: VerdictFile[],
  options: { passFrom?: number; failTurn?: number; stopAfterTurn?: number } = {},
) {
  const prompts: { purpose: string; prompt: string }[] = [];
  let verdict: VerdictFile = { kind: 'absent' };
  let reviews = 0;
  let verifications = 0;
  const deps: SelfReviewDeps = {
    diff: async () => ({ text: '+change', bytes: 7, truncated: false }),
    verify: async () => {
      verifications += 1;
      const passing = verifications >= (options.passFrom ?? 1);
      return [
        {
          command: 'npm test',
          exitCode: passing ? 0 : 1,
          timedOut: false,
          output: passing ? '' : 'FAIL x',
          durationMs: 5,
        },
      ];
    },
    clearVerdict: () => {
      verdict = { kind: 'absent' };
    },
    readVerdict: () => verdict,
    runTurn: async (prompt, purpose) => {
      prompts.push({ purpose, prompt });
      if (prompts.length === options.failTurn) return { ok: false, detail: 'turn_failed: boom' };
      if (purpose === 'review') verdict = verdicts[reviews++] ?? { kind: 'absent' };
      return { ok: true };
    },
    stopRequested: () => prompts.length === options.stopAfterTurn,
  };
  return { deps, prompts };
}

describe('the self-review loop', () => {
  it('iterate then pass: a fix turn with the issues between two reviews, the second seeing passing verification', async () => {
    const { deps, prompts } = scripted(
      [
        {
          kind: 'read',
          value: {
            verdict: 'iterate',
            summary: 'Tests fail.',
            issues: [{ file: 'a.ts', line: 2, message: 'wrong sign' }],
          },
        },
        { kind: 'read', value: { verdict: 'pass', summary: 'Good.' } },
      ],
      { passFrom: 2 },
    );
    const outcome = await runSelfReview(settings, deps);
    expect(outcome).toMatchObject({ status: 'passed', finalVerdict: 'pass', turns: 3, detail: null });
    expect(prompts.map((p) => p.purpose)).toEqual(['review', 'fix', 'review']);
    expect(prompts[0]?.prompt).toContain('`npm test`: exit 1');
    expect(prompts[1]?.prompt).toContain('1. a.ts:2: wrong sign');
    expect(prompts[2]?.prompt).toContain('`npm test`: exit 0');
    expect(prompts[2]?.prompt).toContain('The previous review asked for');
    expect(outcome.iterations.map((i) => [i.verdict, i.verification[0]?.exitCode])).toEqual([
      ['iterate', 1],
      ['pass', 0],
    ]);
  });

  it('stops at the cap without a fix turn after the last review', async () => {
    const iterate = { kind: 'read' as const, value: { verdict: 'iterate', issues: ['still wrong'] } };
    const { deps, prompts } = scripted([iterate, iterate, iterate]);
    const outcome = await runSelfReview(settings, deps);
    expect(outcome).toMatchObject({ status: 'cap_reached', finalVerdict: 'iterate', turns: 5 });
    expect(prompts.map((p) => p.purpose)).toEqual(['review', 'fix', 'review', 'fix', 'review']);
  });

  it('a missing or unreadable verdict counts as iterate and the fix turn says why', async () => {
    const { deps, prompts } = scripted([
      { kind: 'absent' },
      { kind: 'ignored', reason: 'review_verdict.json is a symlink' },
      { kind: 'read', value: { verdict: 'PASS' } },
    ]);
    const outcome = await runSelfReview(settings, deps);
    expect(outcome.status).toBe('passed');
    expect(outcome.iterations.map((i) => i.verdictError)).toEqual([
      'no verdict was written to .orchestrator/review_verdict.json',
      'review_verdict.json is a symlink',
      null,
    ]);
    expect(prompts[1]?.prompt).toContain('could not be read');
  });

  it('a failed turn ends the loop as an error; a status signal ends it as stopped', async () => {
    const failing = scripted([{ kind: 'read', value: { verdict: 'iterate' } }], { failTurn: 2 });
    expect(await runSelfReview(settings, failing.deps)).toMatchObject({
      status: 'error',
      turns: 2,
      detail: 'fix turn 1: turn_failed: boom',
    });
    const stopping = scripted([{ kind: 'read', value: { verdict: 'iterate' } }], { stopAfterTurn: 1 });
    expect(await runSelfReview(settings, stopping.deps)).toMatchObject({
      status: 'stopped',
      turns: 1,
      finalVerdict: 'none',
    });
  });
});
