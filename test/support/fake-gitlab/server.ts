/**
 * A stateful fake of the GitLab REST API v4 for one project, on node:http at 127.0.0.1.
 * It keeps issues (iid, labels, opened/closed, assignees, weight, web_url), notes (user and
 * system), issue links, project labels and the token's user, and answers with GitLab's
 * request and response shapes where the tracker's correctness depends on them:
 *  - the project is addressed by its URL-encoded path (`group%2Fproject`) or numeric id;
 *  - PRIVATE-TOKEN (or `Authorization: Bearer`) auth, `{"message":"401 Unauthorized"}` otherwise;
 *  - offset pagination with `per_page`/`page`, `x-page`, `x-per-page`, `x-next-page`,
 *    `x-prev-page`, `x-total`, `x-total-pages` and a Link header;
 *  - every 200 GET carries a weak ETag; `If-None-Match` with the current one answers 304;
 *  - `PUT …/issues/:iid` with `add_labels`/`remove_labels` (comma-separated) and
 *    `state_event` close/reopen, which also writes system notes as GitLab does; a label that
 *    does not exist is created (the real API does; the tracker must not rely on it);
 *  - faults on demand: the next N answers with a status (429 with Retry-After), a malformed
 *    issue (no title), corrupt payloads (wrong JSON shapes), and a request log.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackHttp, readBody } from '../loopback-http.js';

export interface FakeNote {
  id: number;
  author: string;
  body: string;
  system: boolean;
  created_at: string;
}

export interface FakeIssue {
  /** Global id. */
  id: number;
  iid: number;
  title: string;
  description: string | null;
  state: 'opened' | 'closed';
  /** Label names as stored (any case). */
  labels: string[];
  assignees: string[];
  weight: number | null;
  notes: FakeNote[];
  /** iids of issues that block this one (`is_blocked_by` links). */
  blockedBy: number[];
  /** Served without a title: a record a tracker must refuse. */
  malformed?: boolean;
  created_at: string;
  updated_at: string;
}

/** One request as the fake saw it. */
export interface FakeRequest {
  method: string;
  /** Path and query as sent. */
  path: string;
  status: number;
  at: number;
  /** Every request header, lowercased (to prove what travelled). */
  headers: Record<string, string>;
}

interface FaultRule {
  match: (method: string, path: string) => boolean;
  remaining: number;
  status: number;
  retryAfterS?: number;
}

export interface FakeGitlabOptions {
  /** Project path, `group/project` by default. */
  project?: string;
  token?: string;
  /** The token's own user. */
  username?: string;
}

type Answer = { status: number; body: unknown; headers?: Record<string, string> };

const PROJECT_ID = 4242;

export class FakeGitlab {
  readonly project: string;
  readonly token: string;
  readonly username: string;
  readonly issues = new Map<number, FakeIssue>();
  /** Project labels by lowercased name → stored name. */
  readonly labels = new Map<string, string>();
  readonly requests: FakeRequest[] = [];
  /** When true, listings and single reads answer JSON of the wrong shape. */
  corrupt = false;
  private readonly http = new LoopbackHttp((req, res) => this.handle(req, res));
  private base = '';
  private nextIid = 1;
  private nextNoteId = 1;
  private readonly faults: FaultRule[] = [];
  private readonly clock = Date.parse('2026-01-01T00:00:00Z');

  constructor(options: FakeGitlabOptions = {}) {
    this.project = options.project ?? 'acme/platform/widgets';
    this.token = options.token ?? 'glpat-fake0123456789abcdef';
    this.username = options.username ?? 'orchestrator-bot';
  }

  /** The instance base URL (`tracker.endpoint`). */
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

  addLabel(name: string): void {
    if (!this.labels.has(name.toLowerCase())) this.labels.set(name.toLowerCase(), name);
  }

  /** Adds an issue and returns its iid (its global id is 50000 + iid). */
  addIssue(spec: Partial<Omit<FakeIssue, 'id' | 'iid'>> & { title: string }): number {
    const iid = this.nextIid++;
    const created = new Date(this.clock + iid * 1000).toISOString();
    for (const label of spec.labels ?? []) this.addLabel(label);
    this.issues.set(iid, {
      description: null,
      state: 'opened',
      labels: [],
      assignees: [],
      weight: null,
      blockedBy: [],
      created_at: created,
      updated_at: created,
      ...spec,
      notes: (spec.notes ?? []).map((n) => ({ ...n })),
      id: 50_000 + iid,
      iid,
    });
    return iid;
  }

  issue(iid: number): FakeIssue {
    const issue = this.issues.get(iid);
    if (issue === undefined) throw new Error(`fake: no issue #${iid}`);
    return issue;
  }

