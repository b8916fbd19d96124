import { describe, expect, it } from 'vitest';
import { decideReaction } from '../../../src/orchestrator/reactions/decide.js';
import type {
  PullWatch,
  ReactionDecision,
  ReactionsConfig,
  WatchMemory,
} from '../../../src/orchestrator/reactions/types.js';
import {
  failingCi,
  feedback,
  PUSHED_AT_MS,
  passingCi,
  pendingCi,
  reading,
  SHA_A,
  SHA_B,
  SHA_C,
  settings,
  watch,
} from './fixtures.js';

const NOW_MS = PUSHED_AT_MS + 5 * 60_000;
const POLL_MS = 60_000;
const R1_R2 = '8434c376018e492fe90a6b0cf8a03fd1490897a78c972eb3e111eedda97de36d';
const R1_R2_R3 = 'd810bda83a4be7216c68584f9d77b3607f6c914be7c365899b122829a323868c';

const ci: ReactionsConfig = { ci_failure: settings() };
const all: ReactionsConfig = {
  merge_conflict: settings(),
  ci_failure: settings(),
  review_comments: settings(),
  auto_merge: settings({ mergeMethod: 'rebase' }),
};

/** The watch as the caller stores it after carrying out `decision` (head moved to `headSha`). */
function stored(w: PullWatch, decision: ReactionDecision, headSha = w.headSha): PullWatch {
  const memory = 'memory' in decision ? decision.memory : w.memory;
  return { ...w, headSha, memory };
}

const wait = (memory: WatchMemory, nextPollAtMs = NOW_MS + POLL_MS): ReactionDecision => ({
  type: 'wait',
  nextPollAtMs,
  memory,
});

describe('the pull request itself', () => {
  it('a merged or closed pull request stops the watch before any fix is considered', () => {
    const busy = { mergeable: false, ci: failingCi(), changesRequested: [feedback('r1')] } as const;
    expect(decideReaction(watch(), reading({ ...busy, state: 'merged' }), all, NOW_MS)).toEqual({
      type: 'stop',
      reason: 'merged',
    });
    expect(decideReaction(watch(), reading({ ...busy, state: 'closed' }), all, NOW_MS)).toEqual({
      type: 'stop',
      reason: 'closed',
    });
  });

  it('with no reaction configured there is nothing to watch for', () => {
    expect(decideReaction(watch(), reading({ ci: failingCi() }), {}, NOW_MS)).toEqual({
      type: 'stop',
      reason: 'expired',
    });
  });

  it('nothing to do waits for the smallest poll interval of the configured reactions', () => {
    const config = {
      ci_failure: settings({ pollIntervalMs: 90_000 }),
      auto_merge: settings({ pollIntervalMs: 45_000 }),
    };
    expect(decideReaction(watch(), reading(), config, NOW_MS)).toEqual(wait({}, NOW_MS + 45_000));
  });

  it('never changes the watch it is given', () => {
    const w = watch({
      memory: { ci_failure: { fingerprint: SHA_A, attempts: 1, dispatched: true, escalated: false } },
    });
    const frozen = structuredClone(w);
    decideReaction(w, reading({ headSha: SHA_B, ci: failingCi() }), all, NOW_MS);
    decideReaction(w, reading({ ci: passingCi }), all, NOW_MS);
    expect(w).toEqual(frozen);
  });
});

