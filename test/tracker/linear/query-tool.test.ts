import { buildSchema, graphqlSync } from 'graphql';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TrackerQueryAnswer } from '../../../src/domain/tracker.js';
import { LinearQueryTool, MAX_QUERY_CHARS } from '../../../src/tracker/linear/query-tool.js';
import { type FakeIssue, type FakeLinear, startFakeLinear } from '../../support/fake-linear/server.js';
import { trackerOver } from './helpers.js';

let fake: FakeLinear;
let slug: string;

beforeEach(async () => {
  fake = await startFakeLinear();
  slug = fake.project.slugId;
});

afterEach(async () => {
  await fake.close();
});

const tool = (options: Parameters<typeof trackerOver>[1] = {}) => {
  const queryTool = trackerOver(fake, options).tracker.queryTool;
  if (queryTool === undefined) throw new Error('the linear tracker has no query tool');
  return queryTool;
};
const inProject = () => `project: { slugId: { eq: "${slug}" } }`;
const introspections = () =>
  fake.requests.filter((r) => r.operationName === 'IntrospectionQuery' && r.status === 200).length;
/** Requests that ran a query of the agent's (not the introspection). */
const executed = () => fake.requests.filter((r) => r.operationName !== 'IntrospectionQuery').length;

function refusal(answer: TrackerQueryAnswer): { reason: string; message: string } {
  if (answer.ok) throw new Error(`expected a refusal, got ${JSON.stringify(answer.data)}`);
  return { reason: answer.reason, message: answer.message };
}

function data(answer: TrackerQueryAnswer): unknown {
  if (!answer.ok) throw new Error(`expected data, got ${answer.reason}: ${answer.message}`);
  return answer.data;
}

/** A second project with one issue in it (its title must never reach an answer). */
function elsewhere(): FakeIssue {
  const other = fake.addProject({ name: 'Secret project' });
  return fake.addIssue({ title: 'classified title', project: other.slugId, description: 'classified' });
}

describe('the tool', () => {
  it('is named linear_graphql and its description names the project and shows a scoped example', () => {
    const t = tool();
    expect(t.name).toBe('linear_graphql');
    expect(t.description).toContain(`scoped to the project ${slug}`);
    expect(t.description).toContain(`issues(filter: { project: { slugId: { eq: "${slug}" } } }, first: 10)`);
    expect(t.description).toMatch(/tracker_comment and tracker_transition/);
    expect(t.description).toMatch(/forbidden/);
  });
});

describe('answers', () => {
  it('reads the project with variables, without any added key', async () => {
    const answer = await tool().run('query P($id: String!) { project(id: $id) { name slugId } }', {
      id: slug,
    });
    expect(data(answer)).toEqual({ project: { name: 'Orchestrator', slugId: slug } });
    expect(JSON.stringify(answer)).not.toContain('orchScope');
  });

  it("reads the project's issues through a filter, with nested objects and fragments", async () => {
    fake.addIssue({ title: 'first', state: 'Todo', labels: ['bug'] });
    fake.addIssue({ title: 'second', state: 'In Progress' });
    const answer = await tool().run(
      `query Mine($slug: String!, $first: Int) {
        issues(filter: { project: { slugId: { eq: $slug } } }, first: $first) {
          nodes { ...Fields }
          edges { cursor node { identifier } }
          pageInfo { hasNextPage }
        }
      }
      fragment Fields on Issue { identifier title state { name } labels { nodes { name } } team { key } }`,
      { slug, first: 10 },
    );
    const issues = (data(answer) as { issues: { nodes: unknown[]; edges: unknown[] } }).issues;
    expect(issues.nodes).toEqual([
      {
        identifier: 'ENG-1',
        title: 'first',
        state: { name: 'Todo' },
        labels: { nodes: [{ name: 'bug' }] },
        team: { key: 'ENG' },
      },
      {
        identifier: 'ENG-2',
        title: 'second',
        state: { name: 'In Progress' },
        labels: { nodes: [] },
        team: { key: 'ENG' },
      },
    ]);
    expect(issues.edges).toHaveLength(2);
    expect(JSON.stringify(answer)).not.toContain('orchScope');
  });

  it("reads one of the project's issues with its comments, their authors and their issue", async () => {
    const issue = fake.addIssue({ title: 'mine' });
    fake.addComment(issue.id, { body: 'looks good' });
    const answer = await tool().run(
      'query($id: String!) { issue(id: $id) { identifier comments { nodes { body user { name } issue { identifier } } } } }',
      { id: issue.id },
    );
    expect(data(answer)).toEqual({
      issue: {
        identifier: 'ENG-1',
        comments: {
          nodes: [{ body: 'looks good', user: { name: 'Orchestrator Bot' }, issue: { identifier: 'ENG-1' } }],
        },
      },
    });
  });

  it('reads workspace metadata and the schema', async () => {
    const t = tool();
    const teams = await t.run(
      '{ teams { nodes { key states(first: 3) { nodes { name } } } } viewer { name } }',
      {},
    );
    expect(data(teams)).toMatchObject({
      teams: { nodes: [{ key: 'ENG' }] },
      viewer: { name: 'Orchestrator Bot' },
    });
    const labels = await t.run(
      '{ issueLabels(filter: { team: { key: { eq: "ENG" } } }) { nodes { name } } }',
      {},
    );
    expect(data(labels)).toEqual({ issueLabels: { nodes: [] } });
    const schema = await t.run('{ __type(name: "Issue") { name fields { name } } }', {});
    expect(data(schema)).toMatchObject({ __type: { name: 'Issue' } });
  });

  it('refuses an answer too large to hand back, asking for less', async () => {
    for (let i = 0; i < 60; i++) fake.addIssue({ title: `big ${i}`, description: 'x'.repeat(5000) });
    const answer = await tool().run(
      `{ issues(filter: { ${inProject()} }, first: 100) { nodes { description } } }`,
      {},
    );
    expect(refusal(answer)).toMatchObject({
      reason: 'invalid',
      message: expect.stringMatching(/smaller first/),
    });
  });
});

