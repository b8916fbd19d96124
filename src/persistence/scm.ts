/**
 * The pull-request loop's tables: each issue's pushed branch and pull request (`issue_scm`),
 * whether the orchestrator still watches it, and what each reaction last acted on
 * (`reaction_memory`), so a restart neither loses a watch nor sends the same feedback twice.
 */
import type Database from 'better-sqlite3';

/** An issue's branch as last pushed, and its pull request. */
export interface ScmRecord {
  issueId: string;
  identifier: string;
  branch: string;
  base: string;
  headSha: string;
  /** null: pushed, no pull request (none wanted, or the tracker has no forge). */
  prNumber: number | null;
  prUrl: string | null;
  pushedAtMs: number;
  /** The reactions poll it. */
  watching: boolean;
  /** Why watching ended (merged, closed, expired, escalated); null while watched or never. */
  endedReason: string | null;
}

/** What one reaction kind last acted on for one issue. */
export interface ReactionMemoryRecord {
  fingerprint: string;
  /** Dispatches since the last success of this kind. */
  attempts: number;
  /** A run was queued for `fingerprint`. */
  dispatched: boolean;
  /** A person was asked; the kind stays quiet until it succeeds again. */
  escalated: boolean;
}

interface ScmRow {
  issue_id: string;
  identifier: string;
  branch: string;
  base: string;
  head_sha: string;
  pr_number: number | null;
  pr_url: string | null;
  pushed_at_ms: number;
  watching: number;
  ended_reason: string | null;
  updated_at: string;
}

interface MemoryRow {
  kind: string;
  fingerprint: string;
  attempts: number;
  dispatched: number;
  escalated: number;
}

/** The tables' statements; every call goes through the store's guard (coded errors, closed store). */
export class ScmTable {
  readonly #save: Database.Statement;
  readonly #get: Database.Statement<[string], ScmRow>;
  readonly #watched: Database.Statement<[], ScmRow>;
  readonly #end: Database.Statement;
  readonly #memory: Database.Statement<[string], MemoryRow>;
  readonly #saveMemory: Database.Statement;
  readonly #clearMemory: Database.Statement<[string]>;

  constructor(
    db: Database.Database,
    private readonly guard: <T>(operation: string, fn: () => T) => T,
    private readonly nowIso: () => string,
  ) {
    this.#save = db.prepare(
      `INSERT INTO issue_scm (issue_id, identifier, branch, base, head_sha, pr_number, pr_url, pushed_at_ms,
         watching, ended_reason, updated_at)
       VALUES (@issueId, @identifier, @branch, @base, @headSha, @prNumber, @prUrl, @pushedAtMs, @watching,
         @endedReason, @updatedAt)
       ON CONFLICT (issue_id) DO UPDATE SET identifier = excluded.identifier, branch = excluded.branch,
         base = excluded.base, head_sha = excluded.head_sha, pr_number = excluded.pr_number,
         pr_url = excluded.pr_url, pushed_at_ms = excluded.pushed_at_ms, watching = excluded.watching,
         ended_reason = excluded.ended_reason, updated_at = excluded.updated_at`,
    );
    this.#get = db.prepare('SELECT * FROM issue_scm WHERE issue_id = ?');
    this.#watched = db.prepare('SELECT * FROM issue_scm WHERE watching = 1 ORDER BY pushed_at_ms, issue_id');
    this.#end = db.prepare(
      'UPDATE issue_scm SET watching = 0, ended_reason = @reason, updated_at = @updatedAt WHERE issue_id = @issueId',
    );
    this.#memory = db.prepare(
      'SELECT kind, fingerprint, attempts, dispatched, escalated FROM reaction_memory WHERE issue_id = ?',
    );
    this.#saveMemory = db.prepare(
      `INSERT INTO reaction_memory (issue_id, kind, fingerprint, attempts, dispatched, escalated, updated_at)
       VALUES (@issueId, @kind, @fingerprint, @attempts, @dispatched, @escalated, @updatedAt)
       ON CONFLICT (issue_id, kind) DO UPDATE SET fingerprint = excluded.fingerprint,
         attempts = excluded.attempts, dispatched = excluded.dispatched, escalated = excluded.escalated,
         updated_at = excluded.updated_at`,
    );
    this.#clearMemory = db.prepare('DELETE FROM reaction_memory WHERE issue_id = ?');
  }

  /** Records a push (and its pull request), replacing the issue's earlier record. */
  save(record: ScmRecord): void {
    this.guard('save branch record', () =>
      this.#save.run({
        ...record,
        watching: record.watching ? 1 : 0,
        updatedAt: this.nowIso(),
      }),
    );
  }

  /** The issue's record, or null. */
  get(issueId: string): ScmRecord | null {
    return this.guard('read branch record', () => {
      const row = this.#get.get(issueId);
      return row === undefined ? null : fromRow(row);
    });
  }

  /** Every record still watched, oldest push first. */
  watched(): ScmRecord[] {
    return this.guard('read watched pull requests', () => this.#watched.all().map(fromRow));
  }

  /** Stops watching the issue's pull request, saying why. */
  endWatch(issueId: string, reason: string): void {
    this.guard('end watch', () => this.#end.run({ issueId, reason, updatedAt: this.nowIso() }));
  }

  /** What each reaction kind last acted on for the issue. */
  memory(issueId: string): Record<string, ReactionMemoryRecord> {
    return this.guard('read reaction memory', () =>
      Object.fromEntries(
        this.#memory.all(issueId).map((r) => [
          r.kind,
          {
            fingerprint: r.fingerprint,
            attempts: r.attempts,
            dispatched: r.dispatched === 1,
            escalated: r.escalated === 1,
          },
        ]),
      ),
    );
  }

  /** Replaces what one reaction kind remembers for the issue. */
  saveMemory(issueId: string, kind: string, memory: ReactionMemoryRecord): void {
    this.guard('save reaction memory', () =>
      this.#saveMemory.run({
        issueId,
        kind,
        fingerprint: memory.fingerprint,
        attempts: memory.attempts,
        dispatched: memory.dispatched ? 1 : 0,
        escalated: memory.escalated ? 1 : 0,
        updatedAt: this.nowIso(),
      }),
    );
  }

  /** Forgets every reaction's memory of the issue. */
  clearMemory(issueId: string): void {
    this.guard('clear reaction memory', () => this.#clearMemory.run(issueId));
  }
}

function fromRow(row: ScmRow): ScmRecord {
  return {
    issueId: row.issue_id,
    identifier: row.identifier,
    branch: row.branch,
    base: row.base,
    headSha: row.head_sha,
    prNumber: row.pr_number,
    prUrl: row.pr_url,
    pushedAtMs: row.pushed_at_ms,
    watching: row.watching === 1,
    endedReason: row.ended_reason,
  };
}