describe('ci_failure', () => {
  it('a failing CI dispatches fix turn 1 with the failing checks and the log', () => {
    const decision = decideReaction(watch(), reading({ ci: failingCi(['a', 'b']) }), ci, NOW_MS);
    expect(decision).toEqual({
      type: 'dispatch',
      kind: 'ci_failure',
      fingerprint: SHA_A,
      attempt: 1,
      context: {
        head_sha: SHA_A,
        attempt: 1,
        max_retries: 2,
        checks: [{ name: 'test', conclusion: 'failure', url: 'https://ci.example.com/test' }],
        log_lines: ['a', 'b'],
        log: 'a\nb',
      },
      memory: { ci_failure: { fingerprint: SHA_A, attempts: 1, dispatched: true, escalated: false } },
    });
  });

  it('the same red head is not dispatched twice', () => {
    const first = decideReaction(watch(), reading({ ci: failingCi() }), ci, NOW_MS);
    const w = stored(watch(), first);
    expect(decideReaction(w, reading({ ci: failingCi() }), ci, NOW_MS)).toEqual(wait(w.memory));
  });

  it('a new head failing again dispatches fix turn 2', () => {
    const w = stored(watch(), decideReaction(watch(), reading({ ci: failingCi() }), ci, NOW_MS));
    const decision = decideReaction(w, reading({ headSha: SHA_B, ci: failingCi() }), ci, NOW_MS);
    expect(decision).toMatchObject({
      type: 'dispatch',
      kind: 'ci_failure',
      fingerprint: SHA_B,
      attempt: 2,
      context: { head_sha: SHA_B, attempt: 2, max_retries: 2 },
      memory: { ci_failure: { fingerprint: SHA_B, attempts: 2, dispatched: true, escalated: false } },
    });
  });

  it('once the fix turns are used up a person is asked exactly once, then it waits', () => {
    let w = watch();
    const kinds: string[] = [];
    for (const sha of [SHA_A, SHA_B, SHA_C, 'd'.repeat(40)]) {
      const decision = decideReaction(w, reading({ headSha: sha, ci: failingCi() }), ci, NOW_MS);
      kinds.push(decision.type);
      w = stored(w, decision, sha);
    }
    expect(kinds).toEqual(['dispatch', 'dispatch', 'escalate', 'wait']);
    expect(w.memory).toEqual({
      ci_failure: { fingerprint: SHA_C, attempts: 2, dispatched: false, escalated: true },
    });
  });

  it('the escalation carries the configured way, label and a comment naming what failed', () => {
    const w = watch({
      headSha: SHA_B,
      memory: { ci_failure: { fingerprint: SHA_A, attempts: 2, dispatched: true, escalated: false } },
    });
    const config = { ci_failure: settings({ escalation: 'comment', escalationLabel: 'help' }) };
    expect(decideReaction(w, reading({ headSha: SHA_B, ci: failingCi() }), config, NOW_MS)).toEqual({
      type: 'escalate',
      kind: 'ci_failure',
      how: 'comment',
      label: 'help',
      comment: [
        'Reaction ci_failure: CI is still failing on pull request #7 (https://forge.example.com/acme/api/pull/7), branch `eng-1-fix`, after 2 fix turns.',
        'Failing checks:',
        '- test (failure): https://ci.example.com/test',
        'A person is needed; no more fix turns run for CI on this pull request until it passes.',
      ].join('\n'),
      memory: { ci_failure: { fingerprint: SHA_B, attempts: 2, dispatched: false, escalated: true } },
    });
  });

  it('max_retries 0 asks a person on the first failure', () => {
    const decision = decideReaction(
      watch(),
      reading({ ci: failingCi() }),
      { ci_failure: settings({ maxRetries: 0 }) },
      NOW_MS,
    );
    expect(decision).toMatchObject({
      type: 'escalate',
      kind: 'ci_failure',
      memory: { ci_failure: { fingerprint: SHA_A, attempts: 0, dispatched: false, escalated: true } },
    });
  });

  it('green CI resets the count and the escalation, so a later failure starts again at 1', () => {
    const w = watch({
      memory: { ci_failure: { fingerprint: SHA_A, attempts: 2, dispatched: false, escalated: true } },
    });
    const green = decideReaction(w, reading({ ci: passingCi }), ci, NOW_MS);
    expect(green).toEqual(
      wait({ ci_failure: { fingerprint: SHA_A, attempts: 0, dispatched: false, escalated: false } }),
    );
    const red = decideReaction(
      stored(w, green, SHA_B),
      reading({ headSha: SHA_B, ci: failingCi() }),
      ci,
      NOW_MS,
    );
    expect(red).toMatchObject({ type: 'dispatch', kind: 'ci_failure', attempt: 1 });
  });

  it('pending or unread CI does nothing and keeps the count', () => {
    const memory = { ci_failure: { fingerprint: SHA_A, attempts: 1, dispatched: true, escalated: false } };
    expect(decideReaction(watch({ memory }), reading({ headSha: SHA_B, ci: pendingCi }), ci, NOW_MS)).toEqual(
      wait(memory),
    );
    expect(decideReaction(watch({ memory }), reading({ headSha: SHA_B, ci: null }), ci, NOW_MS)).toEqual(
      wait(memory),
    );
  });

  it('a failing CI is ignored when ci_failure is not configured', () => {
    const config = { review_comments: settings() };
    expect(decideReaction(watch(), reading({ ci: failingCi() }), config, NOW_MS)).toEqual(wait({}));
  });
});

