import { describe, expect, it } from 'vitest';
import '../../src/agent/kinds.js';
import { agentKinds } from '../../src/agent/registry.js';
import type { UsageDisposition } from '../../src/agent/usage/index.js';
import type { AgentEvent, TokenCounts, TurnOutcome, TurnResult } from '../../src/domain/agent.js';
import { assertUsageReporting, checkUsageReporting, type UsageRun } from './usage-reporting.js';

const INCREMENTAL: UsageDisposition = { arrival: 'incremental', attribution: 'per_model' };
const TURN_END: UsageDisposition = { arrival: 'turn_end', attribution: 'session_total' };
const NONE: UsageDisposition = { arrival: 'none', attribution: 'none' };

const base = { at: '2025-01-01T00:00:00.000Z', agentPid: '1' };
const counts = (input: number, output: number): TokenCounts => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  totalTokens: input + output,
});
const usage = (input: number, output: number, byModel?: Record<string, TokenCounts>): AgentEvent => ({
  ...base,
  type: 'token_usage',
  usage: counts(input, output),
  usageByModel: byModel ?? { m: counts(input, output) },
  model: 'm',
});
const tool: AgentEvent = {
  ...base,
  type: 'tool_result',
  toolName: 'Bash',
  toolKind: 'shell',
  toolArgument: 'ls',
  toolDurationMs: 1,
  toolError: false,
};
const note: AgentEvent = { ...base, type: 'notification', message: 'working' };
const done: AgentEvent = { ...base, type: 'turn_completed', message: 'ok' };

function result(usageCounts: TokenCounts, patch: Partial<TurnResult> = {}): TurnOutcome {
  return {
    result: {
      sessionId: 's',
      exitReason: 'turn_completed',
      usage: usageCounts,
      usageByModel: isZeroCounts(usageCounts) ? {} : { m: usageCounts },
      usageMeasured: !isZeroCounts(usageCounts),
      spendUnaccounted: false,
      spendCoverable: false,
      coversSession: false,
      usageProvenance: 'reported',
      reportedAmounts: [],
      finalMessage: '',
      ...patch,
    },
  };
}
function isZeroCounts(c: TokenCounts): boolean {
  return c.inputTokens === 0 && c.outputTokens === 0;
}
const turn = (events: AgentEvent[], outcome: TurnOutcome): UsageRun => ({ events, outcome });

