import { describe, expect, it } from 'vitest';
import {
  MemoryProofStore,
  PROOF_TTL_MS,
  proofKey,
  VERIFICATION_MIN_TIMEOUT_MS,
  type VerificationResult,
  type VerifyParams,
  verificationTimeoutMs,
  verifyCredential,
} from '../../../src/agent/core/verify-credential.js';
import {
  type AgentAdapter,
  AgentError,
  type StartSessionParams,
  type TurnOutcome,
  ZERO_TOKENS,
} from '../../../src/domain/agent.js';
import { isRetryable } from '../../../src/domain/errors.js';
import { SAMPLE_ISSUE } from '../../../src/prompt/variables.js';

const START: StartSessionParams = {
  workspacePath: '/tmp/ws',
  workspaceRoot: '/tmp',
  agent: { kind: 'fake', command: null, turnTimeoutMs: 60_000, readTimeoutMs: 5_000, stallTimeoutMs: 0 },
  options: {},
  resumeSessionId: null,
  env: {},
};

function outcome(error?: AgentError): TurnOutcome {
  return {
    result: {
      sessionId: 's',
      exitReason: error === undefined ? 'turn_completed' : 'turn_failed',
      usage: { ...ZERO_TOKENS },
      usageByModel: {},
      // Reaching the model (a refusal) rules out the second, full-context attempt.
      usageMeasured: true,
      spendUnaccounted: false,
      spendCoverable: false,
      coversSession: false,
      usageProvenance: 'local',
      reportedAmounts: [],
      finalMessage: error === undefined ? 'ready' : '',
    },
    ...(error === undefined ? {} : { error }),
  };
}

/** An adapter whose verification turns end only when the test releases them, each as `verdicts` says next. */
function gatedAdapter(verdicts: ('accept' | 'refuse')[]) {
  const releases: (() => void)[] = [];
  let turns = 0;
  const adapter: AgentAdapter = {
    startSession: async () => ({ sessionId: '', kind: 'fake' }),
    runTurn: async () => {
      const verdict = verdicts[turns++] ?? 'accept';
      await new Promise<void>((resolve) => releases.push(resolve));
      return verdict === 'accept'
        ? outcome()
        : outcome(new AgentError('credential_unverified', 'key revoked'));
    },
    stopSession: async () => undefined,
  };
  return {
    adapter,
    turns: () => turns,
    /** Waits until a turn is running, then lets every running turn end. */
    async release(): Promise<void> {
      while (releases.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
      for (const release of releases.splice(0)) release();
    },
  };
}

function params(adapter: AgentAdapter, store: MemoryProofStore, key = 'fake:k'): VerifyParams {
  return { adapter, start: START, key, store, issue: SAMPLE_ISSUE, timeoutMs: 5_000 };
}

describe('verifyCredential with concurrent callers', () => {
  it('two concurrent verifications with the same proof key run one verification turn', async () => {
    const fake = gatedAdapter(['accept']);
    const store = new MemoryProofStore();
    const both = Promise.all([
      verifyCredential(params(fake.adapter, store)),
      verifyCredential(params(fake.adapter, store)),
    ]);
    await fake.release();
    const [first, second] = await both;
    expect(fake.turns()).toBe(1);
    expect(first).toEqual({ ok: true, cached: false, attempts: 1 });
    expect(second).toEqual({ ok: true, cached: true, attempts: 0 });
  });

  it('a proof the store cannot keep (a full disk) does not fail the verification that earned it', async () => {
    const fake = gatedAdapter(['accept']);
    const store = new MemoryProofStore();
    store.put = () => {
      throw new Error('persistence: io_failed: database or disk is full');
    };
    const verifying = verifyCredential(params(fake.adapter, store));
    await fake.release();
    expect(await verifying).toEqual({ ok: true, cached: false, attempts: 1 });
  });

  it('thirty-two workers starting at once spawn one verification, not thirty-two', async () => {
    const fake = gatedAdapter([]);
    const store = new MemoryProofStore();
    const all = Promise.all(Array.from({ length: 32 }, () => verifyCredential(params(fake.adapter, store))));
    await fake.release();
    const results = await all;
    expect(fake.turns()).toBe(1);
    expect(results.every((r) => r.ok)).toBe(true);
    expect(results.filter((r) => r.ok && !r.cached)).toHaveLength(1);
  });

  it('a failure is shared by those waiting on it, but the next caller verifies again', async () => {
    const fake = gatedAdapter(['refuse', 'accept']);
    const store = new MemoryProofStore();
    const both = Promise.all([
      verifyCredential(params(fake.adapter, store)),
      verifyCredential(params(fake.adapter, store)),
    ]);
    await fake.release();
    const [first, second] = await both;
    expect(fake.turns()).toBe(1);
    for (const result of [first, second] as VerificationResult[]) {
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error.kind).toBe('credential_unverified');
    }
    expect(store.get('fake:k')).toBeNull();

    const retry = verifyCredential(params(fake.adapter, store));
    await fake.release();
    expect(await retry).toEqual({ ok: true, cached: false, attempts: 1 });
    expect(fake.turns()).toBe(2);
  });

  it('different keys, or the same key on different stores, verify separately', async () => {
    const fake = gatedAdapter([]);
    const store = new MemoryProofStore();
    const all = Promise.all([
      verifyCredential(params(fake.adapter, store, 'fake:a')),
      verifyCredential(params(fake.adapter, store, 'fake:b')),
      verifyCredential(params(fake.adapter, new MemoryProofStore(), 'fake:a')),
    ]);
    await fake.release();
    while (fake.turns() < 3) await fake.release();
    await all;
    expect(fake.turns()).toBe(3);
  });

  it('an expired proof is verified again, once for concurrent callers', async () => {
    const fake = gatedAdapter([]);
    const store = new MemoryProofStore();
    let nowMs = 1_000_000;
    store.put('fake:k', nowMs);
    nowMs += PROOF_TTL_MS;
    const withClock = () => ({ ...params(fake.adapter, store), nowMs: () => nowMs });
    const all = Promise.all([verifyCredential(withClock()), verifyCredential(withClock())]);
    await fake.release();
    await all;
    expect(fake.turns()).toBe(1);
    expect(store.get('fake:k')).toBe(nowMs);
  });
});

