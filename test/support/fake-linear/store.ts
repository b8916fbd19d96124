/**
 * The fake Linear workspace's data: teams with their workflow states, projects, users (the
 * API key's own is `viewer`), workspace and team labels, issues, comments and relations,
 * with the seeding and read-back helpers tests use. No HTTP here (server.ts) and no GraphQL
 * (resolvers.ts): a test can read what a write left behind without asking through the API.
 */
import { randomUUID } from 'node:crypto';

export interface FakeTeam {
  id: string;
  key: string;
  name: string;
}

export interface FakeState {
  id: string;
  teamId: string;
  name: string;
  /** triage, backlog, unstarted, started, completed, canceled. */
  type: string;
  position: number;
}

export interface FakeProject {
  id: string;
  name: string;
  slugId: string;
}

export interface FakeUser {
  id: string;
  name: string;
  displayName: string;
  email: string;
}

export interface FakeLabel {
  id: string;
  name: string;
  /** null: a workspace label. */
  teamId: string | null;
}

export interface FakeComment {
  id: string;
  issueId: string;
  body: string;
  userId: string | null;
  createdAt: string;
}

export interface FakeRelation {
  id: string;
  /** blocks, duplicate, related, similar. */
  type: string;
  /** The issue the relation starts from (for `blocks`: the blocker). */
  issueId: string;
  relatedIssueId: string;
}

export interface FakeIssue {
  id: string;
  teamId: string;
  number: number;
  title: string;
  description: string | null;
  /** 0 none, 1 urgent … 4 low. */
  priority: number;
  stateId: string;
  projectId: string | null;
  assigneeId: string | null;
  parentId: string | null;
  labelIds: string[];
  createdAt: string;
  updatedAt: string;
}

/** What `addIssue` takes; names stand for the entities (state, labels) and are looked up. */
export interface IssueSeed {
  title: string;
  /** Team key; the default team when absent. */
  team?: string;
  /** Project slug id; the default project when absent, none when null. */
  project?: string | null;
  /** State name in the issue's team (any casing); the team's first unstarted state when absent. */
  state?: string;
  description?: string | null;
  priority?: number;
  /** Label names; a name no label has becomes a new workspace label. */
  labels?: string[];
  assigneeId?: string | null;
  parentId?: string | null;
  /** Ids of issues that block this one (relations of type `blocks`). */
  blockedBy?: string[];
  /** Linear ids are UUIDs; a test may choose its own. */
  id?: string;
  number?: number;
  createdAt?: string;
}

/** The workspace a store starts with. */
export interface StoreOptions {
  /** Key of the default team. */
  teamKey?: string;
  /** Slug id of the default project. */
  projectSlug?: string;
  /** State names of the default team, in workflow order (types guessed from the names). */
  states?: string[];
}

/** The default team's workflow. */
export const DEFAULT_STATES = [
  'Backlog',
  'Todo',
  'In Progress',
  'Human Review',
  'Blocked',
  'Done',
  'Canceled',
  'Duplicate',
];

export class LinearStore {
  readonly teams = new Map<string, FakeTeam>();
  readonly states = new Map<string, FakeState>();
  readonly projects = new Map<string, FakeProject>();
  readonly users = new Map<string, FakeUser>();
  readonly labels = new Map<string, FakeLabel>();
  readonly issues = new Map<string, FakeIssue>();
  readonly comments: FakeComment[] = [];
  readonly relations: FakeRelation[] = [];
  /** The user the API key belongs to. */
  readonly viewer: FakeUser;
  /** The team issues go to by default. */
  readonly team: FakeTeam;
  /** The project issues go to by default. */
  readonly project: FakeProject;
  /** Seeded times start here and move a second per seeded entity, so creation order is stable. */
  private clock = Date.parse('2026-01-01T00:00:00Z');

  constructor(options: StoreOptions = {}) {
    this.viewer = this.addUser({ name: 'Orchestrator Bot', displayName: 'orchestrator' });
    this.team = this.addTeam({ key: options.teamKey ?? 'ENG', states: options.states ?? DEFAULT_STATES });
    this.project = this.addProject({ name: 'Orchestrator', slugId: options.projectSlug ?? '3f9c1a7b2e4d' });
  }

