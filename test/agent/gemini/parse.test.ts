/**
 * Gemini CLI's stream-json lines: decoding (unknown types and fields are accepted,
 * what is not a JSON object is a reason, never a throw), the classification of a
 * failed result (the HTTP status read from the text, the status word or the exit
 * code, which is the status modulo 256), the usage reading of `result.stats`
 * (cached inside input, thinking tokens only inside the total), and the session's
 * handling of text deltas, tools and repeated or foreign lines.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EventInput } from '../../../src/agent/core/fork-per-turn.js';
import { geminiBlock } from '../../../src/agent/gemini/config.js';
import {
  decodeGeminiLine,
  failureKind,
  httpStatusOf,
  type ResultLine,
  resultTerminal,
} from '../../../src/agent/gemini/parse.js';
import { GeminiSession } from '../../../src/agent/gemini/session.js';
import { statsReading, thoughtsOf } from '../../../src/agent/gemini/usage.js';
import { turnContext } from '../../support/turn-context.js';
import { geminiLines } from './support.js';

const result = (fields: Partial<ResultLine> = {}): ResultLine => ({
  type: 'result',
  status: 'error',
  errorType: 'unknown',
  errorMessage: null,
  stats: null,
  ...fields,
});

describe('decodeGeminiLine', () => {
  it('decodes each line type the CLI writes', () => {
    expect(decodeGeminiLine(geminiLines.init('s-1', 'auto'))).toEqual({
      ok: true,
      line: { type: 'init', sessionId: 's-1', model: 'auto' },
    });
    expect(decodeGeminiLine(geminiLines.user())).toEqual({ ok: true, line: { type: 'user_message' } });
    expect(decodeGeminiLine(geminiLines.text('Hi'))).toEqual({
      ok: true,
      line: { type: 'assistant_text', text: 'Hi' },
    });
    expect(decodeGeminiLine(geminiLines.toolUse('t1', 'ls'))).toMatchObject({
      ok: true,
      line: { type: 'tool_use', toolId: 't1', toolName: 'run_shell_command', parameters: { command: 'ls' } },
    });
    expect(decodeGeminiLine(geminiLines.toolResult('t1', false))).toEqual({
      ok: true,
      line: { type: 'tool_result', toolId: 't1', failed: true },
    });
    expect(
      decodeGeminiLine('{"type":"error","timestamp":"x","severity":"warning","message":"Loop detected"}'),
    ).toEqual({ ok: true, line: { type: 'error', severity: 'warning', message: 'Loop detected' } });
  });

  it('a result line keeps its status, error and stats (per model too), whatever the key order', () => {
    const decoded = decodeGeminiLine(
      '{"stats":{"models":{"m":{"input_tokens":5,"total_tokens":9,"output_tokens":3}},"total_tokens":9,"input_tokens":5,"output_tokens":3,"cached":1},"status":"error","error":{"message":"boom","type":"FatalToolExecutionError"},"type":"result"}',
    );
    expect(decoded).toEqual({
      ok: true,
      line: {
        type: 'result',
        status: 'error',
        errorType: 'FatalToolExecutionError',
        errorMessage: 'boom',
        stats: {
          total: 9,
          prompt: 5,
          candidates: 3,
          cached: 1,
          models: { m: { total: 9, prompt: 5, candidates: 3, cached: null } },
        },
      },
    });
  });

  it.each([
    ['Warning: 256-color support not detected.', 'not JSON'],
    ['[1,2]', 'not a JSON object'],
    ['{"type":"init"}', 'init without session_id'],
    ['{"type":"tool_use","tool_id":"t"}', 'tool_use without tool_id or tool_name'],
  ])('%s is rejected (%s), not thrown', (line, reason) => {
    expect(decodeGeminiLine(line)).toEqual({ ok: false, reason });
  });

  it('an unknown line type is accepted and ignored', () => {
    expect(decodeGeminiLine('{"type":"thought","subject":"x"}')).toEqual({
      ok: true,
      line: { type: 'ignored', name: 'thought' },
    });
  });

  it('never throws, whatever the line', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (line) => {
        const decoded = decodeGeminiLine(line);
        expect(typeof decoded.ok).toBe('boolean');
      }),
    );
  });
});

describe('classifying a failed result', () => {
  it.each<[string, number | null, number | null]>([
    [
      '[API Error: {"error":{"code":401,"message":"API key not valid.","status":"UNAUTHENTICATED"}}]',
      145,
      401,
    ],
    ['[API Error: The model is overloaded. Please try again later.]', 247, 503],
    ['[API Error: The model is overloaded. Please try again later.]', 0, null],
    ['RESOURCE_EXHAUSTED: quota', null, 429],
    ['Request failed with status code 500', null, 500],
    ['Reached max session turns', 53, null],
    ['something else', 1, null],
  ])('%s with exit %s is HTTP status %s', (message, exitCode, status) => {
    expect(httpStatusOf(message, exitCode)).toBe(status);
  });

  it.each<[Partial<ResultLine>, number | null, string]>([
    [{ errorMessage: '[API Error: {"error":{"code":401}}]' }, 145, 'credential_unverified'],
    [{ errorMessage: 'Permission denied', errorType: 'unknown' }, 147, 'credential_unverified'],
    [{ errorMessage: 'API key not valid. Please pass a valid API key.' }, 0, 'credential_unverified'],
    [{ errorMessage: 'x', errorType: 'FatalAuthenticationError' }, 41, 'credential_unverified'],
    [{ errorMessage: '[API Error: The model is overloaded.]' }, 247, 'response_error'],
    [{ errorMessage: '[API Error: The model is overloaded. Please try again later.]' }, 0, 'response_error'],
    [{ errorMessage: 'You exceeded your quota (RESOURCE_EXHAUSTED)' }, 173, 'response_error'],
    [{ errorMessage: 'Reached max session turns', errorType: 'FatalTurnLimitedError' }, 53, 'turn_failed'],
    [{ errorMessage: null }, 1, 'turn_failed'],
  ])('%j with exit %s is %s', (fields, exitCode, kind) => {
    expect(failureKind(result(fields), exitCode)).toBe(kind);
  });

  it('success is only status "success"; its message is the final text', () => {
    expect(resultTerminal(result({ status: 'success' }), 145, 'done')).toEqual({
      type: 'success',
      message: 'done',
    });
    expect(resultTerminal(result({ status: 'cancelled', errorType: null }), 0, 'done')).toMatchObject({
      type: 'failure',
      kind: 'turn_failed',
      message: 'the result reports an error (status "cancelled")',
    });
  });
});

describe('usage from result.stats', () => {
  const stats = {
    total: 400,
    prompt: 313,
    candidates: 66,
    cached: 127,
    models: { 'gemini-2.5-flash': { total: 400, prompt: 313, candidates: 66, cached: 127 } },
  };

  it('thinking tokens are what the total holds beyond prompt and candidates; unknown without a total', () => {
    expect(thoughtsOf(stats)).toBe(21);
    expect(thoughtsOf({ ...stats, total: null })).toBeNull();
    expect(thoughtsOf({ ...stats, total: 10 })).toBe(0);
  });

  it('reads the counts as reported, no cache writes, named by its only model', () => {
    expect(statsReading(stats, 'auto')).toEqual({
      input: 313,
      output: 66,
      cacheRead: 127,
      cacheWrite: 0,
      reasoning: 21,
      model: 'gemini-2.5-flash',
      identity: null,
      byModel: {
        'gemini-2.5-flash': { input: 313, output: 66, cacheRead: 127, cacheWrite: 0, reasoning: 21 },
      },
    });
  });

  it('an older build without a cached count leaves it unknown, not zero', () => {
    expect(
      statsReading({ total: 20, prompt: 15, candidates: 5, cached: null, models: {} }, 'auto'),
    ).toMatchObject({
      cacheRead: null,
      reasoning: 0,
      model: 'auto',
    });
  });
});

describe('the session hooks', () => {
  function driver() {
    const parsed = geminiBlock.parse({});
    if (!parsed.ok) throw new Error('bad block');
    const session = new GeminiSession({
      config: parsed.config,
      sessionId: 'ours',
      resumed: false,
      isStored: null,
      nowMs: () => 0,
    });
    const hooks = session.hooks();
    const events: EventInput[] = [];
    const ctx = turnContext((e) => events.push(e));
    hooks.beginTurn?.(ctx);
    return { session, hooks, events, ctx };
  }

  it('text deltas become one notification per line break, the rest when another line comes', () => {
    const { hooks, events, ctx } = driver();
    for (const part of ['I will ', 'look.\nThen ', 'act', '.']) hooks.parseLine(geminiLines.text(part), ctx);
    expect(events).toEqual([{ type: 'notification', message: 'I will look.' }]);
    hooks.parseLine(geminiLines.toolUse('t', 'ls'), ctx);
    expect(events.at(-1)).toEqual({ type: 'notification', message: 'Then act.' });
    expect(ctx.spend.modelReached).toBe(true);
  });

  it('the CLI id replaces ours and is announced once; a repeated init does not announce again', () => {
    const { session, hooks, events, ctx } = driver();
    hooks.parseLine(geminiLines.init('cli-id'), ctx);
    hooks.parseLine(geminiLines.init('cli-id'), ctx);
    expect(events.filter((e) => e.type === 'session_started')).toEqual([
      { type: 'session_started', sessionId: 'cli-id' },
    ]);
    expect(session.sessionId).toBe('cli-id');
  });

  it('the first turn names the session, every later one resumes it', () => {
    const { hooks, ctx } = driver();
    expect(hooks.buildArgs(ctx)).toContain('--session-id');
    hooks.parseLine(geminiLines.init('ours'), ctx);
    hooks.parseLine(geminiLines.success(), ctx);
    hooks.settleUsage(ctx, { cancelled: false });
    hooks.beginTurn?.(ctx);
    expect(hooks.buildArgs(ctx).slice(-2)).toEqual(['--resume', 'ours']);
  });

  it('a tool result is reported once, paired with its start; one without a start is dropped', () => {
    const { hooks, events, ctx } = driver();
    hooks.parseLine(geminiLines.toolUse('t1', 'echo hi > out.txt'), ctx);
    hooks.parseLine(geminiLines.toolResult('t1', false), ctx);
    hooks.parseLine(geminiLines.toolResult('t1'), ctx);
    hooks.parseLine(geminiLines.toolResult('stray'), ctx);
    expect(events.filter((e) => e.type === 'tool_result')).toEqual([
      {
        type: 'tool_result',
        toolName: 'run_shell_command',
        toolKind: 'shell',
        toolArgument: 'echo hi > out.txt',
        toolDurationMs: 0,
        toolError: true,
      },
    ]);
  });

  it('never throws on any line, and whatever it reads the run figure never falls', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.string(),
            fc.constantFrom(geminiLines.init(), geminiLines.text('x\n'), geminiLines.toolUse('a', 'ls')),
            fc
              .record({
                input: fc.nat(1_000),
                output: fc.nat(1_000),
                cached: fc.nat(1_000),
                thoughts: fc.nat(50),
              })
              .map((s) => geminiLines.success({ ...s, cached: Math.min(s.cached, s.input) })),
          ),
          { maxLength: 12 },
        ),
        (lines) => {
          const { hooks, ctx } = driver();
          for (const line of lines) expect(() => hooks.parseLine(line, ctx)).not.toThrow();
          const before = hooks.getUsage().usage.totalTokens;
          hooks.settleUsage(ctx, { cancelled: false });
          expect(hooks.getUsage().usage.totalTokens).toBeGreaterThanOrEqual(before);
        },
      ),
      { numRuns: 200 },
    );
  });
});
