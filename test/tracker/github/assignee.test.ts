/**
 * `tracker.assignee` on the github kind: candidates are only the issues assigned to that login,
 * asked of GitHub itself (the issues endpoint's `assignee`, or the search's `assignee:`), and
 * `me` is the token's own user, read once from `GET /user`.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GithubTracker } from '../../../src/tracker/github/adapter.js';
import { parseGithubConfig } from '../../../src/tracker/github/config.js';
import { type FakeGithub, startFakeGithub } from '../../support/fake-github/server.js';
import { githubSettings } from './harness.js';
import { STATES, seedLabels } from './helpers.js';

let fake: FakeGithub;

beforeEach(async () => {
  fake = await startFakeGithub({ login: 'orchestrator-bot' });
  seedLabels(fake);
  fake.addIssue({ title: 'mine', labels: ['Todo'], assignees: ['orchestrator-bot'] });
  fake.addIssue({ title: 'a colleague’s', labels: ['Todo'], assignees: ['octo'] });
  fake.addIssue({ title: 'nobody’s', labels: ['Todo'] });
});

afterEach(async () => {
  await fake.close();
});

function tracker(assignee: string | null, queryFilter = ''): GithubTracker {
  const settings = { ...githubSettings(fake, STATES, {}, queryFilter), assignee };
  const { config, issues } = parseGithubConfig(settings);
  if (config === null) throw new Error(`bad config: ${JSON.stringify(issues)}`);
  return new GithubTracker(config, settings, { searchIntervalMs: 0, retryBaseMs: 10 });
}

const titles = async (t: GithubTracker) => (await t.fetchCandidateIssues()).map((i) => i.title).sort();
const userReads = () => fake.requests.filter((r) => r.method === 'GET' && r.path === '/user').length;

describe('github candidates by assignee', () => {
  it('without an assignee every open candidate is listed, and the token user is never asked for', async () => {
    expect(await titles(tracker(null))).toEqual(['a colleague’s', 'mine', 'nobody’s']);
    expect(userReads()).toBe(0);
  });

  it('a login lists only the issues assigned to it', async () => {
    expect(await titles(tracker('octo'))).toEqual(['a colleague’s']);
    expect(fake.requests.some((r) => r.path.includes('assignee=octo'))).toBe(true);
  });

  it('"me" is the token\'s own user, read from GET /user once however many ticks follow', async () => {
    const t = tracker('me');
    expect(await titles(t)).toEqual(['mine']);
    expect(await titles(t)).toEqual(['mine']);
    expect(userReads()).toBe(1);
  });

  it('with a query filter the search is narrowed by assignee too', async () => {
    expect(await titles(tracker('me', 'label:todo'))).toEqual(['mine']);
    expect(fake.requests.some((r) => r.path.startsWith('/search/issues'))).toBe(true);
  });
});