  /** An ISO time for something happening now, never before the seeded history. */
  nowIso(): string {
    return new Date(Math.max(Date.now(), this.clock + 1)).toISOString();
  }

  // ---------------------------------------------------------------- seeding

  addUser(spec: { name: string; displayName?: string; email?: string; id?: string }): FakeUser {
    const user: FakeUser = {
      id: spec.id ?? randomUUID(),
      name: spec.name,
      displayName: spec.displayName ?? spec.name,
      email:
        spec.email ?? `${(spec.displayName ?? spec.name).toLowerCase().replace(/\W+/g, '.')}@example.com`,
    };
    this.users.set(user.id, user);
    return user;
  }

  addTeam(spec: { key: string; name?: string; states?: string[] }): FakeTeam {
    const team: FakeTeam = { id: randomUUID(), key: spec.key, name: spec.name ?? `Team ${spec.key}` };
    this.teams.set(team.id, team);
    for (const name of spec.states ?? DEFAULT_STATES) this.addState(team.key, name);
    return team;
  }

  /** Adds a workflow state to a team; its type is guessed from the name unless given. */
  addState(teamKey: string, name: string, type?: string): FakeState {
    const team = this.teamByKey(teamKey);
    const position = [...this.states.values()].filter((s) => s.teamId === team.id).length;
    const state: FakeState = {
      id: randomUUID(),
      teamId: team.id,
      name,
      type: type ?? guessType(name),
      position,
    };
    this.states.set(state.id, state);
    return state;
  }

  addProject(spec: { name: string; slugId?: string }): FakeProject {
    const project: FakeProject = {
      id: randomUUID(),
      name: spec.name,
      slugId: spec.slugId ?? randomUUID().replace(/-/g, '').slice(0, 12),
    };
    this.projects.set(project.id, project);
    return project;
  }

  /** Adds a label; `team` is a team key, absent or null for a workspace label. */
  addLabel(spec: { name: string; team?: string | null; id?: string }): FakeLabel {
    const teamId = spec.team === undefined || spec.team === null ? null : this.teamByKey(spec.team).id;
    const label: FakeLabel = { id: spec.id ?? randomUUID(), name: spec.name, teamId };
    this.labels.set(label.id, label);
    return label;
  }

  addIssue(seed: IssueSeed): FakeIssue {
    const team = seed.team === undefined ? this.team : this.teamByKey(seed.team);
    const number =
      seed.number ??
      1 + Math.max(0, ...[...this.issues.values()].filter((i) => i.teamId === team.id).map((i) => i.number));
    const project =
      seed.project === null
        ? null
        : seed.project === undefined
          ? this.project
          : [...this.projects.values()].find((p) => p.slugId === seed.project);
    if (project === undefined) throw new Error(`fake Linear: no project ${String(seed.project)}`);
    const state =
      seed.state === undefined
        ? this.teamStates(team.id).find((s) => s.type === 'unstarted')
        : this.stateNamed(team.id, seed.state);
    if (state === undefined) throw new Error(`fake Linear: team ${team.key} has no state "${seed.state}"`);
    this.clock += 1000;
    const created = seed.createdAt ?? new Date(this.clock).toISOString();
    const issue: FakeIssue = {
      id: seed.id ?? randomUUID(),
      teamId: team.id,
      number,
      title: seed.title,
      description: seed.description ?? null,
      priority: seed.priority ?? 0,
      stateId: state.id,
      projectId: project?.id ?? null,
      assigneeId: seed.assigneeId ?? null,
      parentId: seed.parentId ?? null,
      labelIds: (seed.labels ?? []).map((name) => this.labelFor(team.id, name).id),
      createdAt: created,
      updatedAt: created,
    };
    this.issues.set(issue.id, issue);
    for (const blocker of seed.blockedBy ?? []) this.addBlocker(blocker, issue.id);
    return issue;
  }

  addComment(
    issueRef: string,
    spec: { body: string; userId?: string | null; id?: string; createdAt?: string },
  ): FakeComment {
    const issue = this.issue(issueRef);
    this.clock += 1000;
    const comment: FakeComment = {
      id: spec.id ?? randomUUID(),
      issueId: issue.id,
      body: spec.body,
      userId: spec.userId === undefined ? this.viewer.id : spec.userId,
      createdAt: spec.createdAt ?? new Date(this.clock).toISOString(),
    };
    this.comments.push(comment);
    return comment;
  }

