/**
 * Copilot's lines decoded, its turn classified from the result line (the result's
 * exitCode decides, the last session.error names the kind), and its usage files
 * read as ledger readings: the exit summary and the session journal, the latter
 * checked against the journals the pinned CLI wrote in the checked-in recordings.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeCopilotLine,
  failureKind,
  type SessionError,
  turnTerminal,
} from '../../../src/agent/copilot-cli/parse.js';
import { journalReadings, PREMIUM_REQUESTS, reportReading } from '../../../src/agent/copilot-cli/usage.js';
import { copilotLines, RECORDINGS } from './support.js';

const decode = (text: string) => {
  const d = decodeCopilotLine(text);
  if (!d.ok) throw new Error(d.reason);
  return d.line;
};

describe('decodeCopilotLine', () => {
  it('reads the result line: session id, exit code, premium requests', () => {
    expect(decode(copilotLines.result({ sessionId: 's-1', exitCode: 1, premiumRequests: 2.5 }))).toEqual({
      type: 'result',
      sessionId: 's-1',
      exitCode: 1,
      premiumRequests: 2.5,
    });
  });

  it('a result without exitCode keeps it unknown (read as a failure, never as success)', () => {
    const line = decode('{"type":"result","sessionId":"s"}');
    expect(line).toMatchObject({ type: 'result', exitCode: null, premiumRequests: null });
    expect(
      turnTerminal(line as never, { lastError: null, notAuthenticated: null, finalMessage: '' }),
    ).toMatchObject({ type: 'failure', kind: 'turn_failed' });
  });

  it('reads messages, deltas, tool starts and ends, call failures, errors and notices', () => {
    expect(decode(copilotLines.message('m1', 'hi', [{ id: 't1', name: 'bash' }]))).toEqual({
      type: 'message',
      messageId: 'm1',
      model: 'gpt-fake',
      content: 'hi',
      toolRequests: [{ id: 't1', name: 'bash' }],
    });
    expect(decode(copilotLines.delta('m1', 'Hel'))).toEqual({ type: 'delta', messageId: 'm1', text: 'Hel' });
    expect(decode(copilotLines.toolStart('t1', 'bash', { command: 'ls' }))).toEqual({
      type: 'tool_start',
      toolCallId: 't1',
      toolName: 'bash',
      arguments: { command: 'ls' },
      mcp: null,
    });
    expect(decode(copilotLines.mcpToolStart('t2', 'orchestrator', 'run_status', {}))).toEqual({
      type: 'tool_start',
      toolCallId: 't2',
      toolName: 'orchestrator-run_status',
      arguments: {},
      mcp: { server: 'orchestrator', tool: 'run_status' },
    });
    expect(decode(copilotLines.toolComplete('t1', false))).toEqual({
      type: 'tool_complete',
      toolCallId: 't1',
      success: false,
    });
    expect(decode(copilotLines.callFailure(503, 2))).toEqual({
      type: 'call_failure',
      statusCode: 503,
      attempt: 2,
    });
    expect(decode(copilotLines.sessionError('query', 'overloaded', 503))).toEqual({
      type: 'session_error',
      errorType: 'query',
      message: 'overloaded',
      statusCode: 503,
    });
    expect(decode(copilotLines.taskComplete('Wrote it'))).toEqual({
      type: 'task_complete',
      summary: 'Wrote it',
      success: true,
    });
    expect(decode(copilotLines.toolsUpdated('gpt-4.1'))).toEqual({ type: 'model', model: 'gpt-4.1' });
  });

  it('accepts event types it does not know and ignores them; refuses what is not a typed JSON object', () => {
    expect(decode('{"type":"future.event","data":{"x":1}}')).toEqual({
      type: 'ignored',
      name: 'future.event',
    });
    expect(decode(copilotLines.backgroundTasks())).toMatchObject({ type: 'ignored' });
    expect(decodeCopilotLine('this is not json')).toEqual({ ok: false, reason: 'not JSON' });
    expect(decodeCopilotLine('[1,2]')).toEqual({ ok: false, reason: 'not a JSON object' });
    expect(decodeCopilotLine('{"data":{}}')).toEqual({ ok: false, reason: 'a JSON object without a type' });
  });

  it('recognises the plain-text refusal of a CLI with no GitHub login', () => {
    expect(
      decode('Error: Not authenticated. Please run `copilot login` or set COPILOT_GITHUB_TOKEN.'),
    ).toMatchObject({ type: 'not_authenticated' });
  });

  it('never throws, whatever the line', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (text) => {
        const d = decodeCopilotLine(text);
        expect(typeof d.ok).toBe('boolean');
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.record({ type: fc.string(), data: fc.anything() }), (value) => {
        expect(() => decodeCopilotLine(JSON.stringify(value))).not.toThrow();
      }),
      { numRuns: 300 },
    );
  });
});

describe('classifying a turn', () => {
  const error = (errorType: string, statusCode: number | null): SessionError => ({
    type: 'session_error',
    errorType,
    message: 'm',
    statusCode,
  });

  it.each([
    ['authentication', 401, 'credential_unverified'],
    ['authentication', null, 'credential_unverified'],
    ['query', 403, 'credential_unverified'],
    ['query', 503, 'response_error'],
    ['query', 500, 'response_error'],
    ['query', 429, 'response_error'],
    ['query', null, 'turn_failed'],
    ['context_limit', 400, 'turn_failed'],
  ] as const)('session.error %s with status %s is %s', (type, status, kind) => {
    expect(failureKind(error(type, status))).toBe(kind);
  });

  it('a failed result with no session.error is turn_failed', () => {
    expect(failureKind(null)).toBe('turn_failed');
  });

  it('exit code 0 in the result is the success report, with the final message', () => {
    const result = { type: 'result', sessionId: 's', exitCode: 0, premiumRequests: 0 } as const;
    expect(turnTerminal(result, { lastError: null, notAuthenticated: null, finalMessage: 'Done.' })).toEqual({
      type: 'success',
      message: 'Done.',
    });
  });

  it('a non-zero result exit code is a failure naming the provider status and the error', () => {
    const result = { type: 'result', sessionId: 's', exitCode: 1, premiumRequests: 0 } as const;
    expect(
      turnTerminal(result, {
        lastError: { ...error('query', 503), message: 'Failed to get response' },
        notAuthenticated: null,
        finalMessage: '',
      }),
    ).toEqual({
      type: 'failure',
      kind: 'response_error',
      message: 'Failed to get response (HTTP 503, query)',
    });
  });

  it('no result: the plain-text login refusal is credential_unverified; otherwise no terminal report at all', () => {
    expect(
      turnTerminal(null, {
        lastError: null,
        notAuthenticated: 'Error: Not authenticated.',
        finalMessage: '',
      }),
    ).toEqual({ type: 'failure', kind: 'credential_unverified', message: 'Error: Not authenticated.' });
    expect(
      turnTerminal(null, { lastError: error('query', 503), notAuthenticated: null, finalMessage: '' }),
    ).toBeNull();
  });
});

describe('usage readings', () => {
  const summary = (metrics: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ totalPremiumRequestCost: 0, modelMetrics: metrics, ...extra });
  const usage = (input: number, output: number, cacheRead: number) => ({
    requests: { count: 1, cost: 0 },
    usage: {
      inputTokens: input,
      outputTokens: output,
      cacheReadTokens: cacheRead,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
    },
  });

  it('the exit summary of a one-model session names the model, carries the last call as its own part and the premium requests', () => {
    const reading = reportReading(
      summary({ 'gpt-4.1': usage(313, 66, 127) }, { lastCallInputTokens: 190, lastCallOutputTokens: 21 }),
      3,
    );
    expect(reading).toEqual({
      input: 313,
      output: 66,
      cacheRead: 127,
      cacheWrite: 0,
      model: 'gpt-4.1',
      identity: null,
      own: { input: 190, output: 21, cacheRead: null, cacheWrite: null },
      amounts: [{ unit: PREMIUM_REQUESTS, micros: 3_000_000 }],
    });
  });

  it('several models are summed by the usage module and name no single model', () => {
    const reading = reportReading(summary({ a: usage(100, 10, 5), b: usage(50, 5, 0) }), null);
    expect(reading).toMatchObject({ input: 150, output: 15, cacheRead: 5, cacheWrite: 0, model: null });
    expect(reading?.amounts).toBeUndefined();
  });

  it('a session no call has served reports zero, and text that is no summary reads as none', () => {
    expect(reportReading(summary({}), 0)).toMatchObject({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });
    expect(reportReading('not json', 0)).toBeNull();
    expect(reportReading('{"other":1}', 0)).toBeNull();
  });

  it("the journal of the recorded tool run holds the fake's two calls, once each, and the session's premium requests", () => {
    const text = readFileSync(path.join(RECORDINGS, 'tool.session-events.jsonl'), 'utf8');
    const { readings } = journalReadings(text);
    expect(readings).toEqual([
      expect.objectContaining({
        input: 123,
        output: 45,
        cacheRead: 7,
        cacheWrite: 0,
        model: 'gpt-4.1',
        identity: 'chatcmpl-fake-1',
      }),
      expect.objectContaining({
        input: 190,
        output: 21,
        cacheRead: 120,
        cacheWrite: 0,
        model: 'gpt-4.1',
        identity: 'chatcmpl-fake-2',
      }),
      expect.objectContaining({
        identity: 'session.shutdown',
        amounts: [{ unit: PREMIUM_REQUESTS, micros: 0 }],
      }),
    ]);
  });

  it('the journal of the recorded 401 holds no usage record, and a line cut short by a crash is skipped', () => {
    const text = readFileSync(path.join(RECORDINGS, 'error-401.session-events.jsonl'), 'utf8');
    expect(journalReadings(text).readings.filter((r) => r.identity !== 'session.shutdown')).toEqual([]);
    const cut = `${copilotLines.usageRecord('c1', 10, 2, 0)}\n{"type":"session.usage_record","data":{"usa`;
    expect(journalReadings(cut).readings).toEqual([expect.objectContaining({ identity: 'c1', input: 10 })]);
  });
});
