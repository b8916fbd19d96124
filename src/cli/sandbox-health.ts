/**
 * Sandbox health as the CLI shows it. `orchestrator run` checks before the orchestrator
 * starts, and so before any issue is claimed: an agent whose sandbox refuses every command
 * would still finish its turns and hand issues off with nothing done. An unusable sandbox
 * stops the start with a coded error naming the cause and the fix; a kind that cannot be
 * asked is logged with what to check; agents on SSH hosts are not probed here, which is
 * said too. `orchestrator adapters` probes each kind with its default settings.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  checkSandbox,
  checkSandboxAtStart,
  SANDBOX_UNCHECKED,
  SANDBOX_UNPROBEABLE,
  SANDBOX_UNUSABLE,
} from '../agent/core/sandbox-check.js';
import { MemoryProofStore, type ProofStore } from '../agent/core/verify-credential.js';
import type { AgentRuntimeDeclaration } from '../agent/registry.js';
import type { Logger } from '../orchestrator/ports.js';
import type { ServiceConfig } from '../workflow/config.js';

export interface StartSandboxParams {
  config: ServiceConfig;
  runtime: AgentRuntimeDeclaration;
  /** The agent environment sessions on this machine get. */
  agentEnv: Record<string, string>;
  store: ProofStore;
  log: Logger;
  /** Where the start-up error is printed. */
  err: (text: string) => void;
}

/** False when the start must stop (the error is printed); true otherwise, with what was found logged. */
export async function checkStartSandbox(p: StartSandboxParams): Promise<boolean> {
  const { config } = p;
  const kind = config.agent.kind;
  if (config.worker.sshHosts.length > 0 && p.runtime.sandbox.kind === 'probe') {
    p.log.warn(
      { code: SANDBOX_UNCHECKED, kind },
      'the agent runs on SSH hosts, where its sandbox is not probed: check it on each host',
    );
    return true;
  }
  const found = await checkSandboxAtStart({
    kind,
    runtime: p.runtime,
    command: config.agent.command,
    options: config.agentOptions,
    env: p.agentEnv,
    workspaceRoot: config.workspaceRoot,
    store: p.store,
  });
  if (!found.ok) {
    p.err(`orchestrator run: ${SANDBOX_UNUSABLE}: ${found.message}\n`);
    return false;
  }
  const fields = { kind, sandbox: found.status, detail: found.detail };
  switch (found.status) {
    case 'unchecked':
      p.log.warn({ ...fields, code: SANDBOX_UNCHECKED }, 'the agent sandbox could not be checked');
      break;
    case 'unprobeable':
      p.log.info({ ...fields, code: SANDBOX_UNPROBEABLE }, 'the agent sandbox cannot be probed; check it');
      break;
    default:
      p.log.info(fields, 'agent sandbox');
  }
  return true;
}

/** A kind's sandbox in `orchestrator adapters`: a probe's finding, or the declaration. */
export interface SandboxReport {
  status: 'usable' | 'off' | 'unusable' | 'unchecked' | 'none' | 'unprobeable';
  detail: string;
}

/**
 * The sandbox of a kind with its default settings (no block, the default command) and this
 * environment, probed in a scratch folder; `commandFound` false skips the probe.
 */
export async function sandboxReport(
  kind: string,
  runtime: AgentRuntimeDeclaration,
  env: NodeJS.ProcessEnv,
  commandFound: boolean,
): Promise<SandboxReport> {
  const declared = runtime.sandbox;
  if (declared.kind === 'none') return { status: 'none', detail: declared.reason };
  if (declared.kind === 'unprobeable') return { status: 'unprobeable', detail: declared.whatToCheck };
  if (!commandFound) return { status: 'unchecked', detail: 'the command is not runnable' };
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'orchestrator-sandbox-probe-'));
  try {
    const found = await checkSandbox({
      kind,
      runtime,
      command: null,
      options: {},
      env: Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
      workspacePath: scratch,
      store: new MemoryProofStore(),
    });
    return found.ok
      ? { status: found.status, detail: found.detail }
      : { status: 'unusable', detail: found.message };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
