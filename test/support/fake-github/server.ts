/**
 * A stateful fake of the GitHub REST API for one repository, on node:http at 127.0.0.1.
 * It keeps issues (pull requests mixed in, as the issues endpoints return them), repository
 * labels, comments, blockers and parents, and behaves like the real service where the
 * tracker's correctness depends on it:
 *  - listings page with `per_page`/`page` and a Link header (`next`, `last`);
 *  - every GET answers with an ETag; `If-None-Match` with the current one gets a 304 that is
 *    not counted against the rate limit;
 *  - X-RateLimit-Limit/Remaining/Reset/Used on every answer; a spent quota answers 403 with
 *    remaining 0 until the reset;
 *  - adding a label that does not exist creates it silently (the real API does; the tracker
 *    must not rely on that);
 *  - faults on demand: a secondary rate limit (403 + Retry-After), a spent primary quota with a
 *    reset N ms away, any status (5xx) for the next N matching requests, malformed payloads.
 * Octokit reaches it through `baseUrl` = `server.url`.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackHttp, readBody } from '../loopback-http.js';
import { type FakeAnswer, FakePulls } from './pulls.js';

export interface FakeComment {
  id: number;
  user: string;
  body: string;
  created_at: string;
}

export interface FakeIssue {
  number: number;
  title: string;
  body: string | null;
  state: 'open' | 'closed';
  state_reason: string | null;
  /** Label names as stored (any case). */
  labels: string[];
  assignees: string[];
  comments: FakeComment[];
  /** A pull request: returned by the issues endpoints with a `pull_request` key. */
  pull: boolean;
  blockedBy: number[];
  parent: number | null;
  /** Served without a title: a record a tracker must refuse. */
  malformed?: boolean;
  created_at: string;
  updated_at: string;
}

/** One request as the fake saw it. */
export interface FakeRequest {
  method: string;
  path: string;
  status: number;
  /** True when it counted against the rate limit. */
  counted: boolean;
  at: number;
}

type Fault =
  | { kind: 'status'; status: number; message: string; retryAfterS?: number }
  | { kind: 'secondary'; retryAfterS: number };

interface FaultRule {
  match: (method: string, path: string) => boolean;
  remaining: number;
  fault: Fault;
}

export interface FakeGithubOptions {
  owner?: string;
  repo?: string;
  token?: string;
  /** Requests per window (X-RateLimit-Limit). */
  rateLimit?: number;
  /** The login of the token's own user (`GET /user`). */
  login?: string;
}

const DOCS = 'https://docs.github.com/rest';

export class FakeGithub {
  readonly owner: string;
  readonly repo: string;
  readonly token: string;
  /** The token's own user, as `GET /user` answers it. */
  readonly login: string;
  readonly issues = new Map<number, FakeIssue>();
  /** Repository labels by lowercased name → stored name. */
  readonly labels = new Map<string, string>();
  readonly requests: FakeRequest[] = [];
  /** Pull requests, check runs, job logs, reviews and merges (pulls.ts). */
  readonly pulls: FakePulls = new FakePulls(this);
  /** When true, listings answer a malformed payload. */
  corrupt = false;
  private readonly http = new LoopbackHttp((req, res) => this.handle(req, res));
  private base = '';
  private nextNumber = 1;
  private nextCommentId = 1;
  private readonly limit: number;
  private remaining: number;
  private resetAtS: number;
  private readonly faults: FaultRule[] = [];
  private clock = Date.parse('2026-01-01T00:00:00Z');

  constructor(options: FakeGithubOptions = {}) {
    this.owner = options.owner ?? 'acme';
    this.repo = options.repo ?? 'widgets';
    this.token = options.token ?? 'ghp_fake_token_0123456789';
    this.login = options.login ?? 'orchestrator-bot';
    this.limit = options.rateLimit ?? 5000;
    this.remaining = this.limit;
    this.resetAtS = Math.floor(Date.now() / 1000) + 3600;
  }

  /** The API base URL (Octokit's baseUrl). */
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

