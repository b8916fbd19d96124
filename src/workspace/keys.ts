/**
 * Turns an issue identifier into the name of its workspace directory. The
 * identifier comes from the tracker and is untrusted: `../../etc`, `/etc/passwd`,
 * NUL bytes or a megabyte of text must never become a path segment that climbs out
 * of the root, names the root itself, or exceeds the filesystem's name limit.
 */
import { createHash } from 'node:crypto';
import { WorkspaceError } from './errors.js';

/** Longest key returned; longer sanitised identifiers are shortened and hash-suffixed. */
export const MAX_KEY_LENGTH = 128;
/** Characters of the sanitised identifier kept in front of the hash suffix. */
const TRUNCATED_PREFIX_LENGTH = 100;
/** Hex characters of the identifier's sha256 appended to a shortened key. */
const HASH_SUFFIX_LENGTH = 12;

const UNSAFE_KEY_CHARS = /[^A-Za-z0-9._-]/gu;

/**
 * The directory name for an identifier: every code point outside `[A-Za-z0-9._-]`
 * becomes `_`; '', '.' and '..' are refused (`invalid_key`). A key over
 * MAX_KEY_LENGTH keeps its first 100 characters plus `-` and 12 hex characters of
 * the sha256 of the raw identifier, so distinct long identifiers stay distinct.
 */
export function workspaceKey(
  identifier: string,
): { ok: true; key: string } | { ok: false; error: WorkspaceError } {
  const sanitised = identifier.replace(UNSAFE_KEY_CHARS, '_');
  if (sanitised === '' || sanitised === '.' || sanitised === '..') {
    return {
      ok: false,
      error: new WorkspaceError(
        'invalid_key',
        `issue identifier ${JSON.stringify(identifier)} does not give a usable workspace name`,
      ),
    };
  }
  if (sanitised.length <= MAX_KEY_LENGTH) return { ok: true, key: sanitised };
  const hash = createHash('sha256').update(identifier, 'utf8').digest('hex').slice(0, HASH_SUFFIX_LENGTH);
  return { ok: true, key: `${sanitised.slice(0, TRUNCATED_PREFIX_LENGTH)}-${hash}` };
}
