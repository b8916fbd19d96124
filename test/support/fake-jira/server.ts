/**
 * A stateful fake of the Jira Cloud REST v3 API, on node:http at 127.0.0.1, for the endpoints
 * the jira tracker calls, with Jira's request and response shapes:
 *   GET  /rest/api/3/myself
 *   GET  /rest/api/3/search/jql?jql&fields&maxResults&nextPageToken   (enhanced search)
 *   GET  /rest/api/3/issue/{idOrKey}?fields
 *   PUT  /rest/api/3/issue/{idOrKey}                  (`update.labels` add/remove, `fields.labels`)
 *   GET  /rest/api/3/issue/{idOrKey}/transitions
 *   POST /rest/api/3/issue/{idOrKey}/transitions      ({ transition: { id } } → 204)
 *   GET  /rest/api/3/issue/{idOrKey}/comment?startAt&maxResults&orderBy
 *   POST /rest/api/3/issue/{idOrKey}/comment          ({ body: <ADF doc> } → 201)
 * It keeps one or more projects, issues (fields, status, priority, labels, assignee, parent),
 * statuses with a workflow of allowed moves (every status reachable from every other unless
 * `workflow` says otherwise), `Blocks` links, comments stored as ADF, and users. Basic
 * (`email:token`) and Bearer (the same token, as a personal access token) are checked on every
 * request. JQL is parsed by ./jql.ts and refused with a 400 beyond its subset, like Jira.
 *
 * Seeding API (for tests and for other suites that run a WORKFLOW.md against it):
 *   const fake = await startFakeJira({ project: 'PROJ', email, token, statuses });
 *   const a = fake.addIssue({ summary: 'x', status: 'Todo', description: '!ok', priority: 2, labels: ['bug'] });
 *   fake.link(blocker.key, blocked.key);            // blocker "blocks" blocked
 *   fake.addComment(a.key, { author: 'alice', body: 'hi' });
 *   fake.setStatus(a.key, 'Done');                  // behind the tracker's back
 *   fake.workflow = { Todo: ['In Progress'], … };   // restrict moves (null = any to any)
 *   fake.issue(a.key).status / .labels / .comments  // read back (comments: fake.commentTexts(key))
 *   fakeJiraTracker(fake)                            // `tracker:` and `jira:` blocks for a WORKFLOW.md
 * Fault controls: `failNext(count, status, { retryAfterS, match })`, `heal()`, `corrupt = true`
 * (every 200 answer is cut short, not JSON), `issue(k).malformed = true` (served without summary
 * and status), and `requests` (method, path, query, status, auth scheme) for assertions.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackHttp, readBody } from '../loopback-http.js';
import { compileJql, JqlError, type JqlSubject, type JqlWorld } from './jql.js';

/** An ADF document (or any node), as stored. */
export type Adf = { type: string; [key: string]: unknown };

export interface FakeJiraUser {
  accountId: string;
  displayName: string;
  email: string;
}

export interface FakeJiraComment {
  id: string;
  /** Account id of the author. */
  author: string;
  body: Adf;
  created: string;
}

export interface FakeJiraIssue {
  id: string;
  key: string;
  project: string;
  summary: string;
  description: Adf | null;
  status: string;
  /** Priority id ("1" Highest … "5" Lowest) or null. */
  priority: string | null;
  labels: string[];
  /** Account id or null. */
  assignee: string | null;
  issuetype: string;
  /** Id of the parent issue or null. */
  parent: string | null;
  comments: FakeJiraComment[];
  created: string;
  updated: string;
  /** Served without summary and status: a record a tracker must refuse. */
  malformed?: boolean;
}

/** One request as the fake saw it. */
export interface FakeJiraRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  status: number;
  /** `basic`, `bearer`, or `none`. */
  auth: string;
  body: unknown;
  at: number;
}

export interface FakeJiraOptions {
  /** Project keys; the first is the default for addIssue. */
  projects?: string[];
  email?: string;
  token?: string;
  statuses?: string[];
}

