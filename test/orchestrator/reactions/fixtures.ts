import type { CheckSummary, CiStatus, ReviewFeedback } from '../../../src/domain/forge.js';
import type { ForgeReading, PullWatch, ReactionSettings } from '../../../src/orchestrator/reactions/types.js';

export const SHA_A = 'a'.repeat(40);
export const SHA_B = 'b'.repeat(40);
export const SHA_C = 'c'.repeat(40);
export const PUSHED_AT_MS = Date.parse('2025-03-05T10:00:00Z');

export const settings = (over: Partial<ReactionSettings> = {}): ReactionSettings => ({
  maxRetries: 2,
  maxContinuationTurns: 3,
  escalation: 'label',
  escalationLabel: 'needs-human',
  maxLogLines: 50,
  pollIntervalMs: 60_000,
  debounceMs: 30_000,
  ttlMs: 30 * 60_000,
  mergeMethod: 'squash',
  ...over,
});

export const watch = (over: Partial<PullWatch> = {}): PullWatch => ({
  issueId: 'I_1',
  identifier: 'ENG-1',
  branch: 'eng-1-fix',
  base: 'main',
  headSha: SHA_A,
  prNumber: 7,
  prUrl: 'https://forge.example.com/acme/api/pull/7',
  pushedAtMs: PUSHED_AT_MS,
  memory: {},
  pollErrors: 0,
  nextPollAtMs: PUSHED_AT_MS,
  ...over,
});

export const check = (name: string, state: CheckSummary['state'], over: Partial<CheckSummary> = {}) => ({
  name,
  state,
  conclusion: state === 'failing' ? 'failure' : state === 'passing' ? 'success' : null,
  detailsUrl: `https://ci.example.com/${name}`,
  ...over,
});

export const failingCi = (logExcerpt: string[] = ['boom']): CiStatus => ({
  state: 'failing',
  checks: [check('test', 'failing'), check('lint', 'passing')],
  logExcerpt,
});
export const passingCi: CiStatus = { state: 'passing', checks: [check('test', 'passing')], logExcerpt: [] };
export const pendingCi: CiStatus = { state: 'pending', checks: [check('test', 'pending')], logExcerpt: [] };

export const feedback = (id: string, over: Partial<ReviewFeedback> = {}): ReviewFeedback => ({
  id,
  author: 'lee',
  body: `comment ${id}`,
  path: 'src/a.ts',
  line: 1,
  endLine: null,
  createdAt: '2025-03-05T10:00:00Z',
  ...over,
});

export const reading = (
  over: {
    headSha?: string;
    state?: 'open' | 'closed' | 'merged';
    mergeable?: boolean | null;
    ci?: CiStatus | null;
    approved?: boolean;
    changesRequested?: readonly ReviewFeedback[];
    reviews?: null;
  } = {},
): ForgeReading => ({
  pull: {
    number: 7,
    url: 'https://forge.example.com/acme/api/pull/7',
    headSha: over.headSha ?? SHA_A,
    state: over.state ?? 'open',
    mergeable: over.mergeable === undefined ? true : over.mergeable,
    opened: false,
  },
  ci: over.ci === undefined ? pendingCi : over.ci,
  reviews:
    over.reviews === null
      ? null
      : { approved: over.approved ?? false, changesRequested: [...(over.changesRequested ?? [])] },
});
