/**
 * The tracker conformance suite. Every tracker kind runs the same cases against
 * its own backing store through a small harness, so "implements TrackerAdapter"
 * means the same observable behaviour everywhere: which issues are candidates,
 * the comments tri-state, what a write leaves in the store, and which error kind
 * each failure carries (the orchestrator's retry decision reads that kind).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TrackerError, type TrackerErrorKind } from '../../src/domain/errors.js';
import type { Issue } from '../../src/domain/issue.js';
import type { TrackerAdapter } from '../../src/domain/tracker.js';

/** A comment in a seed, oldest first. */
export interface SeedComment {
  id: string;
  author: string;
  body: string;
  /** ISO-8601. */
  createdAt: string;
}

/** A tracker-neutral description of one issue; the harness stores it however its tracker does. */
export interface SeedIssue {
  /** The tracker must report this exact id and identifier back. */
  id: string;
  identifier: string;
  title: string;
  state: string;
  /** Any casing; the tracker reports them lowercased. */
  labels: string[];
  /** null = the issue has no priority. */
  priority: number | null;
  blockedBy: { id: string; identifier: string; state: string }[];
  /** [] = no comments. */
  comments: SeedComment[];
}

/** What the suite asks a harness to build: the issues and the configured states. */
export interface ConformanceSeed {
  issues: SeedIssue[];
  activeStates: string[];
  terminalStates: string[];
  handoffState: string | null;
  inProgressState: string | null;
  blockedState: string | null;
}

/** The backing store read directly (not through the adapter), so a write is proven to have landed. */
export interface SeedSnapshot {
  issues: {
    id: string;
    state: string;
    /** As stored (the suite compares lowercased). */
    labels: string[];
    comments: { author: string; body: string }[];
  }[];
}

/** One seeded tracker instance. */
export interface TrackerFixture {
  tracker: TrackerAdapter;
  /** Reads the backing store directly. */
  readBack(): Promise<SeedSnapshot>;
  /** Damages the backing data so reads must fail with tracker_payload_error; omit when the store cannot be damaged. */
  corrupt?(): Promise<void>;
  /** Sets an issue's state in the store behind the tracker's back (as an operator would); omit when the store cannot. */
  setStateDirectly?(id: string, state: string): Promise<void>;
  /** Controls of the fake server behind a tracker that talks HTTP; omit for local stores. */
  remote?: RemoteControls;
  /** Releases everything setup created. */
  cleanup(): Promise<void>;
}

/** What the suite needs of a fake tracker server to prove paging, bad records and HTTP failures. */
export interface RemoteControls {
  /** Requests the fake has answered so far (every method and path). */
  requestCount(): number;
  /** How many issues one page of the tracker's candidate listing holds (as the tracker asks for it). */
  pageSize: number;
  /** Adds `count` issues in the first active state behind the tracker's back; returns their ids as the tracker reports them. */
  addCandidates(count: number): Promise<string[]>;
  /** Stores the issue with a record the tracker must not accept (no title, or no state). */
  malform(id: string): Promise<void>;
  /**
   * The next `count` requests answer `status`: 401 (bad credentials), 429 with `Retry-After:
   * retryAfterS` (a rate limit), or a 5xx.
   */
  failNext(count: number, status: number, retryAfterS?: number): void;
  /** Drops every failure still pending. */
  heal(): void;
}

/** Builds a tracker over a seeded backing store (a file, a fake server, …). */
export interface TrackerHarness {
  /**
   * The tracker talks HTTP to a server: the network cases are registered, and every fixture
   * must carry `remote` (a network harness without it fails them rather than skipping).
   */
  overHttp?: boolean;
  setup(seed: ConformanceSeed): Promise<TrackerFixture>;
}

const NO_ISSUE = 'no-such-issue';