interface FaultRule {
  remaining: number;
  status: number;
  retryAfterS?: number;
  match: (method: string, path: string) => boolean;
}

const API = '/rest/api/3';
export const PRIORITIES = ['Highest', 'High', 'Medium', 'Low', 'Lowest'];
const BLOCKS = { id: '10000', name: 'Blocks', inward: 'is blocked by', outward: 'blocks' };
const DONE_LIKE = /^(done|closed|resolved|cancel+ed|won't do)$/i;

export class FakeJira {
  readonly projects: string[];
  readonly email: string;
  readonly token: string;
  readonly statuses: string[];
  readonly users = new Map<string, FakeJiraUser>();
  readonly issues = new Map<string, FakeJiraIssue>();
  /** `Blocks` links: `blocker` blocks `blocked` (issue ids). */
  readonly links: { id: string; blocker: string; blocked: string }[] = [];
  readonly requests: FakeJiraRequest[] = [];
  /** Allowed moves by status name; null = every status reachable from every other. */
  workflow: Record<string, string[]> | null = null;
  /** When true, every 200 answer is cut short (not JSON). */
  corrupt = false;
  /** The account the credentials belong to. */
  readonly me: FakeJiraUser;
  private readonly http = new LoopbackHttp((req, res) => this.handle(req, res));
  private base = '';
  private nextId = 10_001;
  private nextCommentId = 20_001;
  private readonly nextNumber = new Map<string, number>();
  private readonly faults: FaultRule[] = [];
  private clock = Date.parse('2026-01-01T00:00:00Z');

  constructor(options: FakeJiraOptions = {}) {
    this.projects = (options.projects ?? ['PROJ']).map((p) => p.toUpperCase());
    this.email = options.email ?? 'bot@example.com';
    this.token = options.token ?? 'jira_fake_token_0123456789';
    this.statuses = options.statuses ?? ['Todo', 'In Progress', 'Review', 'Blocked', 'Done', 'Cancelled'];
    this.me = this.addUser('Orchestrator Bot', this.email);
  }

  /** The site base URL (`tracker.endpoint`). */
  get url(): string {
    return this.base;
  }

  async start(): Promise<this> {
    this.base = await this.http.start();
    return this;
  }

  async close(): Promise<void> {
    await this.http.close();
  }

  // ---------------------------------------------------------------- seeding and reading

  /** Adds a user; returns it (its accountId is derived from the name). */
  addUser(
    displayName: string,
    email = `${displayName.toLowerCase().replace(/\W+/g, '.')}@example.com`,
  ): FakeJiraUser {
    const accountId = `acc-${displayName.toLowerCase().replace(/\W+/g, '-')}`;
    const user = { accountId, displayName, email };
    this.users.set(accountId, user);
    return user;
  }

  /** Adds an issue; `description` may be plain text (stored as ADF) or an ADF document. */
  addIssue(spec: {
    summary: string;
    status: string;
    project?: string;
    description?: string | Adf | null;
    /** 1 (Highest) … 5 (Lowest), or null. */
    priority?: number | null;
    labels?: string[];
    /** A display name (the user is created when missing) or null. */
    assignee?: string | null;
    issuetype?: string;
    parent?: string | null;
    created?: string;
  }): FakeJiraIssue {
    const project = (spec.project ?? this.projects[0] ?? 'PROJ').toUpperCase();
    const n = (this.nextNumber.get(project) ?? 0) + 1;
    this.nextNumber.set(project, n);
    const id = String(this.nextId++);
    const created = spec.created ?? new Date(this.clock + Number(id) * 1000).toISOString();
    const assignee =
      spec.assignee == null
        ? null
        : (
            [...this.users.values()].find((u) => u.displayName === spec.assignee) ??
            this.addUser(spec.assignee)
          ).accountId;
    const issue: FakeJiraIssue = {
      id,
      key: `${project}-${n}`,
      project,
      summary: spec.summary,
      description:
        spec.description === undefined || spec.description === null
          ? null
          : typeof spec.description === 'string'
            ? textDoc(spec.description)
            : spec.description,
      status: this.statusName(spec.status),
      priority: spec.priority == null ? null : String(spec.priority),
      labels: [...(spec.labels ?? [])],
      assignee,
      issuetype: spec.issuetype ?? 'Task',
      parent: spec.parent == null ? null : this.issue(spec.parent).id,
      comments: [],
      created,
      updated: created,
    };
    this.issues.set(id, issue);
    return issue;
  }

  /** The issue with this id or key. */
  issue(idOrKey: string): FakeJiraIssue {
    const found = this.find(idOrKey);
    if (found === undefined) throw new Error(`fake jira: no issue ${idOrKey}`);
    return found;
  }

  /** `blocker` blocks `blocked` (ids or keys). */
  link(blocker: string, blocked: string): void {
    this.links.push({
      id: String(30_000 + this.links.length),
      blocker: this.issue(blocker).id,
      blocked: this.issue(blocked).id,
    });
  }

  /** Adds a comment by `author` (a display name; created when missing). */
  addComment(
    idOrKey: string,
    comment: { author: string; body: string | Adf; created?: string },
  ): FakeJiraComment {
    const issue = this.issue(idOrKey);
    const user =
      [...this.users.values()].find((u) => u.displayName === comment.author) ?? this.addUser(comment.author);
    const stored = {
      id: String(this.nextCommentId++),
      author: user.accountId,
      body: typeof comment.body === 'string' ? textDoc(comment.body) : comment.body,
      created: comment.created ?? new Date().toISOString(),
    };
    issue.comments.push(stored);
    return stored;
  }

  /** Sets a status behind the tracker's back. */
  setStatus(idOrKey: string, status: string): void {
    const issue = this.issue(idOrKey);
    issue.status = this.statusName(status);
    this.touch(issue);
  }

  /** The comments of an issue as plain text (paragraphs joined by newlines), oldest first. */
  commentTexts(idOrKey: string): string[] {
    return this.issue(idOrKey).comments.map((c) => plainText(c.body));
  }

  // ---------------------------------------------------------------- faults

  /** The next `count` matching requests answer `status` (with Retry-After for a 429 when given). */
  failNext(
    count: number,
    status: number,
    options: { retryAfterS?: number; match?: (method: string, path: string) => boolean } = {},
  ): void {
    this.faults.push({
      remaining: count,
      status,
      ...(options.retryAfterS === undefined ? {} : { retryAfterS: options.retryAfterS }),
      match: options.match ?? (() => true),
    });
  }

  /** Drops every fault still pending. */
  heal(): void {
    this.faults.length = 0;
  }

  // ---------------------------------------------------------------- HTTP

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', this.base);
    const text = await readBody(req);
    let body: unknown = null;
    const header = req.headers.authorization ?? '';
    const scheme = header.startsWith('Basic ') ? 'basic' : header.startsWith('Bearer ') ? 'bearer' : 'none';
    const send = (status: number, answer: unknown, headers: Record<string, string> = {}) => {
      let out = answer === undefined ? '' : JSON.stringify(answer);
      if (this.corrupt && status === 200) out = out.slice(0, Math.max(1, Math.floor(out.length / 2)));
      res.writeHead(status, {
        ...(out === '' ? {} : { 'content-type': 'application/json;charset=UTF-8' }),
        ...headers,
      });
      res.end(out);
      this.requests.push({
        method,
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        status,
        auth: scheme,
        body,
        at: Date.now(),
      });
    };
    const rule = this.faults.find((f) => f.remaining > 0 && f.match(method, url.pathname));
    if (rule !== undefined) {
      rule.remaining -= 1;
      const message =
        rule.status === 429
          ? 'Rate limit exceeded.'
          : rule.status === 401
            ? 'Unauthorized'
            : 'Internal server error';
      send(
        rule.status,
        { errorMessages: [message], errors: {} },
        rule.retryAfterS === undefined ? {} : { 'retry-after': String(rule.retryAfterS) },
      );
      return;
    }
    if (!this.authorised(header)) {
      send(401, {
        errorMessages: ['You are not authenticated. Authentication required to perform this operation.'],
        errors: {},
      });
      return;
    }
    try {
      body = text === '' ? null : (JSON.parse(text) as unknown);
    } catch {
      send(400, { errorMessages: ['Unexpected character in the request body: not JSON.'], errors: {} });
      return;
    }
    const answer = this.route(method, url, body);
    send(answer.status, answer.body);
  }

  private authorised(header: string): boolean {
    const basic = `Basic ${Buffer.from(`${this.email}:${this.token}`).toString('base64')}`;
    return header === basic || header === `Bearer ${this.token}`;
  }

  private route(method: string, url: URL, body: unknown): { status: number; body?: unknown } {
    const path = url.pathname;
    const notFound = (what = 'Issue does not exist or you do not have permission to see it.') => ({
      status: 404,
      body: { errorMessages: [what], errors: {} },
    });
    if (method === 'GET' && path === `${API}/myself`) return { status: 200, body: this.userJson(this.me) };
    if (method === 'GET' && path === `${API}/search/jql`) return this.search(url);
    const match = new RegExp(`^${API}/issue/([^/]+)(?:/(transitions|comment))?$`).exec(path);
    if (match === null) return notFound('Not found');
    const issue = this.find(decodeURIComponent(match[1] as string));
    if (issue === undefined) return notFound();
    const sub = match[2];
    if (sub === undefined) {
      if (method === 'GET') return { status: 200, body: this.issueJson(issue, fieldList(url)) };
      if (method === 'PUT') return this.edit(issue, body);
    }
    if (sub === 'transitions') {
      if (method === 'GET')
        return { status: 200, body: { expand: 'transitions', transitions: this.transitionsOf(issue) } };
      if (method === 'POST') {
        const id = (body as { transition?: { id?: unknown } } | null)?.transition?.id;
        const chosen = this.transitionsOf(issue).find((t) => t.id === id);
        if (chosen === undefined)
          return {
            status: 400,
            body: {
              errorMessages: [`Transition id '${String(id)}' is not valid for this issue.`],
              errors: {},
            },
          };
        issue.status = String(chosen.to.name);
        this.touch(issue);
        return { status: 204 };
      }
    }
    if (sub === 'comment') {
      if (method === 'GET') return this.commentPage(issue, url);
      if (method === 'POST') {
        const doc = (body as { body?: unknown } | null)?.body;
        if (!isDoc(doc))
          return {
            status: 400,
            body: {
              errorMessages: [],
              errors: {
                comment: 'Operation value must be an Atlassian Document (see the Atlassian Document Format)',
              },
            },
          };
        if (plainText(doc).trim() === '')
          return {
            status: 400,
            body: { errorMessages: [], errors: { comment: 'Comment body can not be empty!' } },
          };
        const comment = {
          id: String(this.nextCommentId++),
          author: this.me.accountId,
          body: doc,
          created: new Date().toISOString(),
        };
        issue.comments.push(comment);
        this.touch(issue);
        return { status: 201, body: this.commentJson(comment) };
      }
    }
    return { status: 405, body: { errorMessages: [`${method} is not supported here.`], errors: {} } };
  }

  private search(url: URL): { status: number; body: unknown } {
    const jql = url.searchParams.get('jql') ?? '';
    const maxResults = Math.min(100, Math.max(1, Number(url.searchParams.get('maxResults') ?? 50) || 50));
    const token = url.searchParams.get('nextPageToken');
    let compiled: ReturnType<typeof compileJql>;
    try {
      compiled = compileJql(jql, this.world());
    } catch (error) {
      if (error instanceof JqlError)
        return { status: 400, body: { errorMessages: error.messages, errors: {} } };
      throw error;
    }
    let offset = 0;
    if (token !== null) {
      const decoded = decodeToken(token);
      if (decoded === null || decoded.jql !== jql)
        return {
          status: 400,
          body: { errorMessages: ['The provided next page token is invalid or expired.'], errors: {} },
        };
      offset = decoded.offset;
    }
    const found = [...this.issues.values()]
      .filter((i) => compiled.matches(this.subject(i)))
      .sort((a, b) => compiled.compare(this.subject(a), this.subject(b)));
    const page = found.slice(offset, offset + maxResults);
    const more = offset + maxResults < found.length;
    const fields = fieldList(url);
    return {
      status: 200,
      body: {
        issues: page.map((i) => this.issueJson(i, fields)),
        ...(more ? { nextPageToken: encodeToken(jql, offset + maxResults) } : {}),
        isLast: !more,
      },
    };
  }

  private edit(issue: FakeJiraIssue, body: unknown): { status: number; body?: unknown } {
    const b = (body ?? {}) as { update?: { labels?: unknown }; fields?: { labels?: unknown } };
    const ops = Array.isArray(b.update?.labels) ? (b.update.labels as Record<string, unknown>[]) : [];
    const set = Array.isArray(b.fields?.labels) ? (b.fields.labels as unknown[]) : null;
    const bad = [
      ...ops.flatMap((op) => [op.add, op.remove, ...(Array.isArray(op.set) ? op.set : [])]),
      ...(set ?? []),
    ].find((l) => typeof l === 'string' && /\s/.test(l));
    if (typeof bad === 'string')
      return {
        status: 400,
        body: {
          errorMessages: [],
          errors: { labels: `The label '${bad}' contains spaces which is invalid.` },
        },
      };
    if (set !== null) issue.labels = set.filter((l): l is string => typeof l === 'string');
    for (const op of ops) {
      if (typeof op.add === 'string' && !issue.labels.includes(op.add)) issue.labels.push(op.add);
      if (typeof op.remove === 'string') issue.labels = issue.labels.filter((l) => l !== op.remove);
    }
    this.touch(issue);
    return { status: 204 };
  }

  private commentPage(issue: FakeJiraIssue, url: URL): { status: number; body: unknown } {
    const startAt = Math.max(0, Number(url.searchParams.get('startAt') ?? 0) || 0);
    const maxResults = Math.min(100, Math.max(1, Number(url.searchParams.get('maxResults') ?? 50) || 50));
    const orderBy = url.searchParams.get('orderBy') ?? 'created';
    const sorted = [...issue.comments].sort(
      (a, b) => Date.parse(a.created) - Date.parse(b.created) || Number(a.id) - Number(b.id),
    );
    if (orderBy === '-created') sorted.reverse();
    return {
      status: 200,
      body: {
        startAt,
        maxResults,
        total: sorted.length,
        comments: sorted.slice(startAt, startAt + maxResults).map((c) => this.commentJson(c)),
      },
    };
  }

  private transitionsOf(issue: FakeJiraIssue): {
    id: string;
    name: string;
    to: Record<string, unknown>;
    hasScreen: boolean;
    isGlobal: boolean;
    isInitial: boolean;
    isConditional: boolean;
  }[] {
    const allowed =
      this.workflow === null
        ? this.statuses.filter((s) => s !== issue.status)
        : (Object.entries(this.workflow).find(
            ([from]) => from.toLowerCase() === issue.status.toLowerCase(),
          )?.[1] ?? []);
    return allowed.map((name) => {
      const to = this.statusName(name);
      return {
        id: String((this.statuses.indexOf(to) + 1) * 10 + 1),
        name: `Move to ${to}`,
        to: this.statusJson(to),
        hasScreen: false,
        isGlobal: this.workflow === null,
        isInitial: false,
        isConditional: false,
      };
    });
  }

  // ---------------------------------------------------------------- JSON shapes

  private issueJson(issue: FakeJiraIssue, fields: Set<string> | null): Record<string, unknown> {
    const want = (name: string) => fields === null || fields.has(name) || fields.has('*all');
    const out: Record<string, unknown> = {};
    const blocked = this.links.filter((l) => l.blocked === issue.id || l.blocker === issue.id);
    const all: Record<string, () => unknown> = {
      summary: () => (issue.malformed === true ? null : issue.summary),
      description: () => issue.description,
      status: () => (issue.malformed === true ? undefined : this.statusJson(issue.status)),
      priority: () => (issue.priority === null ? null : this.priorityJson(issue.priority)),
      labels: () => [...issue.labels],
      assignee: () => {
        const user = issue.assignee === null ? undefined : this.users.get(issue.assignee);
        return user === undefined ? null : this.userJson(user);
      },
      issuetype: () => ({ id: '10001', name: issue.issuetype, subtask: false }),
      parent: () => {
        const parent = issue.parent === null ? undefined : this.issues.get(issue.parent);
        return parent === undefined ? undefined : this.refJson(parent);
      },
      issuelinks: () =>
        blocked.map((l) =>
          l.blocked === issue.id
            ? { id: l.id, type: BLOCKS, inwardIssue: this.refJson(this.issue(l.blocker)) }
            : { id: l.id, type: BLOCKS, outwardIssue: this.refJson(this.issue(l.blocked)) },
        ),
      created: () => jiraTime(issue.created),
      updated: () => jiraTime(issue.updated),
      project: () => ({ id: '10000', key: issue.project, name: issue.project }),
    };
    for (const [name, read] of Object.entries(all)) {
      if (!want(name)) continue;
      const value = read();
      if (value !== undefined) out[name] = value;
    }
    return {
      expand: 'renderedFields,names,schema',
      id: issue.id,
      self: `${this.base}${API}/issue/${issue.id}`,
      key: issue.key,
      fields: out,
    };
  }

  private refJson(issue: FakeJiraIssue): Record<string, unknown> {
    return {
      id: issue.id,
      key: issue.key,
      self: `${this.base}${API}/issue/${issue.id}`,
      fields: {
        summary: issue.summary,
        status: this.statusJson(issue.status),
        priority: issue.priority === null ? null : this.priorityJson(issue.priority),
        issuetype: { id: '10001', name: issue.issuetype, subtask: false },
      },
    };
  }

  private statusJson(name: string): Record<string, unknown> {
    const index = this.statuses.indexOf(name);
    const category = DONE_LIKE.test(name)
      ? { id: 3, key: 'done', colorName: 'green', name: 'Done' }
      : index === 0
        ? { id: 2, key: 'new', colorName: 'blue-gray', name: 'To Do' }
        : { id: 4, key: 'indeterminate', colorName: 'yellow', name: 'In Progress' };
    return {
      self: `${this.base}${API}/status/${index + 1}`,
      description: '',
      iconUrl: '',
      name,
      id: String(index + 1),
      statusCategory: category,
    };
  }

  private priorityJson(id: string): Record<string, unknown> {
    return {
      self: `${this.base}${API}/priority/${id}`,
      iconUrl: '',
      name: PRIORITIES[Number(id) - 1] ?? `P${id}`,
      id,
    };
  }

  private userJson(user: FakeJiraUser): Record<string, unknown> {
    return {
      self: `${this.base}${API}/user?accountId=${user.accountId}`,
      accountId: user.accountId,
      accountType: 'atlassian',
      emailAddress: user.email,
      displayName: user.displayName,
      active: true,
      timeZone: 'UTC',
    };
  }

  private commentJson(c: FakeJiraComment): Record<string, unknown> {
    const author = this.users.get(c.author);
    const who = author === undefined ? null : this.userJson(author);
    return {
      self: `${this.base}${API}/comment/${c.id}`,
      id: c.id,
      author: who,
      body: c.body,
      updateAuthor: who,
      created: jiraTime(c.created),
      updated: jiraTime(c.created),
      jsdPublic: true,
    };
  }

  // ---------------------------------------------------------------- helpers

  private find(idOrKey: string): FakeJiraIssue | undefined {
    return (
      this.issues.get(idOrKey) ??
      [...this.issues.values()].find((i) => i.key.toLowerCase() === idOrKey.toLowerCase())
    );
  }

  private statusName(name: string): string {
    const found = this.statuses.find((s) => s.toLowerCase() === name.toLowerCase());
    if (found === undefined)
      throw new Error(`fake jira: no status "${name}" (have ${this.statuses.join(', ')})`);
    return found;
  }

  private touch(issue: FakeJiraIssue): void {
    issue.updated = new Date(Math.max(Date.now(), Date.parse(issue.updated) + 1)).toISOString();
  }

  private world(): JqlWorld {
    return {
      projects: this.projects,
      statuses: this.statuses,
      ids: new Set(this.issues.keys()),
      keys: new Set([...this.issues.values()].map((i) => i.key)),
      currentUser: this.me.accountId,
    };
  }

  private subject(i: FakeJiraIssue): JqlSubject {
    return {
      id: i.id,
      key: i.key,
      project: i.project,
      status: i.status,
      assignee: i.assignee,
      labels: i.labels,
      priority:
        i.priority === null ? null : { id: i.priority, name: PRIORITIES[Number(i.priority) - 1] ?? '' },
      prioritySequence: i.priority === null ? null : Number(i.priority) - 1,
      issuetype: i.issuetype,
      summary: i.summary,
      created: Date.parse(i.created),
      updated: Date.parse(i.updated),
    };
  }
}