describe('the scope, in the answer', () => {
  it('refuses an issue without a project', async () => {
    const loose = fake.addIssue({ title: 'loose', project: null });
    const answer = await tool().run('query($id: String!) { issue(id: $id) { id } }', { id: loose.id });
    expect(refusal(answer)).toMatchObject({ reason: 'forbidden', message: expect.stringContaining('ENG-1') });
  });

  it("refuses another project's issue read by id, and that project itself", async () => {
    const hidden = elsewhere();
    const t = tool();
    const byId = refusal(await t.run(`{ issue(id: "${hidden.id}") { title } }`, {}));
    expect(byId).toMatchObject({
      reason: 'forbidden',
      message: expect.stringContaining(fake.identifierOf(hidden)),
    });
    expect(byId.message).not.toContain('classified');
    const project = [...fake.projects.values()].find((p) => p.slugId !== slug);
    const other = refusal(await t.run(`{ project(id: "${project?.slugId}") { name } }`, {}));
    expect(other.reason).toBe('forbidden');
    expect(other.message).not.toContain('Secret');
  });

  it("refuses an own issue's parent or blocker in another project, but not the relation itself", async () => {
    const hidden = elsewhere();
    const mine = fake.addIssue({ title: 'mine', parentId: hidden.id, blockedBy: [hidden.id] });
    const t = tool();
    const vars = { id: mine.id };
    const parent = await t.run('query($id: String!) { issue(id: $id) { parent { title } } }', vars);
    expect(refusal(parent).reason).toBe('forbidden');
    const blocker = await t.run(
      'query($id: String!) { issue(id: $id) { inverseRelations { nodes { type issue { title } } } } }',
      vars,
    );
    expect(refusal(blocker).reason).toBe('forbidden');
    const relation = await t.run(
      'query($id: String!) { issue(id: $id) { title inverseRelations { nodes { type } } } }',
      vars,
    );
    expect(data(relation)).toEqual({
      issue: { title: 'mine', inverseRelations: { nodes: [{ type: 'blocks' }] } },
    });
  });

  it("refuses a comment read through another project's issue", async () => {
    const hidden = elsewhere();
    fake.addComment(hidden.id, { body: 'secret comment' });
    const answer = await tool().run(`{ issue(id: "${hidden.id}") { comments { nodes { body } } } }`, {});
    const { reason, message } = refusal(answer);
    expect(reason).toBe('forbidden');
    expect(message).not.toContain('secret comment');
  });
});