describe('merge_conflict', () => {
  const conflict = { merge_conflict: settings({ maxRetries: 1 }), ci_failure: settings() };

  it('a conflicted head dispatches a fix before its failing CI', () => {
    expect(decideReaction(watch(), reading({ mergeable: false, ci: failingCi() }), conflict, NOW_MS)).toEqual(
      {
        type: 'dispatch',
        kind: 'merge_conflict',
        fingerprint: SHA_A,
        attempt: 1,
        context: { base: 'main', head_sha: SHA_A, attempt: 1, max_retries: 1 },
        memory: { merge_conflict: { fingerprint: SHA_A, attempts: 1, dispatched: true, escalated: false } },
      },
    );
  });

  it('once the conflict was handed over, the next kind is considered, without marking the conflict again', () => {
    const memory = {
      merge_conflict: { fingerprint: SHA_A, attempts: 1, dispatched: true, escalated: false },
    };
    const decision = decideReaction(
      watch({ memory }),
      reading({ mergeable: false, ci: failingCi() }),
      conflict,
      NOW_MS,
    );
    expect(decision).toMatchObject({
      type: 'dispatch',
      kind: 'ci_failure',
      attempt: 1,
      memory: {
        ...memory,
        ci_failure: { fingerprint: SHA_A, attempts: 1, dispatched: true, escalated: false },
      },
    });
  });

  it('a new push still in conflict after the last allowed try asks a person against its base', () => {
    const memory = {
      merge_conflict: { fingerprint: SHA_A, attempts: 1, dispatched: true, escalated: false },
    };
    const decision = decideReaction(
      watch({ memory }),
      reading({ headSha: SHA_B, mergeable: false }),
      conflict,
      NOW_MS,
    );
    expect(decision).toEqual({
      type: 'escalate',
      kind: 'merge_conflict',
      how: 'label',
      label: 'needs-human',
      comment: [
        'Reaction merge_conflict: pull request #7 (https://forge.example.com/acme/api/pull/7), branch `eng-1-fix`, is not mergeable against `main`, after 1 fix turn.',
        'A person is needed; no more fix turns run for the conflict until the pull request merges cleanly.',
      ].join('\n'),
      memory: { merge_conflict: { fingerprint: SHA_B, attempts: 1, dispatched: false, escalated: true } },
    });
  });

  it('mergeability still being computed is not a conflict', () => {
    expect(decideReaction(watch(), reading({ mergeable: null }), conflict, NOW_MS)).toEqual(wait({}));
  });

  it('a mergeable pull request resets the conflict count', () => {
    const memory = {
      merge_conflict: { fingerprint: SHA_A, attempts: 1, dispatched: false, escalated: true },
    };
    expect(decideReaction(watch({ memory }), reading({ mergeable: true }), conflict, NOW_MS)).toEqual(
      wait({ merge_conflict: { fingerprint: SHA_A, attempts: 0, dispatched: false, escalated: false } }),
    );
  });
});

