/**
 * Cost of polling the github tracker: a repository of 2,000 open issues in the fake GitHub
 * (every tenth one a pull request, all issues in an active state, so all are candidates),
 * polled twice through the real tracker (registry `create`, default settings) without a
 * change in between. Printed per poll: requests sent, how many counted against the rate
 * limit, how many were 304s, candidates and wall time. Target: the second poll counts 0
 * requests against the rate limit (every page a 304 served from the ETag cache).
 */
import type { TrackerSettings } from '../../src/domain/tracker.js';
import { trackerKind } from '../../src/tracker/registry.js';
import '../../src/tracker/kinds.js';
import { startFakeGithub } from '../support/fake-github/server.js';

const ISSUES = 2_000;

export async function githubPoll(): Promise<void> {
  const fake = await startFakeGithub();
  try {
    fake.addLabel('todo');
    for (let i = 1; i <= ISSUES + ISSUES / 10; i++) {
      fake.addIssue({ title: `issue ${i}`, labels: ['todo'], pull: i % 11 === 0 });
    }
    const settings: TrackerSettings = {
      kind: 'github',
      endpoint: fake.url,
      apiKey: fake.token,
      project: `${fake.owner}/${fake.repo}`,
      queryFilter: '',
      assignee: null,
      requiredLabels: [],
      activeStates: ['todo'],
      terminalStates: ['done'],
      handoffState: null,
      inProgressState: null,
      blockedState: null,
      options: {},
      baseDir: '/',
    };
    const create = trackerKind('github')?.create;
    if (create === undefined) throw new Error('github tracker kind has no create');
    const tracker = await create(settings);
    const poll = async (label: string) => {
      const from = fake.requests.length;
      const started = performance.now();
      const candidates = await tracker.fetchCandidateIssues();
      const ms = performance.now() - started;
      const seen = fake.requests.slice(from);
      console.log(
        `${label}: ${seen.length} requests, ${fake.countedSince(from)} counted against the rate limit, ` +
          `${seen.filter((r) => r.status === 304).length} answered 304, ${candidates.length} candidates, ${ms.toFixed(0)} ms`,
      );
      return fake.countedSince(from);
    };
    await poll('first poll ');
    const counted = await poll('second poll');
    console.log(
      `target: second poll counts 0 requests against the rate limit — ${counted === 0 ? 'met' : 'MISSED'}`,
    );
  } finally {
    await fake.close();
  }
}