  /** Adds an issue (or a pull request) and returns its number. */
  addIssue(spec: Partial<Omit<FakeIssue, 'number'>> & { title: string }): number {
    const number = this.nextNumber++;
    const created = new Date(this.clock + number * 1000).toISOString();
    for (const label of spec.labels ?? []) this.addLabel(label);
    this.issues.set(number, {
      body: null,
      state: 'open',
      state_reason: null,
      labels: [],
      assignees: [],
      pull: false,
      blockedBy: [],
      parent: null,
      created_at: created,
      updated_at: created,
      ...spec,
      comments: (spec.comments ?? []).map((c) => ({ ...c })),
      number,
    });
    return number;
  }

  issue(number: number): FakeIssue {
    const issue = this.issues.get(number);
    if (issue === undefined) throw new Error(`fake: no issue #${number}`);
    return issue;
  }

  /** Requests that counted against the rate limit since `from` (an index into `requests`). */
  countedSince(from: number): number {
    return this.requests.slice(from).filter((r) => r.counted).length;
  }

  // ---------------------------------------------------------------- faults

  /** The next `times` requests matching answer `status` (a 5xx by default). */
  failNext(
    times: number,
    status = 502,
    match: (method: string, path: string) => boolean = () => true,
    retryAfterS?: number,
  ): void {
    const message =
      status === 401 ? 'Bad credentials' : status === 429 ? 'Too Many Requests' : 'Server Error';
    this.faults.push({
      match,
      remaining: times,
      fault: { kind: 'status', status, message, ...(retryAfterS === undefined ? {} : { retryAfterS }) },
    });
  }

  /** Drops every fault still pending. */
  heal(): void {
    this.faults.length = 0;
  }

  /** The next `times` matching requests hit a secondary rate limit with Retry-After. */
  secondaryLimit(
    times: number,
    retryAfterS: number,
    match: (method: string, path: string) => boolean = () => true,
  ): void {
    this.faults.push({ match, remaining: times, fault: { kind: 'secondary', retryAfterS } });
  }

  /** Spends the primary quota; it comes back `resetInMs` from now. */
  exhaustPrimary(resetInMs: number): void {
    this.remaining = 0;
    this.resetAtS = Math.ceil((Date.now() + resetInMs) / 1000);
  }

  /** The reset time of the current window (epoch seconds). */
  get rateLimitReset(): number {
    return this.resetAtS;
  }

  // ---------------------------------------------------------------- HTTP

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', this.base);
    const path = url.pathname;
    const record = (status: number, counted: boolean) =>
      this.requests.push({ method, path: `${path}${url.search}`, status, counted, at: Date.now() });
    const bodyText = await readBody(req);

    if (Date.now() / 1000 >= this.resetAtS) {
      this.remaining = this.limit;
      this.resetAtS = Math.floor(Date.now() / 1000) + 3600;
    }
    const rateHeaders = () => ({
      'x-ratelimit-limit': String(this.limit),
      'x-ratelimit-remaining': String(Math.max(0, this.remaining)),
      'x-ratelimit-reset': String(this.resetAtS),
      'x-ratelimit-used': String(this.limit - Math.max(0, this.remaining)),
      'x-ratelimit-resource': path.startsWith('/search/') ? 'search' : 'core',
    });
    const send = (status: number, body: unknown, extra: Record<string, string> = {}, counted = true) => {
      const text = body === undefined ? '' : JSON.stringify(body);
      res.writeHead(status, {
        ...(text === '' ? {} : { 'content-type': 'application/json; charset=utf-8' }),
        ...rateHeaders(),
        ...extra,
      });
      res.end(text);
      record(status, counted);
    };

