import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { PersistenceError } from '../../src/persistence/errors.js';
import {
  checkMigrationOrder,
  LATEST_SCHEMA_VERSION,
  MIGRATIONS,
  migrate,
  schemaVersion,
} from '../../src/persistence/migrations.js';
import { openStore } from '../../src/persistence/store.js';
import { retryEntry, useTempDirs } from './support.js';

const temp = useTempDirs();

const TABLES = [
  'credential_proofs',
  'issue_budgets',
  'issue_scm',
  'pending_transitions',
  'reaction_memory',
  'retry_queue',
  'run_tool_calls',
  'runs',
  'schema_migrations',
  'sessions',
  'totals',
  'turns',
];

function tablesOf(file: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return (
      db
        .prepare(
          "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )
        .all() as { name: string }[]
    ).map((r) => r.name);
  } finally {
    db.close();
  }
}

function migrationRows(file: string): { version: number; applied_at: string }[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare('SELECT version, applied_at FROM schema_migrations ORDER BY version').all() as {
      version: number;
      applied_at: string;
    }[];
  } finally {
    db.close();
  }
}

function caught(fn: () => unknown): PersistenceError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(PersistenceError);
    return error as PersistenceError;
  }
  throw new Error('expected a PersistenceError, but nothing was thrown');
}

