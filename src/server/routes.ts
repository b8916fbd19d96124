/**
 * The API's routes: one table of paths and the methods each allows, so a wrong method is a
 * 405 with `Allow` rather than a 404, and every handler reads the service only through
 * `ServerSources`. Failures are sorted here once: an orchestrator that cannot give a
 * snapshot is 503 `snapshot_unavailable`, a store that cannot answer is 503
 * `store_unavailable`, anything else is 500 `internal_error` with a generic message (the
 * detail goes to the log, never to the client).
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OrchestratorSnapshot } from '../orchestrator/orchestrator.js';
import type { Logger } from '../orchestrator/ports.js';
import { PersistenceError } from '../persistence/index.js';
import { EventStreams } from './events.js';
import { IssueComments } from './issue-comments.js';
import { ISSUE_PAGE_CSP, issueNotFoundPage, issuePage } from './issue-page.js';
import { ModelTokens } from './model-tokens.js';
import type { ServerSources } from './ports.js';
import { type ApiErrorCode, type Reply, reply } from './respond.js';
import {
  type Check,
  type IssueView,
  issueView,
  type ReadinessView,
  type RunView,
  readinessView,
  runView,
  type StateView,
  stateView,
} from './views.js';

/** Runs `/api/v1/runs` returns without `limit`, and the most it returns. */
export const DEFAULT_RUNS_LIMIT = 25;
export const MAX_RUNS_LIMIT = 500;
/** Past runs `/api/v1/issues/:identifier` returns. */
export const ISSUE_RUNS_LIMIT = 50;
/** Runs in the event stream's `runs` event. */
const STREAM_RUNS_LIMIT = 25;

/** The dashboard's policy; `NONCE` is replaced per response. */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'nonce-NONCE'",
  "style-src 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const GET = ['GET', 'HEAD'] as const;
const POST = ['POST'] as const;

export interface ApiOptions {
  sources: ServerSources;
  log: Logger;
  /** The dashboard page for a nonce (the CSP allows only scripts carrying it). */
  dashboard: (nonce: string) => string;
  /**
   * Host names a request's Host header may name besides loopback ones; null accepts any. Set
   * whenever the server is bound to loopback or `server.allowed_hosts` is given, so a web page
   * cannot reach the API through a DNS name rebound to the server's address.
   */
  allowedHosts: ReadonlySet<string> | null;
  /** At most one event-stream state push per this many ms. */
  pushIntervalMs: number;
  /** Event-stream keep-alive comment interval. */
  pingIntervalMs: number;
}

interface Request {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  /** Decoded path parameters, in order. */
  params: string[];
  reply: Reply;
}

interface Route {
  methods: readonly string[];
  handle(request: Request): void | Promise<void>;
}

/** The orchestrator could not give a snapshot. */
class SnapshotUnavailable extends Error {}

/** A request parameter the handler refuses; answered 400 `invalid_parameter`. */
class InvalidParameter extends Error {}

export class Api {
  /** Open event streams. */
  readonly streams: EventStreams;
  /** Tokens by model since start, fed by the orchestrator's observations. */
  readonly tokens = new ModelTokens();
  /** Comments the orchestrator made per issue since start, for the issue pages. */
  readonly comments: IssueComments;
  readonly #unsubscribe: () => void;
  readonly #routes: ReadonlyMap<string, Route>;
  readonly #issueRoute: Route = { methods: GET, handle: (r) => this.#issue(r) };
  readonly #issuePageRoute: Route = { methods: GET, handle: (r) => this.#issuePage(r) };

