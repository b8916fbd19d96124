/**
 * Runs once in the vitest main process, before the first test file and after the last:
 * removes the local test users (`orchssh*`) that a crashed or killed run left behind. A file
 * removes its own user when it ends; this catches the users whose file never got there. Users
 * a live test process still claims (another vitest run on this machine) are left alone. A run
 * with a tag (ORCHESTRATOR_TEST_USER_TAG, as each of CI's side-by-side runs has) sweeps only its
 * own users: between two files of another run, that run's user is unclaimed for a moment, and
 * removing it then would pull it from under the next file as it claims it. Only root can remove
 * users; anyone else has nothing to do here, since only root can make them.
 */
import { removeStaleTestUsers, TEST_USER_PREFIX, testRunTag } from './sshd.js';

function sweep(when: string): void {
  if (process.getuid?.() !== 0) return;
  try {
    const tag = testRunTag();
    const removed = removeStaleTestUsers(TEST_USER_PREFIX, tag === '' ? '' : `-${tag}`);
    if (removed.length > 0) console.log(`removed test users left ${when}: ${removed.join(', ')}`);
  } catch (error) {
    // Never fail a test run over cleanup; say what went wrong.
    console.warn(
      `could not remove stale test users: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

export function setup(): () => void {
  sweep('by an earlier run');
  return () => sweep('by this run');
}
