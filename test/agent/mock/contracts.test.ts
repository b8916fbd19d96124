/**
 * The mock kind against the shared adapter contracts: usage reporting on real
 * turns of the mock runtime, the disposition rule through fake runtimes, and
 * credential verification through fakes and through the mock runtime itself.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { assertCredentialVerification } from '../../../internal-contracts/agent/credential-verification.js';
import { assertDispositionContract } from '../../../internal-contracts/agent/disposition-contract.js';
import { assertUsageReporting } from '../../../internal-contracts/agent/usage-reporting.js';
import '../../../src/agent/kinds.js';
import {
  type BuiltinKind,
  credentialHarness,
  dispositionHarness,
  runSession,
  workspaceRoot,
} from '../contracts/builtin-stream.js';

const mock: BuiltinKind = { kind: 'mock', options: {}, ws: workspaceRoot('mock-contracts-') };
afterAll(() => mock.ws.cleanup());

const TIMEOUT = 30_000;

describe('mock kind: usage reporting', () => {
  it(
    'reports incremental per-model figures while the turn works, not one figure after it',
    async () => {
      const [turn] = await runSession(mock, ['!usage 100 20\n!loop 2\n!usage 50 10\n!ok']);
      if (turn === undefined) throw new Error('no turn ran');
      expect(turn.outcome.result.exitReason).toBe('turn_completed');
      assertUsageReporting('mock', turn);
      const figures = turn.events.filter((e) => e.type === 'token_usage');
      expect(figures.map((e) => [e.usage.inputTokens, e.usage.outputTokens])).toEqual([
        [100, 20],
        [150, 30],
      ]);
      expect(turn.outcome.result.usage).toMatchObject({
        inputTokens: 150,
        outputTokens: 30,
        totalTokens: 180,
      });
    },
    TIMEOUT,
  );

  it(
    "adds turn 2's figure to turn 1's instead of restarting the session count at zero",
    async () => {
      const turns = await runSession(mock, ['!usage 100 20\n!ok', '!usage 50 10\n!loop 1\n!ok']);
      assertUsageReporting('mock', turns);
      expect(turns.map((t) => t.outcome.result.usage.inputTokens)).toEqual([100, 150]);
      expect(turns.map((t) => t.outcome.result.usage.outputTokens)).toEqual([20, 30]);
      expect(turns[1]?.outcome.result.usageByModel['mock-model']).toMatchObject({ inputTokens: 150 });
    },
    TIMEOUT,
  );
});

describe('mock kind: disposition contract', () => {
  it(
    'ends every fake-runtime turn as the shared rule decides (terminal report, early exit, 127, signal, work, bare exit 0)',
    async () => {
      const results = await assertDispositionContract(dispositionHarness(mock));
      expect(results.length).toBeGreaterThanOrEqual(8);
    },
    TIMEOUT,
  );
});

describe('mock kind: credential verification', () => {
  it(
    'verifies an answering runtime and reuses the proof, refuses a refusal, retries an early exit with full context; the mock runtime itself verifies',
    async () => {
      const results = await assertCredentialVerification(credentialHarness(mock));
      expect(results.map((r) => r.name)).toContain("the kind's own runtime verifies");
    },
    TIMEOUT,
  );
});