describe('migrations', () => {
  it('a gap or reordering in the migration list is caught before anything runs', () => {
    expect(() => checkMigrationOrder(MIGRATIONS)).not.toThrow();
    expect(LATEST_SCHEMA_VERSION).toBe(MIGRATIONS.length);
    const [first] = MIGRATIONS;
    if (first === undefined) throw new Error('no migrations');
    expect(() => checkMigrationOrder([first, { ...first, version: 3 }])).toThrow(/versions must be 1..n/);
  });

  it('a new database gets every table, and each applied migration is recorded once with its time', () => {
    const file = path.join(temp.dir(), 'nested', 'deeper', 'state.db');
    const store = openStore(file, { nowMs: () => Date.parse('2025-02-03T04:05:06.789Z') });
    const every = MIGRATIONS.map((m) => m.version);
    expect(store.migration).toEqual({ from: 0, to: LATEST_SCHEMA_VERSION, applied: every });
    store.close();
    expect(tablesOf(file)).toEqual(TABLES);
    expect(migrationRows(file)).toEqual(
      every.map((version) => ({ version, applied_at: '2025-02-03T04:05:06.789Z' })),
    );
  });

  it('reopening a current database applies nothing again and keeps its data', () => {
    const file = path.join(temp.dir(), 'state.db');
    const first = openStore(file);
    first.saveRetry(retryEntry());
    first.close();
    const second = temp.track(openStore(file));
    expect(second.migration).toEqual({ from: LATEST_SCHEMA_VERSION, to: LATEST_SCHEMA_VERSION, applied: [] });
    expect(second.loadRetries()).toHaveLength(1);
    second.close();
    expect(migrationRows(file).map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
  });

  it('a database stamped by a newer build is refused, naming both versions, and left untouched', () => {
    const file = path.join(temp.dir(), 'state.db');
    openStore(file).close();
    const raw = new Database(file);
    raw
      .prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)')
      .run(LATEST_SCHEMA_VERSION + 5, '2030-01-01T00:00:00Z');
    raw.close();
    const before = readFileSync(file);

    const error = caught(() => openStore(file));
    expect(error.code).toBe('schema_too_new');
    expect(error.message).toContain(`schema version ${LATEST_SCHEMA_VERSION + 5}`);
    expect(error.message).toContain(`up to version ${LATEST_SCHEMA_VERSION}`);
    expect(error.message).toContain(file);
    expect(readFileSync(file).equals(before)).toBe(true);
    expect(migrationRows(file).map((r) => r.version)).toEqual([
      ...MIGRATIONS.map((m) => m.version),
      LATEST_SCHEMA_VERSION + 5,
    ]);
  });

  it('a failing migration is rolled back whole and the recorded version stays at the last good one', () => {
    const file = path.join(temp.dir(), 'state.db');
    openStore(file).close();
    const db = new Database(file);
    try {
      const broken = [
        ...MIGRATIONS,
        {
          version: LATEST_SCHEMA_VERSION + 1,
          name: 'half-built',
          sql: 'CREATE TABLE extra (a INTEGER); SELECT nope FROM missing_table;',
        },
      ];
      const error = caught(() =>
        migrate(db, { path: file, nowIso: () => '2025-01-01T00:00:00Z', migrations: broken }),
      );
      expect(error.code).toBe('migration_failed');
      expect(error.message).toContain(`migration ${LATEST_SCHEMA_VERSION + 1} ("half-built")`);
      expect(error.message).toContain(file);
      expect(schemaVersion(db)).toBe(LATEST_SCHEMA_VERSION);
      expect(db.prepare("SELECT name FROM sqlite_schema WHERE name = 'extra'").get()).toBeUndefined();
    } finally {
      db.close();
    }
  });

  it('a later migration applies on top of an existing database without re-running earlier ones', () => {
    const file = path.join(temp.dir(), 'state.db');
    openStore(file).close();
    const db = new Database(file);
    try {
      const next = [
        ...MIGRATIONS,
        {
          version: LATEST_SCHEMA_VERSION + 1,
          name: 'extra column',
          sql: 'ALTER TABLE sessions ADD COLUMN note TEXT',
        },
      ];
      const report = migrate(db, { path: file, nowIso: () => '2025-01-01T00:00:00Z', migrations: next });
      const to = LATEST_SCHEMA_VERSION + 1;
      expect(report).toEqual({ from: LATEST_SCHEMA_VERSION, to, applied: [to] });
      expect(migrate(db, { path: file, nowIso: () => 'x', migrations: next }).applied).toEqual([]);
    } finally {
      db.close();
    }
  });

  it('a database of version 1 (before pending transitions) is brought up to date with its data kept', () => {
    const file = path.join(temp.dir(), 'state.db');
    const db = new Database(file);
    migrate(db, { path: file, nowIso: () => '2025-01-01T00:00:00Z', migrations: MIGRATIONS.slice(0, 1) });
    db.close();
    const store = temp.track(openStore(file));
    expect(store.migration.from).toBe(1);
    expect(store.migration.to).toBe(LATEST_SCHEMA_VERSION);
    store.savePendingTransition({ issueId: 'i', identifier: 'I-1', state: 'Review', purpose: 'handoff' });
    expect(store.loadPendingTransitions()).toEqual([
      { issueId: 'i', identifier: 'I-1', state: 'Review', purpose: 'handoff' },
    ]);
  });

  it('a file that is not a database is reported as corrupt with its path, and not overwritten', () => {
    const file = path.join(temp.dir(), 'state.db');
    const garbage = 'this is a note someone saved where the database should be\n'.repeat(20);
    writeFileSync(file, garbage);
    const error = caught(() => openStore(file));
    expect(error.code).toBe('corrupt');
    expect(error.message).toContain(file);
    expect(error.message).toMatch(/not a SQLite database/);
    expect(readFileSync(file, 'utf8')).toBe(garbage);
  });

  it('a directory at the database path fails to open with a coded error naming the path', () => {
    const file = path.join(temp.dir(), 'state.db');
    mkdirSync(file);
    const error = caught(() => openStore(file));
    expect(error.code).toBe('open_failed');
    expect(error.message).toContain(file);
  });

  it('a parent that is a file (so the directory cannot be made) fails to open with the path', () => {
    const parent = path.join(temp.dir(), 'blocker');
    writeFileSync(parent, 'x');
    const error = caught(() => openStore(path.join(parent, 'state.db')));
    expect(error.code).toBe('open_failed');
    expect(error.message).toContain(parent);
  });
});