    const rule = this.faults.find((f) => f.remaining > 0 && f.match(method, path));
    if (rule !== undefined) {
      rule.remaining -= 1;
      if (rule.fault.kind === 'secondary') {
        send(
          403,
          {
            message:
              'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.',
            documentation_url: DOCS,
          },
          { 'retry-after': String(rule.fault.retryAfterS) },
          false,
        );
      } else {
        const retryAfter = rule.fault.retryAfterS;
        send(
          rule.fault.status,
          { message: rule.fault.message, documentation_url: DOCS },
          retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) },
          false,
        );
      }
      return;
    }

    const rawLog = this.pulls.rawLog(path, req.headers.authorization);
    if (rawLog !== undefined) {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end(rawLog);
      return void record(200, false);
    }
    const auth = req.headers.authorization ?? '';
    if (
      auth !== `token ${this.token}` &&
      auth !== `bearer ${this.token}` &&
      auth !== `Bearer ${this.token}`
    ) {
      send(401, { message: 'Bad credentials', documentation_url: DOCS }, {}, false);
      return;
    }
    if (this.remaining <= 0) {
      send(403, { message: 'API rate limit exceeded for user ID 1.', documentation_url: DOCS }, {}, false);
      return;
    }

    const answer = this.route(method, url, bodyText);
    if (method === 'GET' && answer.status === 200) {
      const text = JSON.stringify(answer.body);
      const etag = `W/"${createHash('sha1')
        .update(text)
        .update(answer.link ?? '')
        .digest('hex')}"`;
      const link: Record<string, string> = answer.link === undefined ? {} : { link: answer.link };
      if (req.headers['if-none-match'] === etag) {
        res.writeHead(304, { etag, ...rateHeaders(), ...link });
        res.end();
        record(304, false);
        return;
      }
      this.remaining -= 1;
      send(200, answer.body, { etag, ...link });
      return;
    }
    this.remaining -= 1;
    send(answer.status, answer.body, {
      ...(answer.link === undefined ? {} : { link: answer.link }),
      ...answer.headers,
    });
  }

  private route(method: string, url: URL, bodyText: string): FakeAnswer {
    const path = url.pathname;
    const notFound = { status: 404, body: { message: 'Not Found', documentation_url: DOCS } };
    if (method === 'GET' && path === '/search/issues') return this.search(url);
    if (method === 'GET' && path === '/user') return { status: 200, body: { login: this.login, id: 1 } };
    const prefix = `/repos/${this.owner}/${this.repo}`;
    if (!path.startsWith(`${prefix}/`)) return notFound;
    const rest = path.slice(prefix.length).split('/').filter(Boolean).map(decodeURIComponent);
    const body = bodyText === '' ? {} : (JSON.parse(bodyText) as Record<string, unknown>);
    const pullAnswer = this.pulls.route(method, rest, url, body);
    if (pullAnswer !== undefined) return pullAnswer;

    if (rest[0] === 'labels' && rest.length === 2 && method === 'GET') {
      const name = this.labels.get((rest[1] as string).toLowerCase());
      return name === undefined ? notFound : { status: 200, body: this.labelJson(name) };
    }
    if (rest[0] !== 'issues') return notFound;
    if (rest.length === 1 && method === 'GET') {
      if (this.corrupt) return { status: 200, body: { unexpected: 'shape' } };
      return this.page(
        url,
        this.listed(url).map((i) => this.issueJson(i)),
      );
    }
    const issue = this.issues.get(Number(rest[1]));
    if (issue === undefined || !/^\d+$/.test(rest[1] ?? '')) return notFound;
    const touch = () => {
      issue.updated_at = new Date(Math.max(Date.now(), Date.parse(issue.updated_at) + 1)).toISOString();
    };
    if (rest.length === 2) {
      if (method === 'GET')
        return this.corrupt ? { status: 200, body: [] } : { status: 200, body: this.issueJson(issue) };
      if (method === 'PATCH') {
        if (body.state === 'open' || body.state === 'closed') issue.state = body.state;
        issue.state_reason = issue.state === 'closed' ? String(body.state_reason ?? 'completed') : null;
        if (typeof body.title === 'string') issue.title = body.title;
        touch();
        return { status: 200, body: this.issueJson(issue) };
      }
    }
    if (rest[2] === 'comments' && rest.length === 3) {
      if (method === 'GET') {
        if (this.corrupt) return { status: 200, body: { unexpected: 'shape' } };
        return this.page(
          url,
          issue.comments.map((c) => this.commentJson(c)),
        );
      }
      if (method === 'POST') {
        if (typeof body.body !== 'string' || body.body === '')
          return { status: 422, body: { message: 'Validation Failed', documentation_url: DOCS } };
        const comment = {
          id: this.nextCommentId++,
          user: 'orchestrator-bot',
          body: body.body,
          created_at: new Date().toISOString(),
        };
        issue.comments.push(comment);
        touch();
        return { status: 201, body: this.commentJson(comment) };
      }
    }
    if (rest[2] === 'labels') {
      if (method === 'POST' && rest.length === 3) {
        const names = Array.isArray(body.labels) ? body.labels.map(String) : [];
        for (const name of names) {
          this.addLabel(name);
          if (!issue.labels.some((l) => l.toLowerCase() === name.toLowerCase()))
            issue.labels.push(this.labels.get(name.toLowerCase()) ?? name);
        }
        touch();
        return { status: 200, body: issue.labels.map((l) => this.labelJson(l)) };
      }
      if (method === 'DELETE' && rest.length === 4) {
        const name = (rest[3] as string).toLowerCase();
        const index = issue.labels.findIndex((l) => l.toLowerCase() === name);
        if (index < 0)
          return { status: 404, body: { message: 'Label does not exist', documentation_url: DOCS } };
        issue.labels.splice(index, 1);
        touch();
        return { status: 200, body: issue.labels.map((l) => this.labelJson(l)) };
      }
    }
    if (method === 'GET' && rest[2] === 'dependencies' && rest[3] === 'blocked_by') {
      const blockers = issue.blockedBy
        .map((n) => this.issues.get(n))
        .filter((i): i is FakeIssue => i !== undefined);
      return this.page(
        url,
        blockers.map((i) => this.issueJson(i)),
      );
    }
    if (method === 'GET' && rest[2] === 'parent') {
      const parent = issue.parent === null ? undefined : this.issues.get(issue.parent);
      return parent === undefined ? notFound : { status: 200, body: this.issueJson(parent) };
    }
    return notFound;
  }

  /** Issues (and pull requests) for GET /issues: state, labels (all must match), assignee, created order. */
  private listed(url: URL): FakeIssue[] {
    const state = url.searchParams.get('state') ?? 'open';
    // A login, `none` (no assignee) or `*` (any), as the real endpoint reads it.
    const assignee = url.searchParams.get('assignee');
    const assigned = (i: FakeIssue) =>
      assignee === null ||
      (assignee === '*'
        ? i.assignees.length > 0
        : assignee === 'none'
          ? i.assignees.length === 0
          : i.assignees.some((login) => login.toLowerCase() === assignee.toLowerCase()));
    const labels = (url.searchParams.get('labels') ?? '')
      .split(',')
      .map((l) => l.trim().toLowerCase())
      .filter(Boolean);
    const desc = url.searchParams.get('direction') !== 'asc';
    const out = [...this.issues.values()].filter(
      (i) =>
        (state === 'all' || i.state === state) &&
        assigned(i) &&
        labels.every((l) => i.labels.some((il) => il.toLowerCase() === l)),
    );
    out.sort((a, b) => a.number - b.number);
    return desc ? out.reverse() : out;
  }

  private search(url: URL): { status: number; body: unknown; link?: string } {
    const q = url.searchParams.get('q') ?? '';
    const terms = q.match(/(?:[^\s"]+:"[^"]*"|"[^"]*"|\S+)/g) ?? [];
    let matches = [...this.issues.values()];
    for (const term of terms) {
      const [key, ...restParts] = term.split(':');
      const value = restParts.join(':').replace(/^"|"$/g, '').toLowerCase();
      if (restParts.length === 0) {
        const word = term.replace(/^"|"$/g, '').toLowerCase();
        matches = matches.filter(
          (i) => i.title.toLowerCase().includes(word) || (i.body ?? '').toLowerCase().includes(word),
        );
      } else if (key === 'repo') {
        if (value !== `${this.owner}/${this.repo}`.toLowerCase()) matches = [];
      } else if (key === 'is' || key === 'type') {
        if (value === 'issue') matches = matches.filter((i) => !i.pull);
        else if (value === 'pr') matches = matches.filter((i) => i.pull);
        else if (value === 'open' || value === 'closed') matches = matches.filter((i) => i.state === value);
      } else if (key === 'state') {
        matches = matches.filter((i) => i.state === value);
      } else if (key === 'label') {
        matches = matches.filter((i) => i.labels.some((l) => l.toLowerCase() === value));
      } else if (key === 'assignee') {
        matches = matches.filter((i) => i.assignees.some((login) => login.toLowerCase() === value));
      } else if (key === '-label') {
        matches = matches.filter((i) => !i.labels.some((l) => l.toLowerCase() === value));
      }
    }
    matches.sort((a, b) => a.number - b.number);
    if (url.searchParams.get('order') === 'desc') matches.reverse();
    const paged = this.page(
      url,
      matches.map((i) => this.issueJson(i)),
    );
    return {
      ...paged,
      body: { total_count: matches.length, incomplete_results: false, items: paged.body },
    };
  }

  private page(url: URL, items: unknown[]): { status: number; body: unknown[]; link?: string } {
    const perPage = Math.min(100, Math.max(1, Number(url.searchParams.get('per_page') ?? 30) || 30));
    const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
    const last = Math.max(1, Math.ceil(items.length / perPage));
    const body = items.slice((page - 1) * perPage, page * perPage);
    const at = (n: number) => {
      const next = new URL(url.href);
      next.searchParams.set('page', String(n));
      next.searchParams.set('per_page', String(perPage));
      return `${this.base}${next.pathname}${next.search}`;
    };
    const links: string[] = [];
    if (page < last) links.push(`<${at(page + 1)}>; rel="next"`, `<${at(last)}>; rel="last"`);
    if (page > 1) links.push(`<${at(1)}>; rel="first"`, `<${at(page - 1)}>; rel="prev"`);
    return { status: 200, body, ...(links.length > 0 ? { link: links.join(', ') } : {}) };
  }

  private labelJson(name: string): Record<string, unknown> {
    return { id: hashId(name.toLowerCase()), name, color: 'ededed', default: false };
  }

  private commentJson(c: FakeComment): Record<string, unknown> {
    return {
      id: c.id,
      user: { login: c.user, type: 'User' },
      body: c.body,
      created_at: c.created_at,
      updated_at: c.created_at,
    };
  }

  private issueJson(i: FakeIssue): Record<string, unknown> {
    const blockers = i.blockedBy
      .map((n) => this.issues.get(n))
      .filter((b): b is FakeIssue => b !== undefined);
    const html = `https://github.example/${this.owner}/${this.repo}/${i.pull ? 'pull' : 'issues'}/${i.number}`;
    return {
      id: 10_000 + i.number,
      number: i.number,
      title: i.malformed === true ? null : i.title,
      body: i.body,
      state: i.state,
      state_reason: i.state_reason,
      html_url: html,
      user: { login: 'reporter' },
      labels: i.labels.map((l) => this.labelJson(l)),
      assignee: i.assignees[0] === undefined ? null : { login: i.assignees[0] },
      assignees: i.assignees.map((login) => ({ login })),
      comments: i.comments.length,
      created_at: i.created_at,
      updated_at: i.updated_at,
      type: null,
      issue_dependencies_summary: {
        blocked_by: blockers.filter((b) => b.state === 'open').length,
        total_blocked_by: blockers.length,
        blocking: 0,
        total_blocking: 0,
      },
      ...(i.pull ? { pull_request: { url: html, html_url: html } } : {}),
    };
  }
}

function hashId(text: string): number {
  return Number.parseInt(createHash('sha1').update(text).digest('hex').slice(0, 8), 16);
}

/** Starts a fake; remember to close it. */
/** A workflow's `tracker:` block pointing the github kind at `fake`, with the label states the e2e suites use. */
export function fakeGithubTracker(fake: {
  url: string;
  owner: string;
  repo: string;
}): Record<string, unknown> {
  return {
    kind: 'github',
    endpoint: fake.url,
    api_key: '$GITHUB_TOKEN',
    project: `${fake.owner}/${fake.repo}`,
    active_states: ['Todo', 'In Progress'],
    terminal_states: ['Done'],
    in_progress_state: 'In Progress',
    handoff_state: 'Review',
    blocked_state: 'Blocked',
  };
}

export function startFakeGithub(options: FakeGithubOptions = {}): Promise<FakeGithub> {
  return new FakeGithub(options).start();
}