/**
 * An adapter whose verification turn ends `afterMs` after it starts, or when its signal aborts
 * (reported as a cancel, as every adapter reports an abort), whichever comes first; `ending`
 * says how a turn that runs its course ends. Records the settings each session was started with.
 */
function slowAdapter(afterMs: number, ending: 'accept' | AgentError = 'accept') {
  const starts: StartSessionParams[] = [];
  const adapter: AgentAdapter = {
    startSession: async (params) => {
      starts.push(params);
      return { sessionId: '', kind: 'fake' };
    },
    runTurn: async (_session, { signal }) => {
      const cancelled = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), afterMs);
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve(true);
        });
      });
      if (cancelled) return outcome(new AgentError('turn_cancelled', 'the turn was cancelled'));
      return ending === 'accept' ? outcome() : outcome(ending);
    },
    stopSession: async () => undefined,
  };
  return { adapter, starts };
}

describe('verifyCredential time limit', () => {
  it('a check slower than turn_timeout_ms is not cut at the working turn limit: its session runs on the verification limit', async () => {
    const fake = slowAdapter(30);
    const store = new MemoryProofStore();
    const start = { ...START, agent: { ...START.agent, turnTimeoutMs: 10 } };
    const result = await verifyCredential({ ...params(fake.adapter, store), start, timeoutMs: 5_000 });
    expect(result).toEqual({ ok: true, cached: false, attempts: 1 });
    expect(fake.starts.map((s) => s.agent.turnTimeoutMs)).toEqual([5_000]);
  });

  it('a check that runs out of time is a retryable turn_timeout saying so, not turn_cancelled or credential_unverified', async () => {
    const fake = slowAdapter(60_000);
    const store = new MemoryProofStore();
    const result = await verifyCredential({ ...params(fake.adapter, store), timeoutMs: 50 });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.kind).toBe('turn_timeout');
    expect(result.error.detail).toBe('the credential check timed out after 50 ms');
    expect(isRetryable(result.error.kind)).toBe(true);
    expect(result.attempts).toBe(1);
    expect(store.get('fake:k')).toBeNull();
  });

  it("the session's own turn timer firing reads as the credential check timing out", async () => {
    const fake = slowAdapter(0, new AgentError('turn_timeout', 'the turn ran longer than 50 ms'));
    const result = await verifyCredential({ ...params(fake.adapter, new MemoryProofStore()), timeoutMs: 50 });
    expect(result.ok ? null : [result.error.kind, result.error.detail]).toEqual([
      'turn_timeout',
      'the credential check timed out after 50 ms',
    ]);
  });

  it('a stall during the check stays a retryable response_timeout, naming the credential check', async () => {
    const fake = slowAdapter(0, new AgentError('response_timeout', 'no output for 20 ms (stalled)'));
    const result = await verifyCredential(params(fake.adapter, new MemoryProofStore()));
    expect(result.ok ? null : [result.error.kind, result.error.detail]).toEqual([
      'response_timeout',
      'the credential check timed out: no output for 20 ms (stalled)',
    ]);
  });

  it('a refusal within the limit is still credential_unverified, which is not retried', async () => {
    const fake = slowAdapter(0, new AgentError('credential_unverified', 'HTTP 401'));
    const result = await verifyCredential(params(fake.adapter, new MemoryProofStore()));
    expect(result.ok ? null : result.error.kind).toBe('credential_unverified');
    expect(isRetryable('credential_unverified')).toBe(false);
  });

  it('the limit is two minutes or four read timeouts, whichever is longer, whatever turn_timeout_ms says', () => {
    expect(VERIFICATION_MIN_TIMEOUT_MS).toBe(120_000);
    expect(verificationTimeoutMs({ readTimeoutMs: 5_000 })).toBe(120_000);
    expect(verificationTimeoutMs({ readTimeoutMs: 0 })).toBe(120_000);
    expect(verificationTimeoutMs({ readTimeoutMs: 60_000 })).toBe(240_000);
  });
});

describe('proofKey', () => {
  const base = ['kind', 'cmd', { b: 1, a: [2] }, ['secret']] as const;

  it('a setup on an SSH host has its own key, one per host, and the local key is unchanged by the host argument', () => {
    const local = proofKey(...base);
    expect(proofKey(...base, null)).toBe(local);
    const onA = proofKey(...base, 'ci@a:22');
    const onB = proofKey(...base, 'ci@b:22');
    expect(new Set([local, onA, onB]).size).toBe(3);
    expect(proofKey(...base, 'ci@a:22')).toBe(onA);
  });

  it('option key order does not matter, a credential value does', () => {
    expect(proofKey('kind', 'cmd', { a: [2], b: 1 }, ['secret'])).toBe(proofKey(...base));
    expect(proofKey('kind', 'cmd', { a: [2], b: 1 }, ['other'])).not.toBe(proofKey(...base));
  });
});
