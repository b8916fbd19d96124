/**
 * The claude-code decoder and result classification, as tables; the session's
 * line mapping under arbitrary input (never a throw, usage never falling); and the
 * mapping rules a transcript alone cannot pin (a repeated message id counts once,
 * a tool result pairs with its call, a synthetic message is not model output).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { claudeCodeBlock } from '../../../src/agent/claude-code/config.js';
import {
  decodeClaudeLine,
  failureKind,
  type ResultLine,
  resultTerminal,
} from '../../../src/agent/claude-code/parse.js';
import { ClaudeCodeSession } from '../../../src/agent/claude-code/session.js';
import type { EventInput, TurnContext } from '../../../src/agent/core/fork-per-turn.js';
import { turnContext } from '../../support/turn-context.js';
import { claudeLines } from './support.js';

const NO_CONTEXT = { lastRetry: null, syntheticError: null, rejectedResetMs: null };

function resultLine(fields: Partial<ResultLine>): ResultLine {
  return {
    type: 'result',
    subtype: 'success',
    isError: true,
    text: '',
    errors: [],
    apiErrorStatus: null,
    terminalReason: null,
    sessionId: null,
    costUsd: 0,
    usage: null,
    modelUsage: {},
    ...fields,
  };
}

describe('decodeClaudeLine', () => {
  it.each([
    ['not JSON', 'Error: Session ID 1 is already in use.', 'not JSON'],
    ['a JSON array', '[1,2]', 'not a JSON object'],
    ['a JSON string', '"hi"', 'not a JSON object'],
    ['an init without session_id', '{"type":"system","subtype":"init"}', 'system/init without session_id'],
    ['an assistant line without message', '{"type":"assistant"}', 'assistant line without message'],
  ])('%s is a reason, not a throw', (_name, line, reason) => {
    expect(decodeClaudeLine(line)).toEqual({ ok: false, reason });
  });

  it('an unknown line type is accepted and ignored (the CLI adds types often)', () => {
    expect(decodeClaudeLine('{"type":"prompt_suggestion","suggestion":"x"}')).toEqual({
      ok: true,
      line: { type: 'ignored', name: 'prompt_suggestion' },
    });
  });

  it('a result whose keys do not start with type still decodes; a missing is_error counts as an error', () => {
    const decoded = decodeClaudeLine('{"subtype":"success","result":"hi","type":"result"}');
    expect(decoded).toMatchObject({ ok: true, line: { type: 'result', isError: true, text: 'hi' } });
  });

  it('an API error message from the CLI itself is marked synthetic with its error code', () => {
    const line = JSON.stringify({
      type: 'assistant',
      error: 'authentication_failed',
      message: { id: 'x', model: '<synthetic>', content: [{ type: 'text', text: 'Invalid API key' }] },
    });
    expect(decodeClaudeLine(line)).toMatchObject({
      ok: true,
      line: { type: 'assistant', synthetic: true, error: 'authentication_failed' },
    });
  });

  it('a resume of an unknown session (recorded from 2.1.197) is an error_during_execution result with its errors', () => {
    const line = JSON.stringify({
      type: 'result',
      subtype: 'error_during_execution',
      is_error: true,
      num_turns: 0,
      total_cost_usd: 0,
      usage: {
        input_tokens: 0,
        output_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      },
      modelUsage: {},
      errors: ['No conversation found with session ID: 41111111-2222-4333-8444-555555555555'],
    });
    const decoded = decodeClaudeLine(line);
    if (!decoded.ok || decoded.line.type !== 'result') throw new Error('not a result');
    const terminal = resultTerminal(decoded.line, NO_CONTEXT);
    expect(terminal).toMatchObject({ type: 'failure', kind: 'turn_failed' });
    expect(terminal.message).toMatch(/No conversation found .*error_during_execution/);
  });
});

describe('failure classification', () => {
  it.each([
    ['API 401', { apiErrorStatus: 401 }, NO_CONTEXT, 'credential_unverified'],
    ['API 403', { apiErrorStatus: 403 }, NO_CONTEXT, 'credential_unverified'],
    [
      'an authentication_failed synthetic message without a status',
      {},
      { ...NO_CONTEXT, syntheticError: 'authentication_failed' },
      'credential_unverified',
    ],
    ['API 429', { apiErrorStatus: 429 }, NO_CONTEXT, 'usage_limit'],
    [
      'a rejected rate-limit window',
      {},
      { ...NO_CONTEXT, rejectedResetMs: 1_790_000_000_000 },
      'usage_limit',
    ],
    ['a usage-limit text', { text: 'Claude AI usage limit reached|1790000000' }, NO_CONTEXT, 'usage_limit'],
    ['API 529 (overloaded)', { apiErrorStatus: 529 }, NO_CONTEXT, 'response_error'],
    ['API 503', { apiErrorStatus: 503 }, NO_CONTEXT, 'response_error'],
    [
      'retries that ended on 500 with no status on the result',
      {},
      {
        ...NO_CONTEXT,
        lastRetry: { attempt: 2, maxRetries: 2, delayMs: 1, status: 500, error: 'server_error' },
      },
      'response_error',
    ],
    ['API 404 (unknown model)', { apiErrorStatus: 404 }, NO_CONTEXT, 'turn_failed'],
    [
      'the CLI turn cap, even worded like a limit',
      { subtype: 'error_max_turns', text: 'turn limit reached' },
      NO_CONTEXT,
      'turn_failed',
    ],
    ['the budget cap', { subtype: 'error_max_budget_usd' }, NO_CONTEXT, 'turn_failed'],
  ] as const)('%s → %s', (_name, fields, ctx, kind) => {
    expect(failureKind(resultLine(fields), ctx)).toBe(kind);
  });

  it('a usage limit carries the reset of the rejected window, else the epoch suffix of its text, else null', () => {
    const limited = resultLine({ apiErrorStatus: 429, text: 'Claude AI usage limit reached|1790000000' });
    expect(resultTerminal(limited, { ...NO_CONTEXT, rejectedResetMs: 1_800_000_000_000 })).toMatchObject({
      kind: 'usage_limit',
      resetAtMs: 1_800_000_000_000,
    });
    expect(resultTerminal(limited, NO_CONTEXT)).toMatchObject({ resetAtMs: 1_790_000_000_000 });
    expect(resultTerminal(resultLine({ apiErrorStatus: 429 }), NO_CONTEXT)).toMatchObject({
      resetAtMs: null,
    });
  });

  it('only is_error false is a success, whatever the subtype', () => {
    expect(resultTerminal(resultLine({ isError: false, text: 'all done' }), NO_CONTEXT)).toEqual({
      type: 'success',
      message: 'all done',
    });
    expect(resultTerminal(resultLine({ isError: true, subtype: 'success' }), NO_CONTEXT).type).toBe(
      'failure',
    );
  });
});

/** A session driven as the skeleton drives it, with a fake turn context. */
function driver() {
  const parsed = claudeCodeBlock.parse({});
  if (!parsed.ok) throw new Error('default block refused');
  let now = 1_000;
  const session = new ClaudeCodeSession({
    config: parsed.config,
    sessionId: '0c9c1a4e-5d0f-4c6e-9a51-6f1b2f0c7d11',
    resumed: false,
    verification: null,
    nowMs: () => now,
  });
  const hooks = session.hooks();
  const events: EventInput[] = [];
  let ctx: TurnContext | null = null;
  let turn = 0;
  return {
    events,
    hooks,
    tick(ms: number) {
      now += ms;
    },
    begin(): TurnContext {
      turn += 1;
      ctx = turnContext((e) => events.push(e), turn);
      hooks.beginTurn?.(ctx);
      return ctx;
    },
    parse(line: string) {
      if (ctx === null) throw new Error('no turn');
      return hooks.parseLine(line, ctx);
    },
    end(cancelled = false) {
      if (ctx === null) throw new Error('no turn');
      hooks.settleUsage(ctx, { cancelled });
      return ctx;
    },
  };
}

