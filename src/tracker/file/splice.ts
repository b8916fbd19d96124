/**
 * The one shape every write to the issues file takes: an edit to one issue becomes one
 * splice of new bytes into the file as read. Nothing outside the splice is re-encoded, so
 * what the tracker does not understand (or could not reproduce) is never touched.
 */

/** A comment as stored in the file (snake_case, like every key the tracker writes). */
export interface StoredComment {
  id: string;
  author: string;
  body: string;
  created_at: string;
}

/** One change to one issue. */
export type IssueEdit =
  | { type: 'state'; state: string }
  | { type: 'comment'; comment: StoredComment }
  | { type: 'label'; label: string };

/** Replace bytes [start, end) of the file with `insert`, encoded as UTF-8. */
export interface Splice {
  start: number;
  end: number;
  insert: string;
}

/** A splice for one edit, or why this writer cannot make it without changing other bytes. */
export type SpliceResult = { ok: true; splice: Splice } | { ok: false; reason: string };

/** The bytes after `splice`, and the encoded insert (callers count its lines). */
export function spliceBytes(bytes: Uint8Array, splice: Splice): { bytes: Uint8Array; inserted: Uint8Array } {
  const inserted = Buffer.from(splice.insert, 'utf8');
  const out = Buffer.concat([bytes.subarray(0, splice.start), inserted, bytes.subarray(splice.end)]);
  return { bytes: out, inserted };
}

/** A SpliceResult that refuses the edit, saying why. */
export function refuse(reason: string): SpliceResult {
  return { ok: false, reason };
}

/** The default of an exhaustive switch over edits; reaching it is a bug. */
export function assertNever(value: never): never {
  throw new Error(`unhandled edit ${JSON.stringify(value)}`);
}
