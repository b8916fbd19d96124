/**
 * Files on this machine that a workflow names and the service reads while it runs (a file
 * tracker's issues file, the SSH key). The schema cannot see that one is missing or is a
 * directory, and the service would otherwise start and then fail on every tick or every
 * connection; so loading checks them, at a severity the caller picks: `run` cannot work
 * without them, while `validate` may run on a machine the files are provisioned on later.
 */
import { accessSync, constants, statSync } from 'node:fs';
import type { ConfigIssue, Severity } from '../domain/diagnostic.js';

/** A file a workflow key names: its absolute path, the key path, and what it is for (message text). */
export interface LocalFile {
  path: string;
  key: readonly string[];
  /** What the file should be, for the message ("the issues file"). */
  what: string;
}

/**
 * The problem with `file`, or null when it is a readable regular file. Codes:
 * `<key>.not_found`, `<key>.not_a_file` (a directory or a device), `<key>.unreadable`.
 */
export function localFileIssue(file: LocalFile, severity: Severity): ConfigIssue | null {
  const name = file.key.join('.');
  const issue = (code: string, problem: string): ConfigIssue => ({
    severity,
    code,
    message: `${name} names ${file.path}, ${problem}`,
    path: file.key,
  });
  const notFound = `${name}.not_found`;
  const notAFile = `${name}.not_a_file`;
  const unreadable = `${name}.unreadable`;
  let stats: ReturnType<typeof statSync>;
  try {
    stats = statSync(file.path, { throwIfNoEntry: false });
  } catch (error) {
    // ENOTDIR: a part of the path is a file; anything else (EACCES on a directory) keeps it out of reach.
    if ((error as NodeJS.ErrnoException).code !== 'ENOTDIR') {
      return issue(unreadable, `which this user cannot reach (${file.what})`);
    }
    stats = undefined;
  }
  if (stats === undefined) return issue(notFound, `which does not exist (${file.what})`);
  if (stats.isDirectory()) return issue(notAFile, `which is a directory, not ${file.what}`);
  if (!stats.isFile()) return issue(notAFile, `which is not a regular file (${file.what})`);
  try {
    accessSync(file.path, constants.R_OK);
  } catch {
    return issue(unreadable, `which this user cannot read (${file.what})`);
  }
  return null;
}
