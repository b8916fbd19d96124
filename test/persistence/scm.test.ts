import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore, PersistenceError, type ScmRecord } from '../../src/persistence/index.js';
import { runInput, useTempDirs } from './support.js';

const temp = useTempDirs();

function open() {
  const file = path.join(temp.dir(), 'state.db');
  return temp.track(openStore(file, { nowMs: () => Date.parse('2026-12-01T00:00:00Z') }));
}

const record = (overrides: Partial<ScmRecord> = {}): ScmRecord => ({
  issueId: 'I-1',
  identifier: 'E-1',
  branch: 'agent/e-1',
  base: 'main',
  headSha: 'a'.repeat(40),
  prNumber: 7,
  prUrl: 'http://127.0.0.1/pull/7',
  pushedAtMs: 1_000,
  watching: true,
  endedReason: null,
  ...overrides,
});

describe('branch records and reaction memory', () => {
  it('a pushed branch reads back after a restart, a second push replaces it, and only watched ones are listed', () => {
    let store = open();
    store.scm.save(record());
    store.scm.save(record({ headSha: 'b'.repeat(40), pushedAtMs: 2_000 }));
    store.scm.save(
      record({ issueId: 'I-2', identifier: 'E-2', prNumber: null, prUrl: null, watching: false }),
    );
    store.close();
    store = temp.track(openStore(store.path));
    expect(store.scm.get('I-1')).toStrictEqual(record({ headSha: 'b'.repeat(40), pushedAtMs: 2_000 }));
    expect(store.scm.watched().map((r) => r.issueId)).toEqual(['I-1']);
    store.scm.endWatch('I-1', 'merged');
    expect(store.scm.watched()).toEqual([]);
    expect(store.scm.get('I-1')).toMatchObject({ watching: false, endedReason: 'merged' });
    expect(store.scm.get('nope')).toBeNull();
  });

  it('reaction memory is kept per kind, replaced on save and cleared per issue', () => {
    let store = open();
    store.scm.saveMemory('I-1', 'ci_failure', {
      fingerprint: 'sha1',
      attempts: 1,
      dispatched: true,
      escalated: false,
    });
    store.scm.saveMemory('I-1', 'ci_failure', {
      fingerprint: 'sha2',
      attempts: 2,
      dispatched: true,
      escalated: false,
    });
    store.scm.saveMemory('I-1', 'review_comments', {
      fingerprint: 'f',
      attempts: 3,
      dispatched: false,
      escalated: true,
    });
    store.scm.saveMemory('I-2', 'ci_failure', {
      fingerprint: 'x',
      attempts: 1,
      dispatched: true,
      escalated: false,
    });
    store.close();
    store = temp.track(openStore(store.path));
    expect(store.scm.memory('I-1')).toStrictEqual({
      ci_failure: { fingerprint: 'sha2', attempts: 2, dispatched: true, escalated: false },
      review_comments: { fingerprint: 'f', attempts: 3, dispatched: false, escalated: true },
    });
    store.scm.clearMemory('I-1');
    expect(store.scm.memory('I-1')).toStrictEqual({});
    expect(Object.keys(store.scm.memory('I-2'))).toEqual(['ci_failure']);
  });

  it("a run's reaction and self-review record read back with the run", () => {
    const store = open();
    const runId = store.startRun(runInput({ reaction: 'ci_failure' }));
    store.setRunReview(runId, { status: 'passed', iterations: [{ iteration: 1, verdict: 'pass' }] });
    expect(store.run(runId)).toMatchObject({
      reaction: 'ci_failure',
      review: { status: 'passed', iterations: [{ iteration: 1, verdict: 'pass' }] },
    });
    expect(store.run(store.startRun(runInput()))).toMatchObject({ reaction: null, review: null });
  });

  it('a closed store refuses with a coded error instead of throwing from SQLite', () => {
    const store = open();
    store.close();
    expect(() => store.scm.watched()).toThrow(PersistenceError);
  });
});
