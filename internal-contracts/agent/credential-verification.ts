/**
 * The credential-verification contract: an adapter driven through the shared
 * `verifyCredential` proves a credential its runtime accepts, stores the proof
 * and reuses it for 15 minutes without starting a process, reports a refusal as
 * not verified without a second attempt, and retries once with full context when
 * the reduced-context session never reached the model. Fake runtimes built from
 * the adapter's own lines stand in for the runtime; the kind's real runtime can
 * be run as well when it needs no credential.
 */
import { AssertionError } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  MemoryProofStore,
  PROOF_TTL_MS,
  proofKey,
  VERIFICATION_PROMPT,
  type VerificationResult,
  verifyCredential,
} from '../../src/agent/core/verify-credential.js';
import { agentKind } from '../../src/agent/registry.js';
import type { AgentAdapter, StartSessionParams } from '../../src/domain/agent.js';
import type { AgentErrorKind } from '../../src/domain/errors.js';
import type { Issue } from '../../src/domain/issue.js';
import { SAMPLE_ISSUE } from '../../src/prompt/variables.js';
import { type FakeStep, fakeInvocations, fakeRuntime } from './fake-runtime.js';

export interface CredentialHarness {
  /** A registered kind with a runtime; its factory builds the adapter under test. */
  kind: string;
  /** Builds the adapter under test instead of the kind's factory (for wrapping it in a test). */
  adapter?: () => AgentAdapter;
  /**
   * Session parameters for a runtime launched as `command` (null = the kind's own
   * runtime), each call with a fresh workspace. `credentialVerification` is set by
   * `verifyCredential` itself.
   */
  startParams(command: string | null): StartSessionParams;
  /** What the runtime writes when it accepts the credential and answers the verification request. */
  answerLines: string[];
  /** What it writes when it refuses the credential, its exit status (default 1), and the kinds the adapter may report. */
  refusal: { lines: string[]; exitCode?: number; kinds: readonly AgentErrorKind[] };
  /** Also verify through the kind's own runtime (command null), expecting verified. */
  realRuntime?: boolean;
  /** Per-attempt timeout; default 20 s. */
  timeoutMs?: number;
  issue?: Issue;
}

export interface CredentialCaseResult {
  name: string;
  problems: string[];
}

/** The adapter under test, recording the verification flag of every session it is asked to start. */
function recordingAdapter(
  kind: string,
  build: (() => AgentAdapter) | undefined,
): { adapter: AgentAdapter; starts: StartSessionParams[] } {
  const runtime = agentKind(kind)?.runtime;
  if (runtime === undefined)
    throw new AssertionError({ message: `credential verification: kind ${kind} has no runtime` });
  const inner = build?.() ?? runtime.factory();
  const starts: StartSessionParams[] = [];
  const adapter: AgentAdapter = {
    startSession: (params) => {
      starts.push(params);
      return inner.startSession(params);
    },
    runTurn: (session, params) => inner.runTurn(session, params),
    stopSession: (session) => inner.stopSession(session),
  };
  return { adapter, starts };
}

function keyFor(kind: string, start: StartSessionParams): string {
  const credentialEnv = agentKind(kind)?.runtime?.credentialEnv ?? [];
  return proofKey(
    kind,
    start.agent.command,
    start.options,
    credentialEnv.map((name) => start.env[name] ?? ''),
  );
}

const describeResult = (r: VerificationResult) =>
  r.ok
    ? `verified (cached ${r.cached}, attempts ${r.attempts})`
    : `not verified: ${r.error.kind}: ${r.error.detail} (attempts ${r.attempts})`;

/** The fixed request reached the runtime, on stdin or as an argument. */
function sawPrompt(command: string, invocation: number): boolean {
  const run = fakeInvocations(command)[invocation];
  return (
    run !== undefined &&
    (run.stdin.includes(VERIFICATION_PROMPT) || run.argv.some((a) => a.includes(VERIFICATION_PROMPT)))
  );
}

/**
 * Runs every credential case against the kind's adapter and throws an
 * AssertionError naming each case it gets wrong. Returns the per-case results.
 */
