/**
 * The GitLab issues tracker over REST v4, for one project. States are scoped labels (see
 * normalise.ts), so a transition is one edit that swaps the state label and closes or
 * reopens the issue when the target demands it. Labels are never created on the fly: a
 * typo in a workflow would otherwise litter the project with new labels, so a label the
 * project lacks is a payload error naming it.
 *
 * An issue's id is GitLab's global issue id, which a project member cannot read an issue
 * by; every read and write goes by the project-scoped iid. The id → iid map is learned from
 * every issue this tracker sees, and an id it has never seen (after a restart, say) costs
 * one scan of the project's issues. Identifiers are iids and map straight through.
 *
 * Polling is what costs: every GET is conditional (transport.ts), listings page up to a
 * cap with a warning, and states of running issues are read in one `iids[]` listing.
 */
import { TrackerError } from '../../domain/errors.js';
import type { BlockerRef, Issue, IssueComment } from '../../domain/issue.js';
import type { IssueStateReading, TrackerAdapter } from '../../domain/tracker.js';
import { configuredState } from '../states.js';
import { type GitlabApi, gitlabApi } from './client.js';
import type { GitlabTrackerConfig } from './config.js';
import { payloadError } from './errors.js';
import {
  type GitlabStates,
  idsOf,
  type LabelScheme,
  type RawIssue,
  readBlockers,
  readNotes,
  readRawIssue,
  readRawIssues,
  stateLabel,
  stateOf,
  stateOrder,
  toIssue,
} from './normalise.js';
import { GitlabTransport, type TransportStats } from './transport.js';

const REQUEST_TIMEOUT_MS = 30_000;
/** Issues asked for per `iids[]` listing (GitLab's largest page). */
const IID_BATCH = 100;

/** Knobs for tests and embedding; production uses the defaults. */
export interface GitlabTrackerOptions {
  /** Receives operator warnings (page cap reached, a record left out). */
  warn?: (message: string) => void;
  /** Transport for tests. */
  fetch?: typeof fetch;
}

/** A TrackerAdapter over one GitLab project's issues. */
export class GitlabTracker implements TrackerAdapter {
  /** Requests sent and 304s served from the cache, for tests and benchmarks. */
  readonly stats: TransportStats;
  private readonly api: GitlabApi;
  private readonly scheme: LabelScheme;
  private readonly active: Set<string>;
  private readonly terminal: Set<string>;
  private readonly warn: (message: string) => void;
  /** Global id → iid, from every issue read. */
  private readonly iids = new Map<string, number>();
  /** The username `tracker.assignee: me` stands for, read once. */
  private me: string | null = null;
  private readonly leaveOut = (error: TrackerError) => this.warn(`${error.message}; that issue is left out`);

  constructor(
    private readonly config: GitlabTrackerConfig,
    states: GitlabStates,
    options: GitlabTrackerOptions = {},
  ) {
    this.scheme = {
      states,
      stateLabelPrefix: config.stateLabelPrefix,
      priorityLabelPrefix: config.priorityLabelPrefix,
    };
    this.active = new Set(states.activeStates.map(lower));
    this.terminal = new Set(states.terminalStates.map(lower));
    this.warn = options.warn ?? ((message) => process.emitWarning(message, { code: 'TRACKER_WARNING' }));
    const transport = new GitlabTransport({
      token: config.token,
      etagCacheSize: config.etagCacheSize,
      timeoutMs: REQUEST_TIMEOUT_MS,
      maxRateLimitWaitMs: config.maxRateLimitWaitMs,
      retryBackoffMs: config.retryBackoffMs,
      ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
    });
    this.stats = transport.stats;
    this.api = gitlabApi(config.endpoint, config.token, config.project, transport);
  }

  async fetchCandidateIssues(): Promise<Issue[]> {
    const what = 'fetch candidates';
    const params: Record<string, unknown> = { state: 'opened', orderBy: 'created_at', sort: 'asc' };
    for (const [key, value] of this.config.queryFilter) params[key] = value;
    const assignee = await this.assigneeUsername(what);
    if (assignee !== null) params.assignee_username = assignee;
    const raws = await this.listIssues(what, params);
    const out: Issue[] = [];
    for (const raw of raws) {
      if (!this.isCandidate(stateOf(raw, this.scheme))) continue;
      out.push(toIssue(raw, this.config.project, this.scheme, await this.blockers(raw.iid, what)));
    }
    return out;
  }

  async fetchIssueById(id: string): Promise<Issue> {
    const what = `fetch issue ${id}`;
    const iid = await this.iidOf(id, what);
    const raw = await this.getIssue(iid, what);
    const blockers = await this.blockers(iid, what);
    const comments = await this.comments(iid, what);
    return { ...toIssue(raw, this.config.project, this.scheme, blockers), comments };
  }

