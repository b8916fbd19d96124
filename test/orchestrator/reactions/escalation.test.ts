import { describe, expect, it } from 'vitest';
import { escalationComment } from '../../../src/orchestrator/reactions/escalation.js';
import { check, feedback, reading, watch } from './fixtures.js';

const PR = 'pull request #7 (https://forge.example.com/acme/api/pull/7), branch `eng-1-fix`';

describe('escalation comments', () => {
  it('a CI escalation lists every failing check with its link, or says it has none', () => {
    const ci = {
      state: 'failing' as const,
      checks: [
        check('test', 'failing'),
        check('lint', 'failing', { detailsUrl: null, conclusion: null }),
        check('build', 'passing'),
      ],
      logExcerpt: [],
    };
    expect(escalationComment('ci_failure', watch(), reading({ ci }), 1)).toBe(
      [
        `Reaction ci_failure: CI is still failing on ${PR}, after 1 fix turn.`,
        'Failing checks:',
        '- test (failure): https://ci.example.com/test',
        '- lint: no details link',
        'A person is needed; no more fix turns run for CI on this pull request until it passes.',
      ].join('\n'),
    );
  });

  it('with no fix turns allowed the comment does not claim any were tried', () => {
    const text = escalationComment(
      'merge_conflict',
      watch({ base: 'develop' }),
      reading({ mergeable: false }),
      0,
    );
    expect(text.split('\n')[0]).toBe(
      `Reaction merge_conflict: ${PR}, is not mergeable against \`develop\`, with no fix turns allowed.`,
    );
  });

  it('a review escalation counts the feedback items', () => {
    const text = escalationComment(
      'review_comments',
      watch(),
      reading({ changesRequested: [feedback('r1')] }),
      3,
    );
    expect(text.split('\n')[0]).toBe(
      `Reaction review_comments: 1 review feedback item still requests changes on ${PR}, after 3 fix turns.`,
    );
  });
});