describe('line mapping', () => {
  it('a message id repeated on several lines is counted once, and one token_usage is emitted for it', () => {
    const d = driver();
    d.begin();
    d.parse(claudeLines.init());
    d.parse(
      claudeLines.assistantText('msg_1', 'one', { input: 100, output: 1, cacheRead: 5, cacheWrite: 0 }),
    );
    d.parse(
      claudeLines.assistantText('msg_1', 'two', { input: 100, output: 1, cacheRead: 5, cacheWrite: 0 }),
    );
    d.end();
    expect(d.events.filter((e) => e.type === 'token_usage')).toHaveLength(1);
    expect(d.hooks.getUsage().usage).toMatchObject({ inputTokens: 105, outputTokens: 1, cacheReadTokens: 5 });
  });

  it('a tool result pairs with its call by id and carries its duration; a result for an unknown id emits nothing', () => {
    const d = driver();
    d.begin();
    d.parse(claudeLines.assistantTool('msg_1', 'toolu_1', 'npm test'));
    d.tick(250);
    d.parse(claudeLines.toolResult('toolu_unknown'));
    d.parse(claudeLines.toolResult('toolu_1', true));
    const results = d.events.filter((e) => e.type === 'tool_result');
    expect(results).toEqual([
      {
        type: 'tool_result',
        toolName: 'Bash',
        toolKind: 'shell',
        toolArgument: 'npm test',
        toolDurationMs: 250,
        toolError: true,
      },
    ]);
  });

  it('an MCP tool is named server.tool with no kind', () => {
    const d = driver();
    d.begin();
    const line = JSON.parse(claudeLines.assistantTool('msg_1', 'toolu_1', 'x')) as {
      message: { content: { name: string }[] };
    };
    (line.message.content[0] as { name: string }).name = 'mcp__tracker__update_issue';
    d.parse(JSON.stringify(line));
    d.parse(claudeLines.toolResult('toolu_1'));
    expect(d.events.find((e) => e.type === 'tool_result')).toMatchObject({
      toolName: 'tracker.update_issue',
      toolKind: null,
      toolArgument: null,
    });
  });

  it('the result figure settles the turn and is emitted before the outcome, above the provisional one', () => {
    const d = driver();
    d.begin();
    d.parse(claudeLines.assistantText('msg_1', 'hi', { input: 100, output: 1, cacheRead: 0, cacheWrite: 0 }));
    d.parse(
      claudeLines.result({ usage: { input: 100, output: 40, cacheRead: 0, cacheWrite: 0 }, costUsd: 0.5 }),
    );
    const ctx = d.end();
    const figures = d.events.filter((e) => e.type === 'token_usage').map((e) => e.usage.outputTokens);
    expect(figures).toEqual([1, 40]);
    expect(ctx.spend.settled).toBe(true);
    expect(ctx.spend.amounts).toEqual([{ unit: 'USD', micros: 500_000 }]);
  });

  it('turn 2 adds to turn 1 instead of restarting at zero', () => {
    const d = driver();
    for (const id of ['msg_1', 'msg_2']) {
      d.begin();
      d.parse(claudeLines.assistantText(id, 'hi', { input: 10, output: 1, cacheRead: 0, cacheWrite: 0 }));
      d.parse(
        claudeLines.result({ usage: { input: 10, output: 4, cacheRead: 0, cacheWrite: 0 }, costUsd: 0.25 }),
      );
      d.end();
    }
    expect(d.hooks.getUsage().usage).toMatchObject({ inputTokens: 20, outputTokens: 8 });
    expect(d.events.filter((e) => e.type === 'token_usage').at(-1)).toMatchObject({
      usage: { inputTokens: 20, outputTokens: 8 },
    });
  });

  it('the first turn creates the session by id, and after the CLI announced it every later turn resumes it', () => {
    const d = driver();
    const ctx = d.begin();
    const first = d.hooks.buildArgs(ctx);
    expect(first).toContain('--session-id');
    expect(first).not.toContain('--resume');
    d.parse(claudeLines.init('0c9c1a4e-5d0f-4c6e-9a51-6f1b2f0c7d11'));
    d.end();
    const second = d.hooks.buildArgs(d.begin());
    expect(second.slice(second.indexOf('--resume'), second.indexOf('--resume') + 2)).toEqual([
      '--resume',
      '0c9c1a4e-5d0f-4c6e-9a51-6f1b2f0c7d11',
    ]);
  });
});

