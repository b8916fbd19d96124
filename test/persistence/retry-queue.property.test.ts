import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RetryEntry, RetryRecord } from '../../src/persistence/records.js';
import { RETRY_REASONS } from '../../src/persistence/records.js';
import { openStore, type Store } from '../../src/persistence/store.js';
import { useTempDirs } from './support.js';

const temp = useTempDirs();

type Op = { type: 'save'; entry: RetryEntry } | { type: 'delete'; issueId: string } | { type: 'reopen' };

// A small pool so saves collide (upserts) and deletes hit. '😀' and 'ｚ' sort one way in
// UTF-16 and the other in UTF-8, so the tie order is checked against SQLite's byte order.
const issueId = fc.constantFrom('A-1', 'A-2', 'b', 'Z', 'é', '😀', 'ｚ', 'issue-10', 'issue-9', '');
const text = fc.option(fc.string({ unit: 'grapheme', maxLength: 40 }), { nil: null });

const entry: fc.Arbitrary<RetryEntry> = fc.record({
  issueId,
  identifier: fc.string({ unit: 'grapheme', maxLength: 20 }),
  attempt: fc.integer({ min: 1, max: 1_000 }),
  // Few distinct due times so ties (ordered by issue id) are common, plus the full safe range.
  dueAtMs: fc.oneof(fc.constantFrom(0, 1_000, 1_000), fc.maxSafeInteger()),
  reason: fc.constantFrom(...RETRY_REASONS),
  lastError: text,
  previousHost: text,
  sessionId: text,
  reaction: fc.option(
    fc
      .record({
        kind: fc.constantFrom('ci_failure', 'review_comments', 'merge_conflict'),
        fingerprint: fc.string({ maxLength: 64 }),
        variables: fc.record({ log: fc.string({ maxLength: 40 }), attempt: fc.integer({ min: 1, max: 9 }) }),
      })
      // Plain objects, as JSON reads them back (fast-check's records have no prototype).
      .map((r) => ({ ...r, variables: { ...r.variables } })),
    { nil: null },
  ),
});

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: entry.map((e) => ({ type: 'save' as const, entry: { ...e } })) },
  { weight: 3, arbitrary: issueId.map((id) => ({ type: 'delete' as const, issueId: id })) },
  { weight: 1, arbitrary: fc.constant({ type: 'reopen' as const }) },
);

/** SQLite's BINARY collation: byte order of the UTF-8 text. */
function byDueThenId(a: RetryEntry, b: RetryEntry): number {
  return a.dueAtMs - b.dueAtMs || Buffer.compare(Buffer.from(a.issueId), Buffer.from(b.issueId));
}

function withoutStamp(record: RetryRecord): RetryEntry {
  const { updatedAt: _ignored, ...rest } = record;
  return rest;
}

describe('retry queue against an in-memory model', () => {
  it('any sequence of saves, deletes and restarts leaves exactly the Map model, in due order', () => {
    // One real file for every run (creating and migrating a file per run is the slow part);
    // each run starts by emptying the queue through the store itself.
    const file = path.join(temp.dir(), 'state.db');
    fc.assert(
      fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
        let store: Store = openStore(file);
        for (const stale of store.loadRetries()) store.deleteRetry(stale.issueId);
        const model = new Map<string, RetryEntry>();
        try {
          for (const step of ops) {
            if (step.type === 'save') {
              store.saveRetry(step.entry);
              model.set(step.entry.issueId, step.entry);
            } else if (step.type === 'delete') {
              expect(store.deleteRetry(step.issueId)).toBe(model.has(step.issueId));
              model.delete(step.issueId);
            } else {
              store.close();
              store = openStore(file);
            }
          }
          const expected = [...model.values()].sort(byDueThenId);
          expect(store.loadRetries().map(withoutStamp)).toStrictEqual(expected);
          for (const [id, value] of model) expect(store.retryFor(id)).toMatchObject(value);
        } finally {
          store.close();
        }
      }),
      { numRuns: 120 },
    );
  });
});
