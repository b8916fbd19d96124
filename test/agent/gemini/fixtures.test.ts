/**
 * Every public Gemini CLI transcript (../shared/fixtures/gemini and the real-CLI
 * runs in ../shared/fixtures/real-cli/gemini) and every checked-in recording
 * (./recordings, made from the pinned CLI against the fake model server), replayed
 * by a fake runtime through the real adapter and skeleton with the exit status the
 * CLI gave, ends in the events, outcome and figures the transcript states. The
 * figures are read off each transcript's own `result.stats`, in our classes: input
 * includes the cached tokens (as Gemini reports it), output includes the thinking
 * tokens, which Gemini reports only inside `total_tokens`. The public transcripts
 * are read in place; without ../shared those cases skip and say why, while the
 * recordings always run.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeRuntime } from '../../../internal-contracts/agent/fake-runtime.js';
import { assertUsageReporting, type UsageRun } from '../../../internal-contracts/agent/usage-reporting.js';
import { decodeGeminiLine } from '../../../src/agent/gemini/parse.js';
import '../../../src/agent/kinds.js';
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
if (missing !== null) console.warn(`gemini public-transcript tests skipped: ${missing}`);

const RECORDINGS = path.join(import.meta.dirname, 'recordings');
const ws = workspaceRoot('gemini-fixtures-');
afterAll(() => ws.cleanup());

const linesOf = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');

let replays = 0;
/** Plays `lines` (then `stderr`) as a fake runtime that exits with `exitCode`, through one turn. */
async function replay(lines: string[], exitCode: number, stderr: string[] = []): Promise<UsageRun> {
  const command = fakeRuntime(path.join(ws.root, `fake-${++replays}`), 'gemini', {
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
/**
 * The banner every run opens its stderr with (terminal warnings, the YOLO notice). A clean run's
 * stderr is nothing else, so the tool case is not kept as a file of its own: it would be
 * byte-identical to the public fixture of the same run. It is the opening of the 401 case's.
 */
const stderrBanner = () =>
  recordedStderr('error-401').filter((_line, i, all) =>
    all.slice(0, i + 1).every((l) => /^(Warning: |YOLO mode )/.test(l)),
  );
const recordedExit = (name: string) =>
  (JSON.parse(readFileSync(path.join(RECORDINGS, `${name}.meta.json`), 'utf8')) as { exitCode: number })
    .exitCode;

describe.skipIf(missing !== null)('public Gemini CLI transcripts through the adapter', () => {
  it('every line of every public transcript decodes (none is malformed)', () => {
    for (const file of [
      'gemini/excerpt_sidekick-doc_2026-06-04_elided.jsonl',
      'gemini/real_lines_2025-11-25_collection.jsonl',
      'real-cli/gemini/tool.jsonl',
      'real-cli/gemini/error401.jsonl',
    ]) {
      for (const line of shared(file)) expect(decodeGeminiLine(line).ok, `${file}: ${line}`).toBe(true);
    }
  });

  it('auto-routed run over two models (June 2026): completed, the split by model, thinking tokens in the output', async () => {
    const run = await replay(shared('gemini/excerpt_sidekick-doc_2026-06-04_elided.jsonl'), 0);
    const { result, error } = run.outcome;
    expect(error).toBeUndefined();
    expect(result.exitReason).toBe('turn_completed');
    expect(ofType(run.events, 'session_started').map((e) => e.sessionId)).toEqual([
      '38359eb7-c8e9-48e9-b419-49ce72440d9d',
    ]);
    expect(ofType(run.events, 'tool_result')).toMatchObject([
      { toolName: 'update_topic', toolKind: null, toolArgument: null, toolError: false },
    ]);
    expect(result.finalMessage).toBe('OK');
    // stats: total 35,682 / input 33,651 (11,879 cached) / output 151: 1,880 thinking tokens.
    expect(result.usage).toEqual(counts(33_651, 151 + 1_880, 11_879));
    // Per model: flash-lite 4,118 / 3,310 / 40 and flash-preview 31,564 / 30,341 / 111 (no cached split).
    expect(result.usageByModel).toEqual({
      'gemini-3.1-flash-lite': counts(3_310, 40 + 768, 0),
      'gemini-3-flash-preview': counts(30_341, 111 + 1_112, 0),
    });
    expect(result).toMatchObject({
      usageProvenance: 'reported',
      spendUnaccounted: false,
      usageMeasured: true,
    });
    expect(ofType(run.events, 'malformed')).toEqual([]);
    assertUsageReporting('gemini', run);
  });

  it('the collection (Nov 2025), its failed run: a list_directory read, then FatalTurnLimitedError is turn_failed', async () => {
    // Lines 1–5 are one run; the file gathers lines of at least two.
    const run = await replay(shared('gemini/real_lines_2025-11-25_collection.jsonl').slice(0, 5), 1);
    const { result, error } = run.outcome;
    expect(result.exitReason).toBe('turn_failed');
    expect(error?.kind).toBe('turn_failed');
    expect(error?.detail).toMatch(/Reached max session turns .*\(FatalTurnLimitedError\)/);
    expect(ofType(run.events, 'tool_result')).toMatchObject([
      { toolName: 'list_directory', toolKind: 'read', toolArgument: '.', toolError: false },
    ]);
    // stats: total 8,255 / input 7,862 / output 90; this build reports no cached split.
    expect(result.usage).toEqual(counts(7_862, 90 + 303, 0));
    // Without the cached count the figure cannot be shown to cover the turn.
    expect(result.spendUnaccounted).toBe(true);
    assertUsageReporting('gemini', run);
  });

  it('the collection, its successful run: the answer is the final message; a stray tool_result is ignored', async () => {
    const lines = shared('gemini/real_lines_2025-11-25_collection.jsonl');
    const run = await replay(lines.slice(5), 0);
    const { result } = run.outcome;
    expect(result.exitReason).toBe('turn_completed');
    expect(result.finalMessage).toBe('2 + 2 = 4.');
    expect(result.usage).toEqual(counts(7_854, 58 + 152, 0));
    // The last line is a tool_result whose tool_use belongs to another run.
    expect(ofType(run.events, 'tool_result')).toEqual([]);
    expect(decodeGeminiLine(lines[7] as string)).toMatchObject({
      ok: true,
      line: { type: 'tool_result', toolId: 'read_file-1764041293170-fd5f6da4bd4a1', failed: true },
    });
  });

  it('the real CLI against the fake server, tool case: a shell tool_result, 246/90/14 per the fake', async () => {
    const run = await replay(shared('real-cli/gemini/tool.jsonl'), 0);
    const { result } = run.outcome;
    expect(result.exitReason).toBe('turn_completed');
    expect(ofType(run.events, 'tool_result')).toMatchObject([
      {
        toolName: 'run_shell_command',
        toolKind: 'shell',
        toolArgument: 'echo hi > out.txt',
        toolError: false,
      },
    ]);
    expect(ofType(run.events, 'notification').map((e) => e.message)).toEqual([
      'I will run a command.',
      'Done: wrote hi to out.txt.',
    ]);
    expect(result.usage).toEqual(counts(246, 90, 14));
    expect(result.usageByModel).toEqual({ 'gemini-2.5-flash': counts(246, 90, 14) });
    expect(result.finalMessage).toBe('Done: wrote hi to out.txt.');
    expect(result.sessionId).toBe('e55afa01-5fe1-4270-bd72-5a5404f5fd23');
    assertUsageReporting('gemini', run);
  });

  it('the real CLI against the fake server, 401 case (exit 145): credential_unverified, nothing spent', async () => {
    const run = await replay(shared('real-cli/gemini/error401.jsonl'), 145);
    const { result, error } = run.outcome;
    expect(result.exitReason).toBe('turn_failed');
    expect(error?.kind).toBe('credential_unverified');
    expect(error?.detail).toMatch(/API key not valid.*\(HTTP status 401\)/);
    expect(result.spendUnaccounted).toBe(false);
    expect(result.usage).toEqual(counts(0, 0, 0));
  });
});

describe('checked-in recordings of the pinned CLI through the adapter', () => {
  it('tool: completed, the shell call, exactly the served 313 in (127 cached) / 66 out', async () => {
    const run = await replay(recording('tool'), recordedExit('tool'), stderrBanner());
    expect(stderrBanner()).toHaveLength(4);
    const { result, error } = run.outcome;
    expect(error).toBeUndefined();
    expect(result.exitReason).toBe('turn_completed');
    expect(ofType(run.events, 'tool_result')).toMatchObject([
      {
        toolName: 'run_shell_command',
        toolKind: 'shell',
        toolArgument: 'echo hi > out.txt',
        toolError: false,
      },
    ]);
    expect(ofType(run.events, 'notification').map((e) => e.message)).toEqual([
      'I will write the file.',
      'Done: wrote hi to out.txt.',
    ]);
    // The fake served 123 (7 cached) + 190 (120 cached) in, 45 + 21 out.
    expect(result.usage).toEqual(counts(313, 66, 127));
    expect(result.usageByModel).toEqual({ 'gemini-2.5-flash': counts(313, 66, 127) });
    expect(result).toMatchObject({ spendUnaccounted: false, usageProvenance: 'reported' });
    expect(ofType(run.events, 'warning')).toEqual([]);
    assertUsageReporting('gemini', run);
  });

  it('error-401 (exit 145, the status modulo 256): credential_unverified, not retried', async () => {
    const run = await replay(recording('error-401'), recordedExit('error-401'), recordedStderr('error-401'));
    expect(recordedExit('error-401')).toBe(145);
    const { result, error } = run.outcome;
    expect(result.exitReason).toBe('turn_failed');
    expect(error?.kind).toBe('credential_unverified');
    expect(isRetryable(error?.kind)).toBe(false);
    expect(result.spendUnaccounted).toBe(false);
    // The CLI's stderr tail reaches the operator as warnings.
    expect(ofType(run.events, 'warning').length).toBeGreaterThan(0);
  });

  it('error-503 (exit 247): a retryable response_error naming the HTTP status the exit code encodes', async () => {
    const run = await replay(recording('error-503'), recordedExit('error-503'), recordedStderr('error-503'));
    expect(recordedExit('error-503')).toBe(247);
    const { result, error } = run.outcome;
    expect(result.exitReason).toBe('turn_failed');
    expect(error?.kind).toBe('response_error');
    expect(isRetryable(error?.kind)).toBe(true);
    expect(error?.detail).toMatch(/The model is overloaded.*\(HTTP status 503\)/);
  });
});
