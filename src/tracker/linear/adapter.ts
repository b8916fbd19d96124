/**
 * The Linear tracker over its GraphQL API (client.ts): the issues of one project, read by
 * workflow-state name. Every read is scoped to the project's slug id, so an issue moved to
 * another project is gone as far as the orchestrator knows, the same as a deleted one.
 *
 * State names are matched case-insensitively on both sides: the filter asks Linear with
 * `eqIgnoreCase`, and every answer is checked again here, so a filter Linear reads more
 * loosely than we meant can never let a wrong state through. A transition looks the target
 * up among the workflow states of the issue's own team (teams name their states freely);
 * labels are added by id and never created, because a typo in a workflow would otherwise
 * litter the workspace with new labels. A listing survives a malformed issue (left out, with
 * a warning); a read of that issue by id fails with a payload error instead.
 */
import { TrackerError } from '../../domain/errors.js';
import type { Issue, IssueComment } from '../../domain/issue.js';
import type {
  IssueStateReading,
  TrackerAdapter,
  TrackerQueryTool,
  TrackerSettings,
} from '../../domain/tracker.js';
import { configuredState } from '../states.js';
import { type ClientStats, GraphqlClient } from './client.js';
import { ASSIGNEE_ME, type LinearTrackerConfig } from './config.js';
import {
  COMMENT_CREATE,
  COMMENT_PAGE_SIZE,
  ISSUE_ADD_LABEL,
  ISSUE_BY_ID,
  ISSUE_COMMENTS,
  ISSUE_SET_STATE,
  ISSUE_STATES_BY_FILTER,
  ISSUE_STATES_BY_IDS,
  ISSUES_PAGE,
  LABEL_TARGET,
  LABELS_NAMED,
  NESTED_PAGE_SIZE,
  TRANSITION_TARGET,
  VIEWER,
} from './documents.js';
import { payloadError, redactor } from './errors.js';
import { type Page, readComments, readIssue, readPage, readStateReading } from './normalise.js';
import { LinearQueryTool } from './query-tool.js';
import { record, str } from './values.js';

/** Ids (or identifiers) asked for in one state request. */
const BATCH_SIZE = 50;
const IDENTIFIER = /^([A-Za-z0-9]+)-(\d+)$/;

/** The state settings the tracker reads. */
export type LinearStates = Pick<
  TrackerSettings,
  'activeStates' | 'terminalStates' | 'handoffState' | 'inProgressState' | 'blockedState'
>;

/** Knobs for tests and embedding; production uses the defaults. */
export interface LinearTrackerOptions {
  /** Receives operator warnings (page cap reached, a malformed issue left out). */
  warn?: (message: string) => void;
  /** Base of the backoff for 5xx and transport failures (n² × base); 1000 by default. */
  retryBaseMs?: number;
  /** Per-request timeout; 30 s by default. */
  timeoutMs?: number;
  /** Transport for tests. */
  fetch?: typeof fetch;
}

/** A TrackerAdapter over one Linear project's issues. */
export class LinearTracker implements TrackerAdapter {
  /** `linear_graphql`: read-only GraphQL scoped to the project (query-tool.ts). */
  readonly queryTool: TrackerQueryTool;
  private readonly client: GraphqlClient;
  private readonly active: Set<string>;
  private readonly terminal: Set<string>;
  private readonly warn: (message: string) => void;
  /** The API key's own user id once `assignee: me` was resolved (it cannot change for a key). */
  private viewerId: string | null = null;

