/**
 * A stateful fake of Linear's GraphQL API on node:http at 127.0.0.1. Requests are parsed,
 * validated and executed by graphql-js against schema.ts (Linear's own names and types), so
 * a document that would fail at Linear fails here: an unknown field or a variable of the
 * wrong type is a 400 with an `errors` array, an unknown issue is `Entity not found` in a 200.
 *
 * The data lives in a LinearStore (store.ts: teams with their workflow states, projects with
 * `slugId`, users with the key's own as `viewer`, labels, issues, comments, relations) that
 * FakeLinear extends, so seeding and reading back need no request; resolvers.ts serves it and
 * applies the writes (`issueUpdate`, `issueAddLabel`, `commentCreate`); `setState` lets a
 * test act as a person behind the tracker's back. This file is the HTTP side and the faults.
 *
 * Behaviour a tracker depends on, as Linear has it:
 *  - `Authorization` must be the raw API key (no `Bearer`); anything else is a 400 coded
 *    AUTHENTICATION_ERROR;
 *  - connections page with `first` (default 50) and `after`, `pageInfo { hasNextPage
 *    endCursor }`;
 *  - every answer carries `X-RateLimit-Requests-*` and `X-RateLimit-Complexity-*` headers
 *    (resets in epoch milliseconds).
 *
 * Fault controls: `failNext` (any status; 429 with `Retry-After` and spent budget headers;
 * 401 with an AUTHENTICATION_ERROR body), `rateLimitNext` (a 400 coded RATELIMITED carrying
 * only the reset headers, as Linear answers a spent budget), `missingEndCursorNext`
 * (`hasNextPage: true` with a null `endCursor`), `hangNext` (no answer at all), `malform`
 * (an issue served without its title and state), `corrupt` (answers whose data has the wrong
 * shape), `heal`; every request is logged in `requests`.
 *
 * Using it from another suite (for example a Symphony-format WORKFLOW.md whose flat
 * `tracker.project_slug` / `api_key` / `endpoint` / `assignee` keys point here):
 *
 *   const fake = await startFakeLinear({ token: 'lin_api_test' });
 *   const todo = fake.addIssue({ title: 'Fix it', state: 'Todo', priority: 2 });
 *   fake.addIssue({ title: 'After it', state: 'Todo', blockedBy: [todo.id] });
 *   // tracker: { kind: linear, endpoint: fake.endpoint, api_key: $LINEAR_API_KEY,
 *   //            project_slug: fake.project.slugId, assignee: me }
 *   ... fake.stateOf(todo) === 'Human Review'; fake.commentsOf(todo) ...
 *   await fake.close();
 *
 * With `assignee: me`, only issues seeded with `assigneeId: fake.viewer.id` are candidates;
 * the key to export is `fake.token`.
 *
 * The default workspace has one team (key `ENG`) whose states are Backlog, Todo, In Progress,
 * Human Review, Blocked, Done, Canceled and Duplicate, one project (`fake.project`) and the
 * viewer. `addTeam`, `addState`, `addProject`, `addUser`, `addLabel`, `addIssue`,
 * `addComment`, `addBlocker` seed more; `issue`, `stateOf`, `labelsOf`, `commentsOf` read back.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  buildSchema,
  type DocumentNode,
  type ExecutionResult,
  execute,
  type GraphQLError,
  type GraphQLSchema,
  getOperationAST,
  parse,
  validate,
} from 'graphql';
import { authError, rateLimitedError, validationError, withLinearExtensions } from './errors.js';
import { LinearResolvers } from './resolvers.js';
import { FAKE_LINEAR_SDL } from './schema.js';
import { LinearStore, type StoreOptions } from './store.js';

export type {
  FakeComment,
  FakeIssue,
  FakeLabel,
  FakeProject,
  FakeRelation,
  FakeState,
  FakeTeam,
  FakeUser,
  IssueSeed,
} from './store.js';

import { LoopbackHttp, readBody } from '../loopback-http.js';

/** One request as the fake saw it. */
export interface FakeRequest {
  at: number;
  status: number;
  operationName: string | null;
  query: string;
  variables: Record<string, unknown>;
  /** The fault that answered instead of the schema, if any. */
  fault: string | null;
  /** `Authorization` was the raw API key, something else, or absent (the key itself is not kept). */
  key: 'raw' | 'other' | 'none';
}

