/**
 * Conformance harness for the GitLab tracker: seeds the fake GitLab with the suite's issues
 * (state as a `workflow::` scoped label, terminal issues closed, priority as a `priority::N`
 * label, blockers as `is_blocked_by` links, comments as user notes beside a system note),
 * and builds the tracker through the registry, as the service would.
 *
 * The suite speaks of ids such as `id-1`, identifiers such as `KEY-1` and comment ids such
 * as `cm-1`; GitLab has global ids, iids and note ids. A thin wrapper maps the suite's ids
 * to GitLab's on the way in and back on the way out. Nothing else is translated: states,
 * labels, priorities, comments, blockers and errors are the tracker's own.
 */
import type { Issue, IssueComment } from '../../../src/domain/issue.js';
import type { IssueStateReading, TrackerAdapter, TrackerSettings } from '../../../src/domain/tracker.js';
import { trackerKind } from '../../../src/tracker/registry.js';
import '../../../src/tracker/kinds.js';
import type { SeedSnapshot, TrackerHarness } from '../../../internal-contracts/tracker/conformance.js';
import { type FakeGitlab, startFakeGitlab } from '../../support/fake-gitlab/server.js';

/** Issues per page the harness makes the tracker ask for, so paging is exercised with few issues. */
export const HARNESS_PAGE_SIZE = 5;
export const PREFIX = 'workflow::';

export type States = Pick<
  TrackerSettings,
  'activeStates' | 'terminalStates' | 'handoffState' | 'inProgressState' | 'blockedState'
>;

/** Settings for a tracker over `fake` with the given states and `gitlab:` block. */
export function gitlabSettings(
  fake: FakeGitlab,
  states: States,
  options: Record<string, unknown> = {},
  over: Partial<TrackerSettings> = {},
): TrackerSettings {
  return {
    kind: 'gitlab',
    endpoint: fake.url,
    apiKey: fake.token,
    project: fake.project,
    queryFilter: '',
    assignee: null,
    requiredLabels: [],
    ...states,
    options: { retry_backoff_ms: 10, ...options },
    baseDir: '/',
    ...over,
  };
}

/** The tracker the registry builds for `settings`. */
export async function createGitlabTracker(
  settings: TrackerSettings,
  warn: (message: string) => void = () => {},
): Promise<TrackerAdapter> {
  const create = trackerKind('gitlab')?.create;
  if (create === undefined) throw new Error('gitlab tracker kind is not registered with create');
  return create(settings, { warn });
}

/** Every configured state name. */
export function configuredStates(states: States): string[] {
  return [
    ...states.activeStates,
    ...states.terminalStates,
    states.handoffState,
    states.blockedState,
    states.inProgressState,
  ].filter((s): s is string => s !== null);
}

/** The state the fake's labels and opened/closed flag stand for (derived apart from the adapter). */
export function storedState(fake: FakeGitlab, iid: number, states: States): string {
  const issue = fake.issue(iid);
  const named = configuredStates(states).filter((s) =>
    issue.labels.some((l) => l.toLowerCase() === `${PREFIX}${s}`.toLowerCase()),
  );
  const unique = [...new Set(named.map((s) => s.toLowerCase()))];
  if (unique.length > 1) throw new Error(`issue #${iid} carries two state labels: ${unique.join(', ')}`);
  if (issue.state === 'closed') {
    return named.find((s) => states.terminalStates.includes(s)) ?? states.terminalStates[0] ?? 'closed';
  }
  return named[0] ?? states.activeStates[0] ?? 'opened';
}

/** Seeds the project's labels: one per configured state. */
export function seedStateLabels(fake: FakeGitlab, states: States): void {
  for (const state of configuredStates(states)) fake.addLabel(`${PREFIX}${state.toLowerCase()}`);
}