/** The seed every case starts from: two candidates (one with comments and a blocker), two terminal, one handed off. */
export function conformanceSeed(): ConformanceSeed {
  return {
    activeStates: ['Todo', 'In Progress'],
    terminalStates: ['Done', 'Cancelled'],
    handoffState: 'Human Review',
    inProgressState: 'In Progress',
    blockedState: 'Blocked',
    issues: [
      {
        id: 'id-1',
        identifier: 'KEY-1',
        title: 'First candidate',
        state: 'Todo',
        labels: ['Bug', 'backend'],
        priority: 1,
        blockedBy: [],
        comments: [],
      },
      {
        id: 'id-2',
        identifier: 'KEY-2',
        title: 'Second candidate, state spelled in another case',
        state: 'in progress',
        labels: [],
        priority: null,
        blockedBy: [{ id: 'id-1', identifier: 'KEY-1', state: 'Todo' }],
        comments: [
          { id: 'cm-1', author: 'alice', body: 'first comment', createdAt: '2024-01-01T00:00:00.000Z' },
          { id: 'cm-2', author: 'bob', body: 'second comment', createdAt: '2024-01-02T00:00:00.000Z' },
        ],
      },
      {
        id: 'id-3',
        identifier: 'KEY-3',
        title: 'Finished',
        state: 'Done',
        labels: [],
        priority: 3,
        blockedBy: [],
        comments: [],
      },
      {
        id: 'id-4',
        identifier: 'KEY-4',
        title: 'Waiting for a human',
        state: 'Human Review',
        labels: [],
        priority: null,
        blockedBy: [],
        comments: [],
      },
      {
        id: 'id-5',
        identifier: 'KEY-5',
        title: 'Dropped',
        state: 'Cancelled',
        labels: [],
        priority: null,
        blockedBy: [],
        comments: [],
      },
    ],
  };
}

/** Resolves when `promise` rejects with a TrackerError of `kind`. */
export async function expectTrackerError(promise: Promise<unknown>, kind: TrackerErrorKind): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error, `expected a ${kind}`).toBeInstanceOf(TrackerError);
  expect((error as TrackerError).kind).toBe(kind);
}

function ids(issues: readonly Issue[]): string[] {
  return issues.map((issue) => issue.id).sort();
}

function stored(snapshot: SeedSnapshot, id: string): SeedSnapshot['issues'][number] {
  const issue = snapshot.issues.find((i) => i.id === id);
  if (issue === undefined) throw new Error(`issue ${id} missing from the backing store`);
  return issue;
}

