/**
 * Conformance harness for the GitHub tracker: seeds the fake GitHub with the suite's issues
 * (state as a label, terminal issues closed, repository labels for every configured state)
 * and builds the tracker through the registry, as the service would.
 *
 * The suite speaks of ids such as `id-1` and identifiers such as `KEY-1`, comment ids such
 * as `cm-1`, and priorities; GitHub numbers its issues and comments and has no priority. A
 * thin translating wrapper maps the suite's ids to issue numbers on the way in and back on
 * the way out, and reports the seed's priority (the tracker itself always reports null).
 * Nothing else is translated: states, labels, comments, blockers and errors are the
 * tracker's own.
 */
import type { Issue, IssueComment } from '../../../src/domain/issue.js';
import type { IssueStateReading, TrackerAdapter, TrackerSettings } from '../../../src/domain/tracker.js';
import { trackerKind } from '../../../src/tracker/registry.js';
import '../../../src/tracker/kinds.js';
import type {
  ConformanceSeed,
  SeedSnapshot,
  TrackerHarness,
} from '../../../internal-contracts/tracker/conformance.js';
import { type FakeGithub, startFakeGithub } from '../../support/fake-github/server.js';

/** Issues per page the GitHub tracker asks for. */
const GITHUB_PAGE_SIZE = 100;

/** Settings for a tracker over `fake` with the given states and block. */
export function githubSettings(
  fake: FakeGithub,
  states: Pick<
    TrackerSettings,
    'activeStates' | 'terminalStates' | 'handoffState' | 'inProgressState' | 'blockedState'
  >,
  options: Record<string, unknown> = {},
  queryFilter = '',
): TrackerSettings {
  return {
    kind: 'github',
    endpoint: fake.url,
    apiKey: fake.token,
    project: `${fake.owner}/${fake.repo}`,
    queryFilter,
    assignee: null,
    requiredLabels: [],
    ...states,
    options: { min_write_interval_ms: 0, ...options },
    baseDir: '/',
  };
}

/** The tracker the registry builds for `settings`. */
export async function createGithubTracker(settings: TrackerSettings): Promise<TrackerAdapter> {
  const create = trackerKind('github')?.create;
  if (create === undefined) throw new Error('github tracker kind is not registered with create');
  return create(settings);
}

/** The state the fake's labels and open/closed flag stand for (written apart from the adapter). */
export function storedState(fake: FakeGithub, number: number, seed: ConformanceSeed): string {
  const issue = fake.issue(number);
  const configured = [
    ...seed.activeStates,
    ...seed.terminalStates,
    seed.handoffState,
    seed.blockedState,
  ].filter((s): s is string => s !== null);
  const labels = issue.labels.filter((l) => configured.some((s) => s.toLowerCase() === l.toLowerCase()));
  if (labels.length > 1) throw new Error(`issue #${number} carries two state labels: ${labels.join(', ')}`);
  if (labels[0] !== undefined) return labels[0];
  return (issue.state === 'open' ? seed.activeStates[0] : seed.terminalStates[0]) ?? issue.state;
}

