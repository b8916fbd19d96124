/**
 * The GitLab REST v4 calls this tracker makes, through @gitbeaker/rest. Gitbeaker builds
 * the routes (a project path is URL-encoded into one segment), sends the token as
 * PRIVATE-TOKEN and follows `Link: rel="next"` across pages up to a cap; its requests go
 * through our transport (transport.ts) rather than its own handler, which is what gives
 * conditional requests, bounded rate-limit waits and status classification. Bodies come back
 * unvalidated: normalise.ts checks their shape.
 */
import { IssueLinks, IssueNotes, Issues, ProjectLabels, Users } from '@gitbeaker/rest';
import type { GitlabTransport, HttpAnswer } from './transport.js';

/** A page-capped listing: every item read, and whether the cap left pages unread. */
export interface Listing {
  items: unknown;
  more: boolean;
}

/** The calls the adapter makes; every body is as the API sent it. */
export interface GitlabApi {
  /** Issues of the project with the given list parameters, at most `maxPages` pages of `perPage`. */
  listIssues(params: Record<string, unknown>, perPage: number, maxPages: number): Promise<Listing>;
  getIssue(iid: number): Promise<unknown>;
  /** Every note of an issue, oldest first. */
  notes(iid: number, maxPages: number): Promise<Listing>;
  /** Issues linked to an issue, each with its `link_type` as seen from that issue. */
  links(iid: number): Promise<unknown>;
  editIssue(iid: number, changes: Record<string, unknown>): Promise<unknown>;
  createNote(iid: number, body: string): Promise<unknown>;
  /** Project labels whose name contains `search` (GitLab's own substring search). */
  labels(search: string): Promise<unknown>;
  currentUser(): Promise<unknown>;
}

type Loose = Record<string, (...args: unknown[]) => Promise<unknown>>;
interface ResourceOptions {
  url: string;
  headers: Record<string, string>;
  authHeaders: Record<string, () => Promise<string>>;
}
interface RequestOptions {
  searchParams?: Record<string, unknown>;
  body?: unknown;
}

/** The API over `transport` for one project on the instance at `host`. */
export function gitlabApi(
  host: string,
  token: string,
  project: string,
  transport: GitlabTransport,
): GitlabApi {
  const requesterFn = (resource: ResourceOptions) => {
    const call =
      (method: string) =>
      async (endpoint: string, options: RequestOptions = {}): Promise<HttpAnswer> => {
        const headers: Record<string, string> = { ...resource.headers, accept: 'application/json' };
        for (const [name, value] of Object.entries(resource.authHeaders)) headers[name] = await value();
        const base = resource.url.endsWith('/') ? resource.url : `${resource.url}/`;
        const url = new URL(endpoint, base);
        const query = encodeQuery(options.searchParams ?? {});
        if (query !== '') url.search = query;
        const body = options.body;
        const hasBody =
          (method === 'POST' || method === 'PUT') &&
          typeof body === 'object' &&
          body !== null &&
          Object.keys(body).length > 0;
        if (hasBody) headers['content-type'] = 'application/json';
        return transport.send({
          method,
          url: url.href,
          headers,
          ...(hasBody ? { body: JSON.stringify(snakeKeys(body as Record<string, unknown>)) } : {}),
        });
      };
    return {
      get: call('GET'),
      post: call('POST'),
      put: call('PUT'),
      patch: call('PATCH'),
      delete: call('DELETE'),
    };
  };
  const options = { host, token, requesterFn, queryTimeout: null } as never;
  const issues = new Issues(options) as unknown as Loose;
  const notes = new IssueNotes(options) as unknown as Loose;
  const links = new IssueLinks(options) as unknown as Loose;
  const labels = new ProjectLabels(options) as unknown as Loose;
  const users = new Users(options) as unknown as Loose;
  const expanded = async (promise: Promise<unknown>): Promise<Listing> => {
    const answer = (await promise) as { data?: unknown; paginationInfo?: { next?: unknown } };
    const next = answer.paginationInfo?.next;
    return { items: answer.data, more: typeof next === 'number' && next > 0 };
  };
  const data = async (promise: Promise<unknown>): Promise<unknown> =>
    ((await promise) as { data?: unknown }).data;

  return {
    listIssues: (params, perPage, maxPages) =>
      expanded(
        issues.all?.({
          projectId: project,
          ...params,
          perPage,
          maxPages,
          showExpanded: true,
        }) as Promise<unknown>,
      ),
    getIssue: (iid) =>
      data(issues.show?.(iid, { projectId: project, showExpanded: true }) as Promise<unknown>),
    notes: (iid, maxPages) =>
      expanded(
        notes.all?.(project, iid, {
          sort: 'asc',
          orderBy: 'created_at',
          perPage: 100,
          maxPages,
          showExpanded: true,
        }) as Promise<unknown>,
      ),
    links: (iid) => data(links.all?.(project, iid, { showExpanded: true }) as Promise<unknown>),
    editIssue: (iid, changes) =>
      data(issues.edit?.(project, iid, { ...changes, showExpanded: true }) as Promise<unknown>),
    createNote: (iid, body) =>
      data(notes.create?.(project, iid, body, { showExpanded: true }) as Promise<unknown>),
    labels: (search) =>
      data(
        labels.all?.(project, { search, perPage: 100, maxPages: 1, showExpanded: true }) as Promise<unknown>,
      ),
    currentUser: () => data(users.showCurrentUser?.({ showExpanded: true }) as Promise<unknown>),
  };
}

/**
 * List parameters as GitLab reads them: snake_case keys (gitbeaker camelises the ones it
 * copies from a `next` link), arrays as `key[]=v`, nested objects as `key[sub]=v`.
 */
export function encodeQuery(params: Record<string, unknown>): string {
  const out = new URLSearchParams();
  const add = (key: string, value: unknown) => {
    if (value === undefined || value === null) return;
    if (Array.isArray(value)) {
      for (const item of value) add(`${key}[]`, item);
    } else if (typeof value === 'object') {
      for (const [sub, inner] of Object.entries(value)) add(`${key}[${sub}]`, inner);
    } else {
      out.append(key, String(value));
    }
  };
  for (const [key, value] of Object.entries(params)) add(snake(key), value);
  return out.toString();
}

function snakeKeys(body: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).map(([key, value]) => [snake(key), value]));
}

function snake(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}