export interface FakeLinearOptions extends StoreOptions {
  /** The API key the fake accepts. */
  token?: string;
}

type Fault =
  | { kind: 'status'; status: number; retryAfterS: number | undefined; message: string | undefined }
  | { kind: 'rate_limited'; resetInMs: number; budget: 'requests' | 'complexity' }
  | { kind: 'missing_end_cursor' }
  | { kind: 'hang' };

interface FaultRule {
  remaining: number;
  fault: Fault;
  match: (operationName: string | null, query: string) => boolean;
}

const REQUESTS_LIMIT = 5000;
const COMPLEXITY_LIMIT = 3_000_000;
const WINDOW_MS = 3_600_000;

/** The store behind a GraphQL endpoint, with fault controls and a request log. */
export class FakeLinear extends LinearStore {
  readonly token: string;
  readonly requests: FakeRequest[] = [];
  /** When true, every answer's data has the wrong shape. */
  corrupt = false;
  private readonly malformed = new Set<string>();
  private readonly faults: FaultRule[] = [];
  private readonly hanging: ServerResponse[] = [];
  private readonly schema: GraphQLSchema;
  private readonly resolvers: LinearResolvers;
  private readonly http = new LoopbackHttp(
    (req, res) => this.handle(req, res),
    (error) => ({ errors: [{ message: String(error) }] }),
  );
  private base = '';
  private requestsRemaining = REQUESTS_LIMIT;
  private windowEndsMs = Date.now() + WINDOW_MS;

  constructor(options: FakeLinearOptions = {}) {
    super(options);
    this.token = options.token ?? 'lin_api_fake_0123456789abcdef';
    this.schema = buildSchema(FAKE_LINEAR_SDL);
    this.resolvers = new LinearResolvers(this);
  }

  /** The base URL (`http://127.0.0.1:<port>`). */
  get url(): string {
    return this.base;
  }

  /** The GraphQL endpoint (`tracker.endpoint`). */
  get endpoint(): string {
    return `${this.base}/graphql`;
  }

  async start(): Promise<this> {
    this.base = await this.http.start();
    return this;
  }

  async close(): Promise<void> {
    for (const res of this.hanging.splice(0)) res.destroy();
    await this.http.close();
  }

  // ---------------------------------------------------------------- faults

  /**
   * The next `count` matching requests answer `status`: a 429 carries `Retry-After:
   * retryAfterS` (when given) and spent budget headers, a 401 an AUTHENTICATION_ERROR body.
   */
  failNext(
    count: number,
    status: number,
    options: { retryAfterS?: number; message?: string; match?: FaultRule['match'] } = {},
  ): void {
    this.faults.push({
      remaining: count,
      fault: { kind: 'status', status, retryAfterS: options.retryAfterS, message: options.message },
      match: options.match ?? (() => true),
    });
  }

  /** The next `count` matching requests answer a 400 coded RATELIMITED whose budget resets in `resetInMs`. */
  rateLimitNext(
    count: number,
    resetInMs: number,
    options: { budget?: 'requests' | 'complexity'; match?: FaultRule['match'] } = {},
  ): void {
    this.faults.push({
      remaining: count,
      fault: { kind: 'rate_limited', resetInMs, budget: options.budget ?? 'requests' },
      match: options.match ?? (() => true),
    });
  }