  /** Records that `blockerRef` blocks `blockedRef` (a `blocks` relation from the blocker). */
  addBlocker(blockerRef: string, blockedRef: string): FakeRelation {
    const relation: FakeRelation = {
      id: randomUUID(),
      type: 'blocks',
      issueId: this.issue(blockerRef).id,
      relatedIssueId: this.issue(blockedRef).id,
    };
    this.relations.push(relation);
    return relation;
  }

  /** Moves an issue to the state of that name in its team (as a person in Linear would). */
  setState(issueRef: string, name: string): void {
    const issue = this.issue(issueRef);
    const state = this.stateNamed(issue.teamId, name);
    if (state === undefined) throw new Error(`fake Linear: no state "${name}" in the issue's team`);
    issue.stateId = state.id;
    this.touch(issue);
  }

  // ---------------------------------------------------------------- reading back

  /** The stored issue by id or identifier (`ENG-3`). */
  issue(ref: string): FakeIssue {
    const issue = this.findIssue(ref);
    if (issue === undefined) throw new Error(`fake Linear: no issue ${ref}`);
    return issue;
  }

  identifierOf(issue: FakeIssue): string {
    return `${this.teams.get(issue.teamId)?.key ?? '?'}-${issue.number}`;
  }

  stateOf(issueRef: string | FakeIssue): string {
    const issue = typeof issueRef === 'string' ? this.issue(issueRef) : issueRef;
    return this.states.get(issue.stateId)?.name ?? '?';
  }

  labelsOf(issueRef: string | FakeIssue): string[] {
    const issue = typeof issueRef === 'string' ? this.issue(issueRef) : issueRef;
    return issue.labelIds.map((id) => this.labels.get(id)?.name ?? '?');
  }

  commentsOf(issueRef: string | FakeIssue): FakeComment[] {
    const issue = typeof issueRef === 'string' ? this.issue(issueRef) : issueRef;
    return this.comments.filter((c) => c.issueId === issue.id);
  }

  // ---------------------------------------------------------------- lookups

  /** The issue with this id or identifier (any casing). */
  findIssue(ref: string): FakeIssue | undefined {
    const byId = this.issues.get(ref);
    if (byId !== undefined) return byId;
    const wanted = ref.toUpperCase();
    return [...this.issues.values()].find((i) => this.identifierOf(i).toUpperCase() === wanted);
  }

  teamByKey(key: string): FakeTeam {
    const team = [...this.teams.values()].find((t) => t.key.toLowerCase() === key.toLowerCase());
    if (team === undefined) throw new Error(`fake Linear: no team ${key}`);
    return team;
  }

  /** A team's workflow states in workflow order. */
  teamStates(teamId: string): FakeState[] {
    return [...this.states.values()]
      .filter((s) => s.teamId === teamId)
      .sort((a, b) => a.position - b.position);
  }

  stateNamed(teamId: string, name: string): FakeState | undefined {
    return this.teamStates(teamId).find((s) => s.name.toLowerCase() === name.trim().toLowerCase());
  }

  /** The team's label of that name, else a workspace label, else a new workspace label (seeding only). */
  private labelFor(teamId: string, name: string): FakeLabel {
    const named = [...this.labels.values()].filter((l) => l.name.toLowerCase() === name.toLowerCase());
    return (
      named.find((l) => l.teamId === teamId) ??
      named.find((l) => l.teamId === null) ??
      this.addLabel({ name })
    );
  }

  /** Marks an issue changed now (never earlier than its last change). */
  touch(issue: FakeIssue): void {
    issue.updatedAt = new Date(Math.max(Date.now(), Date.parse(issue.updatedAt) + 1)).toISOString();
  }
}

function guessType(name: string): string {
  switch (name.toLowerCase()) {
    case 'triage':
      return 'triage';
    case 'backlog':
      return 'backlog';
    case 'todo':
      return 'unstarted';
    case 'done':
      return 'completed';
    case 'canceled':
    case 'cancelled':
    case 'duplicate':
      return 'canceled';
    default:
      return 'started';
  }
}