  constructor(
    private readonly config: LinearTrackerConfig,
    private readonly states: LinearStates,
    options: LinearTrackerOptions = {},
  ) {
    this.active = new Set(states.activeStates.map(lower));
    this.terminal = new Set(states.terminalStates.map(lower));
    this.warn = options.warn ?? ((message) => process.emitWarning(message, { code: 'TRACKER_WARNING' }));
    this.client = new GraphqlClient(config.endpoint, config.token, {
      maxRateLimitWaitMs: config.maxRateLimitWaitMs,
      ...(options.retryBaseMs === undefined ? {} : { retryBaseMs: options.retryBaseMs }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    });
    this.queryTool = new LinearQueryTool(this.client, config.projectSlug, redactor(config.token));
  }

  /** Requests sent and rate-limit waits, for tests and benchmarks. */
  get stats(): ClientStats {
    return this.client.stats;
  }

  async fetchCandidateIssues(): Promise<Issue[]> {
    const what = 'fetch candidates';
    if (this.states.activeStates.length === 0) return [];
    const assignee = await this.assigneeId(what);
    const filter = {
      ...this.inStates(this.states.activeStates),
      ...(assignee === null ? {} : { assignee: { id: { eq: assignee } } }),
    };
    const issues = this.readListed(await this.listIssues(what, filter), what);
    return issues.filter(
      (issue) => this.active.has(lower(issue.state)) && !this.terminal.has(lower(issue.state)),
    );
  }

  async fetchIssuesByStates(states: readonly string[]): Promise<Issue[]> {
    if (states.length === 0) return [];
    const what = 'fetch issues by states';
    const wanted = new Set(states.map(lower));
    const issues = this.readListed(await this.listIssues(what, this.inStates(states)), what);
    return issues.filter((issue) => wanted.has(lower(issue.state)));
  }

  async fetchIssueById(id: string): Promise<Issue> {
    const what = `fetch issue ${id}`;
    const data = await this.client.request(what, ISSUE_BY_ID, { id, commentsFirst: COMMENT_PAGE_SIZE });
    const node = this.scopedIssue(data, id, what);
    const { issue, truncated } = readIssue(node, what);
    if (truncated) this.warnTruncated(what, issue.identifier);
    const first = readPage(node, 'comments', what);
    const rest = await this.commentPages(id, what, first);
    return { ...issue, comments: readComments([...first.nodes, ...rest], what) };
  }

  async fetchIssueStatesByIds(ids: readonly string[]): Promise<IssueStateReading[]> {
    const unique = [...new Set(ids.filter((id) => id.trim() !== ''))];
    const out: IssueStateReading[] = [];
    for (let i = 0; i < unique.length; i += BATCH_SIZE) {
      const batch = unique.slice(i, i + BATCH_SIZE);
      const what = `fetch states of ${batch.length} issue${batch.length === 1 ? '' : 's'}`;
      const nodes = await this.paged(what, async (after) =>
        readPage(
          await this.client.request(what, ISSUE_STATES_BY_IDS, {
            projectSlug: this.config.projectSlug,
            ids: batch,
            first: BATCH_SIZE,
            after,
          }),
          'issues',
          what,
        ),
      );
      // A reading asked for by id must not silently drop a bad record: it fails the refresh.
      const wanted = new Set(batch);
      out.push(...nodes.map((n) => readStateReading(n, what)).filter((r) => wanted.has(r.id)));
    }
    return out;
  }

  async fetchIssueStatesByIdentifiers(identifiers: readonly string[]): Promise<IssueStateReading[]> {
    const keys = new Map<string, { team: string; number: number }>();
    for (const identifier of identifiers) {
      const match = IDENTIFIER.exec(identifier.trim());
      if (match === null) continue;
      keys.set(identifier.trim().toUpperCase(), { team: match[1] as string, number: Number(match[2]) });
    }
    const all = [...keys.entries()];
    const out: IssueStateReading[] = [];
    for (let i = 0; i < all.length; i += BATCH_SIZE) {
      const batch = all.slice(i, i + BATCH_SIZE);
      const what = `fetch states of ${batch.length} issue${batch.length === 1 ? '' : 's'} by identifier`;
      const filter = {
        project: { slugId: { eq: this.config.projectSlug } },
        or: batch.map(([, k]) => ({ team: { key: { eqIgnoreCase: k.team } }, number: { eq: k.number } })),
      };
      const nodes = await this.paged(what, async (after) =>
        readPage(
          await this.client.request(what, ISSUE_STATES_BY_FILTER, { filter, first: BATCH_SIZE, after }),
          'issues',
          what,
        ),
      );
      const wanted = new Set(batch.map(([identifier]) => identifier));
      out.push(
        ...nodes.map((n) => readStateReading(n, what)).filter((r) => wanted.has(r.identifier.toUpperCase())),
      );
    }
    return out;
  }

  async fetchIssueComments(id: string): Promise<IssueComment[]> {
    const what = `fetch comments of issue ${id}`;
    return readComments(await this.paged(what, (after) => this.commentPage(id, what, after)), what);
  }

  async transitionIssue(id: string, state: string): Promise<void> {
    const what = `transition issue ${id} to "${state}"`;
    const target = configuredState(this.states, state);
    const data = await this.client.request(what, TRANSITION_TARGET, { id, stateName: target });
    const issue = this.scopedIssue(data, id, what);
    const team = record(issue.team);
    const teamName = `${str(team?.name) || '?'} (${str(team?.key) || '?'})`;
    const candidates = readPage(team, 'states', what).nodes.map(record);
    const found = candidates.find((s) => lower(str(s?.name)) === lower(target));
    const stateId = str(found?.id);
    if (stateId === '') {
      throw new TrackerError(
        'tracker_payload_error',
        `${what}: the team ${teamName} has no workflow state named "${target}"; add it to the team's workflow in Linear or change the workflow's states`,
      );
    }
    if (str(record(issue.state)?.id) === stateId) return;
    const result = await this.client.request(what, ISSUE_SET_STATE, { id: str(issue.id) || id, stateId });
    this.expectSuccess(result, 'issueUpdate', what);
  }

  async commentIssue(id: string, body: string): Promise<void> {
    const what = `comment on issue ${id}`;
    const result = await this.client.request(what, COMMENT_CREATE, { issueId: id, body });
    this.expectSuccess(result, 'commentCreate', what);
  }

  async addLabel(id: string, label: string): Promise<void> {
    const what = `add label "${label}" to issue ${id}`;
    const wanted = lower(label.trim());
    if (wanted === '') throw new TrackerError('tracker_payload_error', `${what}: a label must not be empty`);
    const issue = this.scopedIssue(await this.client.request(what, LABEL_TARGET, { id }), id, what);
    const current = readPage(issue, 'labels', what).nodes.map((n) => lower(str(record(n)?.name)));
    if (current.includes(wanted)) return;
    const team = record(issue.team);
    const teamId = str(team?.id);
    const named = readPage(
      await this.client.request(what, LABELS_NAMED, { name: wanted }),
      'issueLabels',
      what,
    );
    const labels = named.nodes.map(record).filter((l) => lower(str(l?.name)) === wanted);
    // The issue's own team's label wins over a workspace-wide one; other teams' labels cannot be used.
    const pick =
      labels.find((l) => str(record(l?.team)?.id) === teamId && teamId !== '') ??
      labels.find((l) => l?.team === null || l?.team === undefined);
    const labelId = str(pick?.id);
    if (labelId === '') {
      throw new TrackerError(
        'tracker_payload_error',
        `${what}: no label "${wanted}" in the team ${str(team?.name) || '?'} (${str(team?.key) || '?'}) or the workspace; create it first (labels are never created automatically)`,
      );
    }
    const result = await this.client.request(what, ISSUE_ADD_LABEL, { id: str(issue.id) || id, labelId });
    this.expectSuccess(result, 'issueAddLabel', what);
  }

  // ------------------------------------------------------------------ helpers

  /** The filter for this project's issues whose state is one of `states`, any casing. */
  private inStates(states: readonly string[]): Record<string, unknown> {
    return {
      project: { slugId: { eq: this.config.projectSlug } },
      state: {
        or: [...new Set(states.map((s) => s.trim()))].map((name) => ({ name: { eqIgnoreCase: name } })),
      },
    };
  }

  /** The user whose issues are candidates: null for anyone, `me` resolved once through `viewer`. */
  private async assigneeId(what: string): Promise<string | null> {
    const assignee = this.config.assignee;
    if (assignee === null || assignee === '') return null;
    if (lower(assignee) !== ASSIGNEE_ME) return assignee;
    if (this.viewerId !== null) return this.viewerId;
    const viewer = record((await this.client.request(what, VIEWER, {})).viewer);
    const id = str(viewer?.id);
    if (id === '') throw payloadError(what, 'viewer has no id');
    this.viewerId = id;
    return id;
  }

  /** Every issue node of a listing, page after page, up to `linear.max_pages`. */
  private listIssues(what: string, filter: Record<string, unknown>): Promise<unknown[]> {
    return this.paged(what, async (after) =>
      readPage(
        await this.client.request(what, ISSUES_PAGE, { filter, first: this.config.pageSize, after }),
        'issues',
        what,
      ),
    );
  }

  /**
   * Follows `endCursor` from `start` (the first page by default) until the last page or the
   * page cap; a page that says more follow without a cursor is tracker_missing_end_cursor.
   */
  private async paged(
    what: string,
    fetchPage: (after: string | null) => Promise<Page>,
    start: { after: string | null; page: number } = { after: null, page: 1 },
  ): Promise<unknown[]> {
    const nodes: unknown[] = [];
    let after = start.after;
    for (let page = start.page; ; page++) {
      const current = await fetchPage(after);
      nodes.push(...current.nodes);
      if (!current.hasNextPage) return nodes;
      if (current.endCursor === null) throw missingCursor(what, page);
      if (page >= this.config.maxPages) {
        this.warn(
          `${what}: stopped after ${page} page${page === 1 ? '' : 's'} (linear.max_pages); later issues were not read`,
        );
        return nodes;
      }
      after = current.endCursor;
    }
  }

  /** Issue nodes read one by one: a malformed one is reported and left out, the rest are kept. */
  private readListed(nodes: readonly unknown[], what: string): Issue[] {
    const out: Issue[] = [];
    for (const node of nodes) {
      try {
        const { issue, truncated } = readIssue(node, what);
        if (truncated) this.warnTruncated(what, issue.identifier);
        out.push(issue);
      } catch (error) {
        if (!(error instanceof TrackerError)) throw error;
        this.warn(`${error.message}; that issue is left out`);
      }
    }
    return out;
  }

  private warnTruncated(what: string, identifier: string): void {
    this.warn(
      `${what}: issue ${identifier} has more than ${NESTED_PAGE_SIZE} labels or relations; only the first ${NESTED_PAGE_SIZE} were read`,
    );
  }

  /** `data.issue`, which must exist and belong to the configured project (else it is not found here). */
  private scopedIssue(data: Record<string, unknown>, id: string, what: string): Record<string, unknown> {
    const issue = record(data.issue);
    if (issue === null) throw payloadError(what, 'the answer has no issue');
    const slug = str(record(issue.project)?.slugId);
    if (slug !== this.config.projectSlug) {
      throw new TrackerError(
        'tracker_not_found',
        `${what}: issue ${id} is not in the project ${this.config.projectSlug}`,
      );
    }
    return issue;
  }

  private async commentPage(id: string, what: string, after: string | null): Promise<Page> {
    const data = await this.client.request(what, ISSUE_COMMENTS, { id, first: COMMENT_PAGE_SIZE, after });
    return readPage(this.scopedIssue(data, id, what), 'comments', what);
  }

  /** The comment nodes after `first`, following its cursor. */
  private async commentPages(id: string, what: string, first: Page): Promise<unknown[]> {
    if (!first.hasNextPage) return [];
    if (first.endCursor === null) throw missingCursor(what, 1);
    return this.paged(what, (after) => this.commentPage(id, what, after), {
      after: first.endCursor,
      page: 2,
    });
  }

  /** A mutation payload must say `success: true`; anything else is a refused write (retryable). */
  private expectSuccess(data: Record<string, unknown>, field: string, what: string): void {
    const payload = record(data[field]);
    if (payload === null) throw payloadError(what, `the answer has no ${field}`);
    if (payload.success !== true)
      throw new TrackerError('tracker_api_error', `${what}: Linear answered without success`);
  }
}

function missingCursor(what: string, page: number): TrackerError {
  return new TrackerError(
    'tracker_missing_end_cursor',
    `${what}: page ${page} says more pages follow but gives no end cursor`,
  );
}

function lower(value: string): string {
  return value.toLowerCase();
}