describe('the scope, in the query', () => {
  it('refuses a mutation before sending anything, and nothing is written', async () => {
    const issue = fake.addIssue({ title: 'mine' });
    const answer = await tool().run(
      `mutation { commentCreate(input: { issueId: "${issue.id}", body: "hi" }) { success } }`,
      {},
    );
    expect(refusal(answer)).toMatchObject({
      reason: 'forbidden',
      message: expect.stringMatching(/tracker_comment and tracker_transition/),
    });
    expect(fake.commentsOf(issue)).toEqual([]);
    expect(fake.requests).toEqual([]);
  });

  it('refuses a type outside the allowlist, naming it', async () => {
    const answer = refusal(await tool().run('{ organization { name } }', {}));
    expect(answer.reason).toBe('forbidden');
    expect(answer.message).toContain('organization returns Organization');
    expect(executed()).toBe(0);
  });

  it('refuses a listing without the project before running it, and takes it filtered', async () => {
    fake.addIssue({ title: 'mine' });
    elsewhere();
    const t = tool();
    const all = refusal(await t.run('{ issues(first: 50) { nodes { identifier title } } }', {}));
    expect(all.reason).toBe('forbidden');
    expect(all.message).toContain(`project: { slugId: { eq: "${slug}" } }`);
    // Paging alone would say whether other projects' issues exist.
    const paged = refusal(await t.run('{ issues(first: 1) { pageInfo { hasNextPage } } }', {}));
    expect(paged.reason).toBe('forbidden');
    const children = refusal(
      await t.run('{ viewer { id } issue(id: "ENG-1") { children { nodes { id } } } }', {}),
    );
    expect(children.message).toContain('Issue.children');
    expect(executed()).toBe(0);
    const mine = await t.run(`{ issues(filter: { ${inProject()} }, first: 50) { nodes { title } } }`, {});
    expect(data(mine)).toEqual({ issues: { nodes: [{ title: 'mine' }] } });
  });

  it('refuses a listing that filters without the project, so a refusal cannot probe other projects', async () => {
    elsewhere();
    const t = tool();
    const probe = refusal(
      await t.run('{ issues(filter: { title: { contains: "classified" } }) { nodes { id } } }', {}),
    );
    expect(probe.reason).toBe('forbidden');
    expect(probe.message).toContain(`project: { slugId: { eq: "${slug}" } }`);
    const either = refusal(
      await t.run(
        `{ issues(filter: { or: [{ ${inProject()} }, { project: { name: { eq: "Secret project" } } }] }) { nodes { id } } }`,
        {},
      ),
    );
    expect(either.reason).toBe('forbidden');
    const wrongSlug = refusal(
      await t.run('{ issues(filter: { project: { slugId: { eq: "someother" } } }) { nodes { id } } }', {}),
    );
    expect(wrongSlug.reason).toBe('forbidden');
    expect(executed()).toBe(0);
    const anded = await t.run(`query($f: IssueFilter) { issues(filter: $f) { nodes { title } } }`, {
      f: { and: [{ project: { slugId: { eq: slug } } }, { title: { contains: 'classified' } }] },
    });
    expect(data(anded)).toEqual({ issues: { nodes: [] } });
  });

  it('refuses a filter that reaches other issues through a relation', async () => {
    const answer = refusal(
      await tool().run(
        `{ issues(filter: { ${inProject()}, parent: { title: { startsWith: "c" } } }) { nodes { id } } }`,
        {},
      ),
    );
    expect(answer.reason).toBe('forbidden');
    expect(answer.message).toContain('issues(filter).parent');
    expect(executed()).toBe(0);
  });

  it('refuses an invalid query: syntax, unknown field, wrong variables, two operations, a reserved alias, too long', async () => {
    const t = tool();
    expect(refusal(await t.run('{ issues { nodes { id }', {})).reason).toBe('invalid');
    const unknown = refusal(await t.run('{ viewer { shoeSize } }', {}));
    expect(unknown).toMatchObject({ reason: 'invalid', message: expect.stringContaining('shoeSize') });
    expect(refusal(await t.run('query($id: String!) { issue(id: $id) { id } }', {})).reason).toBe('invalid');
    expect(refusal(await t.run('query A { viewer { id } } query B { viewer { id } }', {})).reason).toBe(
      'invalid',
    );
    const alias = refusal(await t.run('{ viewer { orchScopeType: name } }', {}));
    expect(alias).toMatchObject({ reason: 'invalid', message: expect.stringContaining('orchScope') });
    const long = `{ viewer { id } }${' '.repeat(MAX_QUERY_CHARS)}`;
    expect(refusal(await t.run(long, {})).reason).toBe('invalid');
    expect(executed()).toBe(0);
  });
});

