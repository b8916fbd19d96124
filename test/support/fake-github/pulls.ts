/**
 * The pull-request side of the fake GitHub: branches with head commits, pull requests (which
 * are issues too, numbered from the same counter, so the issues endpoints serve their labels),
 * check runs per commit, Actions job logs behind a redirect to an unauthenticated download
 * address, reviews with inline comments, and the merge. It answers with the shapes GitHub
 * documents and refuses what GitHub refuses: a second open pull request for one head (422,
 * "A pull request already exists"), a merge of a head that moved (409), of an unmergeable or
 * draft pull request or with a method the repository forbids (405).
 *
 * Test levers: `setBranch` (moves open pull requests on it), `setCheckRuns`, `setJobLog`,
 * `addReview` / `addReviewComment` (bots, outdated lines), `mergeable` on a pull request
 * (null = GitHub still computing), `allowedMergeMethods`, `lagListings(n)` (the next n pull
 * listings answer as if no pull request existed: GitHub's read replicas lag behind writes).
 * `writes` logs every write's body; the server's `requests` logs every request.
 */

/** What a route answers (the server adds ETags, rate-limit headers and the request log). */
export interface FakeAnswer {
  status: number;
  body: unknown;
  link?: string;
  headers?: Record<string, string>;
}

/** What the pull requests borrow from the server. */
export interface PullHost {
  readonly owner: string;
  readonly repo: string;
  readonly url: string;
  addIssue(spec: { title: string; body?: string | null; pull?: boolean; labels?: string[] }): number;
  issue(number: number): { title: string; body: string | null; state: 'open' | 'closed'; labels: string[] };
}

export interface FakeCheckRun {
  id: number;
  name: string;
  /** queued, in_progress, completed, … */
  status: string;
  conclusion: string | null;
  /** The app's slug; `github-actions` (the default) for Actions jobs. */
  app?: string;
  details_url?: string | null;
}

export interface FakeReview {
  id: number;
  user: string;
  bot: boolean;
  /** APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED or PENDING. */
  state: string;
  body: string;
  submitted_at: string;
  commit_id: string;
}

export interface FakeReviewComment {
  id: number;
  reviewId: number;
  user: string;
  bot: boolean;
  body: string;
  path: string;
  line: number;
  start_line: number | null;
  /** The commented line is gone from the diff: GitHub nulls `position` and `line`. */
  outdated: boolean;
  /** Answer without `line`/`start_line`, as the per-review endpoint sometimes does. */
  omitLines: boolean;
  created_at: string;
}

export interface FakePull {
  number: number;
  head: string;
  headSha: string;
  base: string;
  draft: boolean;
  state: 'open' | 'closed';
  merged: boolean;
  mergedWith: string | null;
  /** What GitHub would answer: null while it computes mergeability. */
  mergeable: boolean | null;
  reviews: FakeReview[];
  comments: FakeReviewComment[];
}

const DOCS = 'https://docs.github.com/rest/pulls';
const RAW_LOGS = '/_fake/job-logs/';

export class FakePulls {
  readonly pulls = new Map<number, FakePull>();
  /** Branch name → head sha. */
  readonly branches = new Map<string, string>([['main', 'base0000']]);
  readonly checkRuns = new Map<string, FakeCheckRun[]>();
  readonly jobLogs = new Map<number, string>();
  /** Merge methods the repository allows. */
  readonly allowedMergeMethods = new Set(['merge', 'squash', 'rebase']);
  /** Every write to the pull endpoints with its JSON body. */
  readonly writes: { method: string; path: string; body: Record<string, unknown> }[] = [];
  /** The Authorization header of every raw log download ("" when none). */
  readonly rawLogAuth: string[] = [];
  private lagging = 0;
  private nextReviewId = 500;
  private nextCommentId = 9000;
  private clock = Date.parse('2026-02-01T00:00:00Z');

  constructor(private readonly host: PullHost) {}

  // ---------------------------------------------------------------- test levers

  /** Points `branch` at `sha`; open pull requests on it follow (a push). */
  setBranch(branch: string, sha: string): void {
    this.branches.set(branch, sha);
    for (const pull of this.pulls.values())
      if (pull.head === branch && pull.state === 'open') pull.headSha = sha;
  }

  setCheckRuns(sha: string, runs: FakeCheckRun[]): void {
    this.checkRuns.set(sha, runs);
  }

  setJobLog(jobId: number, text: string): void {
    this.jobLogs.set(jobId, text);
  }

  /** The next `n` pull listings answer as if no pull request existed. */
  lagListings(n: number): void {
    this.lagging = n;
  }

  /** Every pull request, in the order opened. */
  all(): FakePull[] {
    return [...this.pulls.values()];
  }

