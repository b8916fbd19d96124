import { describe, expect, it } from 'vitest';
import { reactionVariables } from '../../../src/orchestrator/reactions/variables.js';
import { STRICT_CONDITION_ENGINE } from '../../../src/prompt/engine.js';
import {
  ciFailureVariables,
  mergeConflictVariables,
  NO_REACTION_VARIABLES,
  REACTION_VARIABLE_NAMES,
  reviewCommentsVariables,
  SAMPLE_REACTION_VARIABLES,
} from '../../../src/prompt/reaction-variables.js';
import { check, feedback, SHA_A } from './fixtures.js';

const limits = { maxRetries: 3, maxLogLines: 2, maxContinuationTurns: 4 };

describe('ci_failure variables', () => {
  it('lists failing checks only and keeps the last max_log_lines lines of the log', () => {
    const ci = {
      state: 'failing' as const,
      checks: [
        check('build', 'passing'),
        check('test', 'failing', { conclusion: 'timed_out' }),
        check('e2e', 'pending'),
        check('lint', 'failing', { detailsUrl: null }),
      ],
      logExcerpt: ['one', 'two', 'three'],
    };
    expect(ciFailureVariables(ci, SHA_A, 2, limits)).toEqual({
      head_sha: SHA_A,
      attempt: 2,
      max_retries: 3,
      checks: [
        { name: 'test', conclusion: 'timed_out', url: 'https://ci.example.com/test' },
        { name: 'lint', conclusion: 'failure', url: null },
      ],
      log_lines: ['two', 'three'],
      log: 'two\nthree',
    });
  });

  it('max_log_lines 0 passes no log at all', () => {
    const ci = { state: 'failing' as const, checks: [], logExcerpt: ['one', 'two'] };
    const vars = ciFailureVariables(ci, SHA_A, 1, { ...limits, maxLogLines: 0 });
    expect([vars.log_lines, vars.log]).toEqual([[], '']);
  });
});

describe('review_comments variables', () => {
  it('puts review bodies first, then inline comments by path and line, and reads as a list', () => {
    const vars = reviewCommentsVariables(
      [
        feedback('c3', { path: 'src/b.ts', line: 2, endLine: 5, author: 'kim', body: 'extract this' }),
        feedback('c2', { path: 'src/a.ts', line: 10, body: 'rename' }),
        feedback('review-1', { path: null, line: null, body: '  Needs tests.\nAnd a changelog entry.  ' }),
        feedback('c1', { path: 'src/a.ts', line: 3, endLine: 3, body: 'typo' }),
        feedback('c4', { path: 'src/a.ts', line: null, body: 'whole file: split it' }),
      ],
      1,
      limits,
    );
    expect(vars.attempt).toBe(1);
    expect(vars.max_turns).toBe(4);
    expect(vars.comments).toEqual([
      { author: 'lee', body: 'Needs tests.\nAnd a changelog entry.', path: null, line: null, end_line: null },
      { author: 'lee', body: 'whole file: split it', path: 'src/a.ts', line: null, end_line: null },
      { author: 'lee', body: 'typo', path: 'src/a.ts', line: 3, end_line: 3 },
      { author: 'lee', body: 'rename', path: 'src/a.ts', line: 10, end_line: null },
      { author: 'kim', body: 'extract this', path: 'src/b.ts', line: 2, end_line: 5 },
    ]);
    expect(vars.text).toBe(
      [
        '- lee: Needs tests.',
        '  And a changelog entry.',
        '- src/a.ts — lee: whole file: split it',
        '- src/a.ts:3 — lee: typo',
        '- src/a.ts:10 — lee: rename',
        '- src/b.ts:2-5 — kim: extract this',
      ].join('\n'),
    );
  });
});

describe('merge_conflict variables', () => {
  it('names the base and the head', () => {
    expect(mergeConflictVariables('develop', SHA_A, 2, limits)).toEqual({
      base: 'develop',
      head_sha: SHA_A,
      attempt: 2,
      max_retries: 3,
    });
  });
});

describe('the template variables', () => {
  it('a turn that is no fix has every reaction name, each null', () => {
    expect(NO_REACTION_VARIABLES).toEqual({ ci_failure: null, review_comments: null, merge_conflict: null });
    expect(Object.keys(NO_REACTION_VARIABLES).sort()).toEqual([...REACTION_VARIABLE_NAMES].sort());
  });

  it('a fix turn fills only its own kind', () => {
    const context = mergeConflictVariables('main', SHA_A, 1, limits);
    expect(reactionVariables({ kind: 'merge_conflict', context })).toEqual({
      ci_failure: null,
      review_comments: null,
      merge_conflict: context,
    });
    const ci = ciFailureVariables({ state: 'failing', checks: [], logExcerpt: [] }, SHA_A, 1, limits);
    expect(reactionVariables({ kind: 'ci_failure', context: ci })).toEqual({
      ci_failure: ci,
      review_comments: null,
      merge_conflict: null,
    });
  });

  it('the samples fill every name with plain JSON', () => {
    for (const name of REACTION_VARIABLE_NAMES) expect(SAMPLE_REACTION_VARIABLES[name]).not.toBeNull();
    expect(JSON.parse(JSON.stringify(SAMPLE_REACTION_VARIABLES))).toEqual(SAMPLE_REACTION_VARIABLES);
    expect(SAMPLE_REACTION_VARIABLES.review_comments?.text).toBe(
      [
        '- lee: Close, but the backoff needs a cap and the attempts need recording.',
        '- src/webhooks/retry.ts:18-21 — lee: Cap the delay here; 2^attempt grows past an hour by attempt 12.',
      ].join('\n'),
    );
    expect(SAMPLE_REACTION_VARIABLES.ci_failure?.checks).toEqual([
      {
        name: 'test (node 20)',
        conclusion: 'failure',
        url: 'https://forge.example.com/acme/api/actions/runs/901/job/1',
      },
    ]);
  });

  it('a template reading every field renders with the samples and with no reaction under strict variables', () => {
    const source = [
      '{% if ci_failure %}CI {{ ci_failure.attempt }}/{{ ci_failure.max_retries }} {{ ci_failure.head_sha }}',
      '{% for c in ci_failure.checks %}{{ c.name }} {{ c.conclusion }} {{ c.url }}{% endfor %}',
      '{{ ci_failure.log_lines | size }} {{ ci_failure.log }}{% endif %}',
      '{% if review_comments %}R {{ review_comments.attempt }}/{{ review_comments.max_turns }}',
      '{% for c in review_comments.comments %}{{ c.author }} {{ c.path }} {{ c.line }} {{ c.end_line }} {{ c.body }}{% endfor %}',
      '{{ review_comments.text }}{% endif %}',
      '{% if merge_conflict %}M {{ merge_conflict.base }} {{ merge_conflict.head_sha }} {{ merge_conflict.attempt }}/{{ merge_conflict.max_retries }}{% endif %}',
    ].join('\n');
    const sample = STRICT_CONDITION_ENGINE.parseAndRenderSync(source, { ...SAMPLE_REACTION_VARIABLES });
    expect(sample).toContain('CI 1/2 3f9c2a7e5b1d4c8f9a0b6e2d7c4f1a8b5e3d9c20');
    expect(sample).toContain('R 1/3');
    expect(sample).toContain('M main 3f9c2a7e5b1d4c8f9a0b6e2d7c4f1a8b5e3d9c20 1/2');
    expect(STRICT_CONDITION_ENGINE.parseAndRenderSync(source, { ...NO_REACTION_VARIABLES }).trim()).toBe('');
  });
});
