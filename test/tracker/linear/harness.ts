/**
 * Conformance harness for the Linear tracker: seeds the fake Linear with the suite's issues in
 * one team whose key is the identifiers' prefix (`KEY`) and whose workflow has every
 * configured state, and builds the tracker over it. Linear lets a client choose an issue's
 * id and the fake lets a seed choose its number, so the suite's ids (`id-1`) and identifiers
 * (`KEY-1`) are the tracker's own and nothing is translated: states, labels, comments,
 * blockers, priorities and errors all come from the tracker.
 */
import type {
  ConformanceSeed,
  SeedSnapshot,
  TrackerHarness,
} from '../../../internal-contracts/tracker/conformance.js';
import { type FakeLinear, type FakeUser, startFakeLinear } from '../../support/fake-linear/server.js';
import { trackerOver } from './helpers.js';

/** Issues per page the tracker asks for by default. */
export const LINEAR_PAGE_SIZE = 50;

/** Every configured state once, in the seed's spelling (the first spelling seen wins). */
function workflowStates(seed: ConformanceSeed): string[] {
  const all = [
    ...seed.activeStates,
    ...seed.terminalStates,
    seed.handoffState,
    seed.inProgressState,
    seed.blockedState,
  ].filter((s): s is string => s !== null);
  return all.filter((s, i) => all.findIndex((t) => t.toLowerCase() === s.toLowerCase()) === i);
}

export const linearHarness: TrackerHarness = {
  overHttp: true,
  async setup(seed) {
    const fake: FakeLinear = await startFakeLinear({
      teamKey: 'KEY',
      states: ['Backlog', ...workflowStates(seed)],
    });
    fake.addLabel({ name: 'urgent' });
    const users = new Map<string, FakeUser>();
    const author = (name: string) => {
      const known = users.get(name) ?? fake.addUser({ name });
      users.set(name, known);
      return known;
    };
    for (const issue of seed.issues) {
      fake.addIssue({
        id: issue.id,
        number: Number(issue.identifier.split('-')[1]),
        title: issue.title,
        state: issue.state,
        labels: issue.labels,
        priority: issue.priority ?? 0,
      });
    }
    for (const issue of seed.issues) {
      for (const blocker of issue.blockedBy) fake.addBlocker(blocker.id, issue.id);
      for (const c of issue.comments)
        fake.addComment(issue.id, {
          id: c.id,
          body: c.body,
          userId: author(c.author).id,
          createdAt: c.createdAt,
        });
    }
    // An issue of another project in an active state: never a candidate.
    const elsewhere = fake.addProject({ name: 'Elsewhere' });
    fake.addIssue({
      title: 'another project',
      state: seed.activeStates[0] as string,
      project: elsewhere.slugId,
    });

    const { tracker } = trackerOver(fake, {
      states: {
        activeStates: seed.activeStates,
        terminalStates: seed.terminalStates,
        handoffState: seed.handoffState,
        inProgressState: seed.inProgressState,
        blockedState: seed.blockedState,
      },
    });
    return {
      tracker,
      async readBack(): Promise<SeedSnapshot> {
        return {
          issues: seed.issues.map((s) => ({
            id: s.id,
            state: fake.stateOf(s.id),
            labels: fake.labelsOf(s.id),
            comments: fake.commentsOf(s.id).map((c) => ({
              author: fake.users.get(c.userId ?? '')?.displayName ?? '',
              body: c.body,
            })),
          })),
        };
      },
      async corrupt() {
        fake.corrupt = true;
      },
      async setStateDirectly(id, state) {
        fake.setState(id, state);
      },
      remote: {
        requestCount: () => fake.requests.length,
        pageSize: LINEAR_PAGE_SIZE,
        async addCandidates(count) {
          const added: string[] = [];
          for (let i = 0; i < count; i++)
            added.push(fake.addIssue({ title: `more ${i}`, state: seed.activeStates[0] as string }).id);
          return added;
        },
        async malform(id) {
          fake.malform(id);
        },
        failNext: (count, status, retryAfterS) =>
          fake.failNext(count, status, retryAfterS === undefined ? {} : { retryAfterS }),
        heal: () => fake.heal(),
      },
      async cleanup() {
        await fake.close();
      },
    };
  },
};
