/**
 * The file tracker: issues live in one JSON or YAML file that operators edit by
 * hand while the orchestrator runs. Every call checks the file's stat stamp and
 * re-reads it when it may have changed (see `freshness.ts`: an edit is never
 * missed, an unchanged file is not parsed again), and looks issues up by id in an
 * index. Every write splices the edited issue's new bytes into the file and replaces
 * it atomically, so the file stays the single source of truth and keeps every other
 * byte the operator wrote; edits that arrive while a write is under way share the next
 * one (`group-commit.ts`).
 */
import { open, stat } from 'node:fs/promises';
import { TrackerError } from '../../domain/errors.js';
import type { Issue, IssueComment } from '../../domain/issue.js';
import type { IssueStateReading, TrackerAdapter, TrackerSettings } from '../../domain/tracker.js';
import type { FileTrackerConfig } from './config.js';
import { applyEdit, type IssueEdit } from './edit.js';
import { type CachedStamp, canReuse, type FileStamp, isRacy, stampOf } from './freshness.js';
import { GroupCommit } from './group-commit.js';
import { formatForPath, IssuesFileError, type ParsedIssuesFile, parseIssues } from './parse.js';
import { removeStaleTemps, serialised, writeFileAtomic } from './write.js';

/** The state settings the file tracker reads. */
export type FileTrackerStates = Pick<
  TrackerSettings,
  'activeStates' | 'terminalStates' | 'handoffState' | 'inProgressState' | 'blockedState'
>;

/** Author recorded on comments the orchestrator writes. */
export const COMMENT_AUTHOR = 'orchestrator';

/** How the tracker reaches the file's stamp and bytes; injected by tests to play a coarse-timestamp file system. */
export interface IssuesFileAccess {
  /** The stamp of the file at `path` now. */
  stamp(path: string): Promise<FileStamp>;
  /** The file's bytes and the stamp of the very inode they were read from. */
  read(path: string): Promise<{ bytes: Uint8Array; stamp: FileStamp }>;
}

/** The real file system. */
export const NODE_FILE_ACCESS: IssuesFileAccess = {
  async stamp(path) {
    return stampOf(await stat(path, { bigint: true }));
  },
  async read(path) {
    const handle = await open(path, 'r');
    try {
      const stamp = stampOf(await handle.stat({ bigint: true }));
      return { bytes: await handle.readFile(), stamp };
    } finally {
      await handle.close();
    }
  },
};

/** What the tracker's writes cost: with batching, `writes` stays well below `edits` under load. */
export interface FileTrackerStats {
  writes: number;
  edits: number;
}

/** An edit of one issue waiting for the next write. */
interface QueuedEdit {
  id: string;
  edit: (issue: Issue) => IssueEdit | null;
}

/** The last version of the file this tracker read or wrote. */
interface CachedFile extends CachedStamp {
  parsed: ParsedIssuesFile;
}

/** A TrackerAdapter over one issues file. */
export class FileTracker implements TrackerAdapter {
  private readonly active: Set<string>;
  private readonly terminal: Set<string>;
  private readonly now: () => Date;
  private readonly files: IssuesFileAccess;
  private cache: CachedFile | null = null;
  /** Bumped on every cache update, so a slow read never replaces what a later one stored. */
  private generation = 0;
  /** The refresh concurrent reads share, so a changed file is parsed once, not once per caller. */
  private reading: Promise<ParsedIssuesFile> | null = null;
  private staleTempsRemoved: Promise<unknown> | null = null;
  private readonly commits = new GroupCommit<QueuedEdit>((edits) => this.commitBatch(edits));
  /** Writes of the file (renames) and the edits they carried, since this tracker was made. */
  readonly stats: FileTrackerStats = { writes: 0, edits: 0 };

  constructor(
    private readonly config: FileTrackerConfig,
    private readonly states: FileTrackerStates,
    options: { now?: () => Date; files?: IssuesFileAccess } = {},
  ) {
    this.active = new Set(states.activeStates.map(lower));
    this.terminal = new Set(states.terminalStates.map(lower));
    this.now = options.now ?? (() => new Date());
    this.files = options.files ?? NODE_FILE_ACCESS;
  }

  async fetchCandidateIssues(): Promise<Issue[]> {
    const { issues } = await this.load();
    return issues.filter((issue) => this.isCandidate(issue.state)).map(withoutComments);
  }

  async fetchIssueById(id: string): Promise<Issue> {
    const parsed = await this.load();
    const issue = parsed.issues[this.indexOf(parsed, id)] as Issue;
    return { ...issue, labels: [...issue.labels], comments: [...(issue.comments ?? [])] };
  }

  async fetchIssuesByStates(states: readonly string[]): Promise<Issue[]> {
    const wanted = new Set(states.map(lower));
    const { issues } = await this.load();
    return issues.filter((issue) => wanted.has(lower(issue.state))).map(withoutComments);
  }