describe('rate limits', () => {
  const limitLine = (info: Record<string, unknown>) =>
    JSON.stringify({ type: 'rate_limit_event', rate_limit_info: info, session_id: 's' });

  it('a rate_limit_event becomes one rate_limits event for the account; a line naming one window keeps the others it reported before', () => {
    const d = driver();
    d.begin();
    d.parse(
      limitLine({
        status: 'allowed_warning',
        resetsAt: 2_000_000,
        rateLimitType: 'seven_day',
        utilization: 0.81,
        unifiedWindows: {
          five_hour: { utilization: 0.25, resetsAt: 1_000_000 },
          seven_day: { utilization: 0.81, resetsAt: 2_000_000 },
        },
      }),
    );
    d.parse(limitLine({ status: 'rejected', resetsAt: 1_500_000, rateLimitType: 'five_hour' }));
    d.parse(
      limitLine({ status: 'allowed', resetsAt: 3_000_000, rateLimitType: 'opus_weekly', utilization: 0.1 }),
    );
    const reports = d.events.filter((e) => e.type === 'rate_limits');
    expect(reports).toEqual([
      {
        type: 'rate_limits',
        limitId: 'unified',
        windows: [
          { window: 'five_hour', usedPercent: 25, windowMinutes: 300, resetsAtMs: 1_000_000_000 },
          { window: 'seven_day', usedPercent: 81, windowMinutes: 10_080, resetsAtMs: 2_000_000_000 },
        ],
      },
      {
        type: 'rate_limits',
        limitId: 'unified',
        // A refusal without a figure: the named window is used up.
        windows: [
          { window: 'five_hour', usedPercent: 100, windowMinutes: 300, resetsAtMs: 1_500_000_000 },
          { window: 'seven_day', usedPercent: 81, windowMinutes: 10_080, resetsAtMs: 2_000_000_000 },
        ],
      },
      {
        type: 'rate_limits',
        limitId: 'unified',
        windows: [
          { window: 'five_hour', usedPercent: 100, windowMinutes: 300, resetsAtMs: 1_500_000_000 },
          { window: 'seven_day', usedPercent: 81, windowMinutes: 10_080, resetsAtMs: 2_000_000_000 },
          { window: 'opus_weekly', usedPercent: 10, windowMinutes: null, resetsAtMs: 3_000_000_000 },
        ],
      },
    ]);
  });

  it('a rate_limit_event that names no window reports nothing', () => {
    const d = driver();
    d.begin();
    d.parse(limitLine({ status: 'allowed' }));
    d.parse(limitLine({ status: 'allowed', rateLimitType: 'constructor', unifiedWindows: {} }));
    expect(d.events.filter((e) => e.type === 'rate_limits')).toEqual([]);
  });
});

