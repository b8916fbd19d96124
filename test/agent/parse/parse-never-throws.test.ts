/**
 * The built-in stream's parse path under arbitrary input: the decoder and the
 * StreamSession hooks must turn anything an agent writes into a verdict, never
 * an exception; and the usage it reports must count a request repeated on many
 * lines once, at its largest, with a run figure that never goes down.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EventInput, ForkPerTurnHooks, TurnContext } from '../../../src/agent/core/fork-per-turn.js';
import { decodeStreamLine } from '../../../src/agent/mock/stream.js';
import { StreamSession } from '../../../src/agent/mock/stream-session.js';
import { MOCK_USAGE_SOURCES } from '../../../src/agent/mock/usage.js';
import type { TokenCounts } from '../../../src/domain/agent.js';
import { turnContext } from '../../support/turn-context.js';

const KNOWN_TYPES = ['start', 'message', 'tool_call', 'tool_result', 'notice', 'result'] as const;
const COUNT_FIELDS = [
  'inputTokens',
  'outputTokens',
  'cacheReadTokens',
  'cacheWriteTokens',
  'totalTokens',
] as const;

/** A StreamSession driven the way the skeleton drives it, with a fake turn context. */
function driver() {
  const stream = new StreamSession(MOCK_USAGE_SOURCES, 'mock-prop');
  const hooks: ForkPerTurnHooks = stream.hooks({ buildArgs: () => [] });
  const events: EventInput[] = [];
  let turn = 0;
  let ctx: TurnContext | null = null;
  return {
    stream,
    hooks,
    events,
    beginTurn(): TurnContext {
      turn += 1;
      ctx = turnContext((event) => events.push(event), turn);
      hooks.beginTurn?.(ctx);
      return ctx;
    },
    parse(line: string) {
      if (ctx === null) throw new Error('no turn open');
      return hooks.parseLine(line, ctx);
    },
    endTurn(cancelled = false) {
      if (ctx === null) throw new Error('no turn open');
      hooks.settleUsage(ctx, { cancelled });
      hooks.onFinalize(
        {
          lastTerminal: undefined,
          exitCode: 0,
          signal: null,
          stderrLines: [],
          earlyExit: null,
          stderrAbandoned: false,
        },
        ctx,
      );
      hooks.finalMessage?.();
      ctx = null;
      return hooks.getUsage();
    },
    usageEvents(): TokenCounts[] {
      return events.flatMap((e) => (e.type === 'token_usage' ? [e.usage] : []));
    },
  };
}

// ----- generators ---------------------------------------------------------------------

const anyValue = fc.jsonValue({ maxDepth: 3 });
/** Values a count field might hold in a broken or hostile stream. */
const numberish = fc.oneof(
  fc.nat(),
  fc.double(),
  fc.constantFrom(-1, -0, 0.5, 1e308, 5e-324, Number.MAX_SAFE_INTEGER, 2 ** 63),
  fc.string({ maxLength: 5 }),
  fc.constant(null),
  fc.boolean(),
  anyValue,
);
const idish = fc.oneof(
  fc.constantFrom('req-1', 'req-2', 'tool-1', 'tool-2', '', '__proto__', 'constructor'),
  fc.string({ maxLength: 8 }),
  anyValue,
);
const textish = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  anyValue,
);
const toolName = fc.oneof(
  fc.constantFrom('Bash', 'Read', 'Write', 'Edit', 'Skill', 'hasOwnProperty', 'toString', '__proto__'),
  fc.string({ maxLength: 8 }),
  anyValue,
);
const optional = { requiredKeys: ['type'] as 'type'[] };

/** Objects with a known `type` (or a near miss) and random field values. */
const nearValidObject = fc.oneof(
  fc.record({ type: fc.constant('start'), session_id: idish, model: textish }, optional),
  fc.record(
    {
      type: fc.constant('message'),
      id: idish,
      model: textish,
      text: textish,
      usage: fc.oneof(
        fc.record({ input: numberish, output: numberish, cache_read: numberish }, { requiredKeys: [] }),
        anyValue,
      ),
      cost_usd: numberish,
    },
    optional,
  ),
  fc.record(
    {
      type: fc.constant('tool_call'),
      id: idish,
      name: toolName,
      input: fc.oneof(
        anyValue,
        fc.record({ command: anyValue, file_path: anyValue, skill: anyValue }, { requiredKeys: [] }),
      ),
    },
    optional,
  ),
  fc.record({ type: fc.constant('tool_result'), id: idish, ok: anyValue }, optional),
  fc.record({ type: fc.constant('notice'), text: textish }, optional),
  fc.record(
    {
      type: fc.constant('result'),
      status: fc.oneof(fc.constantFrom('success', 'error', 'done'), anyValue),
      text: textish,
    },
    optional,
  ),
  fc.record({ type: fc.oneof(fc.constantFrom('Message', 'result ', 'unknown'), anyValue) }),
);