/** An ADF document with one paragraph per line. */
export function textDoc(text: string): Adf {
  return {
    type: 'doc',
    version: 1,
    content: text
      .split('\n')
      .map((line) =>
        line === '' ? { type: 'paragraph' } : { type: 'paragraph', content: [{ type: 'text', text: line }] },
      ),
  };
}

/** Text nodes of a document, paragraphs joined by newlines (the fake's own reading, apart from the tracker's). */
export function plainText(node: unknown): string {
  const n = node as { type?: string; text?: string; content?: unknown[] } | null;
  if (n === null || typeof n !== 'object') return '';
  if (n.type === 'text') return n.text ?? '';
  const inner = (n.content ?? []).map(plainText);
  return n.type === 'doc' ? inner.join('\n') : inner.join('');
}

function isDoc(value: unknown): value is Adf {
  const v = value as { type?: unknown; version?: unknown; content?: unknown } | null;
  return (
    typeof v === 'object' && v !== null && v.type === 'doc' && v.version === 1 && Array.isArray(v.content)
  );
}

function fieldList(url: URL): Set<string> | null {
  const fields = url.searchParams.get('fields');
  return fields === null || fields === '' ? null : new Set(fields.split(',').map((f) => f.trim()));
}

/** Jira's timestamp form: `2026-01-01T00:00:00.000+0000`. */
function jiraTime(iso: string): string {
  return new Date(iso).toISOString().replace('Z', '+0000');
}