  async fetchIssuesByStates(states: readonly string[]): Promise<Issue[]> {
    if (states.length === 0) return [];
    const what = 'fetch issues by states';
    const wanted = new Set(states.map(lower));
    const closedToo = [...wanted].some((s) => this.terminal.has(s) || !this.active.has(s));
    const raws = await this.listIssues(what, {
      state: closedToo ? 'all' : 'opened',
      orderBy: 'created_at',
      sort: 'asc',
    });
    return raws
      .filter((raw) => wanted.has(lower(stateOf(raw, this.scheme))))
      .map((raw) => toIssue(raw, this.config.project, this.scheme));
  }

  async fetchIssueStatesByIds(ids: readonly string[]): Promise<IssueStateReading[]> {
    const unique = [...new Set(ids)].filter((id) => /^\d+$/.test(id));
    if (unique.length === 0) return [];
    const what = 'fetch states by ids';
    if (unique.some((id) => !this.iids.has(id))) await this.scan(what);
    const iids = unique.map((id) => this.iids.get(id)).filter((n): n is number => n !== undefined);
    const wanted = new Set(unique);
    return (await this.readingsOf(iids, what)).filter((r) => wanted.has(r.id));
  }

  async fetchIssueStatesByIdentifiers(identifiers: readonly string[]): Promise<IssueStateReading[]> {
    const iids = [
      ...new Set(
        identifiers
          .map((i) => iidOfIdentifier(i, this.config.project))
          .filter((n): n is number => n !== null),
      ),
    ];
    if (iids.length === 0) return [];
    return this.readingsOf(iids, 'fetch states by identifiers');
  }

  async fetchIssueComments(id: string): Promise<IssueComment[]> {
    const what = `fetch comments of issue ${id}`;
    return this.comments(await this.iidOf(id, what), what);
  }

  async transitionIssue(id: string, state: string): Promise<void> {
    const what = `transition issue ${id} to "${state}"`;
    const target = configuredState(this.scheme.states, state);
    const iid = await this.iidOf(id, what);
    const raw = await this.getIssue(iid, what);
    const targetLabel = stateLabel(target, this.config.stateLabelPrefix);
    const stateLabels = new Set(
      [...stateOrder(this.scheme.states), this.scheme.states.inProgressState ?? '']
        .filter((s) => s.trim() !== '')
        .map((s) => stateLabel(s, this.config.stateLabelPrefix)),
    );
    const remove = raw.labels.filter((l) => stateLabels.has(lower(l)) && lower(l) !== targetLabel);
    const has = raw.labels.some((l) => lower(l) === targetLabel);
    const changes: Record<string, unknown> = {};
    if (!has) changes.add_labels = await this.projectLabel(targetLabel, what);
    if (remove.length > 0) changes.remove_labels = remove.join(',');
    const closes = this.terminal.has(lower(target));
    if (closes && raw.state === 'opened') changes.state_event = 'close';
    if (!closes && raw.state === 'closed') changes.state_event = 'reopen';
    if (Object.keys(changes).length === 0) return;
    this.learn(readRawIssue(await this.call(what, () => this.api.editIssue(iid, changes)), what));
  }

  async commentIssue(id: string, body: string): Promise<void> {
    const what = `comment on issue ${id}`;
    const iid = await this.iidOf(id, what);
    if (body.trim() === '')
      throw new TrackerError('tracker_payload_error', `${what}: a comment must not be empty`);
    await this.call(what, () => this.api.createNote(iid, body));
  }

  async addLabel(id: string, label: string): Promise<void> {
    const what = `add label "${label}" to issue ${id}`;
    const wanted = label.trim().toLowerCase();
    if (wanted === '' || wanted.includes(','))
      throw new TrackerError(
        'tracker_payload_error',
        `${what}: a label must be non-empty and without commas`,
      );
    const iid = await this.iidOf(id, what);
    const raw = await this.getIssue(iid, what);
    if (raw.labels.some((l) => lower(l) === wanted)) return;
    const name = await this.projectLabel(wanted, what);
    await this.call(what, () => this.api.editIssue(iid, { add_labels: name }));
  }

  // ------------------------------------------------------------------ helpers

  private isCandidate(state: string): boolean {
    const key = lower(state);
    return !this.terminal.has(key) && (this.active.size === 0 || this.active.has(key));
  }

