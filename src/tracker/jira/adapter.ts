/**
 * The Jira tracker over the REST v3 API (Cloud; a Server/Data Center site reached with a
 * personal access token speaks the same endpoints where it has them). States are Jira
 * statuses, so a transition is a workflow move: the issue's available transitions are read
 * and the one leading to the target status is taken, because transition ids and names are
 * per-workflow and a status can never simply be set.
 *
 * Listings are JQL searches paged by `nextPageToken` up to a cap; a record that cannot be
 * read is left out of a listing with a warning (one broken issue must not stop every
 * other from being worked on) but fails a read by id, where the caller asked for exactly
 * that issue. Refreshes by id or key go in batches; Jira refuses a whole query naming a key
 * it does not have, so a refused batch is read issue by issue and the missing are omitted.
 */
import { TrackerError } from '../../domain/errors.js';
import type { Issue, IssueComment } from '../../domain/issue.js';
import type { IssueStateReading, TrackerAdapter, TrackerSettings } from '../../domain/tracker.js';
import { configuredState } from '../states.js';
import { textToAdf } from './adf.js';
import { JiraClient, type JiraClientOptions } from './client.js';
import type { JiraTrackerConfig } from './config.js';
import { isKind } from './errors.js';
import { byIdsJql, byKeysJql, byStatesJql, candidatesJql } from './jql.js';
import {
  ISSUE_FIELDS,
  labelsOf,
  readCommentPage,
  readSearchPage,
  readTransitions,
  toIssue,
  toStateReading,
} from './normalise.js';

const API = '/rest/api/3';
/** Ids or keys per refresh query (JQL lists stay well under Jira's query length limits). */
const BATCH_SIZE = 40;
const COMMENT_PAGE_SIZE = 100;
const ISSUE_KEY = /^[A-Za-z][A-Za-z0-9_]*-\d+$/;

/** The state settings that decide which transitions are allowed. */
export type JiraStates = Pick<
  TrackerSettings,
  'activeStates' | 'terminalStates' | 'handoffState' | 'inProgressState' | 'blockedState'
>;

/** Knobs for tests and embedding. */
export interface JiraTrackerOptions extends JiraClientOptions {
  /** Operator warnings (a page cap reached, a record left out). */
  warn?: (message: string) => void;
}

/** A TrackerAdapter over one Jira project. */
export class JiraTracker implements TrackerAdapter {
  readonly client: JiraClient;
  private readonly warn: (message: string) => void;
  /** A malformed record in a listing: left out of the result, with a warning naming it. */
  private readonly leaveOut = (error: TrackerError) => this.warn(`${error.message}; that issue is left out`);

  constructor(
    private readonly config: JiraTrackerConfig,
    private readonly states: JiraStates,
    options: JiraTrackerOptions = {},
  ) {
    this.client = new JiraClient(config, options);
    this.warn = options.warn ?? ((message) => process.emitWarning(message, { code: 'TRACKER_WARNING' }));
  }

  async fetchCandidateIssues(): Promise<Issue[]> {
    const what = 'fetch candidates';
    const jql = candidatesJql({
      project: this.config.project,
      activeStates: this.states.activeStates,
      terminalStates: this.states.terminalStates,
      assignee: this.config.assignee,
      queryFilter: this.config.queryFilter,
    });
    return this.readEach(await this.search(jql, ISSUE_FIELDS, what), (raw) =>
      toIssue(raw, this.config.endpoint, what),
    );
  }

  async fetchIssueById(id: string): Promise<Issue> {
    const what = `fetch issue ${id}`;
    const raw = await this.getIssue(id, ISSUE_FIELDS, what);
    const issue = toIssue(raw, this.config.endpoint, what);
    return { ...issue, comments: await this.comments(id, what) };
  }

  async fetchIssuesByStates(states: readonly string[]): Promise<Issue[]> {
    if (states.length === 0) return [];
    const what = 'fetch issues by states';
    const raws = await this.search(byStatesJql(this.config.project, states), ISSUE_FIELDS, what);
    return this.readEach(raws, (raw) => toIssue(raw, this.config.endpoint, what));
  }

  async fetchIssueStatesByIds(ids: readonly string[]): Promise<IssueStateReading[]> {
    const numeric = [...new Set(ids)].filter((id) => /^\d+$/.test(id));
    return this.readStates(numeric, byIdsJql, 'fetch states by ids');
  }

  async fetchIssueStatesByIdentifiers(identifiers: readonly string[]): Promise<IssueStateReading[]> {
    const keys = [...new Set(identifiers.map((k) => k.toUpperCase()))].filter((k) => ISSUE_KEY.test(k));
    return this.readStates(keys, byKeysJql, 'fetch states by identifiers');
  }

  async fetchIssueComments(id: string): Promise<IssueComment[]> {
    return this.comments(id, `fetch comments of issue ${id}`);
  }