describe('checkUsageReporting: incremental kinds', () => {
  it('accepts figures that arrive while the turn works and end at the result', () => {
    const run = turn([usage(100, 20), tool, note, usage(150, 30), note, done], result(counts(150, 30)));
    expect(checkUsageReporting(INCREMENTAL, run)).toEqual([]);
  });

  it('fails a kind that reports its only figure after the last tool result (that is turn_end arrival)', () => {
    const run = turn([tool, note, usage(150, 30), done], result(counts(150, 30)));
    expect(checkUsageReporting(INCREMENTAL, run).join('\n')).toMatch(/no figure while the turn worked/);
  });

  it('fails a run with no figure at all, which would prove nothing', () => {
    const run = turn([tool, note, done], result(counts(0, 0)));
    expect(checkUsageReporting(INCREMENTAL, run).join('\n')).toMatch(/no token_usage at all/);
  });

  it('fails a snapshot that decreases (a per-request figure passed off as run-cumulative)', () => {
    const run = turn([usage(100, 20), note, usage(50, 10), note, done], result(counts(50, 10)));
    expect(checkUsageReporting(INCREMENTAL, run).join('\n')).toMatch(
      /decreased in inputTokens, outputTokens/,
    );
  });

  it('fails a second turn that restarts at zero instead of adding to the first', () => {
    const t1 = turn([usage(100, 20), note, done], result(counts(100, 20)));
    const t2 = turn([usage(50, 10), note, done], result(counts(50, 10)));
    const problems = checkUsageReporting(INCREMENTAL, [t1, t2]).join('\n');
    expect(problems).toMatch(/turn 2: token_usage event 0 decreased/);
    expect(problems).toMatch(/turn 2: result.usage fell/);
    expect(
      checkUsageReporting(INCREMENTAL, [t1, turn([usage(150, 30), note, done], result(counts(150, 30)))]),
    ).toEqual([]);
  });

  it('fails a result whose usage differs from the last snapshot', () => {
    const run = turn([usage(100, 20), note, done], result(counts(120, 20)));
    expect(checkUsageReporting(INCREMENTAL, run).join('\n')).toMatch(/differs from the last token_usage/);
  });

  it('fails a result that reports unmeasured spend after a figure arrived', () => {
    const run = turn([usage(100, 20), note, done], result(counts(100, 20), { usageMeasured: false }));
    expect(checkUsageReporting(INCREMENTAL, run).join('\n')).toMatch(/usageMeasured is false/);
  });

  it('fails a turn that claims measured spend before the runtime reported any figure (unknown passed off as zero)', () => {
    const t1 = turn([tool, note, done], result(counts(0, 0), { usageMeasured: true }));
    const t2 = turn([usage(10, 5), note, done], result(counts(10, 5)));
    expect(checkUsageReporting(INCREMENTAL, [t1, t2]).join('\n')).toMatch(
      /turn 1: result.usageMeasured is true although no figure/,
    );
    const honest = turn([tool, note, done], result(counts(0, 0), { usageMeasured: false }));
    expect(checkUsageReporting(INCREMENTAL, [honest, t2])).toEqual([]);
  });

  it('fails per-model entries that add up to more than the total in some class', () => {
    const split = { a: counts(80, 20), b: counts(40, 0) };
    const run = turn([usage(100, 20, split), note, done], result(counts(100, 20), { usageByModel: split }));
    expect(checkUsageReporting(INCREMENTAL, run).join('\n')).toMatch(
      /adds up to more than the total in inputTokens/,
    );
  });

  it('fails a total that is not input + output', () => {
    const bad = { ...counts(100, 20), totalTokens: 100 };
    const event: AgentEvent = { ...base, type: 'token_usage', usage: bad, usageByModel: {}, model: 'm' };
    const run = turn([event, note, done], result(bad, { usageByModel: {} }));
    expect(checkUsageReporting(INCREMENTAL, run).join('\n')).toMatch(
      /totalTokens 100 is not input \+ output/,
    );
  });

  it('fails a per_model kind whose figure names no model', () => {
    const event: AgentEvent = {
      ...base,
      type: 'token_usage',
      usage: counts(1, 1),
      usageByModel: {},
      model: null,
    };
    const run = turn([event, note, done], result(counts(1, 1), { usageByModel: {} }));
    expect(checkUsageReporting(INCREMENTAL, run).join('\n')).toMatch(/names no model/);
  });

  it('fails a figure emitted after the outcome event', () => {
    const run = turn([usage(1, 1), note, done, usage(2, 2)], result(counts(2, 2)));
    expect(checkUsageReporting(INCREMENTAL, run).join('\n')).toMatch(/after the turn's outcome event/);
  });
});

describe('checkUsageReporting: turn_end kinds', () => {
  it('accepts one figure after the work', () => {
    const run = turn([tool, note, usage(150, 30), done], result(counts(150, 30)));
    expect(checkUsageReporting(TURN_END, run)).toEqual([]);
  });

  it('fails a figure reported while the turn still works', () => {
    const run = turn([tool, usage(150, 30), note, done], result(counts(150, 30)));
    expect(checkUsageReporting(TURN_END, run).join('\n')).toMatch(/while the turn was still working/);
  });

  it('fails more than one figure in a turn', () => {
    const run = turn([tool, note, usage(100, 20), usage(150, 30), done], result(counts(150, 30)));
    expect(checkUsageReporting(TURN_END, run).join('\n')).toMatch(/emitted 2 token_usage events in one turn/);
  });
});

describe('checkUsageReporting: kinds that count no tokens', () => {
  const unmeasured = result(counts(0, 0), { usageMeasured: false, usageByModel: {} });

  it('accepts a turn with no figure, zero usage and unmeasured spend', () => {
    expect(checkUsageReporting(NONE, turn([tool, note, done], unmeasured))).toEqual([]);
  });

  it('fails any token_usage event', () => {
    const problems = checkUsageReporting(NONE, turn([usage(0, 0), note, done], unmeasured));
    expect(problems.join('\n')).toMatch(/emitted 1 token_usage/);
  });

  it('fails a non-zero result usage or a measured result (that would count unknown spend as nothing)', () => {
    const problems = checkUsageReporting(NONE, turn([note, done], result(counts(5, 5)))).join('\n');
    expect(problems).toMatch(/result.usage is .* not zero/);
    expect(problems).toMatch(/usageMeasured is true/);
  });
});

describe('assertUsageReporting', () => {
  it('reads the disposition the registry derived for the kind and throws with the kind named', () => {
    const bad = turn([tool, note, usage(1, 1), done], result(counts(1, 1)));
    expect(() => assertUsageReporting('mock', bad)).toThrow(
      /usage reporting of kind mock \(arrival incremental/,
    );
  });

  it('refuses an unknown kind and a validate-only kind rather than passing vacuously', () => {
    const run = turn([note, done], result(counts(0, 0)));
    expect(() => assertUsageReporting('no-such-kind', run)).toThrow(/not registered/);
    const validateOnly = agentKinds().find((k) => k.runtime === undefined);
    if (validateOnly !== undefined) {
      expect(() => assertUsageReporting(validateOnly.name, run)).toThrow(/no runtime declaration/);
    }
  });
});