  /** The next `count` answers listing issues say `hasNextPage: true` with a null `endCursor`. */
  missingEndCursorNext(count: number): void {
    this.faults.push({
      remaining: count,
      fault: { kind: 'missing_end_cursor' },
      match: (_op, query) => /\bissues\s*\(/.test(query),
    });
  }

  /** The next `count` matching requests get no answer at all (until the fake closes). */
  hangNext(count: number, match: FaultRule['match'] = () => true): void {
    this.faults.push({ remaining: count, fault: { kind: 'hang' }, match });
  }

  /** Serves the issue without a title and with a null state wherever it is listed or read in full. */
  malform(issueRef: string): void {
    this.malformed.add(this.issue(issueRef).id);
  }

  /** Drops every fault still pending (malformed issues and `corrupt` stay). */
  heal(): void {
    this.faults.length = 0;
  }

  // ---------------------------------------------------------------- HTTP

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://fake');
    const auth = req.headers.authorization;
    const key = auth === undefined ? 'none' : auth === this.token ? 'raw' : 'other';
    const log = (
      status: number,
      operationName: string | null,
      query: string,
      variables: Record<string, unknown>,
      fault: string | null,
    ) => this.requests.push({ at: Date.now(), status, operationName, query, variables, fault, key });
    if (url.pathname !== '/graphql') {
      this.send(res, 404, { errors: [{ message: 'Not found' }] });
      log(404, null, '', {}, null);
      return;
    }
    if (req.method !== 'POST') {
      this.send(res, 400, { errors: [{ message: 'GET query missing.' }] });
      log(400, null, '', {}, null);
      return;
    }
    let body: { query?: unknown; variables?: unknown; operationName?: unknown };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      this.send(res, 400, { errors: [{ message: 'POST body sent invalid JSON.' }] });
      log(400, null, '', {}, null);
      return;
    }
    const query = typeof body.query === 'string' ? body.query : '';
    const variables =
      typeof body.variables === 'object' && body.variables !== null
        ? (body.variables as Record<string, unknown>)
        : {};
    const operationName =
      typeof body.operationName === 'string' ? body.operationName : operationNameOf(query);

    const rule = this.faults.find((f) => f.remaining > 0 && f.match(operationName, query));
    const fault = rule?.fault;
    if (rule !== undefined && fault !== undefined && fault.kind !== 'missing_end_cursor') {
      rule.remaining -= 1;
      if (fault.kind === 'hang') {
        this.hanging.push(res);
        log(0, operationName, query, variables, 'hang');
        return;
      }
      const status = this.sendFault(res, fault);
      log(status, operationName, query, variables, fault.kind);
      return;
    }

    if (key !== 'raw') {
      this.send(res, 400, { errors: [authError()] });
      log(400, operationName, query, variables, null);
      return;
    }

