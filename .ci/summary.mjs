// Turns vitest's JSON report into the one line CI reads: "N passed, N failed".
// A missing or unreadable report counts as a failure, never as "0 failed".
import { readFileSync } from 'node:fs';

const file = process.argv[2] ?? 'test-results/vitest.json';
let report;
try {
  report = JSON.parse(readFileSync(file, 'utf8'));
} catch (error) {
  console.log(`no test report at ${file}: ${error instanceof Error ? error.message : String(error)}`);
  console.log('0 passed, 1 failed');
  process.exit(1);
}
const passed = Number(report.numPassedTests ?? 0);
// A file that fails to load has no failing test of its own: count it as one failure.
const brokenFiles = (report.testResults ?? []).filter(
  (r) => r.status === 'failed' && !(r.assertionResults ?? []).some((a) => a.status === 'failed'),
).length;
const failed = Number(report.numFailedTests ?? 0) + brokenFiles;
const skipped = Number(report.numPendingTests ?? 0) + Number(report.numTodoTests ?? 0);
console.log(
  skipped > 0
    ? `${passed} passed, ${failed} failed, ${skipped} skipped`
    : `${passed} passed, ${failed} failed`,
);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
