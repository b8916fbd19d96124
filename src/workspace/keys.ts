/**
 * Turns an issue identifier into the name of its workspace directory. The
 * identifier comes from the tracker and is untrusted: `../../etc`, `/etc/passwd`,
 * NUL bytes or a megabyte of text must never become a path segment that climbs out
 * of the root, names the root itself, or exceeds the filesystem's name limit.
 *
 * The mapping is injective: `A/B`, `A_B`, `A:B` and `A B` must never share a
 * directory, or one issue's agent works in (and its removal deletes) another's
 * files. An identifier that is already a safe name is used as it is; any other gets
 * a hash suffix, in a shape (`--` and 16 hex digits) that a name used as it is never
 * has, so a suffixed key cannot equal an unchanged one.
 */
import { createHash } from 'node:crypto';
import { WorkspaceError } from './errors.js';

/** Longest key returned; longer sanitised identifiers are shortened before the hash suffix. */
export const MAX_KEY_LENGTH = 128;
/** Characters of the sanitised identifier kept in front of the hash suffix. */
const TRUNCATED_PREFIX_LENGTH = 100;
/** Hex characters of the identifier's sha256 in a suffixed key (64 bits). */
const HASH_SUFFIX_LENGTH = 16;

const UNSAFE_KEY_CHARS = /[^A-Za-z0-9._-]/gu;
/** The suffix of a hashed key; an identifier that already ends like this is hashed too. */
const HASHED_SHAPE = /--[0-9a-f]{16}$/u;

export type KeyResult = { ok: true; key: string } | { ok: false; error: WorkspaceError };

/**
 * The directory name for an identifier. Used unchanged when it is made only of
 * `[A-Za-z0-9._-]`, does not start with `.`, is at most MAX_KEY_LENGTH long and does
 * not end in the hash shape. Otherwise: unsafe characters become `_`, a leading `.`
 * becomes `_`, the result is cut to 100 characters, and `--` plus 16 hex characters of
 * the sha256 of the raw identifier follow (`A/B` → `A_B--…`). Only '' is refused.
 */
export function workspaceKey(identifier: string): KeyResult {
  if (identifier === '') {
    return {
      ok: false,
      error: new WorkspaceError('invalid_key', 'an empty issue identifier does not give a workspace name'),
    };
  }
  const sanitised = identifier.replace(UNSAFE_KEY_CHARS, '_');
  const usableAsIs =
    sanitised === identifier &&
    !identifier.startsWith('.') &&
    identifier.length <= MAX_KEY_LENGTH &&
    !HASHED_SHAPE.test(identifier);
  if (usableAsIs) return { ok: true, key: identifier };
  const prefix = sanitised.slice(0, TRUNCATED_PREFIX_LENGTH).replace(/^\./u, '_');
  const hash = createHash('sha256').update(identifier, 'utf8').digest('hex').slice(0, HASH_SUFFIX_LENGTH);
  return { ok: true, key: `${prefix}--${hash}` };
}

/**
 * The name versions before the injective rule gave an identifier (every unsafe
 * character `_`, over 128 characters cut to 100 plus `-` and 12 hex); null when it
 * is the current key or was refused then. Only for adopting old workspaces.
 */
export function legacyWorkspaceKey(identifier: string): string | null {
  const sanitised = identifier.replace(UNSAFE_KEY_CHARS, '_');
  if (sanitised === '' || sanitised === '.' || sanitised === '..') return null;
  let legacy = sanitised;
  if (sanitised.length > MAX_KEY_LENGTH) {
    const hash = createHash('sha256').update(identifier, 'utf8').digest('hex').slice(0, 12);
    legacy = `${sanitised.slice(0, TRUNCATED_PREFIX_LENGTH)}-${hash}`;
  }
  const current = workspaceKey(identifier);
  return current.ok && current.key === legacy ? null : legacy;
}

/** True for a directory name this version could have made: a key of some identifier. */
export function isWorkspaceKey(name: string): boolean {
  if (name === '' || name.startsWith('.') || name.length > MAX_KEY_LENGTH) return false;
  if (name.replace(UNSAFE_KEY_CHARS, '_') !== name) return false;
  return true;
}
