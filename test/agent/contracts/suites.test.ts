/**
 * The shared suites catch the adapters they exist to catch: each is run against a
 * deliberately broken wrapper of the mock adapter (driven by fake runtimes only)
 * and must fail, naming the case that exposes it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { assertCredentialVerification } from '../../../internal-contracts/agent/credential-verification.js';
import { assertDispositionContract } from '../../../internal-contracts/agent/disposition-contract.js';
import '../../../src/agent/kinds.js';
import { type AgentAdapter, AgentError, type TurnOutcome } from '../../../src/domain/agent.js';
import {
  adapterOf,
  type BuiltinKind,
  credentialHarness,
  dispositionHarness,
  workspaceRoot,
} from './builtin-stream.js';

const mock: BuiltinKind = { kind: 'mock', options: {}, ws: workspaceRoot('suites-') };
afterAll(() => mock.ws.cleanup());

/** The mock adapter with its outcomes rewritten by `rewrite`. */
function wrapped(rewrite: (outcome: TurnOutcome) => TurnOutcome): AgentAdapter {
  const inner = adapterOf('mock');
  return {
    startSession: (params) => inner.startSession(params),
    runTurn: async (session, params) => rewrite(await inner.runTurn(session, params)),
    stopSession: (session) => inner.stopSession(session),
  };
}

const completed = (o: TurnOutcome): TurnOutcome => ({
  result: { ...o.result, exitReason: 'turn_completed' },
});

describe('assertDispositionContract', () => {
  it('fails an adapter that calls every clean-looking turn a success, naming the bare exit 0 case', async () => {
    const harness = dispositionHarness(mock);
    const lying = {
      ...harness,
      startWith: async (command: string) => {
        const adapter = wrapped(completed);
        const { session } = await harness.startWith(command);
        return { adapter, session };
      },
    };
    await expect(assertDispositionContract(lying)).rejects.toThrow(
      /exit 0 with no output at all is the early-exit report, not a success: expected turn_failed\/port_exit, got turn_completed\/no error/,
    );
  }, 30_000);

  it('fails an adapter that relabels an early exit, and notices the outcome event disagreeing with the result', async () => {
    const harness = dispositionHarness(mock);
    const relabel = (o: TurnOutcome): TurnOutcome =>
      o.error?.kind === 'port_exit' ? { ...o, error: new AgentError('turn_failed', o.error.detail) } : o;
    const mislabelled = {
      ...harness,
      startWith: async (command: string) => ({
        adapter: wrapped(relabel),
        session: (await harness.startWith(command)).session,
      }),
    };
    await expect(assertDispositionContract(mislabelled)).rejects.toThrow(
      /exit 1 before any output .*expected turn_failed\/port_exit, got turn_failed\/turn_failed.*the turn_failed event names port_exit/,
    );
  }, 30_000);
});

describe('assertCredentialVerification', () => {
  it('fails an adapter that passes a refused credential as verified', async () => {
    const harness = { ...credentialHarness(mock), realRuntime: false, adapter: () => wrapped(completed) };
    await expect(assertCredentialVerification(harness)).rejects.toThrow(/a refused credential was verified/);
  }, 30_000);

  it('fails an adapter whose silent early exit claims measured spend, which stops the full-context retry', async () => {
    const measured = (o: TurnOutcome): TurnOutcome => ({
      ...o,
      result: { ...o.result, usageMeasured: true },
    });
    const harness = { ...credentialHarness(mock), realRuntime: false, adapter: () => wrapped(measured) };
    await expect(assertCredentialVerification(harness)).rejects.toThrow(
      /exits before any output is port_exit after a second attempt with full context: expected port_exit after 2 attempts, got .*attempts 1/,
    );
  }, 30_000);
});
