/**
 * Copilot transcripts replayed by a fake runtime through the real adapter and
 * skeleton, ending in the events, outcome and figures each transcript states.
 * Two sets: the public transcripts (../shared/fixtures/copilot and the real-CLI
 * captures in ../shared/fixtures/real-cli/copilot), read in place, which skip and
 * say why when ../shared is absent; and the recordings of the pinned CLI checked
 * in beside this file, which always run. A recording's session journal is laid
 * down where the CLI keeps it, so its figures come back exactly as the fake model
 * served them; the public captures carry no journal, and their spend stays
 * unmeasured rather than zero.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeRuntime } from '../../../internal-contracts/agent/fake-runtime.js';
import { assertUsageReporting, type UsageRun } from '../../../internal-contracts/agent/usage-reporting.js';
import '../../../src/agent/kinds.js';
import { isRetryable } from '../../../src/domain/errors.js';
import {
  copilotHomeDir,
  counts,
  ofType,
  RECORDINGS,
  runSession,
  SHARED_FIXTURES,
  sharedFixturesMissing,
  startParams,
  workspaceRoot,
  writeJournal,
} from './support.js';

const missing = sharedFixturesMissing();
if (missing !== null) console.warn(`copilot-cli public fixture tests skipped: ${missing}`);

const ws = workspaceRoot('copilot-fixtures-');
afterAll(() => ws.cleanup());

const linesOf = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');

let replays = 0;
/**
 * Plays the transcript's lines as a fake runtime that then exits with `exitCode`,
 * through one turn; with `journal`, that file is the session's journal.
 */
async function replay(file: string, exitCode: number, journal: string | null = null): Promise<UsageRun> {
  const lines = linesOf(file);
  const home = copilotHomeDir();
  if (journal !== null) {
    const result = lines
      .map((l) => JSON.parse(l) as { type?: string; sessionId?: string })
      .findLast((l) => l.type === 'result');
    if (result?.sessionId === undefined) throw new Error(`${file} names no session`);
    writeJournal(home, result.sessionId, linesOf(journal));
  }
  const command = fakeRuntime(path.join(ws.root, `fake-${++replays}`), 'copilot', {
    steps: [...lines.map((stdout) => ({ stdout })), { exit: exitCode }],
  });
  const [turn] = await runSession(
    startParams({ ws, command, env: { PATH: process.env.PATH ?? '', COPILOT_HOME: home } }),
    ['replay'],
  );
  if (turn === undefined) throw new Error('no turn ran');
  return turn;
}

const shared = (name: string) => path.join(SHARED_FIXTURES, name);
const recording = (name: string) => path.join(RECORDINGS, name);
const UNMEASURED = { usageMeasured: false, usageProvenance: 'unmeasured', usage: counts(0, 0) };

describe.skipIf(missing !== null)('public Copilot transcripts through the adapter', () => {
  it('1.0.63 excerpt cut before its result: the policy warning and configuration notice, the first words, completed on the work seen, spend unknown', async () => {
    const run = await replay(
      shared('copilot/excerpt_code-review-bench_copilot-1.0.63_lines1-27+29.jsonl'),
      0,
    );
    const { result, error } = run.outcome;
    expect(error).toBeUndefined();
    expect(result.exitReason).toBe('turn_completed');
    expect(ofType(run.events, 'warning').map((e) => e.message)).toEqual([
      expect.stringContaining('Third-party MCP servers are disabled'),
    ]);
    const notes = ofType(run.events, 'notification').map((e) => e.message);
    expect(notes).toEqual([expect.stringContaining('Disabled tools: bash'), 'Under']);
    // The view call started but never finished within the excerpt: no result to report.
    expect(ofType(run.events, 'tool_result')).toEqual([]);
    expect(ofType(run.events, 'malformed')).toEqual([]);
    expect(result).toMatchObject({ ...UNMEASURED, spendUnaccounted: true });
  });

  it('1.0.77 excerpt: the result line completes the turn under its session id, with the final message', async () => {
    const run = await replay(shared('copilot/excerpt_vn-doc_copilot-1.0.77_elided.jsonl'), 0);
    const { result } = run.outcome;
    expect(result.exitReason).toBe('turn_completed');
    expect(result.sessionId).toBe('d60f7463-5d66-44b2-b8c4-60a0c0c36289');
    expect(ofType(run.events, 'session_started').at(-1)?.sessionId).toBe(
      'd60f7463-5d66-44b2-b8c4-60a0c0c36289',
    );
    expect(result.finalMessage).toBe('Xin chào từ Copilot CLI.');
    expect(result).toMatchObject({ ...UNMEASURED, spendUnaccounted: true });
  });

  it('a simple session: one message, completed', async () => {
    const run = await replay(shared('copilot/sanitized/sortie_simple_session.jsonl'), 0);
    expect(run.outcome.result).toMatchObject({
      exitReason: 'turn_completed',
      sessionId: 'aa778ea0-6eab-4ce9-b87e-11d6d33dab4f',
    });
    expect(run.outcome.result.finalMessage).toContain('hello world');
    expect(ofType(run.events, 'notification').map((e) => e.message)).toEqual(['hello', '\n\nhello world']);
  });

  it('a tool session: a view call is a read of its path, and the task summary is the final message', async () => {
    const run = await replay(shared('copilot/sanitized/sortie_tool_use_session.jsonl'), 0);
    expect(run.outcome.result.exitReason).toBe('turn_completed');
    expect(ofType(run.events, 'tool_result')).toMatchObject([
      { toolName: 'view', toolKind: 'read', toolArgument: '/tmp/copilot-test/main.go', toolError: false },
    ]);
    expect(run.outcome.result.finalMessage).toBe('Read and summarized main.go');
  });

  it('a resumed session completes under the id its result names', async () => {
    const run = await replay(shared('copilot/sanitized/sortie_resume_session.jsonl'), 0);
    expect(run.outcome.result).toMatchObject({
      exitReason: 'turn_completed',
      sessionId: 'aa778ea0-6eab-4ce9-b87e-11d6d33dab4f',
      finalMessage: 'Continuing from where we left off.',
    });
  });

  it('a line that is not JSON is one malformed event; an unknown event type is ignored; exit 0 after output completes', async () => {
    const run = await replay(shared('copilot/sanitized/sortie_malformed_lines.jsonl'), 0);
    expect(ofType(run.events, 'malformed').map((e) => e.message)).toEqual(['not JSON: this is not json']);
    expect(run.outcome.result.exitReason).toBe('turn_completed');
    expect(run.outcome.result.finalMessage).toBe('hello after malformed');
  });

  it('the plain-text refusal of a CLI with no login is credential_unverified, not retried', async () => {
    const run = await replay(shared('copilot/sanitized/sortie_auth_failure.stdout.txt'), 1);
    expect(run.outcome.result.exitReason).toBe('turn_failed');
    expect(run.outcome.error?.kind).toBe('credential_unverified');
    expect(isRetryable(run.outcome.error?.kind)).toBe(false);
    expect(ofType(run.events, 'malformed')).toEqual([]);
  });

  it('the real CLI against the fake server, tool case: a bash shell call, completed with the final text, spend unknown without the journal', async () => {
    const run = await replay(shared('real-cli/copilot/tool.jsonl'), 0);
    const { result } = run.outcome;
    expect(result.exitReason).toBe('turn_completed');
    expect(ofType(run.events, 'tool_result')).toMatchObject([
      { toolName: 'bash', toolKind: 'shell', toolArgument: 'echo hi > out.txt', toolError: false },
    ]);
    expect(result.finalMessage).toBe('Done: wrote hi to out.txt.');
    expect(result.sessionId).toBe('5eb63c77-7225-4203-a84b-2d141f8d1d09');
    expect(result).toMatchObject({ ...UNMEASURED, spendUnaccounted: true });
  });

  it('the real CLI against the fake server, 401 case: three failed calls, then credential_unverified', async () => {
    const run = await replay(shared('real-cli/copilot/error401.jsonl'), 1);
    expect(run.outcome.error?.kind).toBe('credential_unverified');
    expect(run.outcome.error?.detail).toContain('HTTP 401');
    expect(
      ofType(run.events, 'notification').filter((e) => e.message.startsWith('model call failed (status 401')),
    ).toHaveLength(3);
    // No model output was served: nothing is unaccounted.
    expect(run.outcome.result.spendUnaccounted).toBe(false);
  });
});