describe('review_comments', () => {
  const review = { review_comments: settings({ maxContinuationTurns: 2, debounceMs: 30_000 }) };
  const settled = (ids: string[]) => ids.map((id) => feedback(id, { createdAt: '2025-03-05T10:01:00Z' }));

  it('settled feedback dispatches a fix turn fingerprinted by its ids', () => {
    const decision = decideReaction(
      watch(),
      reading({ changesRequested: settled(['r2', 'r1']) }),
      review,
      NOW_MS,
    );
    expect(decision).toEqual({
      type: 'dispatch',
      kind: 'review_comments',
      fingerprint: R1_R2,
      attempt: 1,
      context: {
        attempt: 1,
        max_turns: 2,
        comments: [
          { author: 'lee', body: 'comment r1', path: 'src/a.ts', line: 1, end_line: null },
          { author: 'lee', body: 'comment r2', path: 'src/a.ts', line: 1, end_line: null },
        ],
        text: '- src/a.ts:1 — lee: comment r1\n- src/a.ts:1 — lee: comment r2',
      },
      memory: { review_comments: { fingerprint: R1_R2, attempts: 1, dispatched: true, escalated: false } },
    });
  });

  it('the same feedback listed in another order is not dispatched again', () => {
    const memory = {
      review_comments: { fingerprint: R1_R2, attempts: 1, dispatched: true, escalated: false },
    };
    expect(
      decideReaction(watch({ memory }), reading({ changesRequested: settled(['r2', 'r1']) }), review, NOW_MS),
    ).toEqual(wait(memory));
    expect(
      decideReaction(watch({ memory }), reading({ changesRequested: settled(['r1', 'r2']) }), review, NOW_MS),
    ).toEqual(wait(memory));
  });

  it('a new comment is new feedback: fix turn 2', () => {
    const memory = {
      review_comments: { fingerprint: R1_R2, attempts: 1, dispatched: true, escalated: false },
    };
    const decision = decideReaction(
      watch({ memory }),
      reading({ changesRequested: settled(['r1', 'r2', 'r3']) }),
      review,
      NOW_MS,
    );
    expect(decision).toMatchObject({
      type: 'dispatch',
      kind: 'review_comments',
      fingerprint: R1_R2_R3,
      attempt: 2,
      memory: { review_comments: { fingerprint: R1_R2_R3, attempts: 2, dispatched: true, escalated: false } },
    });
  });

  it('feedback younger than the debounce waits until it has settled', () => {
    // Newest comment at NOW − 10 s; debounce 30 s → act at NOW + 20 s, sooner than the normal poll.
    const young = [
      feedback('r1', { createdAt: '2025-03-05T10:00:00Z' }),
      feedback('r2', { createdAt: '2025-03-05T10:04:50Z' }),
    ];
    expect(decideReaction(watch(), reading({ changesRequested: young }), review, NOW_MS)).toEqual(
      wait({}, NOW_MS + 20_000),
    );
    expect(
      decideReaction(watch(), reading({ changesRequested: young }), review, NOW_MS + 20_000),
    ).toMatchObject({
      type: 'dispatch',
      kind: 'review_comments',
    });
  });

  it('a debounce longer than the poll interval waits only until the next poll', () => {
    const config = { review_comments: settings({ debounceMs: 10 * 60_000 }) };
    const young = [feedback('r1', { createdAt: '2025-03-05T10:04:00Z' })];
    expect(decideReaction(watch(), reading({ changesRequested: young }), config, NOW_MS)).toEqual(
      wait({}, NOW_MS + POLL_MS),
    );
  });

  it('after max_continuation_turns a person is asked once with the number of items', () => {
    const memory = {
      review_comments: { fingerprint: R1_R2, attempts: 2, dispatched: true, escalated: false },
    };
    const w = watch({ memory });
    const decision = decideReaction(
      w,
      reading({ changesRequested: settled(['r1', 'r2', 'r3']) }),
      review,
      NOW_MS,
    );
    expect(decision).toEqual({
      type: 'escalate',
      kind: 'review_comments',
      how: 'label',
      label: 'needs-human',
      comment: [
        'Reaction review_comments: 3 review feedback items still request changes on pull request #7 (https://forge.example.com/acme/api/pull/7), branch `eng-1-fix`, after 2 fix turns.',
        'A person is needed; no more fix turns run for this review until its requested changes are settled.',
      ].join('\n'),
      memory: { review_comments: { fingerprint: R1_R2_R3, attempts: 2, dispatched: false, escalated: true } },
    });
    const later = settled(['r1', 'r2', 'r3', 'r4']);
    expect(decideReaction(stored(w, decision), reading({ changesRequested: later }), review, NOW_MS)).toEqual(
      wait(stored(w, decision).memory),
    );
  });

  it('no requested changes resets the count', () => {
    const memory = {
      review_comments: { fingerprint: R1_R2, attempts: 2, dispatched: false, escalated: true },
    };
    expect(decideReaction(watch({ memory }), reading({ changesRequested: [] }), review, NOW_MS)).toEqual(
      wait({ review_comments: { fingerprint: R1_R2, attempts: 0, dispatched: false, escalated: false } }),
    );
  });

  it('unread reviews neither dispatch nor reset', () => {
    const memory = {
      review_comments: { fingerprint: R1_R2, attempts: 2, dispatched: false, escalated: true },
    };
    expect(decideReaction(watch({ memory }), reading({ reviews: null }), review, NOW_MS)).toEqual(
      wait(memory),
    );
  });

  it('a red CI is fixed before review comments, and leaves the review unmarked', () => {
    const config = { ci_failure: settings(), review_comments: settings() };
    const decision = decideReaction(
      watch(),
      reading({ ci: failingCi(), changesRequested: settled(['r1']) }),
      config,
      NOW_MS,
    );
    expect(decision).toMatchObject({ type: 'dispatch', kind: 'ci_failure' });
    expect(decision.type === 'dispatch' && decision.memory.review_comments).toBe(undefined);
    const next = decideReaction(
      stored(watch(), decision),
      reading({ ci: failingCi(), changesRequested: settled(['r1']) }),
      config,
      NOW_MS,
    );
    expect(next).toMatchObject({ type: 'dispatch', kind: 'review_comments', attempt: 1 });
  });
});

