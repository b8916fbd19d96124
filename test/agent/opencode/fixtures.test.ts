/**
 * Every public OpenCode transcript (../shared/fixtures/opencode and the real-CLI
 * runs in ../shared/fixtures/real-cli/opencode) and every checked-in recording
 * (./recordings, made from the pinned CLI against the fake model server), replayed
 * by a fake runtime through the real adapter and skeleton with the exit status the
 * CLI gave, ends in the events, outcome and figures the transcript states. The
 * figures are read off each transcript's own `step_finish` lines, in our classes:
 * input includes the cache reads and writes (OpenCode prints them apart), output
 * includes the reasoning tokens. The public transcripts are read in place; without
 * ../shared those cases skip and say why, while the recordings always run.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeRuntime } from '../../../internal-contracts/agent/fake-runtime.js';
import { assertUsageReporting, type UsageRun } from '../../../internal-contracts/agent/usage-reporting.js';
import '../../../src/agent/kinds.js';
import { decodeOpencodeLine } from '../../../src/agent/opencode/parse.js';
import { isRetryable } from '../../../src/domain/errors.js';
import {
  counts,
  ofType,
  runSession,
  SHARED_FIXTURES,
  sharedFixturesMissing,
  startParams,
  workspaceRoot,
} from './support.js';

const missing = sharedFixturesMissing();
if (missing !== null) console.warn(`opencode public-transcript tests skipped: ${missing}`);

const RECORDINGS = path.join(import.meta.dirname, 'recordings');
const ws = workspaceRoot('opencode-fixtures-');
afterAll(() => ws.cleanup());

const linesOf = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');

let replays = 0;
/** Plays `lines` (then `stderr`) as a fake runtime that exits with `exitCode`, through one turn. */
async function replay(lines: string[], exitCode: number, stderr: string[] = []): Promise<UsageRun> {
  const command = fakeRuntime(path.join(ws.root, `fake-${++replays}`), 'opencode', {
    steps: [
      ...lines.map((stdout) => ({ stdout })),
      ...stderr.map((s) => ({ stderr: s })),
      { exit: exitCode },
    ],
  });
  const [turn] = await runSession(startParams({ ws, command }), ['replay']);
  if (turn === undefined) throw new Error('no turn ran');
  return turn;
}

const shared = (file: string) => linesOf(path.join(SHARED_FIXTURES, file));
const recording = (name: string) => linesOf(path.join(RECORDINGS, `${name}.jsonl`));
const recordedStderr = (name: string) => linesOf(path.join(RECORDINGS, `${name}.stderr.txt`));
const recordedExit = (name: string) =>
  (JSON.parse(readFileSync(path.join(RECORDINGS, `${name}.meta.json`), 'utf8')) as { exitCode: number })
    .exitCode;

/** The public stream transcripts, each replayed by a case below. */
const TRANSCRIPTS = [
  'opencode/takopi-opencode_opencode.jsonl',
  'opencode/untether_opencode_stream_success.jsonl',
  'opencode/sanitized/sortie_simple_turn.jsonl',
  'opencode/sanitized/sortie_tool_success.jsonl',
  'opencode/sanitized/sortie_resume_turn.jsonl',
  'opencode/sanitized/sortie_logical_failure_exit0.jsonl',
  'opencode/sanitized/sortie_permission_warning_then_error.stdout.txt',
  'real-cli/opencode/tool.jsonl',
  'real-cli/opencode/error401.jsonl',
];
/** Public files that are not `run --format json` output, and what they are. */
const NOT_STREAMS: Readonly<Record<string, string>> = {
  'opencode/sanitized/sortie_export_usage.json':
    "`opencode export` output, which this adapter never runs: its figures come from the stream's steps",
};

