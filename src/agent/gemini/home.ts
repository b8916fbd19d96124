/**
 * The folder Gemini CLI runs with as its home (`GEMINI_CLI_HOME`). The CLI keeps
 * its settings, its Google login, its chat records (what `--resume` reads) and
 * its project registry under `<home>/.gemini`, and writes there as it runs, so
 * pointing it at the operator's own `~/.gemini` would let unattended runs rewrite
 * the operator's settings and mix their history into it. Instead every agent
 * setup gets a managed folder of its own, holding settings this kind writes
 * (API-key or chosen auth, usage statistics and telemetry off, update checks off,
 * the retry cap, and for a session given the tool server its `mcpServers`) and, for
 * a Google login, copies of the login files (newer copies only; nothing is copied
 * back). Only `.gemini` moves: HOME stays the operator's, so the tools the agent
 * runs (git, package managers) see their usual files.
 *
 * The setup's settings are part of its folder's name, so two sessions with
 * different blocks, or one with the tool server and one without (a credential
 * check), never rewrite each other's settings; the folder lasts across
 * sessions of the same setup, so a session can be resumed. Error reports the CLI
 * writes to its temp folder go to a per-setup folder under the system temp.
 */
import { createHash } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { GeminiConfig } from './config.js';

/** Files of a Google login, copied from the source folder for `auth_type: oauth-personal`. */
export const LOGIN_FILES = ['oauth_creds.json', 'google_accounts.json'] as const;
/** The variable the CLI reads its Gemini API key from. */
export const API_KEY_ENV = 'GEMINI_API_KEY';
/** Variables the CLI reads as its credential, depending on the auth type. */
export const GEMINI_CREDENTIAL_ENV = [
  API_KEY_ENV,
  'GOOGLE_API_KEY',
  'GOOGLE_APPLICATION_CREDENTIALS',
] as const;
/** Error reports older than this are removed from the setup's temp folder when a session starts. */
export const ERROR_REPORT_TTL_MS = 7 * 24 * 60 * 60_000;
/** How much of a chat record is read to find its session id. */
const HEAD_BYTES = 4_096;

export type HomeResult =
  | { ok: true; home: string; tmpDir: string; source: string }
  | { ok: false; message: string };

export interface HomeInput {
  config: GeminiConfig;
  /** The session's environment (HOME, XDG_STATE_HOME, TMPDIR, credentials). */
  env: Record<string, string>;
  /** `agent.command`, part of what makes a setup. */
  command: string | null;
  /** The rendered `mcpServers` of the session's tool servers; absent or null = none. */
  mcpServers?: Readonly<Record<string, unknown>> | null;
}

function homeDir(env: Record<string, string>): string {
  return env.HOME !== undefined && env.HOME !== '' ? env.HOME : os.homedir();
}

/** The folder a Google login is copied from: the block's `credentials_home`, else `~/.gemini`. */
export function sourceHome(config: GeminiConfig, env: Record<string, string>): string {
  const given = config.credentialsHome;
  if (given === null) return path.join(homeDir(env), '.gemini');
  if (given === '~') return homeDir(env);
  if (given.startsWith('~/')) return path.join(homeDir(env), given.slice(2));
  return path.resolve(given);
}

/** Where managed folders live: `$XDG_STATE_HOME/orchestrator/gemini-homes`, by default under ~/.local/state. */
export function managedRoot(env: Record<string, string>): string {
  const state =
    env.XDG_STATE_HOME !== undefined && env.XDG_STATE_HOME !== ''
      ? env.XDG_STATE_HOME
      : path.join(homeDir(env), '.local', 'state');
  return path.join(state, 'orchestrator', 'gemini-homes');
}

/**
 * The settings every session of the setup runs with. They are user-level settings, so
 * a workspace's own `.gemini/settings.json` may still add to them; the approval mode
 * and the model are passed as flags on every launch, which nothing outranks.
 */
export function managedSettings(
  config: GeminiConfig,
  mcpServers: Readonly<Record<string, unknown>> | null = null,
): Record<string, unknown> {
  return {
    security: { auth: { selectedType: config.authType }, folderTrust: { enabled: false } },
    general: {
      enableAutoUpdate: false,
      enableAutoUpdateNotification: false,
      maxAttempts: config.maxAttempts,
    },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false, logPrompts: false },
    model: { skipNextSpeakerCheck: true },
    // References only: the CLI expands `${NAME}` from its own environment as it loads the file.
    ...(mcpServers === null ? {} : { mcpServers }),
  };
}

/** The settings file's text. */
export function settingsText(
  config: GeminiConfig,
  mcpServers: Readonly<Record<string, unknown>> | null = null,
): string {
  return `${JSON.stringify(managedSettings(config, mcpServers), null, 2)}\n`;
}

/** The name of a setup's managed folder: its source folder, command and settings, hashed. */
export function setupHash(
  source: string,
  input: Pick<HomeInput, 'config' | 'command' | 'mcpServers'>,
): string {
  return createHash('sha256')
    .update(JSON.stringify([source, input.command, settingsText(input.config, input.mcpServers ?? null)]))
    .digest('hex')
    .slice(0, 16);
}