describe('the schema and failures', () => {
  it('introspects the schema once across calls', async () => {
    const t = tool();
    await t.run('{ viewer { id } }', {});
    await t.run('{ teams { nodes { key } } }', {});
    await t.run('{ organization { name } }', {});
    expect(introspections()).toBe(1);
  });

  it('does not keep a failed introspection: the next call tries again', async () => {
    const t = tool();
    fake.failNext(4, 500);
    const first = refusal(await t.run('{ viewer { id } }', {}));
    expect(first).toMatchObject({ reason: 'failed', message: expect.stringContaining('500') });
    expect(data(await t.run('{ viewer { name } }', {}))).toEqual({ viewer: { name: 'Orchestrator Bot' } });
    expect(introspections()).toBe(1);
  });

  it('fails on a transport failure or a hang, never with the key in the message', async () => {
    const t = tool({ timeoutMs: 100 });
    await t.run('{ viewer { id } }', {});
    fake.failNext(4, 502);
    const down = refusal(await t.run('{ viewer { id } }', {}));
    expect(down.reason).toBe('failed');
    fake.hangNext(4);
    const hung = refusal(await t.run('{ viewer { id } }', {}));
    expect(hung).toMatchObject({ reason: 'failed', message: expect.stringContaining('no answer') });
    fake.failNext(1, 400, { message: `the key ${fake.token} is not valid here` });
    const echoed = refusal(await t.run('{ viewer { id } }', {}));
    expect(echoed.reason).toBe('failed');
    expect(echoed.message).toContain('[redacted]');
    for (const m of [down.message, hung.message, echoed.message]) expect(m).not.toContain(fake.token);
  });

  it('fails with the message of a GraphQL error in the answer', async () => {
    const answer = refusal(await tool().run('{ issue(id: "no-such-issue") { id } }', {}));
    expect(answer).toMatchObject({ reason: 'failed', message: expect.stringMatching(/not found/i) });
  });
});

/**
 * Rules the fake's slice of the schema cannot show, against a few more of Linear's own types,
 * fields and filters (names as in Linear's published schema), served by graphql-js directly.
 */