describe('the session mapping under arbitrary input', () => {
  const usage = fc.record({
    input: fc.nat(100_000),
    output: fc.nat(10_000),
    cacheRead: fc.nat(100_000),
    cacheWrite: fc.nat(10_000),
  });
  const line = fc.oneof(
    fc.string(),
    fc.json(),
    fc
      .tuple(fc.constantFrom('msg_a', 'msg_b', 'msg_c'), usage)
      .map(([id, u]) => claudeLines.assistantText(id, 't', u)),
    fc.constantFrom(
      claudeLines.init(),
      claudeLines.assistantTool('msg_a', 'toolu_1', 'ls'),
      claudeLines.toolResult('toolu_1'),
      '{"type":"result"}',
      '{"type":"assistant","message":{"usage":{"input_tokens":-5,"output_tokens":"x"}}}',
      '{"type":"system","subtype":"api_retry","error_status":"nope"}',
      '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":"soon"}}',
    ),
  );

  it('never throws, and the run figure never falls within or across turns', () => {
    fc.assert(
      fc.property(fc.array(fc.array(line, { maxLength: 20 }), { minLength: 1, maxLength: 4 }), (turns) => {
        const d = driver();
        let last = 0;
        for (const lines of turns) {
          d.begin();
          for (const l of lines) {
            const verdict = d.parse(l);
            expect(['accepted', 'rejected']).toContain(verdict.type);
          }
          d.end();
          const total = d.hooks.getUsage().usage.totalTokens;
          expect(total).toBeGreaterThanOrEqual(last);
          last = total;
        }
        const figures = d.events.filter((e) => e.type === 'token_usage').map((e) => e.usage.totalTokens);
        expect(figures).toEqual([...figures].sort((a, b) => a - b));
      }),
      { numRuns: 200 },
    );
  });
});