  pull(number: number): FakePull {
    const pull = this.pulls.get(number);
    if (pull === undefined) throw new Error(`fake: no pull request #${number}`);
    return pull;
  }

  /** Opens a pull request directly (as a person would) and returns its number. */
  open(spec: { head: string; base?: string; title?: string; body?: string; draft?: boolean }): number {
    const sha = this.branches.get(spec.head) ?? `sha-${spec.head}`;
    this.branches.set(spec.head, sha);
    const number = this.host.addIssue({ title: spec.title ?? spec.head, body: spec.body ?? '', pull: true });
    this.pulls.set(number, {
      number,
      head: spec.head,
      headSha: sha,
      base: spec.base ?? 'main',
      draft: spec.draft ?? false,
      state: 'open',
      merged: false,
      mergedWith: null,
      mergeable: true,
      reviews: [],
      comments: [],
    });
    return number;
  }

  addReview(
    number: number,
    spec: { user: string; state: string; body?: string; bot?: boolean; submitted_at?: string },
  ): number {
    const pull = this.pull(number);
    const id = this.nextReviewId++;
    this.clock += 60_000;
    pull.reviews.push({
      id,
      user: spec.user,
      bot: spec.bot ?? false,
      state: spec.state,
      body: spec.body ?? '',
      submitted_at: spec.submitted_at ?? new Date(this.clock).toISOString(),
      commit_id: pull.headSha,
    });
    return id;
  }

  addReviewComment(
    number: number,
    reviewId: number,
    spec: {
      user: string;
      body: string;
      path: string;
      line: number;
      start_line?: number;
      bot?: boolean;
      outdated?: boolean;
      omitLines?: boolean;
    },
  ): number {
    const pull = this.pull(number);
    const id = this.nextCommentId++;
    this.clock += 1000;
    pull.comments.push({
      id,
      reviewId,
      user: spec.user,
      bot: spec.bot ?? false,
      body: spec.body,
      path: spec.path,
      line: spec.line,
      start_line: spec.start_line ?? null,
      outdated: spec.outdated ?? false,
      omitLines: spec.omitLines ?? false,
      created_at: new Date(this.clock).toISOString(),
    });
    return id;
  }

  // ---------------------------------------------------------------- HTTP

  /** The text of a raw log download (no token needed, as with GitHub's signed URLs), or undefined. */
  rawLog(path: string, authorization: string | undefined): string | undefined {
    if (!path.startsWith(RAW_LOGS)) return undefined;
    this.rawLogAuth.push(authorization ?? '');
    return this.jobLogs.get(Number(path.slice(RAW_LOGS.length)));
  }

  /** Answers the routes below `/repos/{owner}/{repo}/` this module owns; undefined for the others. */
  route(method: string, rest: string[], url: URL, body: Record<string, unknown>): FakeAnswer | undefined {
    const [head, a, b, c, d] = rest;
    if (head === 'commits' && b === 'check-runs' && rest.length === 3 && method === 'GET') {
      return this.checkRunsOf(a as string, url);
    }
    if (head === 'actions' && a === 'jobs' && c === 'logs' && rest.length === 4 && method === 'GET') {
      const id = Number(b);
      if (!this.jobLogs.has(id)) return notFound();
      return {
        status: 302,
        body: undefined,
        headers: { location: `${this.host.url}${RAW_LOGS}${id}?sig=x` },
      };
    }
    if (head !== 'pulls') return undefined;
    if (rest.length === 1) {
      if (method === 'GET') return this.list(url);
      if (method === 'POST') return this.create(url, body);
      return undefined;
    }
    const pull = /^\d+$/.test(a ?? '') ? this.pulls.get(Number(a)) : undefined;
    if (pull === undefined) return notFound();
    if (rest.length === 2 && method === 'GET') return { status: 200, body: this.json(pull, true) };
    if (rest.length === 2 && method === 'PATCH') return this.patch(pull, url, body);
    if (b === 'merge' && rest.length === 3 && method === 'PUT') return this.merge(pull, url, body);
    if (b === 'reviews' && rest.length === 3 && method === 'GET') {
      return page(
        url,
        this.host.url,
        pull.reviews.map((r) => this.reviewJson(pull, r)),
      );
    }
    if (b === 'reviews' && d === 'comments' && rest.length === 5 && method === 'GET') {
      const review = pull.reviews.find((r) => String(r.id) === c);
      if (review === undefined) return notFound();
      const comments = pull.comments.filter((m) => m.reviewId === review.id);
      return page(
        url,
        this.host.url,
        comments.map((m) => this.commentJson(pull, m)),
      );
    }
    return notFound();
  }