  async transitionIssue(id: string, state: string): Promise<void> {
    const what = `transition issue ${id} to "${state}"`;
    const target = configuredState(this.states, state, what);
    const path = `${this.issuePath(id, what)}/transitions`;
    const transitions = readTransitions(await this.client.send({ method: 'GET', path, what }), what);
    const chosen = transitions.find((t) => t.to.toLowerCase() === target.toLowerCase());
    if (chosen === undefined) {
      // No move leads there; an issue already in the target status needs none.
      const current = toStateReading(await this.getIssue(id, ['status'], what), what).state;
      if (current.toLowerCase() === target.toLowerCase()) return;
      const targets = [...new Set(transitions.map((t) => t.to))];
      throw new TrackerError(
        'tracker_payload_error',
        `${what}: no transition to "${target}" is available from "${current}" (available: ${targets.length > 0 ? targets.join(', ') : 'none'})`,
      );
    }
    await this.client.send({ method: 'POST', path, body: { transition: { id: chosen.id } }, what });
  }

  async commentIssue(id: string, body: string): Promise<void> {
    const what = `comment on issue ${id}`;
    const path = `${this.issuePath(id, what)}/comment`;
    await this.client.send({ method: 'POST', path, body: { body: textToAdf(body) }, what });
  }

  async addLabel(id: string, label: string): Promise<void> {
    const what = `add label "${label}" to issue ${id}`;
    const wanted = label.trim().toLowerCase();
    if (wanted === '') throw new TrackerError('tracker_payload_error', `${what}: a label must not be empty`);
    if (/\s/.test(wanted))
      throw new TrackerError('tracker_payload_error', `${what}: Jira labels cannot contain spaces`);
    const path = this.issuePath(id, what);
    if (labelsOf(await this.getIssue(id, ['labels'], what), what).includes(wanted)) return;
    await this.client.send({ method: 'PUT', path, body: { update: { labels: [{ add: wanted }] } }, what });
  }

  // ------------------------------------------------------------------ helpers

  /** The API path of an issue; a non-numeric id cannot name a Jira issue. */
  private issuePath(id: string, what: string): string {
    if (!/^\d+$/.test(id))
      throw new TrackerError('tracker_not_found', `${what}: no issue "${id}" in ${this.config.project}`);
    return `${API}/issue/${id}`;
  }

  private getIssue(id: string, fields: readonly string[], what: string): Promise<unknown> {
    return this.client.send({
      method: 'GET',
      path: this.issuePath(id, what),
      query: { fields: fields.join(',') },
      what,
    });
  }

  /** Every issue a JQL query finds, following `nextPageToken` up to the page cap. */
  private async search(jql: string, fields: readonly string[], what: string): Promise<unknown[]> {
    const issues: unknown[] = [];
    let token: string | null = null;
    for (let page = 0; ; page++) {
      if (page >= this.config.maxPages) {
        this.warn(`${what}: stopped after ${page} pages (jira.max_pages); later issues were not read`);
        return issues;
      }
      const answer = await this.client.send({
        method: 'GET',
        path: `${API}/search/jql`,
        query: {
          jql,
          fields: fields.join(','),
          maxResults: this.config.pageSize,
          nextPageToken: token ?? undefined,
        },
        what,
      });
      const read = readSearchPage(answer, what);
      issues.push(...read.issues);
      token = read.nextPageToken;
      if (token === null) return issues;
    }
  }

  /** Reads each raw record of a listing, leaving out (with a warning) the ones that cannot be read. */
  private readEach<T>(raws: readonly unknown[], read: (raw: unknown) => T): T[] {
    const out: T[] = [];
    for (const raw of raws) {
      try {
        out.push(read(raw));
      } catch (error) {
        if (!(error instanceof TrackerError)) throw error;
        this.leaveOut(error);
      }
    }
    return out;
  }

  /** State readings in batches; a batch Jira refuses (it names an issue that is gone) is read one by one. */
  private async readStates(
    refs: readonly string[],
    jqlOf: (batch: readonly string[]) => string,
    what: string,
  ): Promise<IssueStateReading[]> {
    const out: IssueStateReading[] = [];
    for (let i = 0; i < refs.length; i += BATCH_SIZE) {
      const batch = refs.slice(i, i + BATCH_SIZE);
      let raws: unknown[];
      try {
        raws = await this.search(jqlOf(batch), ['status'], what);
      } catch (error) {
        if (!isKind(error, 'tracker_payload_error')) throw error;
        raws = await this.oneByOne(batch, what);
      }
      out.push(...this.readEach(raws, (raw) => toStateReading(raw, what)));
    }
    return out;
  }

  private async oneByOne(refs: readonly string[], what: string): Promise<unknown[]> {
    const raws: unknown[] = [];
    for (const ref of refs) {
      try {
        raws.push(
          await this.client.send({
            method: 'GET',
            path: `${API}/issue/${encodeURIComponent(ref)}`,
            query: { fields: 'status' },
            what,
          }),
        );
      } catch (error) {
        if (!isKind(error, 'tracker_not_found')) throw error;
      }
    }
    return raws;
  }

  private async comments(id: string, what: string): Promise<IssueComment[]> {
    const path = `${this.issuePath(id, what)}/comment`;
    const out: IssueComment[] = [];
    let startAt: number | null = 0;
    while (startAt !== null) {
      const answer = await this.client.send({
        method: 'GET',
        path,
        query: { startAt, maxResults: COMMENT_PAGE_SIZE, orderBy: 'created' },
        what,
      });
      const page = readCommentPage(answer, what);
      out.push(...page.comments);
      startAt = page.nextStartAt;
    }
    return out;
  }
}
