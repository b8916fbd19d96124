/**
 * Resolvers for schema.ts over a LinearStore. Each entity is served as a view: plain fields
 * plus functions for the fields with arguments (graphql-js calls a function member with the
 * field's arguments), so connections page and filter per request exactly as asked. Writes
 * (`issueUpdate`, `issueAddLabel`, `commentCreate`) check what Linear checks (the state and
 * the label belong to the issue's team, the issue exists) and change the store.
 */
import { randomUUID } from 'node:crypto';
import { inputError, notFound } from './errors.js';
import { compare, type FieldMatchers, matches } from './filter.js';
import type {
  FakeComment,
  FakeIssue,
  FakeLabel,
  FakeProject,
  FakeRelation,
  FakeState,
  FakeTeam,
  FakeUser,
  LinearStore,
} from './store.js';

const PRIORITY_LABELS = ['No priority', 'Urgent', 'High', 'Medium', 'Low'];
const DEFAULT_PAGE = 50;
/** The workspace the API key belongs to. */
const ORGANIZATION = { id: '0b6f1c9e-5a43-4c1e-9d3f-7a2b8c4d5e6f', name: 'Fake Workspace', urlKey: 'fake' };

/** The resolvers of one fake; `lastSyncId` grows with every write, as Linear's does. */
export class LinearResolvers {
  private lastSyncId = 1000;

  constructor(private readonly store: LinearStore) {}

  /** The root value: one resolver per Query and Mutation field. */
  root(): Record<string, unknown> {
    return {
      issue: ({ id }: { id: string }) => this.issueView(this.mustFindIssue(id)),
      issues: (args: ConnectionArgs & { filter?: unknown; orderBy?: string }) => {
        const order = args.orderBy === 'updatedAt' ? 'updatedAt' : 'createdAt';
        const all = [...this.store.issues.values()]
          .filter((i) => matches(i, args.filter, this.issueFields()))
          .sort((a, b) => a[order].localeCompare(b[order]) || a.number - b.number);
        return connection(all, args, (i) => this.issueView(i));
      },
      viewer: () => this.userView(this.store.viewer),
      organization: () => ({ ...ORGANIZATION }),
      workflowStates: (args: ConnectionArgs & { filter?: unknown }) =>
        connection(
          [...this.store.states.values()].filter((s) => matches(s, args.filter, this.stateFields())),
          args,
          (s) => this.stateView(s),
        ),
      issueLabels: (args: ConnectionArgs & { filter?: unknown }) =>
        connection(
          [...this.store.labels.values()].filter((l) => matches(l, args.filter, this.labelFields())),
          args,
          (l) => this.labelView(l),
        ),
      team: ({ id }: { id: string }) => {
        const team = this.store.teams.get(id) ?? [...this.store.teams.values()].find((t) => t.key === id);
        if (team === undefined) throw notFound('Team');
        return this.teamView(team);
      },
      teams: (args: ConnectionArgs & { filter?: unknown }) =>
        connection(
          [...this.store.teams.values()].filter((t) => matches(t, args.filter, this.teamFields())),
          args,
          (t) => this.teamView(t),
        ),
      project: ({ id }: { id: string }) => {
        const project =
          this.store.projects.get(id) ?? [...this.store.projects.values()].find((p) => p.slugId === id);
        if (project === undefined) throw notFound('Project');
        return this.projectView(project);
      },
      issueUpdate: ({ id, input }: { id: string; input: Record<string, unknown> }) =>
        this.issueUpdate(id, input),
      issueAddLabel: ({ id, labelId }: { id: string; labelId: string }) => {
        const issue = this.mustFindIssue(id);
        const label = this.store.labels.get(labelId);
        if (label === undefined) throw notFound('IssueLabel');
        if (label.teamId !== null && label.teamId !== issue.teamId)
          throw inputError("Label does not belong to the issue's team");
        if (!issue.labelIds.includes(label.id)) issue.labelIds.push(label.id);
        this.store.touch(issue);
        return this.payload({ issue: this.issueView(issue) });
      },
      commentCreate: ({ input }: { input: Record<string, unknown> }) => {
        if (typeof input.issueId !== 'string') throw inputError('issueId is required');
        const issue = this.mustFindIssue(input.issueId);
        if (typeof input.body !== 'string' || input.body.trim() === '')
          throw inputError('Comment body is empty');
        if (typeof input.id === 'string' && this.store.comments.some((c) => c.id === input.id))
          throw inputError('Comment id already exists');
        const comment: FakeComment = {
          id: typeof input.id === 'string' ? input.id : randomUUID(),
          issueId: issue.id,
          body: input.body,
          userId: this.store.viewer.id,
          createdAt: this.store.nowIso(),
        };
        this.store.comments.push(comment);
        this.store.touch(issue);
        return this.payload({ comment: this.commentView(comment) });
      },
    };
  }

