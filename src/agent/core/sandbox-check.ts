/**
 * Sandbox health: whether the runtime's sandbox can run the commands the model asks for,
 * checked before the first issue instead of learned from a turn that "succeeded" with
 * every command refused. A kind that can be asked is probed with the workflow's settings
 * and the agent environment in a folder standing for a workspace; a kind that cannot is
 * reported with what the operator should check. A usable sandbox is proved once per setup
 * and kept as credential proofs are (the same store, 15 minutes, callers of one key waiting
 * for the one probe running); a failure is never kept, so a fixed setup is asked again.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { AgentRuntimeDeclaration, SandboxProbeResult } from '../registry.js';
import { PROOF_TTL_MS, type ProofStore, proofKey } from './verify-credential.js';

/** The start-up error of a sandbox that cannot run the agent's commands. */
export const SANDBOX_UNUSABLE = 'agent.sandbox.unusable';
/** The warning of a probe that could not decide (command missing, too old, agents on SSH hosts). */
export const SANDBOX_UNCHECKED = 'agent.sandbox.unchecked';
/** The note of a kind whose runtime cannot be asked, with what to check. */
export const SANDBOX_UNPROBEABLE = 'agent.sandbox.unprobeable';

/** How long one probe may take: a process start and one sandboxed `sh -c`. */
export const SANDBOX_PROBE_TIMEOUT_MS = 30_000;

export type SandboxCheck =
  | {
      ok: true;
      /** `none`/`unprobeable`: the declaration; the rest: what the probe found. */
      status: 'usable' | 'off' | 'none' | 'unprobeable' | 'unchecked';
      detail: string;
      /** A proof of this setup was reused, or a probe of it already running was waited for. */
      cached: boolean;
    }
  | { ok: false; message: string };

export interface SandboxCheckParams {
  kind: string;
  runtime: Pick<AgentRuntimeDeclaration, 'sandbox'>;
  command: string | null;
  options: Record<string, unknown>;
  /** The agent's environment; its values are part of the setup (hashed into the key, never stored). */
  env: Record<string, string>;
  /** An existing folder standing for an issue workspace. */
  workspacePath: string;
  store: ProofStore;
  nowMs?: () => number;
  timeoutMs?: number;
}

/** The proof key of a sandbox setup: kind, command, block and the agent environment, hashed. */
export function sandboxKey(
  kind: string,
  command: string | null,
  options: Record<string, unknown>,
  env: Record<string, string>,
): string {
  const values = Object.keys(env)
    .sort()
    .map((name) => `${name}=${env[name]}`);
  return `sandbox:${proofKey(kind, command, options, values)}`;
}

/** Probes running now, per store and key. */
const inFlight = new WeakMap<ProofStore, Map<string, Promise<SandboxCheck>>>();

/** Checks the kind's sandbox, or reuses a fresh proof of the same setup. Never throws for a probe failure. */
export async function checkSandbox(p: SandboxCheckParams): Promise<SandboxCheck> {
  const declared = p.runtime.sandbox;
  switch (declared.kind) {
    case 'none':
      return { ok: true, status: 'none', detail: declared.reason, cached: false };
    case 'unprobeable':
      return { ok: true, status: 'unprobeable', detail: declared.whatToCheck, cached: false };
    case 'probe':
      break;
    default:
      return assertNever(declared);
  }
  const now = p.nowMs ?? Date.now;
  const key = sandboxKey(p.kind, p.command, p.options, p.env);
  const last = p.store.get(key);
  if (last !== null && now() - last < PROOF_TTL_MS) {
    return {
      ok: true,
      status: 'usable',
      detail: 'proved for this setup in the last 15 minutes',
      cached: true,
    };
  }
  let running = inFlight.get(p.store);
  if (running === undefined) {
    running = new Map();
    inFlight.set(p.store, running);
  }
  const pending = running.get(key);
  if (pending !== undefined) {
    const shared = await pending;
    return shared.ok ? { ...shared, cached: true } : shared;
  }
  const probe = declared.probe;
  const own = (async (): Promise<SandboxCheck> => {
    let found: SandboxProbeResult;
    try {
      found = await probe({
        command: p.command,
        options: p.options,
        env: p.env,
        workspacePath: p.workspacePath,
        timeoutMs: p.timeoutMs ?? SANDBOX_PROBE_TIMEOUT_MS,
      });
    } catch (error) {
      found = { status: 'unchecked', reason: error instanceof Error ? error.message : String(error) };
    }
    if (found.status === 'usable') {
      try {
        p.store.put(key, now());
      } catch {
        // A proof only saves the next probe; a store that cannot keep it must not fail this one.
      }
    }
    return verdict(p.kind, found);
  })().finally(() => running.delete(key));
  running.set(key, own);
  return own;
}

function verdict(kind: string, found: SandboxProbeResult): SandboxCheck {
  switch (found.status) {
    case 'usable':
    case 'off':
      return { ok: true, status: found.status, detail: found.detail, cached: false };
    case 'unchecked':
      return { ok: true, status: 'unchecked', detail: found.reason, cached: false };
    case 'unusable':
      return { ok: false, message: unusableMessage(kind, found) };
    default:
      return assertNever(found);
  }
}

/** The message of an unusable sandbox: what failed, the runtime's words, then the fixes. */
export function unusableMessage(
  kind: string,
  found: Extract<SandboxProbeResult, { status: 'unusable' }>,
): string {
  const cause = found.cause
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
  return (
    `the ${kind} sandbox cannot run the agent's commands: ${found.summary}. It said:\n${cause}\n` +
    `Every shell command of a turn would fail while the turn still completes. Fix: ${found.fixes.join('; or ')}`
  );
}

/**
 * Checks the sandbox at start-up, in a scratch folder made inside the workspace root (so a
 * write lands on the file system workspaces use) and removed afterwards.
 */
export async function checkSandboxAtStart(
  p: Omit<SandboxCheckParams, 'workspacePath'> & { workspaceRoot: string },
): Promise<SandboxCheck> {
  if (p.runtime.sandbox.kind !== 'probe') return checkSandbox({ ...p, workspacePath: p.workspaceRoot });
  let scratch: string;
  try {
    mkdirSync(p.workspaceRoot, { recursive: true });
    scratch = mkdtempSync(path.join(p.workspaceRoot, '.sandbox-probe-'));
  } catch (error) {
    const reason = `cannot make a probe folder in ${p.workspaceRoot}: ${error instanceof Error ? error.message : String(error)}`;
    return { ok: true, status: 'unchecked', detail: reason, cached: false };
  }
  try {
    return await checkSandbox({ ...p, workspacePath: scratch });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function assertNever(value: never): never {
  throw new Error(`unexpected sandbox value: ${JSON.stringify(value)}`);
}
