/**
 * The CODEX_HOME each Codex session runs with. Codex keeps its configuration,
 * credentials, session rollouts and state database in one folder, and writes to
 * it as it runs (token refreshes, rollouts), so pointing it at the operator's own
 * folder would let unattended runs rewrite the operator's login and mix their
 * history into it. Instead every agent setup gets a managed folder of its own:
 * the credential (`auth.json`) and configuration (`config.toml`) are copied in
 * from the source folder, newer copies only, and nothing is ever copied back.
 * The folder lasts across sessions of the same setup, so a thread can be resumed.
 * Its config.toml also carries the block of tool servers (`tool-tables.ts`), kept across
 * refreshes of the copy. A setup with no credential anywhere fails before any process starts.
 */
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CodexConfig } from './config.js';
import { composeConfig, type ToolTables } from './tool-tables.js';

/** Files copied from the source folder into the managed one. */
export const COPIED_FILES = ['auth.json', 'config.toml'] as const;
/** Variables Codex reads as its credential for the built-in provider. */
export const CODEX_CREDENTIAL_ENV = ['CODEX_API_KEY', 'OPENAI_API_KEY'] as const;

export type HomeResult = { ok: true; home: string; source: string } | { ok: false; message: string };

export interface HomeInput {
  config: CodexConfig;
  /** The session's environment (HOME, CODEX_HOME, XDG_STATE_HOME, credentials). */
  env: Record<string, string>;
  /** `agent.command`, part of what makes a setup. */
  command: string | null;
  /** The session's tool servers for config.toml; absent or null keeps the block there. */
  toolTables?: ToolTables | null;
}

function homeDir(env: Record<string, string>): string {
  return env.HOME !== undefined && env.HOME !== '' ? env.HOME : os.homedir();
}

/** A folder a block names, `~` meaning the environment's HOME. */
function givenFolder(given: string, env: Record<string, string>): string {
  if (given === '~') return homeDir(env);
  if (given.startsWith('~/')) return path.join(homeDir(env), given.slice(2));
  return path.resolve(given);
}

/** The folder credentials are copied from: the block's `credentials_home`, else CODEX_HOME, else ~/.codex. */
export function sourceHome(config: CodexConfig, env: Record<string, string>): string {
  if (config.credentialsHome !== null) return givenFolder(config.credentialsHome, env);
  if (env.CODEX_HOME !== undefined && env.CODEX_HOME !== '') return path.resolve(env.CODEX_HOME);
  return path.join(homeDir(env), '.codex');
}

/**
 * Where managed folders live: the block's `home_root`, else
 * `$XDG_STATE_HOME/orchestrator/codex-homes`, by default under ~/.local/state.
 */
export function managedRoot(env: Record<string, string>, homeRoot: string | null = null): string {
  if (homeRoot !== null) return givenFolder(homeRoot, env);
  const state =
    env.XDG_STATE_HOME !== undefined && env.XDG_STATE_HOME !== ''
      ? env.XDG_STATE_HOME
      : path.join(homeDir(env), '.local', 'state');
  return path.join(state, 'orchestrator', 'codex-homes');
}