  private issueUpdate(id: string, input: Record<string, unknown>): Record<string, unknown> {
    const issue = this.mustFindIssue(id);
    if (typeof input.stateId === 'string') {
      const state = this.store.states.get(input.stateId);
      if (state === undefined) throw notFound('WorkflowState');
      if (state.teamId !== issue.teamId) throw inputError("State does not belong to the issue's team");
      issue.stateId = state.id;
    }
    if (typeof input.title === 'string') issue.title = input.title;
    if (input.description !== undefined) issue.description = (input.description as string | null) ?? null;
    if (typeof input.priority === 'number') issue.priority = input.priority;
    if (input.assigneeId !== undefined) issue.assigneeId = (input.assigneeId as string | null) ?? null;
    if (input.parentId !== undefined) issue.parentId = (input.parentId as string | null) ?? null;
    if (Array.isArray(input.labelIds)) issue.labelIds = this.knownLabels(input.labelIds as string[]);
    if (Array.isArray(input.addedLabelIds))
      for (const labelId of this.knownLabels(input.addedLabelIds as string[]))
        if (!issue.labelIds.includes(labelId)) issue.labelIds.push(labelId);
    if (Array.isArray(input.removedLabelIds))
      issue.labelIds = issue.labelIds.filter((l) => !(input.removedLabelIds as string[]).includes(l));
    this.store.touch(issue);
    return this.payload({ issue: this.issueView(issue) });
  }

  private payload(fields: Record<string, unknown>): Record<string, unknown> {
    this.lastSyncId += 1;
    return { success: true, lastSyncId: this.lastSyncId, ...fields };
  }

  private knownLabels(ids: string[]): string[] {
    for (const id of ids) if (!this.store.labels.has(id)) throw notFound('IssueLabel');
    return [...new Set(ids)];
  }

