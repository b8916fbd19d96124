/**
 * The file tracker: issues live in one JSON or YAML file that operators edit by
 * hand while the orchestrator runs. Every call re-reads the file (no cache can go
 * stale under a live edit), and every write goes back to the same file, in place
 * and atomically, so the file stays the single source of truth.
 */
import { readFile } from 'node:fs/promises';
import { TrackerError } from '../../domain/errors.js';
import type { Issue, IssueComment } from '../../domain/issue.js';
import type { IssueStateReading, TrackerAdapter, TrackerSettings } from '../../domain/tracker.js';
import type { FileTrackerConfig } from './config.js';
import { applyEdit, type IssueEdit } from './edit.js';
import { formatForPath, IssuesFileError, type ParsedIssuesFile, parseIssuesText } from './parse.js';
import { serialised, writeFileAtomic } from './write.js';

/** The state settings the file tracker reads. */
export type FileTrackerStates = Pick<
  TrackerSettings,
  'activeStates' | 'terminalStates' | 'handoffState' | 'inProgressState' | 'blockedState'
>;

/** Author recorded on comments the orchestrator writes. */
export const COMMENT_AUTHOR = 'orchestrator';

/** A TrackerAdapter over one issues file. */
export class FileTracker implements TrackerAdapter {
  private readonly active: Set<string>;
  private readonly terminal: Set<string>;
  private readonly now: () => Date;

  constructor(
    private readonly config: FileTrackerConfig,
    private readonly states: FileTrackerStates,
    options: { now?: () => Date } = {},
  ) {
    this.active = new Set(states.activeStates.map(lower));
    this.terminal = new Set(states.terminalStates.map(lower));
    this.now = options.now ?? (() => new Date());
  }

  async fetchCandidateIssues(): Promise<Issue[]> {
    const { issues } = await this.load();
    return issues.filter((issue) => this.isCandidate(issue.state)).map(withoutComments);
  }

  async fetchIssueById(id: string): Promise<Issue> {
    const issue = this.find(await this.load(), id).issue;
    return { ...issue, comments: issue.comments ?? [] };
  }

  async fetchIssuesByStates(states: readonly string[]): Promise<Issue[]> {
    const wanted = new Set(states.map(lower));
    const { issues } = await this.load();
    return issues.filter((issue) => wanted.has(lower(issue.state))).map(withoutComments);
  }

  async fetchIssueStatesByIds(ids: readonly string[]): Promise<IssueStateReading[]> {
    const { issues } = await this.load();
    return readings(issues, ids, (issue) => issue.id);
  }

  async fetchIssueStatesByIdentifiers(identifiers: readonly string[]): Promise<IssueStateReading[]> {
    const { issues } = await this.load();
    return readings(issues, identifiers, (issue) => issue.identifier);
  }

  async fetchIssueComments(id: string): Promise<IssueComment[]> {
    return this.find(await this.load(), id).issue.comments ?? [];
  }

  async transitionIssue(id: string, state: string): Promise<void> {
    const target = this.configuredState(state);
    await this.write(id, (issue) => (issue.state === target ? null : { type: 'state', state: target }));
  }

  async commentIssue(id: string, body: string): Promise<void> {
    await this.write(id, (issue) => ({
      type: 'comment',
      comment: {
        id: nextCommentId(issue.comments ?? []),
        author: COMMENT_AUTHOR,
        body,
        created_at: this.now().toISOString(),
      },
    }));
  }

  async addLabel(id: string, label: string): Promise<void> {
    const wanted = label.trim().toLowerCase();
    if (wanted === '') throw new TrackerError('tracker_payload_error', 'a label must not be empty');
    await this.write(id, (issue) =>
      issue.labels.includes(wanted) ? null : { type: 'label', label: wanted },
    );
  }

  private isCandidate(state: string): boolean {
    const key = lower(state);
    return !this.terminal.has(key) && (this.active.size === 0 || this.active.has(key));
  }

  /** The configured spelling of `state`; with no active or terminal states configured, any non-empty state. */
  private configuredState(state: string): string {
    const wanted = state.trim();
    if (wanted === '') throw new TrackerError('tracker_payload_error', 'cannot transition to an empty state');
    const { activeStates, terminalStates, handoffState, inProgressState, blockedState } = this.states;
    const known = [...activeStates, ...terminalStates, handoffState, inProgressState, blockedState].filter(
      (s): s is string => typeof s === 'string' && s.trim() !== '',
    );
    const match = known.find((s) => lower(s) === lower(wanted));
    if (match !== undefined) return match;
    if (activeStates.length === 0 && terminalStates.length === 0) return wanted;
    throw new TrackerError(
      'tracker_payload_error',
      `state "${wanted}" is not a configured state (${[...new Set(known)].join(', ')})`,
    );
  }

  private async load(): Promise<ParsedIssuesFile> {
    const { path } = this.config;
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      const reason =
        code === 'ENOENT'
          ? 'the issues file does not exist'
          : `cannot read the issues file: ${errorText(err)}`;
      throw new IssuesFileError('file.unreadable', path, null, reason, { cause: err });
    }
    const parsed = parseIssuesText(text, path, formatForPath(path));
    if (!parsed.ok) throw parsed.error;
    return parsed.value;
  }

  private find(parsed: ParsedIssuesFile, id: string): { issue: Issue; index: number } {
    const index = parsed.issues.findIndex((issue) => issue.id === id);
    const issue = parsed.issues[index];
    if (issue === undefined)
      throw new TrackerError('tracker_not_found', `no issue with id "${id}" in ${this.config.path}`);
    return { issue, index };
  }

  /** Read-modify-write of one issue under the per-file queue; `edit` returning null means nothing to change. */
  private write(id: string, edit: (issue: Issue) => IssueEdit | null): Promise<void> {
    const { path } = this.config;
    return serialised(path, async () => {
      const parsed = await this.load();
      const { issue, index } = this.find(parsed, id);
      const change = edit(issue);
      if (change === null) return;
      const result = applyEdit(parsed, index, change);
      if (!result.ok)
        throw new IssuesFileError('file.issue.invalid', path, parsed.lines[index] ?? null, result.reason);
      try {
        await writeFileAtomic(path, result.text);
      } catch (err) {
        throw new TrackerError('tracker_transport_error', `cannot write ${path}: ${errorText(err)}`, {
          cause: err,
        });
      }
    });
  }
}

function lower(value: string): string {
  return value.toLowerCase();
}

function withoutComments(issue: Issue): Issue {
  return { ...issue, comments: null };
}

function readings(
  issues: readonly Issue[],
  keys: readonly string[],
  keyOf: (issue: Issue) => string,
): IssueStateReading[] {
  const byKey = new Map(issues.map((issue) => [keyOf(issue), issue]));
  const out: IssueStateReading[] = [];
  for (const key of new Set(keys)) {
    const issue = byKey.get(key);
    if (issue !== undefined) out.push({ id: issue.id, identifier: issue.identifier, state: issue.state });
  }
  return out;
}

/** The first free id of the form `c-<n>`, counting from the number of comments. */
function nextCommentId(comments: readonly IssueComment[]): string {
  const taken = new Set(comments.map((c) => c.id));
  let n = comments.length + 1;
  while (taken.has(`c-${n}`)) n++;
  return `c-${n}`;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