/** Registers the conformance cases for one tracker under `describe(name)`. */
export function describeTrackerConformance(name: string, harness: TrackerHarness): void {
  describe(`tracker conformance: ${name}`, () => {
    let fixture: TrackerFixture;
    let tracker: TrackerAdapter;

    beforeEach(async () => {
      fixture = await harness.setup(conformanceSeed());
      tracker = fixture.tracker;
    });

    afterEach(async () => {
      await fixture.cleanup();
    });

    describe('reads', () => {
      it('candidates are exactly the active, non-terminal issues, without comments', async () => {
        const candidates = await tracker.fetchCandidateIssues();
        expect(ids(candidates)).toEqual(['id-1', 'id-2']);
        for (const issue of candidates) expect(issue.comments).toBeNull();
      });

      it('a candidate carries its fields, lowercased labels and blockers', async () => {
        const candidates = await tracker.fetchCandidateIssues();
        const first = candidates.find((i) => i.id === 'id-1');
        expect(first).toMatchObject({
          identifier: 'KEY-1',
          title: 'First candidate',
          state: 'Todo',
          priority: 1,
          labels: ['bug', 'backend'],
          blockedBy: [],
        });
        const second = candidates.find((i) => i.id === 'id-2');
        expect(second?.priority).toBeNull();
        expect(second?.blockedBy).toEqual([{ id: 'id-1', identifier: 'KEY-1', state: 'Todo' }]);
      });

      it('an issue fetched by id without comments has [] rather than null', async () => {
        const issue = await tracker.fetchIssueById('id-1');
        expect(issue.identifier).toBe('KEY-1');
        expect(issue.comments).toEqual([]);
      });

      it('an issue fetched by id carries its comments, oldest first', async () => {
        const issue = await tracker.fetchIssueById('id-2');
        expect(issue.comments?.map((c) => [c.author, c.body])).toEqual([
          ['alice', 'first comment'],
          ['bob', 'second comment'],
        ]);
      });

      it('an unknown id is tracker_not_found, not an empty issue', async () => {
        await expectTrackerError(tracker.fetchIssueById(NO_ISSUE), 'tracker_not_found');
      });

      it('fetching by states ignores case and leaves comments unfetched', async () => {
        const issues = await tracker.fetchIssuesByStates(['DONE', 'cancelled']);
        expect(ids(issues)).toEqual(['id-3', 'id-5']);
        for (const issue of issues) expect(issue.comments).toBeNull();
        expect(await tracker.fetchIssuesByStates([])).toEqual([]);
      });

      it('states by ids omit ids the tracker does not have instead of failing', async () => {
        const readings = await tracker.fetchIssueStatesByIds(['id-3', NO_ISSUE, 'id-1']);
        expect(readings).toHaveLength(2);
        expect(readings).toEqual(
          expect.arrayContaining([
            { id: 'id-3', identifier: 'KEY-3', state: 'Done' },
            { id: 'id-1', identifier: 'KEY-1', state: 'Todo' },
          ]),
        );
      });

      it('states by identifiers omit identifiers the tracker does not have', async () => {
        const readings = await tracker.fetchIssueStatesByIdentifiers(['KEY-4', 'KEY-404']);
        expect(readings).toEqual([{ id: 'id-4', identifier: 'KEY-4', state: 'Human Review' }]);
      });

      it('comments of an issue without any are [] and others come oldest first', async () => {
        expect(await tracker.fetchIssueComments('id-1')).toEqual([]);
        const comments = await tracker.fetchIssueComments('id-2');
        expect(comments.map((c) => c.body)).toEqual(['first comment', 'second comment']);
        expect(comments[0]).toMatchObject({
          id: 'cm-1',
          author: 'alice',
          createdAt: '2024-01-01T00:00:00.000Z',
        });
      });
    });

    describe('writes', () => {
      it('a transition lands in the store and later reads see it', async () => {
        await tracker.transitionIssue('id-1', 'Human Review');
        expect(stored(await fixture.readBack(), 'id-1').state.toLowerCase()).toBe('human review');
        expect(await tracker.fetchIssueStatesByIds(['id-1'])).toEqual([
          { id: 'id-1', identifier: 'KEY-1', state: 'Human Review' },
        ]);
        expect(ids(await tracker.fetchCandidateIssues())).toEqual(['id-2']);
      });

      it('a transition to a terminal state removes the issue from the candidates', async () => {
        await tracker.transitionIssue('id-2', 'done');
        expect(stored(await fixture.readBack(), 'id-2').state.toLowerCase()).toBe('done');
        expect(ids(await tracker.fetchCandidateIssues())).toEqual(['id-1']);
      });

      it('a transition to an unconfigured state is a payload error and changes nothing', async () => {
        await expectTrackerError(tracker.transitionIssue('id-1', 'Somewhere Else'), 'tracker_payload_error');
        expect(stored(await fixture.readBack(), 'id-1').state).toBe('Todo');
      });

      it('a comment lands in the store after the existing ones', async () => {
        await tracker.commentIssue('id-2', 'third comment');
        const comments = stored(await fixture.readBack(), 'id-2').comments;
        expect(comments.map((c) => c.body)).toEqual(['first comment', 'second comment', 'third comment']);
        const read = await tracker.fetchIssueComments('id-2');
        expect(read.at(-1)?.body).toBe('third comment');
      });

      it('a comment on an issue without comments is readable by id', async () => {
        await tracker.commentIssue('id-1', 'hello');
        const issue = await tracker.fetchIssueById('id-1');
        expect(issue.comments?.map((c) => c.body)).toEqual(['hello']);
      });

      it('an added label is lowercased and never duplicated', async () => {
        await tracker.addLabel('id-1', 'Urgent');
        await tracker.addLabel('id-1', 'BUG');
        await tracker.addLabel('id-1', 'urgent');
        const labels = stored(await fixture.readBack(), 'id-1').labels.map((l) => l.toLowerCase());
        expect(labels.sort()).toEqual(['backend', 'bug', 'urgent']);
        expect((await tracker.fetchIssueById('id-1')).labels.sort()).toEqual(['backend', 'bug', 'urgent']);
      });

      it('a write to one issue leaves every other issue in the store as it was', async () => {
        const before = await fixture.readBack();
        await tracker.transitionIssue('id-1', 'In Progress');
        await tracker.commentIssue('id-1', 'working on it');
        await tracker.addLabel('id-1', 'urgent');
        const others = (snapshot: SeedSnapshot) => snapshot.issues.filter((issue) => issue.id !== 'id-1');
        expect(others(await fixture.readBack())).toEqual(others(before));
      });

      it('a change made in the store behind the tracker is seen by the next read, even right after a write', async (ctx) => {
        if (fixture.setStateDirectly === undefined) {
          ctx.skip();
          return;
        }
        expect(ids(await tracker.fetchCandidateIssues())).toEqual(['id-1', 'id-2']);
        await tracker.commentIssue('id-2', 'noted');
        await fixture.setStateDirectly('id-1', 'Done');
        expect(ids(await tracker.fetchCandidateIssues())).toEqual(['id-2']);
        expect((await tracker.fetchIssueById('id-1')).state.toLowerCase()).toBe('done');
        await fixture.setStateDirectly('id-1', 'Todo');
        expect(await tracker.fetchIssueStatesByIds(['id-1'])).toEqual([
          { id: 'id-1', identifier: 'KEY-1', state: 'Todo' },
        ]);
      });

      it('every write to an unknown id is tracker_not_found', async () => {
        await expectTrackerError(tracker.transitionIssue(NO_ISSUE, 'Done'), 'tracker_not_found');
        await expectTrackerError(tracker.commentIssue(NO_ISSUE, 'hello'), 'tracker_not_found');
        await expectTrackerError(tracker.addLabel(NO_ISSUE, 'x'), 'tracker_not_found');
      });
    });

    // Registered only for trackers that talk HTTP: a file has no pages, status codes or quotas.
    if (harness.overHttp === true)
      describe('over the network', () => {
        function remote(): RemoteControls {
          if (fixture.remote === undefined)
            throw new Error('a harness over HTTP must give its fixtures `remote`');
          return fixture.remote;
        }

        it('candidates are read across three pages or more, each issue once', async () => {
          const r = remote();
          const added = await r.addCandidates(2 * r.pageSize + 1);
          const before = r.requestCount();
          const candidates = await tracker.fetchCandidateIssues();
          expect(ids(candidates)).toEqual(['id-1', 'id-2', ...added].sort());
          expect(r.requestCount() - before).toBeGreaterThanOrEqual(3);
        });

        it('a malformed record is left out of a state read but fails a read by id', async () => {
          const r = remote();
          await r.malform('id-1');
          expect(ids(await tracker.fetchCandidateIssues())).toEqual(['id-2']);
          expect(ids(await tracker.fetchIssuesByStates(['Todo', 'In Progress']))).toEqual(['id-2']);
          await expectTrackerError(tracker.fetchIssueById('id-1'), 'tracker_payload_error');
        });

        it('a 429 with Retry-After is waited out and the read completes', async () => {
          const r = remote();
          r.failNext(1, 429, 1);
          const started = Date.now();
          expect(ids(await tracker.fetchCandidateIssues())).toEqual(['id-1', 'id-2']);
          expect(Date.now() - started).toBeGreaterThanOrEqual(900);
        });

        it('bad credentials are tracker_auth_error', async () => {
          const r = remote();
          r.failNext(50, 401);
          await expectTrackerError(tracker.fetchCandidateIssues(), 'tracker_auth_error');
        });

        it('a server that keeps failing is a retryable error, and the next read after it recovers succeeds', async () => {
          const r = remote();
          r.failNext(50, 503);
          const error = await tracker.fetchCandidateIssues().then(
            () => null,
            (err: unknown) => err,
          );
          expect(error).toBeInstanceOf(TrackerError);
          expect(['tracker_api_error', 'tracker_transport_error']).toContain((error as TrackerError).kind);
          r.heal();
          expect(ids(await tracker.fetchCandidateIssues())).toEqual(['id-1', 'id-2']);
        });

        it('empty lists make no request', async () => {
          const r = remote();
          const before = r.requestCount();
          expect(await tracker.fetchIssuesByStates([])).toEqual([]);
          expect(await tracker.fetchIssueStatesByIds([])).toEqual([]);
          expect(await tracker.fetchIssueStatesByIdentifiers([])).toEqual([]);
          expect(r.requestCount()).toBe(before);
        });
      });

    describe('corrupt backing data', () => {
      it('every read of corrupt data is a payload error, never an empty result', async (ctx) => {
        if (fixture.corrupt === undefined) {
          ctx.skip();
          return;
        }
        await fixture.corrupt();
        await expectTrackerError(tracker.fetchCandidateIssues(), 'tracker_payload_error');
        await expectTrackerError(tracker.fetchIssueById('id-1'), 'tracker_payload_error');
        await expectTrackerError(tracker.fetchIssuesByStates(['Todo']), 'tracker_payload_error');
        await expectTrackerError(tracker.fetchIssueStatesByIds(['id-1']), 'tracker_payload_error');
        await expectTrackerError(tracker.fetchIssueStatesByIdentifiers(['KEY-1']), 'tracker_payload_error');
        await expectTrackerError(tracker.fetchIssueComments('id-1'), 'tracker_payload_error');
      });
    });
  });
}
