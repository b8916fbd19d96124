/**
 * Credential verification: before a working session's first turn, prove the
 * agent's credential with one small request through the same adapter and
 * settings, so a revoked key fails fast as `credential_unverified` instead of
 * burning a full attempt. A proof for the same setup is reused for 15 minutes.
 * A proof is only stored once its turn ends, so workers starting together would
 * each find none and each verify: callers with the same key and store while a
 * verification runs wait for that one instead. Only a proof outlives it; a failure
 * is shared by those who waited for it, and the next caller verifies again.
 * A verification has its own time limit, not the working turn's: a short
 * `turn_timeout_ms` must not cut the check off and make a slow start look like a
 * cancellation (which is never retried). Running out of time is a timeout, retried
 * like one; only the runtime's refusal is `credential_unverified`.
 */
import { createHash } from 'node:crypto';
import {
  type AgentAdapter,
  AgentError,
  type AgentSettings,
  type StartSessionParams,
  type TurnOutcome,
} from '../../domain/agent.js';
import type { Issue } from '../../domain/issue.js';

/** How long a proof stays fresh. */
export const PROOF_TTL_MS = 15 * 60_000;

/** The least time one verification attempt gets: a process start, a handshake and a one-word reply. */
export const VERIFICATION_MIN_TIMEOUT_MS = 2 * 60_000;

/** How many read timeouts a verification may spend on its handshake requests before the reply. */
const VERIFICATION_READ_TIMEOUTS = 4;

/**
 * The time limit of one verification attempt: `VERIFICATION_MIN_TIMEOUT_MS`, or four times the
 * read timeout when that is longer. Independent of `turnTimeoutMs`, which is sized for work.
 */
export function verificationTimeoutMs(agent: Pick<AgentSettings, 'readTimeoutMs'>): number {
  return Math.max(VERIFICATION_MIN_TIMEOUT_MS, VERIFICATION_READ_TIMEOUTS * agent.readTimeoutMs);
}

/** The fixed request a verification session sends. */
export const VERIFICATION_PROMPT = 'Reply with the single word "ready". Do not use any tool.';

/** Where proofs live; SQLite arrives with the orchestrator, tests use memory. */
export interface ProofStore {
  /** Epoch ms of the last proof for `key`, or null. */
  get(key: string): number | null;
  put(key: string, verifiedAtMs: number): void;
}

/** A proof store in memory. */
export class MemoryProofStore implements ProofStore {
  private readonly proofs = new Map<string, number>();
  get(key: string): number | null {
    return this.proofs.get(key) ?? null;
  }
  put(key: string, verifiedAtMs: number): void {
    this.proofs.set(key, verifiedAtMs);
  }
}

