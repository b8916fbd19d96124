/**
 * OpenCode's `run --format json` lines: decoding (unknown types and fields are
 * accepted, the plain permission-rejection line is recognised, what is neither is
 * a reason, never a throw), the classification of an `error` line, how the last
 * step and an error decide a turn that has no result event, the usage reading of
 * a `step_finish` (cached and reasoning tokens counted apart, a cost of 0 is no
 * price), and the session's handling of ids, resumes, tools, sub-agents and the
 * run figure.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EventInput, TurnContext } from '../../../src/agent/core/fork-per-turn.js';
import { opencodeBlock } from '../../../src/agent/opencode/config.js';
import type { StoredSession } from '../../../src/agent/opencode/home.js';
import {
  decodeOpencodeLine,
  type ErrorLine,
  failureKind,
  type StepFinish,
  turnTerminal,
} from '../../../src/agent/opencode/parse.js';
import { OpencodeSession } from '../../../src/agent/opencode/session.js';
import { stepReading, stepShowsSpend } from '../../../src/agent/opencode/usage.js';
import { TurnSpend } from '../../../src/agent/usage/index.js';
import { SAMPLE_ISSUE } from '../../../src/prompt/variables.js';
import { counts, opencodeLines, SESSION } from './support.js';

const error = (fields: Partial<ErrorLine> = {}): ErrorLine => ({
  type: 'error',
  name: 'APIError',
  message: '',
  statusCode: null,
  isRetryable: null,
  ...fields,
});

const step = (reason: string, fields: Partial<StepFinish> = {}): StepFinish => ({
  type: 'step_finish',
  partId: 'prt_1',
  reason,
  tokens: null,
  costUsd: 0,
  ...fields,
});

describe('decodeOpencodeLine', () => {
  it('decodes each line type the CLI writes, with the session id every line carries', () => {
    expect(decodeOpencodeLine(opencodeLines.stepStart())).toEqual({
      ok: true,
      line: { sessionId: SESSION, type: 'step_start' },
    });
    expect(decodeOpencodeLine(opencodeLines.text('Hi'))).toEqual({
      ok: true,
      line: { sessionId: SESSION, type: 'text', text: 'Hi' },
    });
    expect(decodeOpencodeLine(opencodeLines.tool('echo hi > out.txt'))).toMatchObject({
      ok: true,
      line: {
        type: 'tool_use',
        tool: 'bash',
        status: 'completed',
        input: { command: 'echo hi > out.txt' },
        startMs: 1_796_000_000_000,
        endMs: 1_796_000_000_250,
      },
    });
    expect(
      decodeOpencodeLine(opencodeLines.stepFinish({ input: 116, output: 45, cacheRead: 7, cost: 0.25 })),
    ).toMatchObject({
      ok: true,
      line: {
        type: 'step_finish',
        reason: 'stop',
        tokens: { input: 116, output: 45, reasoning: 0, cacheRead: 7, cacheWrite: 0 },
        costUsd: 0.25,
      },
    });
    expect(
      decodeOpencodeLine(opencodeLines.error('Incorrect API key', { statusCode: 401, isRetryable: false })),
    ).toEqual({
      ok: true,
      line: {
        sessionId: SESSION,
        type: 'error',
        name: 'APIError',
        message: 'Incorrect API key',
        statusCode: 401,
        isRetryable: false,
      },
    });
  });

  it('a step without cache or reasoning figures leaves them unknown, not zero', () => {
    const decoded = decodeOpencodeLine(
      '{"type":"step_finish","sessionID":"s","part":{"id":"p","reason":"stop","tokens":{"input":700,"output":100}}}',
    );
    expect(decoded).toMatchObject({
      ok: true,
      line: { tokens: { input: 700, output: 100, cacheRead: null, cacheWrite: null, reasoning: undefined } },
    });
  });

  it("the CLI's plain permission-rejection line (styled or not) is recognised, other text is a reason", () => {
    expect(decodeOpencodeLine('! permission requested: bash; auto-rejecting')).toEqual({
      ok: true,
      plain: { type: 'permission_rejected', request: 'bash' },
    });
    expect(
      decodeOpencodeLine('\u001b[93m\u001b[1m! \u001b[0mpermission requested: edit (src/*); auto-rejecting'),
    ).toEqual({ ok: true, plain: { type: 'permission_rejected', request: 'edit (src/*)' } });
    expect(decodeOpencodeLine('Error: Session not found')).toEqual({ ok: false, reason: 'not JSON' });
    expect(decodeOpencodeLine('[1,2]')).toEqual({ ok: false, reason: 'not a JSON object' });
  });

  it('an unknown line type is accepted and ignored', () => {
    expect(decodeOpencodeLine('{"type":"compaction","sessionID":"s"}')).toEqual({
      ok: true,
      line: { sessionId: 's', type: 'ignored', name: 'compaction' },
    });
  });

  it('never throws, whatever the line', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.json()), (line) => {
        expect(() => decodeOpencodeLine(line)).not.toThrow();
      }),
      { numRuns: 500 },
    );
  });
});

describe('failureKind', () => {
  it.each<[string, Partial<ErrorLine>, string]>([
    ['a 401', { statusCode: 401, isRetryable: false }, 'credential_unverified'],
    ['a 403', { statusCode: 403 }, 'credential_unverified'],
    [
      'a ProviderAuthError without a status',
      { name: 'ProviderAuthError', message: 'invalid api key' },
      'credential_unverified',
    ],
    [
      'an invalid key named only in the text',
      { message: 'Invalid API key provided' },
      'credential_unverified',
    ],
    ['an overloaded provider (503)', { statusCode: 503, isRetryable: true }, 'response_error'],
    ['a quota refusal (429)', { statusCode: 429 }, 'response_error'],
    [
      'a retryable error without a status',
      { isRetryable: true, message: 'socket hang up' },
      'response_error',
    ],
    ['an overload named only in the text', { message: 'The server is overloaded' }, 'response_error'],
    ['a 400', { statusCode: 400, isRetryable: false, message: 'bad request' }, 'turn_failed'],
    ['an unknown error', { name: 'UnknownError', message: 'boom' }, 'turn_failed'],
  ])('%s is %s', (_what, fields, kind) => {
    expect(failureKind(error(fields))).toBe(kind);
  });
});

describe('turnTerminal', () => {
  it('an error line is a failure naming its status and name, whatever the steps said', () => {
    expect(
      turnTerminal(error({ statusCode: 401, message: 'Incorrect API key provided' }), step('stop'), 'done'),
    ).toEqual({
      type: 'failure',
      kind: 'credential_unverified',
      message: 'Incorrect API key provided (HTTP status 401, APIError)',
    });
  });

  it.each<[string, StepFinish | null, string | null]>([
    ['a last step that stopped', step('stop'), 'success'],
    ['a last step with a reason this build does not know', step('other'), 'success'],
    ['a last step that asked for tools (the loop was cut short)', step('tool-calls'), null],
    ['no step at all', null, null],
    ['a reply cut off at the output limit', step('length'), 'failure'],
    ["a reply the provider's filter stopped", step('content-filter'), 'failure'],
  ])('%s: %s', (_what, last, type) => {
    expect(turnTerminal(null, last, 'final')?.type ?? null).toBe(type);
  });

  it("a success carries the turn's final text", () => {
    expect(turnTerminal(null, step('stop'), 'Done.')).toEqual({ type: 'success', message: 'Done.' });
  });
});

describe('stepReading', () => {
  it('reads the counts as printed, identified by the part id; a cost of 0 is no price, not a free call', () => {
    const line = decodeOpencodeLine(opencodeLines.stepFinish({ input: 116, output: 45, cacheRead: 7 }));
    if (!line.ok || !('line' in line) || line.line.type !== 'step_finish') throw new Error('not a step');
    expect(stepReading(line.line)).toMatchObject({
      input: 116,
      output: 45,
      cacheRead: 7,
      cacheWrite: 0,
      reasoning: 0,
      model: null,
      amounts: [],
    });
    expect(stepReading(step('stop', { costUsd: 0.0125 }))?.amounts).toEqual([
      { unit: 'USD', micros: 12_500 },
    ]);
    expect(stepReading(step('stop', { costUsd: null }))).toBeNull();
  });

  it('a step with figures shows spend; one with zeros and no cost does not', () => {
    const tokens = { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 };
    expect(stepShowsSpend(step('stop', { tokens }))).toBe(false);
    expect(stepShowsSpend(step('stop', { tokens: { ...tokens, cacheRead: 3 } }))).toBe(true);
  });
});

describe('the session hooks', () => {
  function driver(
    opts: { resume?: string; lookup?: ((id: string) => StoredSession | null) | null; block?: object } = {},
  ) {
    const parsed = opencodeBlock.parse({ model: 'fake/fake-model', ...opts.block });
    if (!parsed.ok) throw new Error('bad block');
    const session = new OpencodeSession({
      config: parsed.config,
      resumeSessionId: opts.resume ?? null,
      workspacePath: '/ws/here',
      lookup: opts.lookup ?? null,
    });
    const hooks = session.hooks();
    const events: EventInput[] = [];
    let spend = new TurnSpend();
    const ctx: TurnContext = {
      turn: 1,
      prompt: '',
      issue: SAMPLE_ISSUE,
      get spend() {
        return spend;
      },
      emit: (e) => events.push(e),
      pid: '',
    };
    const begin = () => {
      spend = new TurnSpend();
      hooks.beginTurn?.(ctx);
    };
    begin();
    return { session, hooks, events, ctx, begin };
  }

  it('the first line names the session, announced once; the next turn continues it by id without a title', () => {
    const { session, hooks, events, ctx, begin } = driver();
    const first = hooks.buildArgs(ctx);
    expect(first).not.toContain('--session');
    expect(first[first.indexOf('--title') + 1]).toBe(`${SAMPLE_ISSUE.identifier} ${SAMPLE_ISSUE.title}`);
    hooks.parseLine(opencodeLines.stepStart(), ctx);
    hooks.parseLine(opencodeLines.text('Hi'), ctx);
    expect(events.filter((e) => e.type === 'session_started')).toEqual([
      { type: 'session_started', sessionId: SESSION },
    ]);
    expect(session.sessionId).toBe(SESSION);
    hooks.parseLine(opencodeLines.stepFinish({ input: 1, output: 1 }), ctx);
    hooks.settleUsage(ctx, { cancelled: false });
    begin();
    const second = hooks.buildArgs(ctx);
    expect(second.slice(-2)).toEqual(['--session', SESSION]);
    expect(second).not.toContain('--title');
  });

  it('a session that failed after its first line still exists, so the next turn continues it', () => {
    const { hooks, ctx, begin } = driver();
    hooks.parseLine(opencodeLines.error('Incorrect API key', { statusCode: 401 }), ctx);
    hooks.settleUsage(ctx, { cancelled: false });
    begin();
    expect(hooks.buildArgs(ctx).slice(-2)).toEqual(['--session', SESSION]);
  });

  it.each<[string, StoredSession, RegExp]>([
    ['is not in the database', { stored: false }, /no record of session ses_old/],
    ['was made for another folder', { stored: true, directory: '/ws/other' }, /made in \/ws\/other/],
  ])(
    'a resumed session that %s starts afresh with a warning instead of failing (or hanging)',
    (_w, found, why) => {
      const { hooks, events, ctx } = driver({ resume: 'ses_old', lookup: () => found });
      expect(hooks.buildArgs(ctx)).toContain('--title');
      expect(events).toEqual([{ type: 'warning', message: expect.stringMatching(why) }]);
    },
  );

  it('a resumed session the database holds for this folder (or that cannot be checked) is continued', () => {
    for (const lookup of [() => ({ stored: true as const, directory: '/ws/here' }), () => null, null]) {
      const { hooks, events, ctx } = driver({ resume: 'ses_old', lookup });
      expect(hooks.buildArgs(ctx).slice(-2)).toEqual(['--session', 'ses_old']);
      expect(events).toEqual([]);
    }
  });

  it('model, agent and variant reach their flags on every turn', () => {
    const { hooks, ctx } = driver({ block: { agent: 'review', variant: 'high' } });
    const args = hooks.buildArgs(ctx);
    expect(args.slice(0, 9)).toEqual([
      'run',
      '--format',
      'json',
      '-m',
      'fake/fake-model',
      '--agent',
      'review',
      '--variant',
      'high',
    ]);
  });

  it('a tool call is reported with its kind, argument and own duration; the final message is the text after it', () => {
    const { hooks, events, ctx } = driver();
    hooks.parseLine(opencodeLines.text('I will write it.'), ctx);
    hooks.parseLine(opencodeLines.tool('echo hi > out.txt'), ctx);
    hooks.parseLine(
      opencodeLines.tool('', { tool: 'read', ok: false, input: { filePath: 'README.md' } }),
      ctx,
    );
    hooks.parseLine(opencodeLines.text('Done.'), ctx);
    expect(events.filter((e) => e.type === 'tool_result')).toEqual([
      {
        type: 'tool_result',
        toolName: 'bash',
        toolKind: 'shell',
        toolArgument: 'echo hi > out.txt',
        toolDurationMs: 250,
        toolError: false,
      },
      {
        type: 'tool_result',
        toolName: 'read',
        toolKind: 'read',
        toolArgument: 'README.md',
        toolDurationMs: 250,
        toolError: true,
      },
    ]);
    expect(hooks.finalMessage?.()).toBe('Done.');
    expect(ctx.spend.modelReached).toBe(true);
  });

  it('a step start alone is no output: a turn that shows only that did not reach the model', () => {
    const { hooks, ctx } = driver();
    hooks.parseLine(opencodeLines.stepStart(), ctx);
    expect(ctx.spend.modelReached).toBe(false);
  });

  it('each step adds its figures while the turn runs (cache and reasoning into our classes); a repeated line counts once', () => {
    const { hooks, events, ctx } = driver();
    const first = opencodeLines.stepFinish({ input: 116, output: 45, cacheRead: 7, reason: 'tool-calls' });
    hooks.parseLine(first, ctx);
    hooks.parseLine(first, ctx);
    hooks.parseLine(opencodeLines.stepFinish({ input: 70, output: 21, cacheRead: 120, reasoning: 9 }), ctx);
    const usage = events.filter((e) => e.type === 'token_usage').map((e) => e.usage);
    expect(usage).toEqual([counts(123, 45, 7), counts(123 + 190, 45 + 30, 127)]);
    hooks.settleUsage(ctx, { cancelled: false });
    expect(ctx.spend.settled).toBe(true);
    expect(hooks.getUsage()).toEqual({ usage: counts(313, 75, 127), byModel: {}, measured: true });
  });

  it('a sub-agent call makes the turn uncovered: its session prints no steps', () => {
    const { hooks, ctx } = driver();
    hooks.parseLine(opencodeLines.tool('', { tool: 'task', input: { description: 'look around' } }), ctx);
    hooks.parseLine(opencodeLines.stepFinish({ input: 10, output: 5 }), ctx);
    hooks.settleUsage(ctx, { cancelled: false });
    expect(ctx.spend.settled).toBe(false);
    expect(hooks.getUsage().usage).toEqual(counts(10, 5, 0));
  });

  it('a turn whose last step asked for tools is not covered, even at exit 0', () => {
    const { hooks, ctx } = driver();
    hooks.parseLine(opencodeLines.stepFinish({ input: 10, output: 5, reason: 'tool-calls' }), ctx);
    hooks.settleUsage(ctx, { cancelled: false });
    expect(ctx.spend.settled).toBe(false);
  });

  it('the plain permission-rejection line becomes a warning, not a malformed line', () => {
    const { hooks, events, ctx } = driver();
    expect(hooks.parseLine('! permission requested: bash (rm -rf x); auto-rejecting', ctx)).toEqual({
      type: 'accepted',
    });
    expect(events).toEqual([{ type: 'warning', message: expect.stringContaining('bash (rm -rf x)') }]);
  });

  it('never throws on any line, and whatever it reads the run figure never falls', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.string(),
            fc.constantFrom(
              opencodeLines.stepStart(),
              opencodeLines.text('x'),
              opencodeLines.tool('ls'),
              opencodeLines.error('boom'),
            ),
            fc
              .record({
                input: fc.nat(1_000),
                output: fc.nat(1_000),
                cacheRead: fc.nat(1_000),
                reasoning: fc.nat(50),
              })
              .map((s) => opencodeLines.stepFinish(s)),
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