function encodeToken(jql: string, offset: number): string {
  return Buffer.from(JSON.stringify({ jql, offset })).toString('base64url');
}

function decodeToken(token: string): { jql: string; offset: number } | null {
  try {
    const value = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as {
      jql?: unknown;
      offset?: unknown;
    };
    return typeof value.jql === 'string' && typeof value.offset === 'number'
      ? { jql: value.jql, offset: value.offset }
      : null;
  } catch {
    return null;
  }
}

/** A workflow's `tracker:` block (token from $JIRA_API_TOKEN) and `jira:` block pointing at `fake`. */
export function fakeJiraTracker(fake: FakeJira): {
  tracker: Record<string, unknown>;
  jira: Record<string, unknown>;
} {
  return {
    tracker: {
      kind: 'jira',
      endpoint: fake.url,
      api_key: '$JIRA_API_TOKEN',
      project: fake.projects[0],
      active_states: ['Todo', 'In Progress'],
      terminal_states: ['Done', 'Cancelled'],
      in_progress_state: 'In Progress',
      handoff_state: 'Review',
      blocked_state: 'Blocked',
    },
    jira: { email: fake.email },
  };
}

/** Starts a fake Jira; remember to close it. */
export function startFakeJira(options: FakeJiraOptions = {}): Promise<FakeJira> {
  return new FakeJira(options).start();
}
