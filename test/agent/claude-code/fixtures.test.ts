/**
 * Every public Claude Code transcript (../shared/fixtures/claude-code and the
 * real-CLI recordings in ../shared/fixtures/real-cli/claude), replayed by a fake
 * runtime through the real adapter and skeleton, ends in the events, outcome and
 * figures the transcript states. The figures below are read off each transcript's
 * own lines (its result line, or its one message's usage), normalised to our
 * classes: input includes cache reads and writes, which Anthropic reports apart.
 * The transcripts are read in place; without ../shared the file skips and says why.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeRuntime } from '../../../internal-contracts/agent/fake-runtime.js';
import { assertUsageReporting, type UsageRun } from '../../../internal-contracts/agent/usage-reporting.js';
import '../../../src/agent/kinds.js';
import type { AgentEvent } from '../../../src/domain/agent.js';
import { runSession, SHARED_FIXTURES, sharedFixturesMissing, startParams, workspaceRoot } from './support.js';

const missing = sharedFixturesMissing();
if (missing !== null) console.warn(`claude-code fixture tests skipped: ${missing}`);

const ws = workspaceRoot('claude-fixtures-');
afterAll(() => ws.cleanup());

let replays = 0;
/** Plays the transcript's lines as a fake runtime that then exits with `exitCode`, through one turn. */
async function replay(file: string, exitCode: number): Promise<UsageRun> {
  const lines = readFileSync(path.join(SHARED_FIXTURES, file), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  const command = fakeRuntime(path.join(ws.root, `fake-${++replays}`), 'claude', {
    steps: [...lines.map((stdout) => ({ stdout })), { exit: exitCode }],
  });
  const [turn] = await runSession(startParams({ ws, command }), ['replay']);
  if (turn === undefined) throw new Error('no turn ran');
  return turn;
}

const of = <T extends AgentEvent['type']>(run: UsageRun, type: T) =>
  run.events.filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type);

const counts = (input: number, output: number, cacheRead: number, cacheWrite: number) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: cacheRead,
  cacheWriteTokens: cacheWrite,
  totalTokens: input + output,
});