describe.skipIf(missing !== null)('public OpenCode transcripts through the adapter', () => {
  it('every public file is either replayed below or named as not a stream', () => {
    // Beside the transcripts: READMEs, and the real-CLI runs' requests, stderr and meta files.
    const companion = /(^README\.md|\.requests\.jsonl|\.stderr\.txt|\.meta\.json)$/;
    const files = (dir: string): string[] =>
      readdirSync(path.join(SHARED_FIXTURES, dir), { withFileTypes: true }).flatMap((e) => {
        if (e.isDirectory()) return files(path.join(dir, e.name));
        return companion.test(e.name) ? [] : [path.join(dir, e.name)];
      });
    const all = [...files('opencode'), ...files('real-cli/opencode')];
    expect(all.sort()).toEqual([...TRANSCRIPTS, ...Object.keys(NOT_STREAMS)].sort());
  });

  it('every line of every public transcript decodes (none is malformed)', () => {
    for (const file of TRANSCRIPTS) {
      for (const line of shared(file)) expect(decodeOpencodeLine(line).ok, `${file}: ${line}`).toBe(true);
    }
  });

  it('real capture (Dec 2025), takopi: a bash call, then the answer; both steps counted, cache reads into input', async () => {
    const run = await replay(shared('opencode/takopi-opencode_opencode.jsonl'), 0);
    const { result, error } = run.outcome;
    expect(error).toBeUndefined();
    expect(result.exitReason).toBe('turn_completed');
    expect(ofType(run.events, 'session_started').map((e) => e.sessionId)).toEqual([
      'ses_494719016ffe85dkDMj0FPRbHK',
    ]);
    expect(ofType(run.events, 'tool_result')).toEqual([
      expect.objectContaining({
        toolName: 'bash',
        toolKind: 'shell',
        toolArgument: 'echo hello',
        toolDurationMs: 50,
        toolError: false,
      }),
    ]);
    expect(result.finalMessage).toBe('```\nhello\n```');
    // Step 1: 21,772 in / 110 out; step 2: 671 in + 21,415 cache reads / 8 out.
    expect(result.usage).toEqual(counts(21_772 + 671 + 21_415, 118, 21_415));
    expect(result).toMatchObject({
      spendUnaccounted: false,
      usageProvenance: 'reported',
      reportedAmounts: [],
    });
    expect(ofType(run.events, 'malformed')).toEqual([]);
    assertUsageReporting('opencode', run);
  });

  it('the same capture as edited by untether: its priced last step ($0.001) is the reported cost', async () => {
    const run = await replay(shared('opencode/untether_opencode_stream_success.jsonl'), 0);
    expect(run.outcome.result.exitReason).toBe('turn_completed');
    expect(run.outcome.result.reportedAmounts).toEqual([{ unit: 'USD', micros: 1_000 }]);
    expect(run.outcome.result.usage).toEqual(counts(43_858, 118, 21_415));
  });

  it('sortie simple turn: completed with its text; 14,406 in + 1,840 cache reads / 21 out', async () => {
    const run = await replay(shared('opencode/sanitized/sortie_simple_turn.jsonl'), 0);
    expect(run.outcome.result).toMatchObject({
      exitReason: 'turn_completed',
      finalMessage: 'Hello, world!',
      sessionId: 'ses_abc123',
      spendUnaccounted: false,
    });
    expect(run.outcome.result.usage).toEqual(counts(16_246, 21, 1_840));
  });

  it.each([
    ['sortie_tool_success.jsonl', counts(800, 200, 0)],
    ['sortie_resume_turn.jsonl', counts(700, 100, 0)],
  ])(
    'sortie %s: completed, but its step lacks the cache counts, so the figure cannot claim to cover the turn',
    async (file, usage) => {
      const run = await replay(shared(`opencode/sanitized/${file}`), 0);
      const { result } = run.outcome;
      expect(result.exitReason).toBe('turn_completed');
      expect(result.usage).toEqual(usage);
      expect(result.spendUnaccounted).toBe(true);
      expect(result.usageMeasured).toBe(true);
    },
  );

  it('sortie tool success: the read tool is a read of the file it names', async () => {
    const run = await replay(shared('opencode/sanitized/sortie_tool_success.jsonl'), 0);
    expect(ofType(run.events, 'tool_result')).toMatchObject([
      { toolName: 'read', toolKind: 'read', toolError: false, toolDurationMs: 13 },
    ]);
    expect(ofType(run.events, 'tool_result')[0]?.toolArgument).toMatch(/README\.md$/);
  });

  it('sortie logical failure: a ProviderAuthError with exit 0 is credential_unverified, nothing spent', async () => {
    const run = await replay(shared('opencode/sanitized/sortie_logical_failure_exit0.jsonl'), 0);
    const { result, error } = run.outcome;
    expect(result.exitReason).toBe('turn_failed');
    expect(error?.kind).toBe('credential_unverified');
    expect(error?.detail).toBe('invalid api key (ProviderAuthError)');
    expect(result.spendUnaccounted).toBe(false);
  });

  it('sortie permission warning: the plain rejection line is a warning, the rejected call a failed tool, and no finishing step is no success', async () => {
    const run = await replay(shared('opencode/sanitized/sortie_permission_warning_then_error.stdout.txt'), 0);
    expect(ofType(run.events, 'malformed')).toEqual([]);
    expect(ofType(run.events, 'warning').map((e) => e.message)).toContainEqual(
      expect.stringContaining('a permission rule asked about bash'),
    );
    expect(ofType(run.events, 'tool_result')).toMatchObject([
      { toolName: 'bash', toolKind: 'shell', toolArgument: null, toolError: true },
    ]);
    expect(run.outcome.result.exitReason).toBe('turn_failed');
    expect(run.outcome.error?.kind).toBe('turn_failed');
  });

  it('the real CLI against the fake server, tool case: a shell call, 246/90/14 per the fake', async () => {
    const run = await replay(shared('real-cli/opencode/tool.jsonl'), 0);
    const { result } = run.outcome;
    expect(result.exitReason).toBe('turn_completed');
    expect(ofType(run.events, 'tool_result')).toMatchObject([
      { toolName: 'bash', toolKind: 'shell', toolArgument: 'echo hi > out.txt', toolError: false },
    ]);
    expect(ofType(run.events, 'notification').map((e) => e.message)).toEqual([
      'I will run a command.',
      'Done: wrote hi to out.txt.',
    ]);
    // Each of the two calls: 123 prompt (7 cached) / 45 completion.
    expect(result.usage).toEqual(counts(246, 90, 14));
    expect(result.finalMessage).toBe('Done: wrote hi to out.txt.');
    expect(result.sessionId).toBe('ses_dd58b5fbdffeEm7FfKpih1awa3');
    assertUsageReporting('opencode', run);
  });

  it('the real CLI against the fake server, 401 case (exit 1): credential_unverified, nothing spent', async () => {
    const run = await replay(shared('real-cli/opencode/error401.jsonl'), 1);
    const { result, error } = run.outcome;
    expect(result.exitReason).toBe('turn_failed');
    expect(error?.kind).toBe('credential_unverified');
    expect(error?.detail).toBe('Incorrect API key provided: dummy. (HTTP status 401, APIError)');
    expect(result.spendUnaccounted).toBe(false);
    expect(result.usage).toEqual(counts(0, 0, 0));
  });
});