export const githubHarness: TrackerHarness = {
  overHttp: true,
  async setup(seed) {
    const fake = await startFakeGithub();
    for (const state of [...seed.activeStates, ...seed.terminalStates, seed.handoffState, seed.blockedState])
      if (state !== null) fake.addLabel(state);
    fake.addLabel('urgent');
    const numberOf = new Map<string, number>();
    const seedOf = new Map<number, string>();
    const commentIds = new Map<string, string>();
    for (const issue of seed.issues) {
      const terminal = seed.terminalStates.some((s) => s.toLowerCase() === issue.state.toLowerCase());
      const n = fake.addIssue({
        title: issue.title,
        labels: [...issue.labels, issue.state],
        state: terminal ? 'closed' : 'open',
      });
      numberOf.set(issue.id, n);
      seedOf.set(n, issue.id);
    }
    for (const issue of seed.issues) {
      const stored = fake.issue(numberOf.get(issue.id) as number);
      stored.blockedBy = issue.blockedBy.map((b) => numberOf.get(b.id) as number);
      stored.comments = issue.comments.map((c, i) => {
        const id = 900 + Number(numberOf.get(issue.id)) * 10 + i;
        commentIds.set(String(id), c.id);
        return { id, user: c.author, body: c.body, created_at: c.createdAt };
      });
    }
    // An open pull request in an active state: never an issue.
    fake.addIssue({ title: 'a pull request', labels: [seed.activeStates[0] as string], pull: true });

    const seedById = new Map(seed.issues.map((i) => [i.id, i]));
    const stateNames = [...seed.activeStates, ...seed.terminalStates, seed.handoffState, seed.blockedState];
    const isStateLabel = (label: string) =>
      stateNames.some((st) => st?.toLowerCase() === label.toLowerCase());
    const identifierOf = (n: string) => seedById.get(seedOf.get(Number(n)) ?? '')?.identifier;
    const toTracker = (id: string) => String(numberOf.get(id) ?? id);
    const fromTrackerId = (n: string) => seedOf.get(Number(n)) ?? n;
    const comment = (c: IssueComment): IssueComment => ({ ...c, id: commentIds.get(c.id) ?? c.id });
    const issueBack = (issue: Issue): Issue => {
      const id = fromTrackerId(issue.id);
      return {
        ...issue,
        id,
        identifier: identifierOf(issue.identifier) ?? issue.identifier,
        priority: seedById.get(id)?.priority ?? null,
        blockedBy: issue.blockedBy.map((b) => ({
          ...b,
          id: fromTrackerId(b.id),
          identifier: identifierOf(b.identifier) ?? b.identifier,
        })),
        comments: issue.comments === null ? null : issue.comments.map(comment),
      };
    };
    const readingBack = (r: IssueStateReading): IssueStateReading => ({
      ...r,
      id: fromTrackerId(r.id),
      identifier: identifierOf(r.identifier) ?? r.identifier,
    });
    const byIdentifier = new Map(seed.issues.map((i) => [i.identifier, i.id]));

    const inner = await createGithubTracker(githubSettings(fake, seed));
    const tracker: TrackerAdapter = {
      fetchCandidateIssues: async () => (await inner.fetchCandidateIssues()).map(issueBack),
      fetchIssueById: async (id) => issueBack(await inner.fetchIssueById(toTracker(id))),
      fetchIssuesByStates: async (states) => (await inner.fetchIssuesByStates(states)).map(issueBack),
      fetchIssueStatesByIds: async (ids) =>
        (await inner.fetchIssueStatesByIds(ids.map(toTracker))).map(readingBack),
      fetchIssueStatesByIdentifiers: async (identifiers) =>
        (
          await inner.fetchIssueStatesByIdentifiers(
            identifiers.map((k) => toTracker(byIdentifier.get(k) ?? `missing-${k}`)),
          )
        ).map(readingBack),
      fetchIssueComments: async (id) => (await inner.fetchIssueComments(toTracker(id))).map(comment),
      transitionIssue: (id, state) => inner.transitionIssue(toTracker(id), state),
      commentIssue: (id, body) => inner.commentIssue(toTracker(id), body),
      addLabel: (id, label) => inner.addLabel(toTracker(id), label),
    };
    return {
      tracker,
      async readBack(): Promise<SeedSnapshot> {
        return {
          issues: seed.issues.map((s) => {
            const n = numberOf.get(s.id) as number;
            const stored = fake.issue(n);
            return {
              id: s.id,
              state: storedState(fake, n, seed),
              labels: stored.labels.filter(
                (l) =>
                  ![...seed.activeStates, ...seed.terminalStates, seed.handoffState, seed.blockedState].some(
                    (st) => st?.toLowerCase() === l.toLowerCase(),
                  ),
              ),
              comments: stored.comments.map((c) => ({ author: c.user, body: c.body })),
            };
          }),
        };
      },
      async corrupt() {
        fake.corrupt = true;
      },
      async setStateDirectly(id, state) {
        // As a person would in GitHub: swap the state label, and close or reopen the issue.
        const issue = fake.issue(numberOf.get(id) as number);
        issue.labels = [...issue.labels.filter((l) => !isStateLabel(l)), state];
        issue.state = seed.terminalStates.some((t) => t.toLowerCase() === state.toLowerCase())
          ? 'closed'
          : 'open';
        issue.updated_at = new Date().toISOString();
      },
      remote: {
        requestCount: () => fake.requests.length,
        pageSize: GITHUB_PAGE_SIZE,
        async addCandidates(count) {
          const added: string[] = [];
          for (let i = 0; i < count; i++)
            added.push(
              String(fake.addIssue({ title: `more ${i}`, labels: [seed.activeStates[0] as string] })),
            );
          return added;
        },
        async malform(id) {
          fake.issue(numberOf.get(id) as number).malformed = true;
        },
        failNext: (count, status, retryAfterS) => fake.failNext(count, status, () => true, retryAfterS),
        heal: () => fake.heal(),
      },
      async cleanup() {
        await fake.close();
      },
    };
  },
};