/** Why the setup has no credential, or null when it has one (or its kind cannot be checked here). */
export function missingCredential(
  config: GeminiConfig,
  env: Record<string, string>,
  source: string,
): string | null {
  switch (config.authType) {
    case 'gemini-api-key':
      if ((env[API_KEY_ENV] ?? '') !== '') return null;
      return (
        `gemini has no credential: ${API_KEY_ENV} is not set in the agent environment ` +
        '(gemini.auth_type is gemini-api-key); set it, or choose another gemini.auth_type'
      );
    case 'oauth-personal':
      if (existsSync(path.join(source, 'oauth_creds.json'))) return null;
      return (
        `gemini has no credential: there is no oauth_creds.json in ${source} (gemini.auth_type is ` +
        'oauth-personal); log in once with `gemini` there, or point gemini.credentials_home at the folder holding it'
      );
    case 'vertex-ai':
    case 'compute-default-credentials':
      // Project, location and application-default credentials have too many valid forms to
      // judge here; the runtime's own refusal reaches the operator on the first turn.
      return null;
  }
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

/** Writes `text` to `file` unless it already holds it; atomic. */
function writeIfChanged(file: string, text: string): void {
  try {
    if (readFileSync(file, 'utf8') === text) return;
  } catch {
    // Missing or unreadable: write it.
  }
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, text, { mode: 0o600 });
  renameSync(temp, file);
}

/** The system temp folder the session environment names. */
function systemTmp(env: Record<string, string>): string {
  return env.TMPDIR !== undefined && env.TMPDIR !== '' ? env.TMPDIR : os.tmpdir();
}

/** Removes the CLI's error reports older than `ERROR_REPORT_TTL_MS` from `dir`. */
export function pruneErrorReports(dir: string, nowMs: number): void {
  for (const name of readdirSync(dir)) {
    if (!name.startsWith('gemini-client-error-')) continue;
    const file = path.join(dir, name);
    try {
      if (nowMs - statSync(file).mtimeMs > ERROR_REPORT_TTL_MS) rmSync(file, { force: true });
    } catch {
      // Gone already, or not ours to remove.
    }
  }
}

/** Prepares the managed home of this setup; never writes to the source folder. */
export function prepareManagedHome(input: HomeInput, nowMs = Date.now()): HomeResult {
  const source = sourceHome(input.config, input.env);
  const missing = missingCredential(input.config, input.env, source);
  if (missing !== null) return { ok: false, message: missing };
  const hash = setupHash(source, input);
  const home = path.join(managedRoot(input.env), hash);
  const dotGemini = path.join(home, '.gemini');
  const tmpDir = path.join(systemTmp(input.env), `orchestrator-gemini-${hash}`);
  try {
    mkdirSync(dotGemini, { recursive: true, mode: 0o700 });
    writeIfChanged(
      path.join(dotGemini, 'settings.json'),
      settingsText(input.config, input.mcpServers ?? null),
    );
    if (input.config.authType === 'oauth-personal' && path.resolve(source) !== path.resolve(dotGemini)) {
      for (const file of LOGIN_FILES) refresh(path.join(source, file), path.join(dotGemini, file));
    }
    mkdirSync(tmpDir, { recursive: true, mode: 0o700 });
    pruneErrorReports(tmpDir, nowMs);
  } catch (error) {
    return {
      ok: false,
      message: `gemini: cannot prepare the managed home ${home}: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  return { ok: true, home, tmpDir, source };
}

/** The first bytes of a file (a chat record names its session on its first line); "" when unreadable. */
function headOf(file: string): string {
  let fd: number | null = null;
  try {
    fd = openSync(file, 'r');
    const buffer = Buffer.alloc(HEAD_BYTES);
    const read = readSync(fd, buffer, 0, HEAD_BYTES, 0);
    return buffer.subarray(0, read).toString('utf8');
  } catch {
    return '';
  } finally {
    if (fd !== null) closeSync(fd);
  }
}

/**
 * Whether the managed home holds the chat record of `sessionId` (what `--resume`
 * needs). The CLI names a record `session-<time>-<first 8 of the id>.json[l]` in
 * `.gemini/tmp/<project>/chats/`; a name that matches is read to be sure.
 */
export function sessionStored(home: string, sessionId: string): boolean {
  const projects = path.join(home, '.gemini', 'tmp');
  const short = sessionId.slice(0, 8);
  let names: string[];
  try {
    names = readdirSync(projects);
  } catch {
    return false;
  }
  for (const project of names) {
    const chats = path.join(projects, project, 'chats');
    let files: string[];
    try {
      files = readdirSync(chats);
    } catch {
      continue;
    }
    for (const file of files) {
      if (!file.startsWith('session-')) continue;
      if (!file.endsWith(`-${short}.jsonl`) && !file.endsWith(`-${short}.json`)) continue;
      if (headOf(path.join(chats, file)).includes(sessionId)) return true;
    }
  }
  return false;
}