  constructor(private readonly options: ApiOptions) {
    const { sources } = options;
    this.comments = new IssueComments(() => sources.nowMs());
    this.#unsubscribe = sources.subscribe((observation) => {
      this.tokens.observe(observation);
      this.comments.observe(observation);
    });
    this.streams = new EventStreams({
      subscribe: (listener) => sources.subscribe(listener),
      stateJson: () => this.#quietly('state', () => sources.mask(JSON.stringify(this.#state()))),
      runsJson: () =>
        this.#quietly('runs', () => sources.mask(JSON.stringify({ runs: this.#runs(STREAM_RUNS_LIMIT) }))),
      pushIntervalMs: options.pushIntervalMs,
      pingIntervalMs: options.pingIntervalMs,
      log: options.log,
    });
    this.#routes = new Map<string, Route>([
      ['/', { methods: GET, handle: (r) => this.#dashboard(r) }],
      ['/favicon.ico', { methods: GET, handle: (r) => void r.res.writeHead(204).end() }],
      ['/livez', { methods: GET, handle: (r) => this.#livez(r) }],
      ['/readyz', { methods: GET, handle: (r) => this.#readyz(r) }],
      ['/issues', { methods: GET, handle: (r) => this.#issuePage(r) }],
      ['/api/v1/state', { methods: GET, handle: (r) => r.reply.json(200, this.#state()) }],
      ['/api/v1/runs', { methods: GET, handle: (r) => this.#runsRoute(r) }],
      ['/api/v1/refresh', { methods: POST, handle: (r) => this.#refresh(r) }],
      ['/api/v1/events', { methods: GET, handle: (r) => this.streams.open(r.req, r.res) }],
      ['/metrics', { methods: GET, handle: (r) => this.#metrics(r) }],
    ]);
  }

  /** Answers one request; never throws. */
  handle(req: IncomingMessage, res: ServerResponse): void {
    const out = reply(req, res, (text) => this.options.sources.mask(text));
    this.#dispatch(req, res, out).catch((error: unknown) => this.#fail(req, res, out, error));
  }

  /** Ends the event streams and stops listening to the orchestrator. */
  close(): void {
    this.streams.closeAll();
    this.#unsubscribe();
  }

  async #dispatch(req: IncomingMessage, res: ServerResponse, out: Reply): Promise<void> {
    const method = req.method ?? 'GET';
    // Bodies are never read: drain whatever a client sends so the connection can be reused.
    req.resume();
    if (!hostAllowed(req.headers.host, this.options.allowedHosts)) {
      const names = this.options.allowedHosts?.size
        ? 'a loopback host name or one in server.allowed_hosts'
        : 'a loopback host name';
      out.error(403, 'host_not_allowed', `this server answers only to ${names}`);
      return;
    }
    const url = requestUrl(req.url ?? '/');
    let route = this.#routes.get(url.pathname);
    let params: string[] = [];
    const issue = /^\/api\/v1\/issues\/([^/]+)$/.exec(url.pathname);
    const page = /^\/issues\/([^/]+)$/.exec(url.pathname);
    if (route === undefined && issue !== null) {
      route = this.#issueRoute;
      params = [issue[1] ?? ''];
    } else if (route === undefined && page !== null) {
      route = this.#issuePageRoute;
      params = [page[1] ?? ''];
    }
    if (route === undefined) {
      out.error(404, 'not_found', `no route ${url.pathname}`);
      return;
    }
    if (!route.methods.includes(method)) {
      const allow = route.methods.join(', ');
      out.error(405, 'method_not_allowed', `${method} is not allowed here; allowed: ${allow}`, { allow });
      return;
    }
    if (method === 'POST' && !sameOrigin(req)) {
      out.error(403, 'origin_not_allowed', 'cross-origin requests may not change anything');
      return;
    }
    await route.handle({ req, res, url, params: params.map(decodeSegment), reply: out });
  }

  #fail(req: IncomingMessage, res: ServerResponse, out: Reply, error: unknown): void {
    const known = classify(error);
    if (known.status >= 500) {
      const detail = error instanceof Error ? error.message : String(error);
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : undefined;
      const fields = {
        method: req.method,
        path: req.url,
        error: detail,
        ...(cause === undefined ? {} : { cause }),
      };
      if (known.status === 500) this.options.log.error(fields, 'http request failed');
      else this.options.log.warn(fields, 'http request failed');
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    out.error(known.status, known.code, known.message);
  }

  #snapshot(): OrchestratorSnapshot {
    try {
      return this.options.sources.snapshot();
    } catch (error) {
      throw new SnapshotUnavailable('the orchestrator snapshot failed', { cause: error });
    }
  }

  /** The value of `fn`, or null after logging why not (event-stream pushes skip rather than fail). */
  #quietly(what: string, fn: () => string): string | null {
    try {
      return fn();
    } catch (error) {
      this.options.log.warn(
        { event: what, error: error instanceof Error ? error.message : String(error) },
        'event stream push skipped',
      );
      return null;
    }
  }

  #readiness(snapshot: OrchestratorSnapshot | null): ReadinessView {
    const { sources } = this.options;
    const check = (probe: () => boolean): Check => {
      try {
        return probe() ? 'pass' : 'fail';
      } catch {
        return 'fail';
      }
    };
    return readinessView({
      version: sources.version,
      uptimeMs: sources.nowMs() - sources.startedAtMs,
      checks: {
        database: check(() => sources.store.ping()),
        store_writes: check(() => snapshot?.store.available === true),
        first_tick: check(() => snapshot !== null && snapshot.ticks > 0),
        workflow: check(() => sources.config().tracker.kind !== ''),
        draining: check(() => snapshot !== null && !snapshot.draining),
      },
    });
  }

  /** The snapshot, or null when the orchestrator cannot give one (probes report it as failing). */
  #snapshotOrNull(): OrchestratorSnapshot | null {
    try {
      return this.options.sources.snapshot();
    } catch {
      return null;
    }
  }

  #state(): StateView {
    const { sources } = this.options;
    const snapshot = this.#snapshot();
    return stateView({
      nowMs: sources.nowMs(),
      version: sources.version,
      startedAtMs: sources.startedAtMs,
      workflowPath: sources.workflowPath,
      snapshot,
      totals: sources.store.totals(),
      unpricedRuns: sources.store.unpricedRuns(),
      config: sources.config(),
      adapters: sources.adapters(),
      tokensByModel: this.tokens.snapshot(),
      ready: this.#readiness(snapshot).status === 'pass',
      priceTokens: (usage) => sources.priceTokens(usage),
    });
  }

  #runs(limit: number): RunView[] {
    const { store } = this.options.sources;
    return store.recentRuns(limit).map((run) => runView(run, store.toolCalls.forRun(run.id)));
  }

  /** The page is not masked: it is static, and it carries no data (it fetches the API). */
  #dashboard({ req, res }: Request): void {
    const nonce = randomBytes(16).toString('base64');
    const body = Buffer.from(this.options.dashboard(nonce), 'utf8');
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'content-length': String(body.length),
      'content-security-policy': CONTENT_SECURITY_POLICY.replace('NONCE', nonce),
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  #livez({ reply: out }: Request): void {
    // An orchestrator that cannot say what it is doing is not alive for a supervisor either.
    const draining = this.#snapshotOrNull()?.draining ?? true;
    out.json(draining ? 503 : 200, { status: draining ? 'fail' : 'pass' });
  }

  #readyz({ reply: out }: Request): void {
    const view = this.#readiness(this.#snapshotOrNull());
    out.json(view.status === 'pass' ? 200 : 503, view);
  }

  #runsRoute({ url, reply: out }: Request): void {
    const limit = runsLimit(url.searchParams.getAll('limit'));
    out.json(200, { runs: this.#runs(limit) });
  }

  #issue({ params, reply: out }: Request): void {
    const identifier = params[0] ?? '';
    const view = this.#issueView(identifier);
    if (view === null) {
      out.error(
        404,
        'issue_not_found',
        `issue ${JSON.stringify(identifier)} is not running, not queued for a retry and has no recorded run`,
      );
      return;
    }
    out.json(200, view);
  }

  /** `/issues/<identifier>`, or `/issues?identifier=` for one a path segment cannot hold (`.`, `..`). */
  #issuePage({ url, params, reply: out }: Request): void {
    let identifier = params[0];
    if (identifier === undefined) {
      const given = url.searchParams.getAll('identifier');
      if (given.length !== 1 || given[0] === '') {
        throw new InvalidParameter(
          'identifier must be given once: /issues/<identifier> or /issues?identifier=',
        );
      }
      identifier = given[0] as string;
    }
    const mask = (text: string) => this.options.sources.mask(text);
    const view = this.#issueView(identifier);
    const html = view === null ? issueNotFoundPage(identifier, mask) : issuePage(view, mask);
    out.text(view === null ? 404 : 200, html, {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': ISSUE_PAGE_CSP,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    });
  }

  /** Everything known of the issue named `identifier`, or null when nothing is. */
  #issueView(identifier: string): IssueView | null {
    const { sources } = this.options;
    const snapshot = this.#snapshot();
    const running = snapshot.running.find((e) => e.issue.identifier === identifier) ?? null;
    const queued = snapshot.retries.find((r) => r.identifier === identifier) ?? null;
    const waiting = snapshot.waiting.find((w) => w.identifier === identifier) ?? null;
    const latest =
      running === null && queued === null && waiting === null
        ? sources.store.runByIdentifier(identifier)
        : null;
    const issueId = running?.issue.id ?? queued?.issueId ?? waiting?.issueId ?? latest?.issueId ?? null;
    if (issueId === null) return null;
    const retry = queued ?? (running === null ? sources.store.retryFor(issueId) : null);
    const runs = sources.store.runsForIssue(issueId, ISSUE_RUNS_LIMIT).map((run) => ({
      run,
      turns: sources.store.turnsForRun(run.id),
      toolCalls: sources.store.toolCalls.forRun(run.id),
    }));
    return issueView({
      identifier,
      issueId,
      running,
      retry,
      waiting,
      runs,
      comments: this.comments.for(issueId),
      nowMs: sources.nowMs(),
    });
  }

  #refresh({ reply: out }: Request): void {
    const { sources } = this.options;
    const result = sources.refresh();
    if (result === 'draining') {
      out.error(409, 'draining', 'the service is shutting down; no new tick will run');
      return;
    }
    out.json(202, {
      queued: true,
      coalesced: result === 'coalesced',
      requested_at: new Date(sources.nowMs()).toISOString(),
    });
  }

  async #metrics({ reply: out }: Request): Promise<void> {
    const { contentType, body } = await this.options.sources.metrics();
    out.text(200, body, {
      'content-type': contentType,
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    });
  }
}

/** The `limit` query parameter: absent → the default; otherwise one whole number from 1 to the maximum. */
export function runsLimit(values: readonly string[]): number {
  if (values.length === 0) return DEFAULT_RUNS_LIMIT;
  const [value] = values;
  const limit =
    values.length === 1 && value !== undefined && /^\d{1,4}$/.test(value) ? Number(value) : Number.NaN;
  if (!(limit >= 1 && limit <= MAX_RUNS_LIMIT)) {
    throw new InvalidParameter(`limit must be one whole number from 1 to ${MAX_RUNS_LIMIT}`);
  }
  return limit;
}

/** The request target as a URL; only origin-form (`/path?query`) and absolute-form are accepted. */
function requestUrl(target: string): URL {
  try {
    return new URL(target.startsWith('/') ? `http://server.invalid${target}` : target);
  } catch {
    throw new InvalidParameter('the request target is not a valid path');
  }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new InvalidParameter('a path segment is not valid percent-encoding');
  }
}

function classify(error: unknown): { status: number; code: ApiErrorCode; message: string } {
  if (error instanceof InvalidParameter)
    return { status: 400, code: 'invalid_parameter', message: error.message };
  if (error instanceof SnapshotUnavailable) {
    return { status: 503, code: 'snapshot_unavailable', message: 'the orchestrator state is unavailable' };
  }
  if (error instanceof PersistenceError) {
    return { status: 503, code: 'store_unavailable', message: 'the database is unavailable' };
  }
  return { status: 500, code: 'internal_error', message: 'internal error; see the service log' };
}

/** True for a Host header naming a loopback address (or no Host header: HTTP/1.0). */
export function isLoopbackHost(header: string | undefined): boolean {
  if (header === undefined) return true;
  const name = hostNameOf(header);
  return name === 'localhost' || name === '::1' || /^127(\.\d{1,3}){3}$/.test(name);
}

/** True when the Host header is loopback, or in `allowed` (null: any Host is accepted). */
export function hostAllowed(header: string | undefined, allowed: ReadonlySet<string> | null): boolean {
  if (allowed === null || isLoopbackHost(header)) return true;
  return header !== undefined && allowed.has(hostNameOf(header));
}

/** The name a Host header gives, as allowed hosts are written: lower case, no port, brackets or trailing dot. */
function hostNameOf(header: string): string {
  const name = header.startsWith('[') ? header.slice(1, header.indexOf(']')) : (header.split(':')[0] ?? '');
  return name.toLowerCase().replace(/\.$/, '');
}

/** True unless the request carries an Origin other than the server it was sent to. */
function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === req.headers.host?.toLowerCase();
  } catch {
    return false;
  }
}
