// Turns vitest's JSON reports into the one line CI reads: "N passed, N failed", summed over
// every report (the main run and one per extra Node version), as the last line of output.
// With several reports, a line per report comes first, worded so it never reads as that line.
// A missing or unreadable report counts as a failure, never as "0 failed", and so does a
// report in which nothing passed.
//
// Usage: node .ci/summary.mjs [report.json...]   (none: every *.json in test-results/)
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

function reportsIn(dir) {
  let names;
  try {
    names = readdirSync(dir).filter((name) => name.endsWith('.json'));
  } catch {
    names = [];
  }
  // The main report first, then the others by name (vitest-node22 before vitest-node24).
  names.sort((a, b) => (a === 'vitest.json' ? -1 : b === 'vitest.json' ? 1 : a.localeCompare(b)));
  return names.length > 0 ? names.map((name) => path.join(dir, name)) : [path.join(dir, 'vitest.json')];
}

/** Counts of one report; `missing` when it could not be read (one failure). */
function count(file) {
  let report;
  try {
    report = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { passed: 0, failed: 1, skipped: 0, missing: `no test report at ${file}: ${reason}` };
  }
  const passed = Number(report.numPassedTests ?? 0);
  // A file that fails to load has no failing test of its own: count it as one failure.
  const brokenFiles = (report.testResults ?? []).filter(
    (r) => r.status === 'failed' && !(r.assertionResults ?? []).some((a) => a.status === 'failed'),
  ).length;
  const failed = Number(report.numFailedTests ?? 0) + brokenFiles;
  const skipped = Number(report.numPendingTests ?? 0) + Number(report.numTodoTests ?? 0);
  return { passed, failed, skipped, missing: null };
}

const files = process.argv.length > 2 ? process.argv.slice(2) : reportsIn('test-results');
const counts = files.map((file) => ({ file, ...count(file) }));
for (const c of counts) {
  if (c.missing !== null) console.log(c.missing);
  else if (counts.length > 1) {
    console.log(`${c.file}: passed ${c.passed}, failed ${c.failed}, skipped ${c.skipped}`);
  }
}
const total = (key) => counts.reduce((sum, c) => sum + c[key], 0);
const passed = total('passed');
const failed = total('failed');
const skipped = total('skipped');
console.log(
  skipped > 0
    ? `${passed} passed, ${failed} failed, ${skipped} skipped`
    : `${passed} passed, ${failed} failed`,
);
process.exit(failed > 0 || counts.some((c) => c.passed === 0) ? 1 : 0);