  /** User notes of an issue, oldest first. */
  userNotes(iid: number): FakeNote[] {
    return this.issue(iid).notes.filter((n) => !n.system);
  }

  /** Requests answered 304. */
  get notModifiedCount(): number {
    return this.requests.filter((r) => r.status === 304).length;
  }

  // ---------------------------------------------------------------- faults

  /** The next `times` requests matching answer `status` (429 with `Retry-After: retryAfterS` when given). */
  failNext(
    times: number,
    status = 502,
    match: (method: string, path: string) => boolean = () => true,
    retryAfterS?: number,
  ): void {
    this.faults.push({
      match,
      remaining: times,
      status,
      ...(retryAfterS === undefined ? {} : { retryAfterS }),
    });
  }

  /** Drops every fault still pending. */
  heal(): void {
    this.faults.length = 0;
  }

  // ---------------------------------------------------------------- HTTP

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const rawPath = req.url ?? '/';
    const url = new URL(rawPath, this.base);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers))
      headers[name] = Array.isArray(value) ? value.join(', ') : (value ?? '');
    const bodyText = await readBody(req);
    const send = (status: number, body: unknown, extra: Record<string, string> = {}) => {
      const text = body === undefined || status === 304 ? '' : JSON.stringify(body);
      res.writeHead(status, {
        ...(text === '' ? {} : { 'content-type': 'application/json' }),
        'ratelimit-limit': '2000',
        'ratelimit-remaining': '1999',
        ...extra,
      });
      res.end(text);
      this.requests.push({ method, path: rawPath, status, at: Date.now(), headers });
    };

    const rule = this.faults.find((f) => f.remaining > 0 && f.match(method, url.pathname));
    if (rule !== undefined) {
      rule.remaining -= 1;
      const extra: Record<string, string> =
        rule.retryAfterS === undefined
          ? {}
          : {
              'retry-after': String(rule.retryAfterS),
              'ratelimit-reset': String(Math.ceil(Date.now() / 1000) + rule.retryAfterS),
            };
      send(rule.status, { message: messageFor(rule.status) }, extra);
      return;
    }
    if (method === 'HEAD' || url.pathname === '/api/v4/version') {
      send(200, { version: '17.9.0', revision: 'fake' });
      return;
    }
    const token = headers['private-token'] ?? headers.authorization?.replace(/^Bearer /, '');
    if (token !== this.token) {
      send(401, { message: '401 Unauthorized' });
      return;
    }

    let body: Record<string, unknown> = {};
    if (bodyText !== '') {
      try {
        body = JSON.parse(bodyText) as Record<string, unknown>;
      } catch {
        send(400, { error: 'body is not valid JSON' });
        return;
      }
    }
    const answer = this.route(method, url, body);
    if (method === 'GET' && answer.status === 200) {
      const etag = `W/"${createHash('sha1')
        .update(JSON.stringify(answer.body))
        .update(JSON.stringify(answer.headers ?? {}))
        .digest('hex')}"`;
      if (headers['if-none-match'] === etag) {
        send(304, undefined, { etag, ...(answer.headers ?? {}) });
        return;
      }
      send(200, answer.body, { etag, ...(answer.headers ?? {}) });
      return;
    }
    send(answer.status, answer.body, answer.headers ?? {});
  }

  private route(method: string, url: URL, body: Record<string, unknown>): Answer {
    const segments = url.pathname.split('/').filter(Boolean);
    if (segments[0] !== 'api' || segments[1] !== 'v4') return notFound('404 Not Found');
    const rest = segments.slice(2);
    if (method === 'GET' && rest.length === 1 && rest[0] === 'user') {
      return {
        status: 200,
        body: { id: 7, username: this.username, name: 'Orchestrator Bot', state: 'active' },
      };
    }
    if (rest[0] !== 'projects' || rest[1] === undefined) return notFound('404 Not Found');
    const projectRef = decodeURIComponent(rest[1]);
    if (projectRef !== this.project && projectRef !== String(PROJECT_ID))
      return notFound('404 Project Not Found');
    const sub = rest.slice(2);

    if (sub[0] === 'labels' && sub.length === 1 && method === 'GET') {
      const search = (url.searchParams.get('search') ?? '').toLowerCase();
      const names = [...this.labels.values()].filter((l) => l.toLowerCase().includes(search));
      return this.page(
        url,
        names.map((n) => labelJson(n)),
      );
    }
    if (sub[0] !== 'issues') return notFound('404 Not Found');
    if (sub.length === 1 && method === 'GET') {
      if (this.corrupt) return { status: 200, body: { unexpected: 'shape' } };
      return this.page(
        url,
        this.listed(url).map((i) => this.issueJson(i)),
      );
    }
    const issue = /^\d+$/.test(sub[1] ?? '') ? this.issues.get(Number(sub[1])) : undefined;
    if (issue === undefined) return notFound('404 Issue Not Found');
    if (sub.length === 2) {
      if (method === 'GET') return { status: 200, body: this.corrupt ? [] : this.issueJson(issue) };
      if (method === 'PUT') return this.edit(issue, body);
    }
    if (sub[2] === 'notes' && sub.length === 3) {
      if (method === 'GET') {
        if (this.corrupt) return { status: 200, body: { unexpected: 'shape' } };
        const notes = [...issue.notes];
        // Notes are never edited here, so created_at and updated_at order alike.
        notes.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id - b.id);
        if (url.searchParams.get('sort') !== 'asc') notes.reverse();
        return this.page(
          url,
          notes.map((n) => this.noteJson(n)),
        );
      }
      if (method === 'POST') {
        if (typeof body.body !== 'string' || body.body.trim() === '')
          return { status: 400, body: { error: 'body is missing' } };
        const note = this.note(issue, body.body, false);
        return { status: 201, body: this.noteJson(note) };
      }
    }
    if (sub[2] === 'links' && sub.length === 3 && method === 'GET') {
      if (this.corrupt) return { status: 200, body: { unexpected: 'shape' } };
      const blockers = issue.blockedBy
        .map((iid) => this.issues.get(iid))
        .filter((i): i is FakeIssue => i !== undefined);
      const blocking = [...this.issues.values()].filter((i) => i.blockedBy.includes(issue.iid));
      const linked = [
        ...blockers.map((b) => ({
          ...this.issueJson(b),
          issue_link_id: b.id * 10,
          link_type: 'is_blocked_by',
        })),
        ...blocking.map((b) => ({ ...this.issueJson(b), issue_link_id: b.id * 10 + 1, link_type: 'blocks' })),
      ];
      return { status: 200, body: linked };
    }
    return notFound('404 Not Found');
  }

  private edit(issue: FakeIssue, body: Record<string, unknown>): Answer {
    const list = (value: unknown) =>
      typeof value === 'string'
        ? value
            .split(',')
            .map((l) => l.trim())
            .filter(Boolean)
        : [];
    if (body.state_event !== undefined && body.state_event !== 'close' && body.state_event !== 'reopen')
      return { status: 400, body: { error: 'state_event does not have a valid value' } };
    const removed = list(body.remove_labels).map((l) => l.toLowerCase());
    const before = issue.labels.length;
    issue.labels = issue.labels.filter((l) => !removed.includes(l.toLowerCase()));
    for (const name of list(body.add_labels)) {
      this.addLabel(name);
      if (!issue.labels.some((l) => l.toLowerCase() === name.toLowerCase()))
        issue.labels.push(this.labels.get(name.toLowerCase()) ?? name);
    }
    if (before !== issue.labels.length || body.add_labels !== undefined)
      this.note(issue, 'changed labels', true);
    if (body.state_event === 'close' && issue.state === 'opened') {
      issue.state = 'closed';
      this.note(issue, 'closed', true);
    } else if (body.state_event === 'reopen' && issue.state === 'closed') {
      issue.state = 'opened';
      this.note(issue, 'reopened', true);
    }
    this.touch(issue);
    return { status: 200, body: this.issueJson(issue) };
  }

  private note(issue: FakeIssue, body: string, system: boolean): FakeNote {
    const note = {
      id: this.nextNoteId++,
      author: this.username,
      body,
      system,
      created_at: new Date(Math.max(Date.now(), this.clock + 10_000_000 + this.nextNoteId)).toISOString(),
    };
    issue.notes.push(note);
    this.touch(issue);
    return note;
  }

  private touch(issue: FakeIssue): void {
    issue.updated_at = new Date(Math.max(Date.now(), Date.parse(issue.updated_at) + 1)).toISOString();
  }

  /** Issues for GET /issues: state, labels (all must match), not[labels], search, assignee, iids[]. */
  private listed(url: URL): FakeIssue[] {
    const p = url.searchParams;
    const state = p.get('state') ?? 'all';
    const split = (value: string | null) =>
      (value ?? '')
        .split(',')
        .map((l) => l.trim().toLowerCase())
        .filter(Boolean);
    const labels = split(p.get('labels'));
    const notLabels = split(p.get('not[labels]'));
    const search = (p.get('search') ?? '').toLowerCase();
    const assignee = p.get('assignee_username');
    const iids = p.getAll('iids[]').map(Number);
    const has = (i: FakeIssue, l: string) => i.labels.some((il) => il.toLowerCase() === l);
    const out = [...this.issues.values()].filter(
      (i) =>
        (state === 'all' || i.state === state) &&
        labels.every((l) => has(i, l)) &&
        !notLabels.some((l) => has(i, l)) &&
        (search === '' ||
          i.title.toLowerCase().includes(search) ||
          (i.description ?? '').toLowerCase().includes(search)) &&
        (assignee === null || i.assignees.includes(assignee)) &&
        (iids.length === 0 || iids.includes(i.iid)),
    );
    out.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.iid - b.iid);
    return p.get('sort') === 'asc' ? out : out.reverse();
  }

  private page(url: URL, items: unknown[]): Answer {
    const perPage = Math.min(100, Math.max(1, Number(url.searchParams.get('per_page') ?? 20) || 20));
    const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
    const totalPages = Math.max(1, Math.ceil(items.length / perPage));
    const body = items.slice((page - 1) * perPage, page * perPage);
    const at = (n: number) => {
      const next = new URL(url.href);
      next.searchParams.set('page', String(n));
      next.searchParams.set('per_page', String(perPage));
      return `${this.base}${next.pathname}${next.search}`;
    };
    const links = [`<${at(1)}>; rel="first"`, `<${at(totalPages)}>; rel="last"`];
    if (page < totalPages) links.unshift(`<${at(page + 1)}>; rel="next"`);
    if (page > 1) links.unshift(`<${at(page - 1)}>; rel="prev"`);
    return {
      status: 200,
      body,
      headers: {
        'x-page': String(page),
        'x-per-page': String(perPage),
        'x-next-page': page < totalPages ? String(page + 1) : '',
        'x-prev-page': page > 1 ? String(page - 1) : '',
        'x-total': String(items.length),
        'x-total-pages': String(totalPages),
        link: links.join(', '),
      },
    };
  }

  private noteJson(n: FakeNote): Record<string, unknown> {
    return {
      id: n.id,
      type: null,
      body: n.body,
      author: { id: n.author === this.username ? 7 : 8, username: n.author, name: n.author, state: 'active' },
      created_at: n.created_at,
      updated_at: n.created_at,
      system: n.system,
      noteable_type: 'Issue',
      internal: false,
      confidential: false,
    };
  }

  private issueJson(i: FakeIssue): Record<string, unknown> {
    const webUrl = `https://gitlab.example/${this.project}/-/issues/${i.iid}`;
    return {
      id: i.id,
      iid: i.iid,
      project_id: PROJECT_ID,
      title: i.malformed === true ? null : i.title,
      description: i.description,
      state: i.state,
      created_at: i.created_at,
      updated_at: i.updated_at,
      closed_at: i.state === 'closed' ? i.updated_at : null,
      labels: [...i.labels],
      milestone: null,
      assignees: i.assignees.map((username, n) => ({
        id: 100 + n,
        username,
        name: username,
        state: 'active',
      })),
      assignee: i.assignees[0] === undefined ? null : { id: 100, username: i.assignees[0] },
      author: { id: 8, username: 'reporter', name: 'Reporter', state: 'active' },
      type: 'ISSUE',
      issue_type: 'issue',
      user_notes_count: i.notes.filter((n) => !n.system).length,
      weight: i.weight,
      confidential: false,
      web_url: webUrl,
      references: { short: `#${i.iid}`, relative: `#${i.iid}`, full: `${this.project}#${i.iid}` },
    };
  }
}

