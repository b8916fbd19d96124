import { describe, expect, it } from 'vitest';
import { fixPrompt, reviewPrompt } from '../../src/prompt/self-review.js';

const base = {
  iteration: 1,
  maxIterations: 3,
  title: 'Fix the parser',
  description: 'It drops the last line.',
  verdictPath: '.orchestrator/review_verdict.json',
  previousNote: null,
};

describe('self-review prompts', () => {
  it('the review prompt carries the issue, the diff, failing output and where the verdict goes', () => {
    const prompt = reviewPrompt({
      ...base,
      diff: { text: '+fixed line', bytes: 11, truncated: false },
      verification: [
        { command: 'npm test', exitCode: 1, timedOut: false, output: 'FAIL parse.test.ts' },
        { command: 'npm run lint', exitCode: 0, timedOut: false, output: 'all good' },
        { command: 'slow', exitCode: null, timedOut: true, output: '' },
      ],
    });
    expect(prompt).toContain('iteration 1 of 3');
    expect(prompt).toContain('Issue: Fix the parser');
    expect(prompt).toContain('It drops the last line.');
    expect(prompt).toContain('+fixed line');
    expect(prompt).toContain('`npm test`: exit 1');
    expect(prompt).toContain('FAIL parse.test.ts');
    // Output of a passing command is not repeated.
    expect(prompt).not.toContain('all good');
    expect(prompt).toContain('`slow`: timed out');
    expect(prompt).toContain('.orchestrator/review_verdict.json');
    expect(prompt).not.toContain('The previous review');
  });

  it('says when the diff is missing or cut, and keeps head and tail of long output', () => {
    const long = `start ${'x'.repeat(10_000)} end`;
    const prompt = reviewPrompt({
      ...base,
      iteration: 2,
      diff: null,
      verification: [{ command: 'make', exitCode: 2, timedOut: false, output: long }],
      previousNote: 'Handle the empty file.',
    });
    expect(prompt).toContain('[Diff unavailable');
    expect(prompt).toContain('start x');
    expect(prompt).toContain('x end');
    expect(prompt).toContain('characters left out');
    expect(prompt).toContain('Handle the empty file.');
    const cut = reviewPrompt({
      ...base,
      diff: { text: '+a', bytes: 500_000, truncated: true },
      verification: [],
    });
    expect(cut).toContain('The diff is 500000 bytes');
    expect(cut).toContain('No verification commands');
  });

  it('the fix prompt lists the issues, or says why the verdict could not be read', () => {
    expect(fixPrompt({ summary: 'Two problems.', issues: ['a.ts:3 off by one', 'no test'] })).toBe(
      'Your review found the change not ready. Fix these, then commit:\n\nTwo problems.\n\n1. a.ts:3 off by one\n2. no test',
    );
    expect(fixPrompt({ unreadable: '"verdict" must be "pass" or "iterate"' })).toContain('could not be read');
  });
});

describe('the slug filter', () => {
  it('makes branch-safe words of any text, in templates too', async () => {
    const { slugify, RUNTIME_ENGINE } = await import('../../src/prompt/engine.js');
    expect(slugify('ENG-12: Fix the "parser"!')).toBe('eng-12-fix-the-parser');
    expect(slugify('Crème brûlée / 東京')).toBe('creme-brulee-東京');
    expect(slugify('--x--')).toBe('x');
    expect(slugify(null)).toBe('');
    expect(slugify(`${'a'.repeat(59)} b`)).toBe('a'.repeat(59));
    expect(await RUNTIME_ENGINE.parseAndRender('agent/{{ id | slug }}', { id: 'ENG 7' })).toBe('agent/eng-7');
  });
});