  private list(url: URL): FakeAnswer {
    const state = url.searchParams.get('state') ?? 'open';
    const headFilter = url.searchParams.get('head');
    const base = url.searchParams.get('base');
    let pulls = [...this.pulls.values()];
    if (this.lagging > 0) {
      this.lagging -= 1;
      pulls = [];
    }
    if (headFilter !== null) {
      // `owner:branch`; a head of another owner matches nothing here (no forks in the fake).
      const [owner, ...branch] = headFilter.split(':');
      pulls = pulls.filter(
        (p) => owner?.toLowerCase() === this.host.owner.toLowerCase() && p.head === branch.join(':'),
      );
    }
    pulls = pulls.filter((p) => (state === 'all' || p.state === state) && (base === null || p.base === base));
    pulls.sort((x, y) => y.number - x.number);
    return page(
      url,
      this.host.url,
      pulls.map((p) => this.json(p, false)),
    );
  }

  private create(url: URL, body: Record<string, unknown>): FakeAnswer {
    this.writes.push({ method: 'POST', path: url.pathname, body });
    const head = typeof body.head === 'string' ? body.head.replace(/^[^:]+:/, '') : '';
    const base = typeof body.base === 'string' ? body.base : '';
    if (typeof body.title !== 'string' || body.title === '')
      return invalid({ field: 'title', code: 'missing_field' });
    if (!this.branches.has(head)) return invalid({ field: 'head', code: 'invalid' });
    if (!this.branches.has(base)) return invalid({ field: 'base', code: 'invalid' });
    if ([...this.pulls.values()].some((p) => p.state === 'open' && p.head === head && p.base === base)) {
      return invalid({
        code: 'custom',
        message: `A pull request already exists for ${this.host.owner}:${head}.`,
      });
    }
    const number = this.open({
      head,
      base,
      title: body.title,
      body: typeof body.body === 'string' ? body.body : '',
      draft: body.draft === true,
    });
    const pull = this.pull(number);
    // GitHub works mergeability out after answering.
    pull.mergeable = null;
    return { status: 201, body: this.json(pull, true) };
  }

  private patch(pull: FakePull, url: URL, body: Record<string, unknown>): FakeAnswer {
    this.writes.push({ method: 'PATCH', path: url.pathname, body });
    const issue = this.host.issue(pull.number);
    if (typeof body.title === 'string') issue.title = body.title;
    if (typeof body.body === 'string') issue.body = body.body;
    if (typeof body.base === 'string') pull.base = body.base;
    if (body.state === 'open' || body.state === 'closed') {
      pull.state = body.state;
      issue.state = body.state;
    }
    return { status: 200, body: this.json(pull, true) };
  }

  private merge(pull: FakePull, url: URL, body: Record<string, unknown>): FakeAnswer {
    this.writes.push({ method: 'PUT', path: url.pathname, body });
    const method = body.merge_method === undefined ? 'merge' : body.merge_method;
    if (method !== 'merge' && method !== 'squash' && method !== 'rebase') {
      return invalid({ field: 'merge_method', code: 'invalid' });
    }
    if (pull.state !== 'open' || pull.mergeable === false)
      return refused(405, 'Pull Request is not mergeable');
    if (pull.draft) return refused(405, 'Pull Request is still a draft');
    if (!this.allowedMergeMethods.has(method)) {
      const what = { merge: 'Merge commits', squash: 'Squash merges', rebase: 'Rebase merges' }[method];
      return refused(405, `${what} are not allowed on this repository.`);
    }
    if (typeof body.sha === 'string' && body.sha !== pull.headSha) {
      return refused(409, 'Head branch was modified. Review and try the merge again.');
    }
    pull.state = 'closed';
    pull.merged = true;
    pull.mergedWith = method;
    this.host.issue(pull.number).state = 'closed';
    return {
      status: 200,
      body: { sha: `merge-${pull.headSha}`, merged: true, message: 'Pull Request successfully merged' },
    };
  }

  private checkRunsOf(ref: string, url: URL): FakeAnswer {
    const sha = this.branches.get(ref) ?? ref;
    let runs = this.checkRuns.get(sha) ?? [];
    if ((url.searchParams.get('filter') ?? 'latest') === 'latest') {
      const latest = new Map<string, FakeCheckRun>();
      for (const run of runs) latest.set(run.name, run);
      runs = [...latest.values()];
    }
    const paged = page(
      url,
      this.host.url,
      runs.map((run) => this.runJson(sha, run)),
    );
    return { ...paged, body: { total_count: runs.length, check_runs: paged.body } };
  }

  // ---------------------------------------------------------------- shapes

