/**
 * Conformance harness for the Jira tracker: seeds the fake Jira with the suite's issues
 * (project KEY, so keys come out as KEY-1…KEY-5 in seed order; statuses for every configured
 * state; priorities by id; blockers as `Blocks` links; comments as ADF by users named after
 * the suite's authors) and builds the tracker from the same config parser the registry uses,
 * with a short transport backoff so "a server that keeps failing" fails in milliseconds.
 *
 * The suite speaks of ids such as `id-1` and comment ids such as `cm-1`; Jira numbers both.
 * A thin wrapper maps ids on the way in and back on the way out. Identifiers, states,
 * priorities, labels, comments, blockers and errors are the tracker's own, untranslated.
 */

import type {
  ConformanceSeed,
  SeedSnapshot,
  TrackerHarness,
} from '../../../internal-contracts/tracker/conformance.js';
import type { Issue, IssueComment } from '../../../src/domain/issue.js';
import type { IssueStateReading, TrackerAdapter, TrackerSettings } from '../../../src/domain/tracker.js';
import { JiraTracker, type JiraTrackerOptions } from '../../../src/tracker/jira/adapter.js';
import { parseJiraConfig } from '../../../src/tracker/jira/config.js';
import { type FakeJira, plainText, startFakeJira } from '../../support/fake-jira/server.js';

/** Issues per search page in the harness (small, so three pages are cheap). */
export const HARNESS_PAGE_SIZE = 10;

type States = Pick<
  TrackerSettings,
  'activeStates' | 'terminalStates' | 'handoffState' | 'inProgressState' | 'blockedState'
>;

/** Settings for a tracker over `fake`. */
export function jiraSettings(
  fake: FakeJira,
  states: States,
  options: Record<string, unknown> = {},
  over: Partial<TrackerSettings> = {},
): TrackerSettings {
  return {
    kind: 'jira',
    endpoint: fake.url,
    apiKey: fake.token,
    project: fake.projects[0] as string,
    queryFilter: '',
    assignee: null,
    requiredLabels: [],
    ...states,
    options: { email: fake.email, ...options },
    baseDir: '/',
    ...over,
  };
}

/** A JiraTracker over `fake` with test knobs (short backoff, warnings collected). */
export function trackerOver(
  fake: FakeJira,
  states: States,
  block: Record<string, unknown> = {},
  options: JiraTrackerOptions = {},
  over: Partial<TrackerSettings> = {},
): JiraTracker {
  const settings = jiraSettings(fake, states, block, over);
  const { config, issues } = parseJiraConfig(settings, {});
  if (config === null) throw new Error(`bad config: ${JSON.stringify(issues)}`);
  return new JiraTracker(config, settings, { retryBaseMs: 5, ...options });
}

export const jiraHarness: TrackerHarness = {
  overHttp: true,
  async setup(seed: ConformanceSeed) {
    const configured = [
      ...seed.activeStates,
      ...seed.terminalStates,
      seed.handoffState,
      seed.inProgressState,
      seed.blockedState,
    ];
    const statuses: string[] = [];
    for (const s of configured)
      if (s !== null && !statuses.some((x) => x.toLowerCase() === s.toLowerCase())) statuses.push(s);
    const fake = await startFakeJira({ projects: ['KEY', 'OTHER'], statuses });
    const idOf = new Map<string, string>();
    const seedOf = new Map<string, string>();
    const commentIds = new Map<string, string>();
    for (const s of seed.issues) {
      const issue = fake.addIssue({
        summary: s.title,
        status: s.state,
        labels: s.labels,
        priority: s.priority,
      });
      if (issue.key !== s.identifier) throw new Error(`harness: ${s.identifier} came out as ${issue.key}`);
      idOf.set(s.id, issue.id);
      seedOf.set(issue.id, s.id);
    }
    for (const s of seed.issues) {
      for (const b of s.blockedBy) fake.link(b.identifier, s.identifier);
      for (const c of s.comments) {
        const stored = fake.addComment(s.identifier, {
          author: c.author,
          body: c.body,
          created: c.createdAt,
        });
        commentIds.set(stored.id, c.id);
      }
    }
    // An issue of another project in an active state: never a candidate here.
    fake.addIssue({ project: 'OTHER', summary: 'elsewhere', status: seed.activeStates[0] as string });

    const warnings: string[] = [];
    const inner = trackerOver(
      fake,
      seed,
      { page_size: HARNESS_PAGE_SIZE },
      { warn: (m) => warnings.push(m) },
    );
    const toJira = (id: string) => idOf.get(id) ?? id;
    const back = (id: string) => seedOf.get(id) ?? id;
    const comment = (c: IssueComment): IssueComment => ({ ...c, id: commentIds.get(c.id) ?? c.id });
    const issueBack = (issue: Issue): Issue => ({
      ...issue,
      id: back(issue.id),
      blockedBy: issue.blockedBy.map((b) => ({ ...b, id: back(b.id) })),
      comments: issue.comments === null ? null : issue.comments.map(comment),
    });
    const readingBack = (r: IssueStateReading): IssueStateReading => ({ ...r, id: back(r.id) });
    const tracker: TrackerAdapter = {
      fetchCandidateIssues: async () => (await inner.fetchCandidateIssues()).map(issueBack),
      fetchIssueById: async (id) => issueBack(await inner.fetchIssueById(toJira(id))),
      fetchIssuesByStates: async (states) => (await inner.fetchIssuesByStates(states)).map(issueBack),
      fetchIssueStatesByIds: async (ids) =>
        (await inner.fetchIssueStatesByIds(ids.map(toJira))).map(readingBack),
      fetchIssueStatesByIdentifiers: async (keys) =>
        (await inner.fetchIssueStatesByIdentifiers(keys)).map(readingBack),
      fetchIssueComments: async (id) => (await inner.fetchIssueComments(toJira(id))).map(comment),
      transitionIssue: (id, state) => inner.transitionIssue(toJira(id), state),
      commentIssue: (id, body) => inner.commentIssue(toJira(id), body),
      addLabel: (id, label) => inner.addLabel(toJira(id), label),
    };
    return {
      tracker,
      async readBack(): Promise<SeedSnapshot> {
        return {
          issues: seed.issues.map((s) => {
            const stored = fake.issue(s.identifier);
            return {
              id: s.id,
              state: stored.status,
              labels: [...stored.labels],
              comments: stored.comments.map((c) => ({
                author: fake.users.get(c.author)?.displayName ?? c.author,
                body: plainText(c.body),
              })),
            };
          }),
        };
      },
      async corrupt() {
        fake.corrupt = true;
      },
      async setStateDirectly(id, state) {
        fake.setStatus(toJira(id), state);
      },
      remote: {
        requestCount: () => fake.requests.length,
        pageSize: HARNESS_PAGE_SIZE,
        async addCandidates(count) {
          const added: string[] = [];
          for (let i = 0; i < count; i++) {
            const issue = fake.addIssue({
              summary: `more ${i}`,
              status: seed.activeStates[0] as string,
              priority: 3,
            });
            added.push(issue.id);
          }
          return added;
        },
        async malform(id) {
          fake.issue(toJira(id)).malformed = true;
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