describe('against a wider slice of Linear', () => {
  const SLUG = 'a1b2c3d4e5f6';
  const sdl = /* GraphQL */ `
    scalar JSONObject
    type PageInfo { endCursor: String hasNextPage: Boolean! }
    type Organization { id: ID! name: String! }
    type Cycle { id: ID! number: Float! }
    type Project {
      id: ID!
      issues(filter: IssueFilter, first: Int): IssueConnection!
      name: String!
      slugId: String!
    }
    type ProjectConnection { nodes: [Project!]! pageInfo: PageInfo! }
    type User { assignedIssues(filter: IssueFilter, first: Int): IssueConnection! id: ID! name: String! }
    type UserConnection { nodes: [User!]! pageInfo: PageInfo! }
    type Team {
      currentProgress: JSONObject!
      id: ID!
      issues(filter: IssueFilter, first: Int): IssueConnection!
      key: String!
      organization: Organization!
    }
    type Issue {
      comments(filter: CommentFilter, first: Int): CommentConnection!
      cycle: Cycle
      id: ID!
      identifier: String!
      project: Project
      title: String!
    }
    type IssueConnection { nodes: [Issue!]! pageInfo: PageInfo! }
    type Comment { body: String! id: ID! issue: Issue }
    type CommentConnection { nodes: [Comment!]! pageInfo: PageInfo! }
    input StringComparator { contains: String eq: String }
    input NumberComparator { eq: Float }
    input ProjectFilter { and: [ProjectFilter!] name: StringComparator slugId: StringComparator }
    input NullableProjectFilter { issues: IssueCollectionFilter name: StringComparator slugId: StringComparator }
    input NullableCycleFilter { number: NumberComparator }
    input IssueFilter {
      and: [IssueFilter!]
      assignee: NullableUserFilter
      cycle: NullableCycleFilter
      or: [IssueFilter!]
      project: NullableProjectFilter
      team: TeamFilter
      title: StringComparator
    }
    input NullableIssueFilter { project: NullableProjectFilter title: StringComparator }
    input IssueCollectionFilter { every: IssueFilter some: IssueFilter }
    input UserFilter { assignedIssues: IssueCollectionFilter name: StringComparator }
    input NullableUserFilter { assignedIssues: IssueCollectionFilter name: StringComparator }
    input TeamFilter { issues: IssueCollectionFilter key: StringComparator }
    input CommentFilter { body: StringComparator issue: NullableIssueFilter user: UserFilter }
    type Query {
      comments(filter: CommentFilter, first: Int): CommentConnection!
      issueVcsBranchSearch(branchName: String!): Issue
      notificationsUnreadCount: Int!
      organization: Organization!
      project(id: String!): Project!
      projects(filter: ProjectFilter, first: Int): ProjectConnection!
      teams: [Team!]!
      users(filter: UserFilter, first: Int): UserConnection!
    }
  `;
  const schema = buildSchema(sdl);
  const empty = { nodes: [], pageInfo: { hasNextPage: false, endCursor: null } };
  const project = { id: 'p1', name: 'Mine', slugId: SLUG, issues: empty };
  const root = {
    comments: empty,
    users: empty,
    projects: { ...empty, nodes: [project] },
    project,
    teams: [{ id: 't1', key: 'ENG', issues: empty }],
  };
  let sent: string[];
  const t = () => {
    sent = [];
    return new LinearQueryTool(
      {
        async request(_what, document, variables) {
          sent.push(document);
          const result = graphqlSync({
            schema,
            source: document,
            variableValues: variables,
            rootValue: root,
          });
          if (result.errors !== undefined) throw new Error(result.errors.map((e) => e.message).join('; '));
          return result.data as Record<string, unknown>;
        },
      },
      SLUG,
      (text) => text,
    );
  };
  const mine = `project: { slugId: { eq: "${SLUG}" } }`;
  const refused = async (query: string) => {
    const tool = t();
    const answer = refusal(await tool.run(query, {}));
    expect(sent).toHaveLength(1); // the introspection only
    return answer;
  };

  it.each([
    ['a leaf of the query root', '{ notificationsUnreadCount }', 'notificationsUnreadCount'],
    ['a JSON summary on a team', '{ teams { key currentProgress } }', 'Team.currentProgress'],
    ['an unreadable type under a readable one', '{ teams { organization { name } } }', 'Organization'],
    [
      'a listing of issues under a team without the project',
      '{ teams { issues { nodes { id } } } }',
      'Team.issues',
    ],
    ['projects listed without the project', '{ projects { nodes { name } } }', `project(id: "${SLUG}")`],
    [
      'projects filtered by name only',
      '{ projects(filter: { name: { contains: "x" } }) { nodes { name } } }',
      'projects(filter)',
    ],
    [
      'comments searched without the project',
      '{ comments(filter: { body: { contains: "x" } }) { nodes { id } } }',
      'issue: { project:',
    ],
    [
      'a read by a search key',
      '{ issueVcsBranchSearch(branchName: "eng-1-x") { id } }',
      'issueVcsBranchSearch(branchName)',
    ],
    [
      'users filtered by the issues assigned to them',
      '{ users(filter: { assignedIssues: { some: { title: { contains: "x" } } } }) { nodes { name } } }',
      'users(filter).assignedIssues',
    ],
    [
      "a project's issues filtered by a cycle",
      `{ project(id: "${SLUG}") { issues(filter: { cycle: { number: { eq: 1 } } }) { nodes { id } } } }`,
      'Cycle',
    ],
    [
      'issues filtered through their team to other issues',
      `{ teams { issues(filter: { ${mine}, team: { issues: { some: { title: { contains: "x" } } } } }) { nodes { id } } } }`,
      'team.issues',
    ],
    [
      'another project condition beside the project',
      `{ teams { issues(filter: { ${mine}, or: [{ project: { name: { contains: "x" } } }] }) { nodes { id } } } }`,
      'issues(filter).or[0].project must be exactly',
    ],
    [
      "comments filtered by their author's issues",
      `{ comments(filter: { issue: { ${mine} }, user: { assignedIssues: { some: { title: { contains: "x" } } } } }) { nodes { id } } }`,
      'comments(filter).user.assignedIssues',
    ],
  ])('refuses %s', async (_what, query, named) => {
    const answer = await refused(query);
    expect(answer.reason).toBe('forbidden');
    expect(answer.message).toContain(named);
  });

  it.each([
    [
      'issues of a team, kept to the project',
      `{ teams { key issues(filter: { ${mine} }, first: 5) { nodes { id } } } }`,
    ],
    [
      'the project listed by its slug',
      `{ projects(filter: { and: [{ slugId: { eq: "${SLUG}" } }] }) { nodes { name } } }`,
    ],
    [
      "the project's issues filtered freely on their own fields",
      `{ project(id: "${SLUG}") { issues(filter: { title: { contains: "x" }, assignee: { name: { eq: "Ada" } } }) { nodes { id } } } }`,
    ],
    [
      'comments kept to the project',
      `{ comments(filter: { issue: { ${mine} }, body: { contains: "x" } }) { nodes { body } } }`,
    ],
    ['users by name', '{ users(filter: { name: { eq: "Ada" } }) { nodes { name } } }'],
  ])('runs %s', async (_what, query) => {
    const tool = t();
    data(await tool.run(query, {}));
    expect(sent).toHaveLength(2);
    expect(sent[1]).toContain('orchScopeType: __typename');
  });
});