/** Keys a proof to the agent setup: kind, command, block, and the credential values (hashed, never stored). */
export function proofKey(
  kind: string,
  command: string | null,
  options: Record<string, unknown>,
  credentials: readonly string[],
  host: string | null = null,
): string {
  const hash = createHash('sha256');
  // A proof made on one SSH host says nothing of another (its CLI, its network); a key
  // for this machine stays what it was before hosts existed, so stored proofs still count.
  const setup = [kind, command, sortKeys(options), credentials];
  hash.update(JSON.stringify(host === null ? setup : [...setup, host]));
  return `${kind}:${hash.digest('hex').slice(0, 32)}`;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

export type VerificationResult =
  | { ok: true; cached: boolean; attempts: number }
  | { ok: false; error: AgentError; attempts: number };

export interface VerifyParams {
  adapter: AgentAdapter;
  start: StartSessionParams;
  key: string;
  store: ProofStore;
  /** The issue the working session is for (verification turns carry it for logs only). */
  issue: Issue;
  nowMs?: () => number;
  /** Per-attempt time limit (the worker passes `verificationTimeoutMs`); it replaces the turn timeout. */
  timeoutMs: number;
}

/** Verifications running now, per store and proof key. */
const inFlight = new WeakMap<ProofStore, Map<string, Promise<VerificationResult>>>();

/**
 * Verifies the credential, or reuses a fresh proof, or waits for a verification of
 * the same key already running on the same store (then `attempts` is 0 and a
 * success counts as `cached`). Never throws for a runtime failure.
 */
export async function verifyCredential(p: VerifyParams): Promise<VerificationResult> {
  const now = p.nowMs ?? Date.now;
  const last = p.store.get(p.key);
  if (last !== null && now() - last < PROOF_TTL_MS) return { ok: true, cached: true, attempts: 0 };

  const running = runningOn(p.store);
  const pending = running.get(p.key);
  if (pending !== undefined) {
    const shared = await pending;
    return shared.ok
      ? { ok: true, cached: true, attempts: 0 }
      : { ok: false, error: shared.error, attempts: 0 };
  }
  // Removed before anyone waiting resumes, so a caller arriving after a failure verifies again.
  const own = verifyNow(p, now).finally(() => {
    running.delete(p.key);
  });
  running.set(p.key, own);
  return own;
}

function runningOn(store: ProofStore): Map<string, Promise<VerificationResult>> {
  let running = inFlight.get(store);
  if (running === undefined) {
    running = new Map();
    inFlight.set(store, running);
  }
  return running;
}

async function verifyNow(p: VerifyParams, now: () => number): Promise<VerificationResult> {
  let attempts = 0;
  for (const fullContext of [false, true]) {
    attempts += 1;
    const outcome = await attempt(p, fullContext);
    if (outcome.kind === 'verified') {
      try {
        p.store.put(p.key, now());
      } catch {
        // A proof only saves the next check; a store that cannot keep it must not fail this one.
      }
      return { ok: true, cached: false, attempts };
    }
    // Only a session that never reached the model earns a second try with full context:
    // a reduced-context switch the installed runtime predates is the likely cause.
    if (!outcome.neverReachedModel || fullContext) return { ok: false, error: outcome.error, attempts };
  }
  throw new Error('unreachable');
}

type AttemptOutcome =
  | { kind: 'verified' }
  | { kind: 'failed'; error: AgentError; neverReachedModel: boolean };

async function attempt(p: VerifyParams, fullContext: boolean): Promise<AttemptOutcome> {
  let session: Awaited<ReturnType<AgentAdapter['startSession']>>;
  try {
    session = await p.adapter.startSession({
      ...p.start,
      // The session's own turn timer runs on the verification limit, not the working turn's.
      agent: { ...p.start.agent, turnTimeoutMs: p.timeoutMs },
      resumeSessionId: null,
      credentialVerification: { fullContext },
    });
  } catch (error) {
    const agentError = error instanceof AgentError ? error : new AgentError('response_error', String(error));
    return {
      kind: 'failed',
      error: agentError,
      neverReachedModel: agentError.kind === 'port_exit' || agentError.kind === 'response_error',
    };
  }
  // A backstop for a runtime that does not keep the turn timer; its abort reads as a cancel.
  const signal = AbortSignal.timeout(p.timeoutMs);
  let outcome: TurnOutcome;
  let expired: boolean;
  try {
    outcome = await p.adapter.runTurn(session, {
      prompt: VERIFICATION_PROMPT,
      issue: p.issue,
      onEvent: () => undefined,
      signal,
    });
    // Read now: the limit may pass while the session stops, after the turn ended on its own.
    expired = signal.aborted;
  } finally {
    await p.adapter.stopSession(session);
  }
  if (outcome.error === undefined && outcome.result.exitReason === 'turn_completed')
    return { kind: 'verified' };
  const error =
    timedOut(outcome.error, expired, p.timeoutMs) ??
    outcome.error ??
    new AgentError('turn_failed', `verification turn ended: ${outcome.result.exitReason}`);
  const neverReachedModel =
    (error.kind === 'port_exit' || error.kind === 'response_error') && !outcome.result.usageMeasured;
  return { kind: 'failed', error, neverReachedModel };
}

/** The error of a verification that ran out of time, saying so; null when time was not the cause. */
function timedOut(error: AgentError | undefined, expired: boolean, limitMs: number): AgentError | null {
  if (expired || error?.kind === 'turn_timeout') {
    return new AgentError('turn_timeout', `the credential check timed out after ${limitMs} ms`);
  }
  if (error?.kind === 'response_timeout') {
    return new AgentError('response_timeout', `the credential check timed out: ${error.detail}`);
  }
  return null;
}