/** A near-valid object with junk keys mixed in, serialised whole, truncated, or with a CR. */
const nearValidLine = fc
  .tuple(
    nearValidObject,
    fc.dictionary(fc.string({ maxLength: 6 }), anyValue, { maxKeys: 3 }),
    fc.nat(),
    fc.nat(3),
  )
  .map(([known, extra, cut, variant]) => {
    const text = JSON.stringify({ ...extra, ...known });
    if (variant === 0) return text.slice(0, cut % (text.length + 1));
    if (variant === 1) return `${text}\r`;
    return text;
  });

/** Text that looks like JSON syntax without being it. */
const jsonishNoise = fc.string({
  unit: fc.constantFrom(
    '{',
    '}',
    '[',
    ']',
    '"',
    ':',
    ',',
    '\\',
    'u',
    '0',
    '1',
    '-',
    'e',
    '.',
    ' ',
    '\ud800',
    '\u0000',
  ),
  maxLength: 40,
});

const anyLine = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme' }),
  jsonishNoise,
  fc.json(),
  nearValidLine,
);

// ----- properties -----------------------------------------------------------------------

describe('decodeStreamLine never throws', () => {
  it.each([
    ['arbitrary strings', fc.oneof(fc.string(), fc.string({ unit: 'binary' }), jsonishNoise)],
    ['arbitrary JSON values (fc.json)', fc.json()],
    ['near-valid stream lines', nearValidLine],
  ] as const)('on %s: an exception here would crash the turn reader; it must return a reason', (_, arb) => {
    fc.assert(
      fc.property(arb, (line) => {
        const decoded = decodeStreamLine(line);
        if (decoded.ok) expect(KNOWN_TYPES).toContain(decoded.line.type);
        else expect(typeof decoded.reason).toBe('string');
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('StreamSession parseLine never throws', () => {
  it.each([
    ['arbitrary strings', fc.oneof(fc.string(), fc.string({ unit: 'binary' }), jsonishNoise)],
    ['arbitrary JSON values (fc.json)', fc.json()],
    ['near-valid stream lines', nearValidLine],
  ] as const)(
    'on %s: a throw would turn a valid stream into parser errors; every line gets a verdict',
    (_, arb) => {
      fc.assert(
        fc.property(arb, (line) => {
          const d = driver();
          d.beginTurn();
          const verdict = d.parse(line);
          expect(['accepted', 'rejected']).toContain(verdict.type);
        }),
        { numRuns: 2_000 },
      );
    },
  );

  it('over whole multi-turn sessions of mixed lines: no throw, and every usage figure it emits is finite and non-negative', () => {
    fc.assert(
      fc.property(fc.array(fc.array(anyLine, { maxLength: 25 }), { minLength: 1, maxLength: 3 }), (turns) => {
        const d = driver();
        for (const lines of turns) {
          d.beginTurn();
          for (const line of lines) d.parse(line);
          const usage = d.endTurn();
          for (const field of COUNT_FIELDS) {
            expect(Number.isFinite(usage.usage[field]) && usage.usage[field] >= 0).toBe(true);
          }
        }
        for (const snapshot of d.usageEvents()) {
          for (const field of COUNT_FIELDS) {
            expect(Number.isFinite(snapshot[field]) && snapshot[field] >= 0).toBe(true);
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});

// ----- usage through the parse path -----------------------------------------------------

interface Usage {
  input: number;
  output: number;
  cache_read: number;
}

const usageDelta = fc.record({
  input: fc.nat({ max: 5_000 }),
  output: fc.nat({ max: 5_000 }),
  cache_read: fc.nat({ max: 5_000 }),
});

/** Running sums of the deltas: a usage figure that grows (weakly) line by line. */
function increasing(deltas: readonly Usage[]): Usage[] {
  const out: Usage[] = [];
  let acc: Usage = { input: 0, output: 0, cache_read: 0 };
  for (const d of deltas) {
    acc = {
      input: acc.input + d.input,
      output: acc.output + d.output,
      cache_read: acc.cache_read + d.cache_read,
    };
    out.push(acc);
  }
  return out;
}

const messageLine = (id: string, usage: Usage, model = 'mock-model') =>
  JSON.stringify({ type: 'message', id, model, text: '', usage });

/** The normalised counts of one request (cache reads are added to input for this kind). */
function normalised(u: Usage): Pick<TokenCounts, 'inputTokens' | 'outputTokens' | 'cacheReadTokens'> {
  return { inputTokens: u.input + u.cache_read, outputTokens: u.output, cacheReadTokens: u.cache_read };
}

describe('usage through StreamSession.parseLine', () => {
  it('a request id repeated over N lines with growing usage counts once, at its largest, never the sum', () => {
    fc.assert(
      fc.property(fc.array(usageDelta, { minLength: 2, maxLength: 20 }), (deltas) => {
        const usages = increasing(deltas);
        const largest = normalised(usages.at(-1)!);
        const d = driver();
        d.beginTurn();
        for (const u of usages) expect(d.parse(messageLine('req-same', u)).type).toBe('accepted');
        // While the turn runs, the provisional figure is already the largest, not the sum.
        expect(d.hooks.getUsage().usage).toMatchObject(largest);
        const settled = d.endTurn();
        expect(settled.usage).toMatchObject(largest);
        expect(settled.byModel['mock-model']).toMatchObject(largest);
        const emitted = d.usageEvents();
        expect(emitted.length).toBeGreaterThanOrEqual(1);
        for (const snapshot of emitted) {
          expect(snapshot.inputTokens).toBeLessThanOrEqual(largest.inputTokens);
          expect(snapshot.outputTokens).toBeLessThanOrEqual(largest.outputTokens);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('a request id seen again in a later turn adds only its growth, not its whole figure again', () => {
    fc.assert(
      fc.property(fc.array(usageDelta, { minLength: 2, maxLength: 10 }), fc.nat(8), (deltas, split) => {
        const usages = increasing(deltas);
        const cut = 1 + (split % (usages.length - 1));
        const d = driver();
        d.beginTurn();
        for (const u of usages.slice(0, cut)) d.parse(messageLine('req-carried', u));
        d.endTurn();
        d.beginTurn();
        for (const u of usages.slice(cut)) d.parse(messageLine('req-carried', u));
        const settled = d.endTurn();
        expect(settled.usage).toMatchObject(normalised(usages.at(-1)!));
      }),
      { numRuns: 300 },
    );
  });

  it('the token_usage snapshots it emits never decrease, within a turn and across turns', () => {
    const line = fc.oneof(
      {
        weight: 4,
        arbitrary: fc
          .tuple(fc.constantFrom('r1', 'r2', 'r3', 'r4'), usageDelta, fc.constantFrom('m-a', 'm-b'))
          .map(([id, u, model]) => messageLine(id, u, model)),
      },
      { weight: 1, arbitrary: anyLine },
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.array(line, { maxLength: 30 }), fc.boolean()), { minLength: 1, maxLength: 4 }),
        (turns) => {
          const d = driver();
          const settledFigures: TokenCounts[] = [];
          for (const [lines, cancelled] of turns) {
            d.beginTurn();
            for (const l of lines) d.parse(l);
            settledFigures.push(d.endTurn(cancelled).usage);
          }
          const emitted = d.usageEvents();
          for (let i = 1; i < emitted.length; i++) {
            for (const field of COUNT_FIELDS)
              expect(emitted[i]![field]).toBeGreaterThanOrEqual(emitted[i - 1]![field]);
          }
          for (let i = 1; i < settledFigures.length; i++) {
            for (const field of COUNT_FIELDS) {
              expect(settledFigures[i]![field]).toBeGreaterThanOrEqual(settledFigures[i - 1]![field]);
            }
          }
          const last = emitted.at(-1);
          const final = settledFigures.at(-1)!;
          if (last !== undefined)
            for (const field of COUNT_FIELDS) expect(final[field]).toBeGreaterThanOrEqual(last[field]);
        },
      ),
      { numRuns: 500 },
    );
  });
});