  /** Runs one API call, naming the operation in any error it raises. */
  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof TrackerError) {
        throw new TrackerError(
          error.kind,
          `${what}: ${error.message.replace(`tracker: ${error.kind}: `, '')}`,
        );
      }
      throw error;
    }
  }

  private learn(raw: RawIssue): RawIssue {
    this.iids.set(String(raw.id), raw.iid);
    return raw;
  }

  private async getIssue(iid: number, what: string): Promise<RawIssue> {
    return this.learn(readRawIssue(await this.call(what, () => this.api.getIssue(iid)), what));
  }

  /** The iid of a global id: from what this tracker has seen, else from one scan of the project. */
  private async iidOf(id: string, what: string): Promise<number> {
    const notFound = () =>
      new TrackerError('tracker_not_found', `${what}: no issue "${id}" in ${this.config.project}`);
    if (!/^\d+$/.test(id)) throw notFound();
    if (!this.iids.has(id)) await this.scan(what);
    const iid = this.iids.get(id);
    if (iid === undefined) throw notFound();
    return iid;
  }

  /** Reads every issue of the project once, to learn the iids of ids not seen before. */
  private async scan(what: string): Promise<void> {
    await this.listIssues(what, { state: 'all', orderBy: 'created_at', sort: 'asc' });
  }

  private async readingsOf(iids: number[], what: string): Promise<IssueStateReading[]> {
    const out: IssueStateReading[] = [];
    for (let at = 0; at < iids.length; at += IID_BATCH) {
      const batch = iids.slice(at, at + IID_BATCH).sort((a, b) => a - b);
      const raws = await this.listIssues(what, { iids: batch, state: 'all' });
      for (const raw of raws)
        out.push({ id: String(raw.id), identifier: String(raw.iid), state: stateOf(raw, this.scheme) });
    }
    return out;
  }

  /** Issues of a listing (page-capped, with a warning), malformed records left out with a warning. */
  private async listIssues(what: string, params: Record<string, unknown>): Promise<RawIssue[]> {
    const { pageSize, maxPages } = this.config;
    const listing = await this.call(what, () => this.api.listIssues(params, pageSize, maxPages));
    if (listing.more) {
      this.warn(`${what}: stopped after ${maxPages} pages (gitlab.max_pages); later issues were not read`);
    }
    // A record left out as malformed still teaches its iid, so a read by id reports it as malformed, not missing.
    if (Array.isArray(listing.items)) {
      for (const item of listing.items) {
        const ids = idsOf(item);
        if (ids !== null) this.iids.set(String(ids.id), ids.iid);
      }
    }
    return readRawIssues(listing.items, what, this.leaveOut).map((raw) => this.learn(raw));
  }

  private async comments(iid: number, what: string): Promise<IssueComment[]> {
    const listing = await this.call(what, () => this.api.notes(iid, this.config.maxPages));
    return readNotes(listing.items, what);
  }

  private async blockers(iid: number, what: string): Promise<BlockerRef[]> {
    const links = await this.call(what, () => this.api.links(iid));
    const blockers = readBlockers(links, what, this.scheme);
    return blockers;
  }

  /** The project's spelling of a label; a label the project lacks is a payload error, never created. */
  private async projectLabel(name: string, what: string): Promise<string> {
    const found = await this.call(what, () => this.api.labels(name));
    if (!Array.isArray(found)) throw payloadError(what, 'expected a list of labels');
    const match = found
      .map((l) => (l as { name?: unknown } | null)?.name)
      .find((n): n is string => typeof n === 'string' && lower(n) === lower(name));
    if (match === undefined) {
      throw new TrackerError(
        'tracker_payload_error',
        `${what}: the label "${name}" does not exist in ${this.config.project}; create it first (labels are never created automatically)`,
      );
    }
    return match;
  }

  private async assigneeUsername(what: string): Promise<string | null> {
    const assignee = this.config.assignee;
    if (assignee === null) return null;
    if (assignee !== 'me') return assignee;
    if (this.me === null) {
      const user = await this.call(what, () => this.api.currentUser());
      const username = (user as { username?: unknown } | null)?.username;
      if (typeof username !== 'string' || username === '')
        throw payloadError(what, 'GET /user has no username');
      this.me = username;
    }
    return this.me;
  }
}

/** The iid in an identifier: `12`, `#12` or `<project>#12`; null for anything else (another project's too). */
export function iidOfIdentifier(identifier: string, project: string): number | null {
  const match = /^(?:([^#\s]*)#)?(\d+)$/.exec(identifier.trim());
  if (match?.[2] === undefined) return null;
  const path = match[1];
  if (path !== undefined && path !== '' && path.toLowerCase() !== project.toLowerCase()) return null;
  return Number(match[2]);
}

function lower(value: string): string {
  return value.toLowerCase();
}