describe('checked-in recordings of the pinned CLI through the adapter', () => {
  it('tool: completed, the shell call, exactly the served 313 in (127 cached) / 66 out', async () => {
    const run = await replay(recording('tool'), recordedExit('tool'), recordedStderr('tool'));
    const { result, error } = run.outcome;
    expect(error).toBeUndefined();
    expect(result.exitReason).toBe('turn_completed');
    expect(ofType(run.events, 'tool_result')).toMatchObject([
      { toolName: 'bash', toolKind: 'shell', toolArgument: 'echo hi > out.txt', toolError: false },
    ]);
    expect(ofType(run.events, 'notification').map((e) => e.message)).toEqual([
      'I will write the file.',
      'Done: wrote hi to out.txt.',
    ]);
    // The fake served 123 (7 cached) + 190 (120 cached) in, 45 + 21 out; the title request is not counted.
    expect(result.usage).toEqual(counts(313, 66, 127));
    expect(result).toMatchObject({
      spendUnaccounted: false,
      usageProvenance: 'reported',
      reportedAmounts: [],
    });
    expect(ofType(run.events, 'warning')).toEqual([]);
    assertUsageReporting('opencode', run);
  });

  it('error-401 (exit 1): credential_unverified, not retried, nothing spent', async () => {
    const run = await replay(recording('error-401'), recordedExit('error-401'), recordedStderr('error-401'));
    expect(recordedExit('error-401')).toBe(1);
    const { result, error } = run.outcome;
    expect(result.exitReason).toBe('turn_failed');
    expect(error?.kind).toBe('credential_unverified');
    expect(isRetryable(error?.kind)).toBe(false);
    expect(error?.detail).toMatch(/Incorrect API key provided \(HTTP status 401, APIError\)/);
    expect(result.spendUnaccounted).toBe(false);
  });

  it('error-503 (exit 1): a retryable response_error naming the status', async () => {
    const run = await replay(recording('error-503'), recordedExit('error-503'), recordedStderr('error-503'));
    const { result, error } = run.outcome;
    expect(result.exitReason).toBe('turn_failed');
    expect(error?.kind).toBe('response_error');
    expect(isRetryable(error?.kind)).toBe(true);
    expect(error?.detail).toBe('The server is overloaded (HTTP status 503, APIError)');
  });
});