export async function assertCredentialVerification(
  harness: CredentialHarness,
): Promise<CredentialCaseResult[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'credential-contract-'));
  const timeoutMs = harness.timeoutMs ?? 20_000;
  const issue = harness.issue ?? SAMPLE_ISSUE;
  const answer: FakeStep[] = [...harness.answerLines.map((stdout) => ({ stdout })), { exit: 0 }];
  const refusal: FakeStep[] = [
    ...harness.refusal.lines.map((stdout) => ({ stdout })),
    { exit: harness.refusal.exitCode ?? 1 },
  ];
  const earlyExit: FakeStep[] = [{ stderr: 'fake: unknown option --reduced-context' }, { exit: 1 }];

  const verify = async (command: string | null, nowMs: number, store = new MemoryProofStore()) => {
    const { adapter, starts } = recordingAdapter(harness.kind, harness.adapter);
    const start = harness.startParams(command);
    const key = keyFor(harness.kind, start);
    const result = await verifyCredential({
      adapter,
      start,
      key,
      store,
      issue,
      timeoutMs,
      nowMs: () => nowMs,
    });
    return { result, starts, store, key, start };
  };

  const cases: { name: string; run: (problems: string[]) => Promise<void> }[] = [
    {
      name: 'a runtime that answers the request is verified, and the proof is reused for 15 minutes without a process',
      run: async (problems) => {
        const command = fakeRuntime(path.join(dir, 'answers'), 'fake-agent', { steps: answer });
        const t0 = Date.now();
        const first = await verify(command, t0);
        if (!first.result.ok || first.result.cached || first.result.attempts !== 1) {
          problems.push(
            `first verification: expected verified in 1 attempt, got ${describeResult(first.result)}`,
          );
        }
        if (first.store.get(first.key) === null)
          problems.push('no proof was stored after a verified request');
        if (first.starts[0]?.credentialVerification?.fullContext !== false) {
          problems.push(
            `the first verification session was not a reduced-context one: ${JSON.stringify(first.starts[0]?.credentialVerification)}`,
          );
        }
        if (!sawPrompt(command, 0))
          problems.push('the runtime never received the fixed verification request');
        const cached = await verify(command, t0 + PROOF_TTL_MS - 1, first.store);
        if (!cached.result.ok || !cached.result.cached) {
          problems.push(`within 15 minutes: expected the stored proof, got ${describeResult(cached.result)}`);
        }
        if (cached.starts.length > 0) problems.push('a fresh proof still started a verification session');
        if (fakeInvocations(command).length !== 1) {
          problems.push(
            `a fresh proof still launched the runtime (${fakeInvocations(command).length} invocations)`,
          );
        }
        const stale = await verify(command, t0 + PROOF_TTL_MS, first.store);
        if (!stale.result.ok || stale.result.cached) {
          problems.push(`after 15 minutes: expected a new verification, got ${describeResult(stale.result)}`);
        }
        if (fakeInvocations(command).length !== 2) {
          problems.push(
            `a stale proof did not launch the runtime again (${fakeInvocations(command).length} invocations)`,
          );
        }
      },
    },
    {
      name: 'a refusal from the runtime is not verified, stores no proof and is not retried',
      run: async (problems) => {
        const command = fakeRuntime(path.join(dir, 'refuses'), 'fake-agent', { steps: refusal });
        const { result, store, key } = await verify(command, Date.now());
        if (result.ok) problems.push(`a refused credential was ${describeResult(result)}`);
        else if (!harness.refusal.kinds.includes(result.error.kind)) {
          problems.push(`expected one of ${harness.refusal.kinds.join(', ')}, got ${describeResult(result)}`);
        }
        if (result.attempts !== 1)
          problems.push(`a refusal that reached the runtime took ${result.attempts} attempts`);
        if (store.get(key) !== null) problems.push('a proof was stored for a refused credential');
        if (fakeInvocations(command).length !== 1) {
          problems.push(`the runtime was launched ${fakeInvocations(command).length} times for one refusal`);
        }
      },
    },
    {
      name: 'a runtime that exits before any output is port_exit after a second attempt with full context',
      run: async (problems) => {
        const command = fakeRuntime(path.join(dir, 'exits'), 'fake-agent', { steps: earlyExit });
        const { result, starts, store, key } = await verify(command, Date.now());
        if (result.ok || result.error.kind !== 'port_exit' || result.attempts !== 2) {
          problems.push(`expected port_exit after 2 attempts, got ${describeResult(result)}`);
        }
        const flags = starts.map((s) => JSON.stringify(s.credentialVerification));
        if (flags.join(' ') !== '{"fullContext":false} {"fullContext":true}') {
          problems.push(`expected a reduced then a full-context session, got ${flags.join(', ') || 'none'}`);
        }
        if (fakeInvocations(command).length !== 2) {
          problems.push(`expected two launches, got ${fakeInvocations(command).length}`);
        }
        if (store.get(key) !== null) problems.push('a proof was stored although nothing was verified');
      },
    },
    {
      name: 'a runtime that rejects the reduced context but answers with full context is verified on the second attempt',
      run: async (problems) => {
        const command = fakeRuntime(path.join(dir, 'recovers'), 'fake-agent', { turns: [earlyExit, answer] });
        const { result, store, key } = await verify(command, Date.now());
        if (!result.ok || result.attempts !== 2) {
          problems.push(`expected verified after 2 attempts, got ${describeResult(result)}`);
        }
        if (store.get(key) === null)
          problems.push('no proof was stored after the full-context attempt verified');
      },
    },
  ];
  if (harness.realRuntime === true) {
    cases.push({
      name: "the kind's own runtime verifies",
      run: async (problems) => {
        const { result, store, key } = await verify(null, Date.now());
        if (!result.ok || result.cached) problems.push(`expected verified, got ${describeResult(result)}`);
        if (store.get(key) === null) problems.push('no proof was stored');
      },
    });
  }

  try {
    const results = await Promise.all(
      cases.map(async (c): Promise<CredentialCaseResult> => {
        const problems: string[] = [];
        try {
          await c.run(problems);
        } catch (error) {
          problems.push(`threw: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        }
        return { name: c.name, problems };
      }),
    );
    const failed = results.filter((r) => r.problems.length > 0);
    if (failed.length > 0) {
      throw new AssertionError({
        message:
          `credential verification of kind ${harness.kind}: ${failed.length} of ${results.length} cases fail:\n` +
          failed.map((r) => `  - ${r.name}: ${r.problems.join('; ')}`).join('\n'),
      });
    }
    return results;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
