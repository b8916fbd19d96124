/**
 * A process that writes the issues file back-to-back until it is killed: the subject of the
 * kill test in `temp-files.test.ts` (not a test itself). argv: the issues file path. Prints
 * one line once the first write has landed, so the parent kills it while writes are under way.
 */
import { FileTracker } from '../../../src/tracker/file/adapter.js';

// Not from ./helpers.js: that module registers vitest hooks, which need a test runner.
const STATES = {
  activeStates: ['Todo', 'In Progress'],
  terminalStates: ['Done'],
  handoffState: null,
  inProgressState: 'In Progress',
  blockedState: null,
};

const path = process.argv[2];
if (path === undefined) throw new Error('usage: write-loop-child.ts <issues file>');
const tracker = new FileTracker({ path }, STATES);
for (let n = 0; ; n++) {
  await tracker.transitionIssue('id-1', n % 2 === 0 ? 'In Progress' : 'Todo');
  if (n === 0) process.stdout.write('writing\n');
}