function labelJson(name: string): Record<string, unknown> {
  const id = Number.parseInt(createHash('sha1').update(name.toLowerCase()).digest('hex').slice(0, 6), 16);
  return { id, name, color: '#6699cc', description: null, text_color: '#FFFFFF', subscribed: false };
}

function notFound(message: string): Answer {
  return { status: 404, body: { message } };
}

function messageFor(status: number): string {
  if (status === 401) return '401 Unauthorized';
  if (status === 403) return '403 Forbidden';
  if (status === 404) return '404 Not Found';
  if (status === 429) return 'Retry later';
  return `${status} Server Error`;
}

/** A workflow's `tracker:` block pointing the gitlab kind at `fake`, with the states the e2e suite uses. */
export function fakeGitlabTracker(fake: { url: string; project: string }): Record<string, unknown> {
  return {
    kind: 'gitlab',
    endpoint: fake.url,
    api_key: '$GITLAB_TOKEN',
    project: fake.project,
    active_states: ['Todo', 'In Progress'],
    terminal_states: ['Done'],
    in_progress_state: 'In Progress',
    handoff_state: 'Review',
    blocked_state: 'Blocked',
  };
}

/** Starts a fake; remember to close it. */
export function startFakeGitlab(options: FakeGitlabOptions = {}): Promise<FakeGitlab> {
  return new FakeGitlab(options).start();
}