  private json(pull: FakePull, single: boolean): Record<string, unknown> {
    const issue = this.host.issue(pull.number);
    const html = `https://github.example/${this.host.owner}/${this.host.repo}/pull/${pull.number}`;
    const repo = { full_name: `${this.host.owner}/${this.host.repo}`, name: this.host.repo };
    return {
      id: 70_000 + pull.number,
      number: pull.number,
      url: `${this.host.url}/repos/${this.host.owner}/${this.host.repo}/pulls/${pull.number}`,
      html_url: html,
      state: pull.state,
      title: issue.title,
      body: issue.body,
      draft: pull.draft,
      user: { login: 'orchestrator-bot', type: 'User' },
      labels: issue.labels.map((name) => ({ name })),
      head: { ref: pull.head, sha: pull.headSha, label: `${this.host.owner}:${pull.head}`, repo },
      base: {
        ref: pull.base,
        sha: this.branches.get(pull.base) ?? '',
        label: `${this.host.owner}:${pull.base}`,
        repo,
      },
      merged_at: pull.merged ? '2026-02-02T00:00:00Z' : null,
      // Only the single read carries mergeability, as on GitHub.
      ...(single ? { merged: pull.merged, mergeable: pull.merged ? null : pull.mergeable } : {}),
    };
  }

  private runJson(sha: string, run: FakeCheckRun): Record<string, unknown> {
    const slug = run.app ?? 'github-actions';
    return {
      id: run.id,
      head_sha: sha,
      name: run.name,
      status: run.status,
      conclusion: run.conclusion,
      details_url:
        run.details_url === undefined
          ? `https://github.example/${this.host.owner}/${this.host.repo}/actions/runs/1/job/${run.id}`
          : run.details_url,
      html_url: `https://github.example/${this.host.owner}/${this.host.repo}/runs/${run.id}`,
      app: { id: slug.length, slug, name: slug },
    };
  }

  private reviewJson(pull: FakePull, r: FakeReview): Record<string, unknown> {
    return {
      id: r.id,
      user: { login: r.user, type: r.bot ? 'Bot' : 'User' },
      body: r.body,
      state: r.state,
      html_url: `https://github.example/${this.host.owner}/${this.host.repo}/pull/${pull.number}#pullrequestreview-${r.id}`,
      commit_id: r.commit_id,
      author_association: 'MEMBER',
      ...(r.state === 'PENDING' ? {} : { submitted_at: r.submitted_at }),
    };
  }

  private commentJson(pull: FakePull, m: FakeReviewComment): Record<string, unknown> {
    const lines = m.omitLines
      ? {}
      : {
          line: m.outdated ? null : m.line,
          start_line: m.outdated ? null : m.start_line,
          side: 'RIGHT',
          start_side: m.start_line === null ? null : 'RIGHT',
        };
    return {
      id: m.id,
      pull_request_review_id: m.reviewId,
      path: m.path,
      position: m.outdated ? null : m.line,
      original_position: m.line,
      original_line: m.line,
      original_start_line: m.start_line,
      ...lines,
      commit_id: pull.headSha,
      original_commit_id: pull.headSha,
      diff_hunk: '@@ -1,3 +1,4 @@',
      user: { login: m.user, type: m.bot ? 'Bot' : 'User' },
      body: m.body,
      created_at: m.created_at,
      updated_at: m.created_at,
      html_url: `https://github.example/${this.host.owner}/${this.host.repo}/pull/${pull.number}#discussion_r${m.id}`,
    };
  }
}

function notFound(): FakeAnswer {
  return { status: 404, body: { message: 'Not Found', documentation_url: DOCS } };
}

function refused(status: number, message: string): FakeAnswer {
  return { status, body: { message, documentation_url: DOCS } };
}

function invalid(error: Record<string, string>): FakeAnswer {
  return {
    status: 422,
    body: {
      message: 'Validation Failed',
      errors: [{ resource: 'PullRequest', ...error }],
      documentation_url: DOCS,
    },
  };
}

/** One page of `items` with GitHub's Link header (per_page up to 100, page from 1). */
function page(url: URL, base: string, items: unknown[]): FakeAnswer & { body: unknown[] } {
  const perPage = Math.min(100, Math.max(1, Number(url.searchParams.get('per_page') ?? 30) || 30));
  const at = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const link = (n: number) => {
    const next = new URL(url.href);
    next.searchParams.set('page', String(n));
    next.searchParams.set('per_page', String(perPage));
    return `${base}${next.pathname}${next.search}`;
  };
  const links: string[] = [];
  if (at < last) links.push(`<${link(at + 1)}>; rel="next"`, `<${link(last)}>; rel="last"`);
  if (at > 1) links.push(`<${link(1)}>; rel="first"`, `<${link(at - 1)}>; rel="prev"`);
  return {
    status: 200,
    body: items.slice((at - 1) * perPage, at * perPage),
    ...(links.length > 0 ? { link: links.join(', ') } : {}),
  };
}
