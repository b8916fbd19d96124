import { describe, expect, it } from 'vitest';
import { ISSUE_TEMPLATE_KEYS, issueTemplateView } from '../../src/domain/issue.js';
import { PROMPT_VARIABLE_NAMES, promptVariables, SAMPLE_ISSUE } from '../../src/prompt/variables.js';

describe('promptVariables', () => {
  it('attempt stays null on a first run instead of being dropped (strict variables would fail)', () => {
    const v = promptVariables({
      issue: SAMPLE_ISSUE,
      attempt: 1,
      turn: 1,
      maxTurns: 5,
      workspacePath: '/w',
    });
    expect(Object.keys(v).sort()).toEqual([...PROMPT_VARIABLE_NAMES].sort());
    expect(v.attempt).toBeNull();
    expect(v.run).toEqual({ turn: 1, max_turns: 5, is_continuation: false });
    expect(v.workspace).toEqual({ path: '/w', status_file: '/w/.orchestrator/status' });
    expect([v.ci_failure, v.review_comments, v.merge_conflict]).toEqual([null, null, null]);
  });

  it.each([
    [1, null],
    [2, 2],
    [7, 7],
  ])(
    'attempt %s reads as %s: the number every other place shows, null only on the first',
    (attempt, seen) => {
      const v = promptVariables({ issue: SAMPLE_ISSUE, attempt, turn: 1, maxTurns: 5, workspacePath: '/w' });
      expect(v.attempt).toBe(seen);
    },
  );

  it('only turn 2 onwards is a continuation', () => {
    const at = (turn: number) =>
      promptVariables({ issue: SAMPLE_ISSUE, attempt: 2, turn, maxTurns: 5, workspacePath: '/w' }).run
        .is_continuation;
    expect([at(1), at(2), at(5)]).toEqual([false, true, true]);
  });

  it('issue is the snake_case template view, not the camelCase domain object', () => {
    const v = promptVariables({
      issue: SAMPLE_ISSUE,
      attempt: 1,
      turn: 1,
      maxTurns: 5,
      workspacePath: '/w',
    });
    expect(v.issue).toEqual(issueTemplateView(SAMPLE_ISSUE));
  });
});

describe('SAMPLE_ISSUE', () => {
  it('fills every field so validate exercises every branch (no null, empty string or empty list)', () => {
    const view = issueTemplateView(SAMPLE_ISSUE);
    for (const key of ISSUE_TEMPLATE_KEYS) {
      const value = view[key];
      expect(value, key).not.toBeNull();
      expect(value, key).not.toBe('');
      if (Array.isArray(value)) expect(value.length, key).toBeGreaterThan(0);
    }
  });
});