describe('auto_merge', () => {
  const merge = { auto_merge: settings({ mergeMethod: 'rebase' }) };
  const ready = { approved: true, ci: passingCi, mergeable: true } as const;

  it('an approved, green, mergeable pull request is merged at the head it was read at', () => {
    expect(decideReaction(watch(), reading(ready), merge, NOW_MS)).toEqual({
      type: 'merge',
      method: 'rebase',
      sha: SHA_A,
    });
  });

  it('no CI read counts as green', () => {
    expect(decideReaction(watch(), reading({ ...ready, ci: null }), merge, NOW_MS)).toEqual({
      type: 'merge',
      method: 'rebase',
      sha: SHA_A,
    });
  });

  it.each([
    ['not approved', { approved: false }],
    ['changes requested', { changesRequested: [feedback('r1')] }],
    ['reviews unread', { reviews: null }],
    ['CI pending', { ci: pendingCi }],
    ['CI failing', { ci: failingCi() }],
    ['mergeability unknown', { mergeable: null }],
    ['not mergeable', { mergeable: false }],
    ['head moved since the last poll', { headSha: SHA_B }],
  ] as const)('is not merged when %s', (_, over) => {
    expect(decideReaction(watch(), reading({ ...ready, ...over }), merge, NOW_MS)).toEqual(wait({}));
  });

  it('is not merged when auto_merge is not configured', () => {
    expect(decideReaction(watch(), reading(ready), ci, NOW_MS)).toEqual(wait({}));
  });
});

describe('TTL', () => {
  const ttl = { ci_failure: settings({ ttlMs: 10 * 60_000 }), auto_merge: settings({ ttlMs: 60 * 60_000 }) };

  it('the watch lapses after the largest TTL with nothing to do', () => {
    const atTtl = PUSHED_AT_MS + 60 * 60_000;
    expect(decideReaction(watch(), reading(), ttl, atTtl)).toEqual(wait({}, atTtl + POLL_MS));
    expect(decideReaction(watch(), reading(), ttl, atTtl + 1)).toEqual({ type: 'stop', reason: 'expired' });
  });

  it('something to do beats the TTL', () => {
    const late = PUSHED_AT_MS + 2 * 60 * 60_000;
    expect(decideReaction(watch(), reading({ ci: failingCi() }), ttl, late)).toMatchObject({
      type: 'dispatch',
    });
  });

  it('a moved head is a push and does not expire', () => {
    const late = PUSHED_AT_MS + 2 * 60 * 60_000;
    expect(decideReaction(watch(), reading({ headSha: SHA_B }), ttl, late)).toEqual(wait({}, late + POLL_MS));
  });
});