describe.skipIf(missing !== null)('public Claude Code transcripts through the adapter', () => {
  it('success with a Write tool (2.1.220): one edit tool_result, the result figure, the cost, completed', async () => {
    const run = await replay('claude-code/archistrator_success_with_tools.jsonl', 0);
    const { result, error } = run.outcome;
    expect(error).toBeUndefined();
    expect(result.exitReason).toBe('turn_completed');
    expect(of(run, 'session_started').map((e) => e.sessionId)).toEqual([
      'd0becfe3-d703-4311-8d8f-bf0ed7139dd7',
    ]);
    expect(of(run, 'tool_result')).toMatchObject([
      { toolName: 'Write', toolKind: 'edit', toolArgument: '/scrubbed/hello.txt', toolError: false },
    ]);
    // result.usage 4 in / 171 out / 63,600 cache read / 5,424 cache write.
    expect(result.usage).toEqual(counts(4 + 63_600 + 5_424, 171, 63_600, 5_424));
    expect(result.usageByModel['claude-sonnet-5']).toEqual(result.usage);
    expect(result.reportedAmounts).toEqual([{ unit: 'USD', micros: 54_201 }]);
    expect(result).toMatchObject({
      usageProvenance: 'reported',
      spendUnaccounted: false,
      usageMeasured: true,
    });
    expect(result.finalMessage).not.toBe('');
    assertUsageReporting('claude-code', run);
  });

  it('success with a sub-agent: the figure comes from modelUsage, which holds the sub-agent the main usage omits', async () => {
    const run = await replay('claude-code/archistrator_success_with_subagent.jsonl', 0);
    const { result } = run.outcome;
    expect(result.exitReason).toBe('turn_completed');
    expect(of(run, 'tool_result')).toMatchObject([{ toolName: 'Agent', toolKind: null, toolError: false }]);
    expect(of(run, 'notification').some((e) => e.message.startsWith('sub-agent started:'))).toBe(true);
    // modelUsage: 6 in / 269 out / 63,944 cache read / 21,022 cache write (main usage has 5,941 cache write).
    expect(result.usage).toEqual(counts(6 + 63_944 + 21_022, 269, 63_944, 21_022));
    expect(result.reportedAmounts).toEqual([{ unit: 'USD', micros: 115_436 }]);
    assertUsageReporting('claude-code', run);
  });

  it('an unknown model (404) says subtype "success" with is_error true: a failed turn, not a success', async () => {
    const run = await replay('claude-code/archistrator_failure.jsonl', 1);
    const { result, error } = run.outcome;
    expect(result.exitReason).toBe('turn_failed');
    expect(error?.kind).toBe('turn_failed');
    expect(error?.detail).toMatch(/API status 404/);
    expect(of(run, 'turn_failed')).toHaveLength(1);
    // The synthetic assistant message is the CLI's text, not model output.
    expect(result.spendUnaccounted).toBe(false);
    expect(result.usage).toEqual(counts(0, 0, 0, 0));
    expect(of(run, 'malformed')).toEqual([]);
  });

  it('one long-lived process with four prompts (2.1.285): one session_started, three Read results, the last cumulative figure', async () => {
    const run = await replay('claude-code/untether_claude_autocompact_2.1.285.jsonl', 0);
    const { result } = run.outcome;
    expect(result.exitReason).toBe('turn_completed');
    expect(of(run, 'session_started')).toHaveLength(1);
    expect(of(run, 'tool_result').map((e) => [e.toolName, e.toolKind, e.toolArgument])).toEqual([
      ['Read', 'read', '/tmp/fixture/big1.txt'],
      ['Read', 'read', '/tmp/fixture/big2.txt'],
      ['Read', 'read', '/tmp/fixture/big3.txt'],
    ]);
    expect(
      of(run, 'notification').some((e) => /seven_day window allowed_warning at 77%/.test(e.message)),
    ).toBe(true);
    // Its rate_limit_event lists both unified windows: 50 % and 77 % used.
    expect(of(run, 'rate_limits').at(0)).toMatchObject({
      limitId: 'unified',
      windows: [
        { window: 'five_hour', usedPercent: 50, windowMinutes: 300, resetsAtMs: 1_790_788_200_000 },
        { window: 'seven_day', usedPercent: 77, windowMinutes: 10_080, resetsAtMs: 1_791_036_000_000 },
      ],
    });
    // The last result's modelUsage is the process total: 1,545 / 2,536 / 314,408 / 77,338; $0.2003013.
    expect(result.usage).toEqual(counts(1_545 + 314_408 + 77_338, 2_536, 314_408, 77_338));
    expect(result.reportedAmounts).toEqual([{ unit: 'USD', micros: 200_301 }]);
    expect(of(run, 'malformed')).toEqual([]);
    assertUsageReporting('claude-code', run);
  });

  it('a /compact on an empty session (synthetic reply, zero usage) completes without claiming model output', async () => {
    const run = await replay('claude-code/untether_claude_compact_empty_2.1.285.jsonl', 0);
    expect(run.outcome.result.exitReason).toBe('turn_completed');
    expect(run.outcome.result.spendUnaccounted).toBe(false);
    expect(run.outcome.result.usage).toEqual(counts(0, 0, 0, 0));
  });

  it('error_max_turns alone: turn_failed with the CLI errors text, and its spend still counted', async () => {
    const run = await replay('claude-code/excerpt_result_error_max_turns_real.jsonl', 1);
    const { result, error } = run.outcome;
    expect(error?.kind).toBe('turn_failed');
    expect(error?.detail).toMatch(/Reached maximum number of turns \(40\)/);
    expect(result.usage).toEqual(counts(2_409 + 1_617_801 + 29_104, 15_946, 1_617_801, 29_104));
    expect(result.reportedAmounts).toEqual([{ unit: 'USD', micros: 1_402_094 }]);
    expect(result.spendUnaccounted).toBe(false);
  });

  it('a 1.0.x transcript (no modelUsage) takes the model from the stream and the figure from the result', async () => {
    const run = await replay('claude-code/excerpt_claude-python-sdk-test_success_v1.0.x.jsonl', 0);
    const { result } = run.outcome;
    expect(result.exitReason).toBe('turn_completed');
    expect(result.usage).toEqual(counts(4 + 15_342, 5, 0, 15_342));
    expect(Object.keys(result.usageByModel)).toEqual(['claude-opus-4-20250514']);
    expect(result.reportedAmounts).toEqual([{ unit: 'USD', micros: 288_222 }]);
  });

  it('one message split over two lines counts its usage once; with no result line, exit 0 completes on the work seen', async () => {
    const run = await replay('claude-code/excerpt_vibe-kanban_claude_v1.0.x.jsonl', 0);
    const { result } = run.outcome;
    expect(result.exitReason).toBe('turn_completed');
    expect(of(run, 'token_usage')).toHaveLength(1);
    expect(result.usage).toEqual(counts(4 + 13_497, 1, 0, 13_497));
    // No result line: the figure cannot be shown to cover the turn.
    expect(result.spendUnaccounted).toBe(true);
  });

  it('the real CLI against the fake server, tool case: Bash tool_result, 246/90/14 per the fake, $0.0020922', async () => {
    const run = await replay('real-cli/claude/tool.jsonl', 0);
    const { result } = run.outcome;
    expect(result.exitReason).toBe('turn_completed');
    expect(of(run, 'tool_result')).toMatchObject([
      { toolName: 'Bash', toolKind: 'shell', toolArgument: 'echo hi > out.txt', toolError: false },
    ]);
    expect(result.usage).toEqual(counts(246 + 14, 90, 14, 0));
    expect(result.reportedAmounts).toEqual([{ unit: 'USD', micros: 2_092 }]);
    expect(result.finalMessage).toBe('Done: wrote hi to out.txt.');
    assertUsageReporting('claude-code', run);
  });

  it('the real CLI against the fake server, 401 case: api_retry notifications, then credential_unverified', async () => {
    const run = await replay('real-cli/claude/error401.jsonl', 1);
    const { result, error } = run.outcome;
    expect(result.exitReason).toBe('turn_failed');
    expect(error?.kind).toBe('credential_unverified');
    expect(
      of(run, 'notification').filter((e) => e.message.startsWith('API request failed (status 401')),
    ).toHaveLength(2);
    expect(result.spendUnaccounted).toBe(false);
  });
});
