/**
 * The echo kind (simulate mode) against the shared adapter contracts: usage
 * reporting and reported amounts on real turns of the echo runtime, its failure
 * rate, the disposition rule through fake runtimes, and credential verification
 * through fakes and through the echo runtime itself.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { assertCredentialVerification } from '../../../internal-contracts/agent/credential-verification.js';
import { assertDispositionContract } from '../../../internal-contracts/agent/disposition-contract.js';
import { assertUsageReporting } from '../../../internal-contracts/agent/usage-reporting.js';
import '../../../src/agent/kinds.js';
import { SAMPLE_ISSUE } from '../../../src/prompt/variables.js';
import {
  type BuiltinKind,
  credentialHarness,
  dispositionHarness,
  runSession,
  workspaceRoot,
} from '../contracts/builtin-stream.js';

const ws = workspaceRoot('echo-contracts-');
afterAll(() => ws.cleanup());
const echo: BuiltinKind = { kind: 'echo', options: { delay_ms: 0 }, ws };
const failing: BuiltinKind = { kind: 'echo', options: { delay_ms: 0, fail_rate: 1 }, ws };

const TIMEOUT = 30_000;

describe('echo kind: usage reporting', () => {
  it(
    'reports its 100/50 figure while the turn works, one cent as 10000 micro-USD, and the done summary',
    async () => {
      const [turn] = await runSession(echo, ['simulate']);
      if (turn === undefined) throw new Error('no turn ran');
      assertUsageReporting('echo', turn);
      const { result, error } = turn.outcome;
      expect(error).toBeUndefined();
      expect(result.exitReason).toBe('turn_completed');
      expect(result.finalMessage).toBe(`Echo: ${SAMPLE_ISSUE.identifier} ${SAMPLE_ISSUE.title} done.`);
      expect(result.usage).toMatchObject({ inputTokens: 100, outputTokens: 50, totalTokens: 150 });
      expect(result.reportedAmounts).toEqual([{ unit: 'USD', micros: 10_000 }]);
      expect(result.usageProvenance).toBe('local');
    },
    TIMEOUT,
  );

  it(
    "adds turn 2's figure and amount to turn 1's instead of counting one request for the whole session",
    async () => {
      const turns = await runSession(echo, ['simulate', 'simulate again']);
      assertUsageReporting('echo', turns);
      expect(turns.map((t) => t.outcome.result.usage.totalTokens)).toEqual([150, 300]);
      expect(turns.map((t) => t.outcome.result.reportedAmounts)).toEqual([
        [{ unit: 'USD', micros: 10_000 }],
        [{ unit: 'USD', micros: 20_000 }],
      ]);
    },
    TIMEOUT,
  );

  it(
    'fails a fail_rate 1 run as turn_failed with the runtime message (not a success, not port_exit)',
    async () => {
      const [turn] = await runSession(failing, ['simulate']);
      if (turn === undefined) throw new Error('no turn ran');
      assertUsageReporting('echo', turn);
      expect(turn.outcome.result.exitReason).toBe('turn_failed');
      expect(turn.outcome.error?.kind).toBe('turn_failed');
      expect(turn.outcome.error?.detail).toBe('echo failure (fail_rate)');
    },
    TIMEOUT,
  );
});

describe('echo kind: disposition contract', () => {
  it(
    'ends every fake-runtime turn as the shared rule decides (terminal report, early exit, 127, signal, work, bare exit 0)',
    async () => {
      const results = await assertDispositionContract(dispositionHarness(echo));
      expect(results.length).toBeGreaterThanOrEqual(8);
    },
    TIMEOUT,
  );
});

describe('echo kind: credential verification', () => {
  it(
    'verifies an answering runtime and reuses the proof, refuses a refusal, retries an early exit with full context; the echo runtime itself verifies',
    async () => {
      const results = await assertCredentialVerification(credentialHarness(echo));
      expect(results.map((r) => r.name)).toContain("the kind's own runtime verifies");
    },
    TIMEOUT,
  );
});
