import { describe, expect, it } from 'vitest';
import { decideTurn, type TurnEvidence } from '../../../src/agent/core/disposition.js';
import { FINAL_MESSAGE_MAX_BYTES } from '../../../src/agent/core/sanitize.js';
import { AgentError } from '../../../src/domain/agent.js';

const base: TurnEvidence = {
  terminal: null,
  exitObserved: true,
  exitCode: 0,
  signal: null,
  earlyExit: null,
  work: { work: 'none', detail: 'no assistantOutput seen' },
  stderrAbandoned: false,
};
const worked = { work: 'observed' as const, detail: 'saw assistantOutput' };
const early = new AgentError('port_exit', 'exited 1 before any output');

describe('the disposition rule', () => {
  it.each<[string, Partial<TurnEvidence>, string, string | null]>([
    [
      'a success report wins over a non-zero exit',
      { terminal: { type: 'success', message: 'ok' }, exitCode: 2 },
      'turn_completed',
      null,
    ],
    [
      'a failure report wins over work and exit 0',
      { terminal: { type: 'failure', message: 'no' }, work: worked },
      'turn_failed',
      'turn_failed',
    ],
    [
      'a failure report keeps the kind the runtime gave',
      { terminal: { type: 'failure', kind: 'usage_limit', message: 'limit', resetAtMs: 5 } },
      'turn_failed',
      'usage_limit',
    ],
    [
      'input required is its own ending',
      { terminal: { type: 'input_required', message: 'approve?' } },
      'turn_input_required',
      'turn_input_required',
    ],
    [
      'a missing exit is port_exit even with work',
      { exitObserved: false, work: worked },
      'turn_failed',
      'port_exit',
    ],
    ['the early-exit report beats exit 0', { earlyExit: early }, 'turn_failed', 'port_exit'],
    [
      'the early-exit report keeps agent_not_found',
      { earlyExit: new AgentError('agent_not_found', 'exit 127'), exitCode: 127 },
      'turn_failed',
      'agent_not_found',
    ],
    ['a non-zero exit after work is port_exit', { exitCode: 1, work: worked }, 'turn_failed', 'port_exit'],
    [
      'a signal death after work is port_exit',
      { exitCode: null, signal: 'SIGSEGV', work: worked },
      'turn_failed',
      'port_exit',
    ],
    ['exit 0 with work is completed', { work: worked }, 'turn_completed', null],
    ['exit 0 without a result line or work is a failed turn', {}, 'turn_failed', 'turn_failed'],
    [
      'exit 0 from a kind that observes nothing is a failed turn',
      { work: { work: 'undeclared', detail: 'none' } },
      'turn_failed',
      'turn_failed',
    ],
    [
      'a success read from stderr after an abandoned drain proves nothing',
      { terminal: { type: 'success', message: 'done', fromStderr: true }, stderrAbandoned: true },
      'turn_failed',
      'turn_failed',
    ],
    [
      'a failure read from stderr survives an abandoned drain',
      { terminal: { type: 'failure', message: 'bad' }, stderrAbandoned: true },
      'turn_failed',
      'turn_failed',
    ],
    [
      'a success from stdout is not affected by an abandoned stderr drain',
      { terminal: { type: 'success', message: 'done' }, stderrAbandoned: true },
      'turn_completed',
      null,
    ],
  ])('%s', (_title, evidence, exitReason, kind) => {
    const decision = decideTurn({ ...base, ...evidence });
    expect(decision.exitReason).toBe(exitReason);
    expect(decision.error?.kind ?? null).toBe(kind);
  });

  it('a runtime failure report of 8 MiB becomes an error detail within the final-message cap, head kept', () => {
    const d = decideTurn({
      ...base,
      terminal: { type: 'failure', message: `build broke: ${'e'.repeat(8 * 1024 * 1024)}` },
    });
    expect(d.exitReason).toBe('turn_failed');
    expect(Buffer.byteLength(d.error?.detail ?? '', 'utf8')).toBeLessThanOrEqual(FINAL_MESSAGE_MAX_BYTES);
    expect(d.error?.detail.startsWith('build broke: eee')).toBe(true);
    expect(d.message).toBe(d.error?.detail);
  });

  it('a usage limit carries its reset time', () => {
    const d = decideTurn({
      ...base,
      terminal: { type: 'failure', kind: 'usage_limit', message: 'x', resetAtMs: 1234 },
    });
    expect(d.error?.resetAtMs).toBe(1234);
  });
});