    const { status, result } = this.run(query, variables, operationName);
    if (rule !== undefined && fault?.kind === 'missing_end_cursor' && status === 200 && result.data) {
      if (dropEndCursor(result.data)) rule.remaining -= 1;
    }
    this.send(res, status, result);
    log(status, operationName, query, variables, null);
  }

  /** Parses, validates and executes one request. */
  private run(
    query: string,
    variables: Record<string, unknown>,
    operationName: string | null,
  ): { status: number; result: ExecutionResult } {
    let document: DocumentNode;
    try {
      document = parse(query);
    } catch (error) {
      return { status: 400, result: { errors: [validationError(error as GraphQLError)] } };
    }
    const invalid = validate(this.schema, document);
    if (invalid.length > 0) return { status: 400, result: { errors: invalid.map(validationError) } };
    const result = execute({
      schema: this.schema,
      document,
      variableValues: variables,
      operationName,
      rootValue: this.resolvers.root(),
    }) as ExecutionResult;
    // Variables that do not coerce (a string where a list is wanted) fail before execution.
    if (result.data === undefined)
      return { status: 400, result: { errors: (result.errors ?? []).map(validationError) } };
    const out: ExecutionResult = { ...result, errors: result.errors?.map(withLinearExtensions) };
    if (out.errors === undefined) delete out.errors;
    if (out.data !== null && out.data !== undefined) {
      let data = JSON.parse(JSON.stringify(out.data)) as Record<string, unknown>;
      if (this.malformed.size > 0) mangle(data, this.malformed);
      if (this.corrupt) data = { unexpected: 'shape' };
      out.data = data;
    }
    return { status: 200, result: out };
  }

  private sendFault(
    res: ServerResponse,
    fault: Exclude<Fault, { kind: 'hang' | 'missing_end_cursor' }>,
  ): number {
    if (fault.kind === 'rate_limited') {
      this.send(
        res,
        400,
        { errors: [rateLimitedError()] },
        {
          [`x-ratelimit-${fault.budget}-remaining`]: '0',
          [`x-ratelimit-${fault.budget}-reset`]: String(Date.now() + fault.resetInMs),
        },
      );
      return 400;
    }
    const { status } = fault;
    if (status === 429) {
      this.send(
        res,
        429,
        { errors: [rateLimitedError(fault.message)] },
        {
          ...(fault.retryAfterS === undefined ? {} : { 'retry-after': String(fault.retryAfterS) }),
          'x-ratelimit-requests-remaining': '0',
          'x-ratelimit-requests-reset': String(Date.now() + (fault.retryAfterS ?? 60) * 1000),
        },
      );
    } else if (status === 401 || status === 403) {
      this.send(res, status, { errors: [authError(fault.message)] });
    } else {
      this.send(res, status, { errors: [{ message: fault.message ?? 'Internal server error' }] });
    }
    return status;
  }

  private send(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
    const now = Date.now();
    if (now >= this.windowEndsMs) {
      this.windowEndsMs = now + WINDOW_MS;
      this.requestsRemaining = REQUESTS_LIMIT;
    }
    this.requestsRemaining = Math.max(0, this.requestsRemaining - 1);
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'x-ratelimit-requests-limit': String(REQUESTS_LIMIT),
      'x-ratelimit-requests-remaining': String(this.requestsRemaining),
      'x-ratelimit-requests-reset': String(this.windowEndsMs),
      'x-ratelimit-complexity-limit': String(COMPLEXITY_LIMIT),
      'x-ratelimit-complexity-remaining': String(COMPLEXITY_LIMIT),
      'x-ratelimit-complexity-reset': String(this.windowEndsMs),
      ...extra,
    });
    res.end(text);
  }
}

/** Starts a fake on an ephemeral port; remember to close it. */
export function startFakeLinear(options: FakeLinearOptions = {}): Promise<FakeLinear> {
  return new FakeLinear(options).start();
}

/**
 * A workflow's `tracker:` block pointing the linear kind at `fake` (the key in `$LINEAR_API_KEY`),
 * with the states of the default team.
 */
export function fakeLinearTracker(fake: FakeLinear): Record<string, unknown> {
  return {
    kind: 'linear',
    endpoint: fake.endpoint,
    api_key: '$LINEAR_API_KEY',
    project: fake.project.slugId,
    active_states: ['Todo', 'In Progress'],
    terminal_states: ['Done', 'Canceled', 'Duplicate'],
    in_progress_state: 'In Progress',
    handoff_state: 'Human Review',
    blocked_state: 'Blocked',
  };
}

// ---------------------------------------------------------------- helpers

function operationNameOf(query: string): string | null {
  try {
    return getOperationAST(parse(query))?.name?.value ?? null;
  } catch {
    return null;
  }
}

/** Issues listed or read in full (those with a `title` in the answer) lose their title and state. */
function mangle(value: unknown, ids: ReadonlySet<string>): void {
  if (Array.isArray(value)) {
    for (const item of value) mangle(item, ids);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  const record = value as Record<string, unknown>;
  if (typeof record.id === 'string' && ids.has(record.id) && 'title' in record) {
    record.title = null;
    if ('state' in record) record.state = null;
  }
  for (const child of Object.values(record)) mangle(child, ids);
}

/** Makes the first `issues` page of an answer claim more pages without a cursor; false when there is none. */
function dropEndCursor(data: Record<string, unknown>): boolean {
  const issues = data.issues as { pageInfo?: Record<string, unknown> } | undefined;
  if (issues?.pageInfo === undefined) return false;
  issues.pageInfo.hasNextPage = true;
  issues.pageInfo.endCursor = null;
  return true;
}