  async fetchIssueStatesByIds(ids: readonly string[]): Promise<IssueStateReading[]> {
    const parsed = await this.load();
    return readings(parsed.issues, parsed.byId, ids);
  }

  async fetchIssueStatesByIdentifiers(identifiers: readonly string[]): Promise<IssueStateReading[]> {
    const parsed = await this.load();
    return readings(parsed.issues, parsed.byIdentifier, identifiers);
  }

  async fetchIssueComments(id: string): Promise<IssueComment[]> {
    const parsed = await this.load();
    return [...(parsed.issues[this.indexOf(parsed, id)]?.comments ?? [])];
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

  /**
   * The current file, shared with any refresh already under way. It waits for the edits this
   * tracker was asked for before the call, so a read never misses one of its own writes (the
   * tick that follows a handoff sees it); edits asked for later do not hold it up.
   */
  private async load(): Promise<ParsedIssuesFile> {
    await this.commits.settled();
    this.reading ??= this.refresh().finally(() => {
      this.reading = null;
    });
    return this.reading;
  }

  /** The current file: the cached parse when the stamp vouches for it or the bytes are unchanged, else a new parse. */
  private async refresh(): Promise<ParsedIssuesFile> {
    const { path } = this.config;
    this.staleTempsRemoved ??= removeStaleTemps(path).catch(() => 0);
    await this.staleTempsRemoved;
    const generation = this.generation;
    const cached = this.cache;
    if (cached !== null && canReuse(cached, await unreadable(path, this.files.stamp(path))))
      return cached.parsed;
    const readAtMs = this.now().getTime();
    const { bytes, stamp } = await unreadable(path, this.files.read(path));
    let parsed: ParsedIssuesFile;
    if (
      cached !== null &&
      Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).equals(cached.parsed.bytes)
    ) {
      parsed = cached.parsed;
    } else {
      const result = parseIssues(bytes, path, formatForPath(path));
      if (!result.ok) throw result.error;
      parsed = result.value;
    }
    if (this.generation === generation) this.store({ parsed, stamp, racy: isRacy(stamp, readAtMs) });
    return parsed;
  }

  private store(entry: CachedFile): void {
    this.cache = entry;
    this.generation++;
  }

  private indexOf(parsed: ParsedIssuesFile, id: string): number {
    const index = parsed.byId.get(id);
    if (index === undefined)
      throw new TrackerError('tracker_not_found', `no issue with id "${id}" in ${this.config.path}`);
    return index;
  }

  /** Queues an edit of one issue for the next write (see `group-commit.ts`); `edit` returning null means nothing to change. */
  private write(id: string, edit: (issue: Issue) => IssueEdit | null): Promise<void> {
    return this.commits.submit({ id, edit });
  }

  /**
   * One write for a batch of edits, under the per-file queue: one read, each edit applied in
   * order to the result of the ones before it, one atomic write. An edit that fails alone
   * (unknown issue, unpreservable value) is left out and reported for its caller only.
   */
  private commitBatch(edits: readonly QueuedEdit[]): Promise<unknown[]> {
    const { path } = this.config;
    return serialised(path, async () => {
      // Its own refresh, not a shared one: a read that began before an outside edit must not be edited.
      let parsed = await this.refresh();
      const failures: unknown[] = [];
      let changed = 0;
      for (const [i, { id, edit }] of edits.entries()) {
        try {
          const index = this.indexOf(parsed, id);
          const change = edit(parsed.issues[index] as Issue);
          if (change === null) continue;
          const result = applyEdit(parsed, index, change, path);
          if (!result.ok) throw result.error;
          parsed = result.parsed;
          changed++;
        } catch (err) {
          failures[i] = err;
        }
      }
      if (changed === 0) return failures;
      try {
        await writeFileAtomic(path, parsed.bytes);
      } catch (err) {
        throw new TrackerError('tracker_transport_error', `cannot write ${path}: ${errorText(err)}`, {
          cause: err,
        });
      }
      this.stats.writes++;
      this.stats.edits += changed;
      // The new file's stamp is unknown until the next read compares its bytes with these.
      this.store({ parsed, stamp: null, racy: true });
      return failures;
    });
  }
}

/** `io`, with a failure to reach the file turned into the tracker's `file.unreadable` error. */
async function unreadable<T>(path: string, io: Promise<T>): Promise<T> {
  try {
    return await io;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT' ? 'the issues file does not exist' : `cannot read the issues file: ${errorText(err)}`;
    throw new IssuesFileError('file.unreadable', path, null, reason, { cause: err });
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
  index: ReadonlyMap<string, number>,
  keys: readonly string[],
): IssueStateReading[] {
  const out: IssueStateReading[] = [];
  for (const key of new Set(keys)) {
    const at = index.get(key);
    const issue = at === undefined ? undefined : issues[at];
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
