/**
 * Store failures as one coded error. A raw SqliteError says "file is not a database" with no
 * path and a native stack; an operator needs the path and a code the caller can branch on, so
 * every failure that leaves the store is translated here, exactly once.
 */

export const PERSISTENCE_ERROR_CODES = [
  /** The file could not be opened or created (permissions, a directory at the path, …). */
  'open_failed',
  /** The database was written by a newer build; this one refuses to touch it. */
  'schema_too_new',
  /** A migration failed; it was rolled back and the schema stays at the last good version. */
  'migration_failed',
  /** The file is not a SQLite database, or its pages or stored values are damaged. */
  'corrupt',
  /** Another connection held the lock for longer than the busy timeout. */
  'busy',
  /** The disk refused a read or write (full, I/O error, read-only file). */
  'io_failed',
  /** The database opened but cannot be written (a read-only file, directory or file system). */
  'read_only',
  /** A write broke a key, a type or a foreign key: a bug in the caller. */
  'constraint',
  /** The run is unknown or already finished. */
  'run_not_open',
  /** The store was used after close(). */
  'closed',
  /** Any other SQLite failure. */
  'query_failed',
] as const;
export type PersistenceErrorCode = (typeof PERSISTENCE_ERROR_CODES)[number];

export class PersistenceError extends Error {
  override readonly name = 'PersistenceError';
  constructor(
    readonly code: PersistenceErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(
      `persistence: ${code}: ${message}`,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
  }
}

/** The SQLite result code of a thrown error (`SQLITE_BUSY`, …), or null for a non-SQLite error. */
export function sqliteCode(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : null;
}

/** Maps a SQLite result code (extended codes included) to the store's code. */
export function codeForSqlite(code: string): PersistenceErrorCode {
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) return 'corrupt';
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) return 'busy';
  if (code.startsWith('SQLITE_CANTOPEN')) return 'open_failed';
  if (
    code.startsWith('SQLITE_IOERR') ||
    code === 'SQLITE_FULL' ||
    code.startsWith('SQLITE_READONLY') ||
    code === 'SQLITE_PERM'
  ) {
    return 'io_failed';
  }
  if (code.startsWith('SQLITE_CONSTRAINT') || code === 'SQLITE_MISMATCH') return 'constraint';
  return 'query_failed';
}

/** Wraps any failure from an operation on the database at `path` into a PersistenceError. */
export function toPersistenceError(error: unknown, path: string, operation: string): PersistenceError {
  if (error instanceof PersistenceError) return error;
  const sqlite = sqliteCode(error);
  const detail = error instanceof Error ? error.message : String(error);
  const code = sqlite === null ? 'query_failed' : codeForSqlite(sqlite);
  const hint = code === 'corrupt' ? ' (the file is not a SQLite database or is damaged)' : '';
  return new PersistenceError(code, `${operation} on ${path}: ${detail}${hint}`, { cause: error });
}