describe('recordings of the pinned CLI (1.0.102) through the adapter', () => {
  it("tool case: bash writes the file, and the journal gives exactly the fake's two calls (313 in, 127 cached / 66 out)", async () => {
    const run = await replay(recording('tool.jsonl'), 0, recording('tool.session-events.jsonl'));
    const { result, error } = run.outcome;
    expect(error).toBeUndefined();
    expect(result.exitReason).toBe('turn_completed');
    expect(result.sessionId).toBe('fe6cf622-f660-4136-9da7-56ba98b07625');
    expect(ofType(run.events, 'tool_result')).toMatchObject([
      { toolName: 'bash', toolKind: 'shell', toolArgument: 'echo hi > out.txt', toolError: false },
    ]);
    expect(result.finalMessage).toBe('Done: wrote hi to out.txt.');
    // 123 + 190 prompt tokens (7 + 120 of them cached), 45 + 21 completion tokens.
    expect(result.usage).toEqual(counts(313, 66, 127));
    expect(result).toMatchObject({ usageMeasured: true, usageProvenance: 'reported' });
    // Read from the journal after the fact, the figure cannot claim to cover the turn.
    expect(result.spendUnaccounted).toBe(true);
    expect(ofType(run.events, 'token_usage')).toMatchObject([
      { usage: counts(313, 66, 127), model: 'gpt-4.1' },
    ]);
    assertUsageReporting('copilot-cli', run);
  });

  it('401 case: the failed calls as notifications, credential_unverified, nothing spent', async () => {
    const run = await replay(recording('error-401.jsonl'), 1, recording('error-401.session-events.jsonl'));
    expect(run.outcome.result.exitReason).toBe('turn_failed');
    expect(run.outcome.error?.kind).toBe('credential_unverified');
    expect(run.outcome.error?.detail).toMatch(
      /Authentication failed with provider .*\(HTTP 401, authentication\)/s,
    );
    expect(
      ofType(run.events, 'notification').filter((e) => e.message.startsWith('model call failed (status 401')),
    ).toHaveLength(3);
    expect(run.outcome.result).toMatchObject({ ...UNMEASURED, spendUnaccounted: false });
  });

  it('503 case: six failed calls, then a retryable response_error naming the status', async () => {
    const run = await replay(recording('error-503.jsonl'), 1, recording('error-503.session-events.jsonl'));
    expect(run.outcome.result.exitReason).toBe('turn_failed');
    expect(run.outcome.error?.kind).toBe('response_error');
    expect(isRetryable(run.outcome.error?.kind)).toBe(true);
    expect(run.outcome.error?.detail).toContain('HTTP 503, query');
    expect(
      ofType(run.events, 'notification').filter((e) => e.message.startsWith('model call failed (status 503')),
    ).toHaveLength(6);
    expect(run.outcome.result.spendUnaccounted).toBe(false);
  });
});
