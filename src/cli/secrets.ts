/**
 * Which values are secret for this service and what the agent's environment may
 * hold. Secrets are masked by value in logs, API responses and metrics; the agent
 * gets its own kind's credentials and nothing else that is secret.
 */
import { agentKinds } from '../agent/registry.js';
import { OWNER_ENV } from '../orchestrator/orphans.js';
import type { ServiceConfig } from '../workflow/config.js';

/** Variable names that by convention hold a secret (the hook and agent environments are built from these rules too). */
const SECRET_NAME = /(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|PRIVATE_?KEY|CREDENTIALS?)(_|$)/i;
/** Shorter values would mask ordinary words in log lines. */
const MIN_SECRET_LENGTH = 8;

/** Every value this service must never print: the tracker token, every kind's credentials, secret-named variables. */
export function secretValues(config: ServiceConfig, env: NodeJS.ProcessEnv): string[] {
  const values = new Set<string>();
  if (config.tracker.apiKey !== '') values.add(config.tracker.apiKey);
  for (const kind of agentKinds()) {
    for (const name of kind.runtime?.credentialEnv ?? []) {
      const value = env[name];
      if (value !== undefined && value !== '') values.add(value);
    }
  }
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && value.length >= MIN_SECRET_LENGTH && SECRET_NAME.test(name)) values.add(value);
  }
  return [...values];
}

/**
 * The agent's environment: the orchestrator's, minus its own settings (ORCHESTRATOR_*), minus
 * any variable holding a secret — except the credentials the configured kind declares it
 * needs — plus the owner tag that lets a restarted orchestrator find agents it left behind.
 */
export function agentEnvironment(
  env: NodeJS.ProcessEnv,
  secrets: readonly string[],
  ownCredentials: readonly string[],
  tag: string,
): Record<string, string> {
  const keep = new Set(ownCredentials);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (name.startsWith('ORCHESTRATOR_')) continue;
    if (!keep.has(name) && secrets.some((s) => s !== '' && value.includes(s))) continue;
    out[name] = value;
  }
  out[OWNER_ENV] = tag;
  return out;
}

/**
 * The environment an agent on an SSH host gets: its own kind's credentials and the
 * variables the workflow forwards (`worker.ssh_forward_env`) that are set, plus the owner
 * tag. Nothing else of this machine's environment travels (the host's login provides
 * PATH, HOME and the rest).
 */
export function remoteAgentEnvironment(
  env: NodeJS.ProcessEnv,
  ownCredentials: readonly string[],
  forwarded: readonly string[],
  tag: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of [...ownCredentials, ...forwarded]) {
    const value = env[name];
    if (value !== undefined && value !== '') out[name] = value;
  }
  out[OWNER_ENV] = tag;
  return out;
}