/** Environment variable names a model provider in the configuration reads its key from. */
export function providerKeyNames(configToml: string, overrides: Record<string, unknown>): string[] {
  const names = [...configToml.matchAll(/^\s*env_key\s*=\s*["']([A-Za-z_][A-Za-z0-9_]*)["']/gm)].map(
    (m) => m[1] as string,
  );
  for (const [key, value] of Object.entries(overrides)) {
    if (key.endsWith('env_key') && typeof value === 'string') names.push(value);
  }
  return names;
}

/** Why no credential is available, or null when one is. */
export function missingCredential(
  source: string,
  config: CodexConfig,
  env: Record<string, string>,
): string | null {
  if (existsSync(path.join(source, 'auth.json'))) return null;
  if (CODEX_CREDENTIAL_ENV.some((name) => (env[name] ?? '') !== '')) return null;
  let toml = '';
  try {
    toml = readFileSync(path.join(source, 'config.toml'), 'utf8');
  } catch {
    // No configuration file: no provider key either.
  }
  const keys = providerKeyNames(toml, config.configOverrides);
  if (keys.some((name) => (env[name] ?? '') !== '')) return null;
  const providers = keys.length > 0 ? `, nor the model provider key variable ${keys.join(' / ')}` : '';
  return (
    `codex has no credential: there is no auth.json in ${source}, neither ${CODEX_CREDENTIAL_ENV.join(' nor ')} ` +
    `is set${providers}. Log in with CODEX_HOME=${source} codex login, set a key in the agent environment, ` +
    'or point codex.credentials_home at a folder holding auth.json'
  );
}

/** Copies `from` over `to` when `to` is missing or older; removes `to` when `from` is gone. Atomic per file. */
function refresh(from: string, to: string): void {
  if (!existsSync(from)) {
    rmSync(to, { force: true });
    return;
  }
  if (existsSync(to) && statSync(to).mtimeMs >= statSync(from).mtimeMs) return;
  const temp = `${to}.${process.pid}.tmp`;
  copyFileSync(from, temp);
  chmodSync(temp, 0o600);
  renameSync(temp, to);
}

/**
 * Composes the managed config.toml from the source's (when newer than the copy, else the
 * copy's own text, which Codex may have added to) and the tool block; written atomically,
 * and only when it changed, so a reader never sees the file half written or missing.
 */
function refreshConfig(from: string, to: string, tables: ToolTables | null): void {
  const current = existsSync(to) ? readFileSync(to, 'utf8') : null;
  const sourceNewer = existsSync(from) && (current === null || statSync(to).mtimeMs < statSync(from).mtimeMs);
  const base = sourceNewer ? readFileSync(from, 'utf8') : existsSync(from) ? current : null;
  const next = composeConfig(base, current, tables);
  if (next === current) return;
  if (next === null) {
    rmSync(to, { force: true });
    return;
  }
  const temp = `${to}.${process.pid}.tmp`;
  writeFileSync(temp, next, { mode: 0o600 });
  chmodSync(temp, 0o600);
  renameSync(temp, to);
}

/** The name of a setup's managed folder: its source folder, command and raw overrides, hashed. */
export function setupHash(source: string, input: Pick<HomeInput, 'config' | 'command'>): string {
  return createHash('sha256')
    .update(JSON.stringify([source, input.command, input.config.configOverrides]))
    .digest('hex')
    .slice(0, 16);
}

/** Prepares the managed CODEX_HOME of this setup; never writes to the source folder. */
export function prepareManagedHome(input: HomeInput): HomeResult {
  const source = sourceHome(input.config, input.env);
  const missing = missingCredential(source, input.config, input.env);
  if (missing !== null) return { ok: false, message: missing };
  return ensureManagedHome(input);
}

/**
 * Makes the managed CODEX_HOME of this setup and refreshes its copies, without asking for a
 * credential: the sandbox probe needs the folder sessions will use before any credential is used.
 */
export function ensureManagedHome(input: HomeInput): HomeResult {
  const source = sourceHome(input.config, input.env);
  const home = path.join(managedRoot(input.env, input.config.homeRoot), setupHash(source, input));
  if (path.resolve(home) === path.resolve(source)) return { ok: true, home, source };
  try {
    mkdirSync(home, { recursive: true, mode: 0o700 });
    refresh(path.join(source, 'auth.json'), path.join(home, 'auth.json'));
    refreshConfig(path.join(source, 'config.toml'), path.join(home, 'config.toml'), input.toolTables ?? null);
  } catch (error) {
    return {
      ok: false,
      message: `codex: cannot prepare the managed CODEX_HOME ${home}: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  return { ok: true, home, source };
}