  private issueView(issue: FakeIssue): Record<string, unknown> {
    const team = this.store.teams.get(issue.teamId) as FakeTeam;
    const identifier = this.store.identifierOf(issue);
    const slug = issue.title
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 40);
    return {
      id: issue.id,
      identifier,
      number: issue.number,
      title: issue.title,
      description: issue.description,
      priority: issue.priority,
      priorityLabel: PRIORITY_LABELS[issue.priority] ?? 'No priority',
      branchName: `${team.key.toLowerCase()}-${issue.number}-${slug}`,
      url: `https://linear.app/fake/issue/${identifier}/${slug}`,
      createdAt: issue.createdAt,
      updatedAt: issue.updatedAt,
      archivedAt: null,
      labelIds: [...issue.labelIds],
      state: () => this.stateView(this.store.states.get(issue.stateId) as FakeState),
      team: () => this.teamView(team),
      project: () => {
        const project = issue.projectId === null ? undefined : this.store.projects.get(issue.projectId);
        return project === undefined ? null : this.projectView(project);
      },
      assignee: () => {
        const user = issue.assigneeId === null ? undefined : this.store.users.get(issue.assigneeId);
        return user === undefined ? null : this.userView(user);
      },
      parent: () => {
        const parent = issue.parentId === null ? undefined : this.store.issues.get(issue.parentId);
        return parent === undefined ? null : this.issueView(parent);
      },
      children: (args: ConnectionArgs & { filter?: unknown }) =>
        connection(
          [...this.store.issues.values()].filter(
            (i) => i.parentId === issue.id && matches(i, args.filter, this.issueFields()),
          ),
          args,
          (i) => this.issueView(i),
        ),
      labels: (args: ConnectionArgs & { filter?: unknown }) =>
        connection(
          issue.labelIds
            .map((id) => this.store.labels.get(id))
            .filter((l): l is FakeLabel => l !== undefined && matches(l, args.filter, this.labelFields())),
          args,
          (l) => this.labelView(l),
        ),
      comments: (args: ConnectionArgs) =>
        connection(
          this.store.comments.filter((c) => c.issueId === issue.id),
          args,
          (c) => this.commentView(c),
        ),
      relations: (args: ConnectionArgs) =>
        connection(
          this.store.relations.filter((r) => r.issueId === issue.id),
          args,
          (r) => this.relationView(r),
        ),
      inverseRelations: (args: ConnectionArgs) =>
        connection(
          this.store.relations.filter((r) => r.relatedIssueId === issue.id),
          args,
          (r) => this.relationView(r),
        ),
    };
  }

  private stateView(state: FakeState): Record<string, unknown> {
    return {
      id: state.id,
      name: state.name,
      type: state.type,
      position: state.position,
      color: '#bec2c8',
      team: () => this.teamView(this.store.teams.get(state.teamId) as FakeTeam),
    };
  }

  private teamView(team: FakeTeam): Record<string, unknown> {
    return {
      id: team.id,
      key: team.key,
      name: team.name,
      states: (args: ConnectionArgs & { filter?: unknown }) =>
        connection(
          this.store.teamStates(team.id).filter((s) => matches(s, args.filter, this.stateFields())),
          args,
          (s) => this.stateView(s),
        ),
      labels: (args: ConnectionArgs & { filter?: unknown }) =>
        connection(
          [...this.store.labels.values()].filter(
            (l) => l.teamId === team.id && matches(l, args.filter, this.labelFields()),
          ),
          args,
          (l) => this.labelView(l),
        ),
    };
  }

  private projectView(project: FakeProject): Record<string, unknown> {
    return {
      id: project.id,
      name: project.name,
      slugId: project.slugId,
      url: `https://linear.app/fake/project/${project.name.toLowerCase().replace(/\W+/g, '-')}-${project.slugId}`,
    };
  }

  private userView(user: FakeUser): Record<string, unknown> {
    return { ...user, active: true, isMe: user.id === this.store.viewer.id };
  }

  private labelView(label: FakeLabel): Record<string, unknown> {
    return {
      id: label.id,
      name: label.name,
      color: '#5e6ad2',
      isGroup: false,
      createdAt: this.store.nowIso(),
      team: () => {
        const team = label.teamId === null ? undefined : this.store.teams.get(label.teamId);
        return team === undefined ? null : this.teamView(team);
      },
    };
  }

  private commentView(comment: FakeComment): Record<string, unknown> {
    return {
      id: comment.id,
      body: comment.body,
      createdAt: comment.createdAt,
      updatedAt: comment.createdAt,
      user: () => {
        const user = comment.userId === null ? undefined : this.store.users.get(comment.userId);
        return user === undefined ? null : this.userView(user);
      },
      issue: () => {
        const issue = this.store.issues.get(comment.issueId);
        return issue === undefined ? null : this.issueView(issue);
      },
    };
  }

  private relationView(relation: FakeRelation): Record<string, unknown> {
    return {
      id: relation.id,
      type: relation.type,
      createdAt: this.store.nowIso(),
      issue: () => this.issueView(this.store.issues.get(relation.issueId) as FakeIssue),
      relatedIssue: () => this.issueView(this.store.issues.get(relation.relatedIssueId) as FakeIssue),
    };
  }

  private issueFields(): FieldMatchers<FakeIssue> {
    return {
      id: (i, c) => compare(i.id, c),
      number: (i, c) => compare(i.number, c),
      title: (i, c) => compare(i.title, c),
      priority: (i, c) => compare(i.priority, c),
      parent: (i, f) =>
        matches(
          i.parentId === null ? null : (this.store.issues.get(i.parentId) ?? null),
          f,
          this.issueFields(),
        ),
      project: (i, f) =>
        matches(
          i.projectId === null ? null : (this.store.projects.get(i.projectId) ?? null),
          f,
          this.projectFields(),
        ),
      state: (i, f) => matches(this.store.states.get(i.stateId) ?? null, f, this.stateFields()),
      team: (i, f) => matches(this.store.teams.get(i.teamId) ?? null, f, this.teamFields()),
      assignee: (i, f) =>
        matches(
          i.assigneeId === null ? null : (this.store.users.get(i.assigneeId) ?? null),
          f,
          this.userFields(),
        ),
    };
  }

  private stateFields(): FieldMatchers<FakeState> {
    return {
      id: (s, c) => compare(s.id, c),
      name: (s, c) => compare(s.name, c),
      type: (s, c) => compare(s.type, c),
      team: (s, f) => matches(this.store.teams.get(s.teamId) ?? null, f, this.teamFields()),
    };
  }

  private teamFields(): FieldMatchers<FakeTeam> {
    return {
      id: (t, c) => compare(t.id, c),
      key: (t, c) => compare(t.key, c),
      name: (t, c) => compare(t.name, c),
    };
  }

  private projectFields(): FieldMatchers<FakeProject> {
    return {
      id: (p, c) => compare(p.id, c),
      name: (p, c) => compare(p.name, c),
      slugId: (p, c) => compare(p.slugId, c),
    };
  }

  private userFields(): FieldMatchers<FakeUser> {
    return {
      id: (u, c) => compare(u.id, c),
      name: (u, c) => compare(u.name, c),
      displayName: (u, c) => compare(u.displayName, c),
      email: (u, c) => compare(u.email, c),
      isMe: (u, c) => compare(u.id === this.store.viewer.id, c),
    };
  }

  private labelFields(): FieldMatchers<FakeLabel> {
    return {
      id: (l, c) => compare(l.id, c),
      name: (l, c) => compare(l.name, c),
      team: (l, f) =>
        matches(l.teamId === null ? null : (this.store.teams.get(l.teamId) ?? null), f, this.teamFields()),
    };
  }

  private mustFindIssue(ref: string): FakeIssue {
    const issue = this.store.findIssue(ref);
    if (issue === undefined) throw notFound('Issue');
    return issue;
  }
}

interface ConnectionArgs {
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
}

/** A Linear connection over `items`: `first` (default 50) after the `after` cursor. */
function connection<T extends { id: string }>(
  items: readonly T[],
  args: ConnectionArgs,
  view: (item: T) => unknown,
): Record<string, unknown> {
  if (args.last != null || args.before != null) throw inputError('the fake pages forward only (first/after)');
  const first = args.first ?? DEFAULT_PAGE;
  if (first < 0) throw inputError('first must be positive');
  let start = 0;
  if (args.after != null) {
    const index = items.findIndex((item) => cursorOf(item.id) === args.after);
    if (index < 0) throw inputError('Invalid cursor');
    start = index + 1;
  }
  const page = items.slice(start, start + first);
  const last = page.at(-1);
  return {
    nodes: page.map(view),
    edges: page.map((item) => ({ cursor: cursorOf(item.id), node: view(item) })),
    pageInfo: {
      hasNextPage: start + first < items.length,
      hasPreviousPage: start > 0,
      startCursor: page[0] === undefined ? null : cursorOf(page[0].id),
      endCursor: last === undefined ? null : cursorOf(last.id),
    },
  };
}

function cursorOf(id: string): string {
  return Buffer.from(`cursor:${id}`).toString('base64url');
}