export const gitlabHarness: TrackerHarness = {
  overHttp: true,
  async setup(seed) {
    const fake = await startFakeGitlab();
    seedStateLabels(fake, seed);
    fake.addLabel('urgent');
    const iidOf = new Map<string, number>();
    const seedOfGlobal = new Map<string, string>();
    const noteIds = new Map<string, string>();
    for (const issue of seed.issues) {
      const terminal = seed.terminalStates.some((s) => s.toLowerCase() === issue.state.toLowerCase());
      const labels = [...issue.labels, `${PREFIX}${issue.state}`];
      if (issue.priority !== null) labels.push(`priority::${issue.priority}`);
      const iid = fake.addIssue({ title: issue.title, labels, state: terminal ? 'closed' : 'opened' });
      iidOf.set(issue.id, iid);
      seedOfGlobal.set(String(fake.issue(iid).id), issue.id);
    }
    let noteId = 9000;
    for (const issue of seed.issues) {
      const stored = fake.issue(iidOf.get(issue.id) as number);
      stored.blockedBy = issue.blockedBy.map((b) => iidOf.get(b.id) as number);
      stored.notes = [];
      issue.comments.forEach((c, n) => {
        // A system note between the user's notes: never a comment.
        if (n === 1)
          stored.notes.push({
            id: noteId++,
            author: 'alice',
            body: 'added label',
            system: true,
            created_at: c.createdAt,
          });
        const id = noteId++;
        noteIds.set(String(id), c.id);
        stored.notes.push({ id, author: c.author, body: c.body, system: false, created_at: c.createdAt });
      });
    }

    const seedById = new Map(seed.issues.map((i) => [i.id, i]));
    const byIdentifier = new Map(seed.issues.map((i) => [i.identifier, i.id]));
    const identifierOfIid = (iid: string) => {
      for (const [id, n] of iidOf) if (String(n) === iid) return seedById.get(id)?.identifier;
      return undefined;
    };
    const toTracker = (id: string) => {
      const iid = iidOf.get(id);
      return iid === undefined ? id : String(fake.issue(iid).id);
    };
    const fromTrackerId = (id: string) => seedOfGlobal.get(id) ?? id;
    const comment = (c: IssueComment): IssueComment => ({ ...c, id: noteIds.get(c.id) ?? c.id });
    const issueBack = (issue: Issue): Issue => ({
      ...issue,
      id: fromTrackerId(issue.id),
      identifier: identifierOfIid(issue.identifier) ?? issue.identifier,
      blockedBy: issue.blockedBy.map((b) => ({
        ...b,
        id: fromTrackerId(b.id),
        identifier: identifierOfIid(b.identifier) ?? b.identifier,
      })),
      comments: issue.comments === null ? null : issue.comments.map(comment),
    });
    const readingBack = (r: IssueStateReading): IssueStateReading => ({
      ...r,
      id: fromTrackerId(r.id),
      identifier: identifierOfIid(r.identifier) ?? r.identifier,
    });

    const inner = await createGitlabTracker(gitlabSettings(fake, seed, { page_size: HARNESS_PAGE_SIZE }));
    const tracker: TrackerAdapter = {
      fetchCandidateIssues: async () => (await inner.fetchCandidateIssues()).map(issueBack),
      fetchIssueById: async (id) => issueBack(await inner.fetchIssueById(toTracker(id))),
      fetchIssuesByStates: async (states) => (await inner.fetchIssuesByStates(states)).map(issueBack),
      fetchIssueStatesByIds: async (ids) =>
        (await inner.fetchIssueStatesByIds(ids.map(toTracker))).map(readingBack),
      fetchIssueStatesByIdentifiers: async (identifiers) =>
        (
          await inner.fetchIssueStatesByIdentifiers(
            identifiers.map((k) => {
              const iid = iidOf.get(byIdentifier.get(k) ?? '');
              return iid === undefined ? `missing-${k}` : `${fake.project}#${iid}`;
            }),
          )
        ).map(readingBack),
      fetchIssueComments: async (id) => (await inner.fetchIssueComments(toTracker(id))).map(comment),
      transitionIssue: (id, state) => inner.transitionIssue(toTracker(id), state),
      commentIssue: (id, body) => inner.commentIssue(toTracker(id), body),
      addLabel: (id, label) => inner.addLabel(toTracker(id), label),
    };
    const controlLabel = (l: string) =>
      l.toLowerCase().startsWith(PREFIX) || l.toLowerCase().startsWith('priority::');
    return {
      tracker,
      async readBack(): Promise<SeedSnapshot> {
        return {
          issues: seed.issues.map((s) => {
            const iid = iidOf.get(s.id) as number;
            return {
              id: s.id,
              state: storedState(fake, iid, seed),
              labels: fake.issue(iid).labels.filter((l) => !controlLabel(l)),
              comments: fake.userNotes(iid).map((n) => ({ author: n.author, body: n.body })),
            };
          }),
        };
      },
      async corrupt() {
        fake.corrupt = true;
      },
      async setStateDirectly(id, state) {
        const issue = fake.issue(iidOf.get(id) as number);
        issue.labels = issue.labels.filter((l) => !l.toLowerCase().startsWith(PREFIX));
        issue.labels.push(`${PREFIX}${state.toLowerCase()}`);
        issue.state = seed.terminalStates.some((s) => s.toLowerCase() === state.toLowerCase())
          ? 'closed'
          : 'opened';
        issue.updated_at = new Date().toISOString();
      },
      remote: {
        requestCount: () => fake.requests.length,
        pageSize: HARNESS_PAGE_SIZE,
        async addCandidates(count) {
          const added: string[] = [];
          for (let i = 0; i < count; i++) {
            const iid = fake.addIssue({ title: `more ${i}`, labels: [`${PREFIX}${seed.activeStates[0]}`] });
            added.push(String(fake.issue(iid).id));
          }
          return added;
        },
        async malform(id) {
          fake.issue(iidOf.get(id) as number).malformed = true;
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
