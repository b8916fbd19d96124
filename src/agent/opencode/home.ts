/**
 * The folders OpenCode runs with. OpenCode keeps its config, its logins
 * (`auth.json`), its session database (what `--session` reads) and its caches in
 * the four XDG folders, and on every start it runs `npm install` in its config
 * folder in the background, against the public registry, unless that folder's
 * package-lock.json already lists the plugin package it wants. Pointing it at the
 * operator's own folders would let unattended runs rewrite them, mix their
 * sessions into the operator's history, and reach the registry from every launch.
 * Instead every setup gets a managed folder holding the four XDG folders, the
 * config folder pre-seeded so the install has nothing to do, and a copy of the
 * operator's `auth.json` (newer copies only; nothing is copied back). HOME stays
 * the operator's, so the tools the agent runs (git, package managers) see their
 * usual files.
 *
 * The folder lasts across sessions of the same setup (its command and login
 * source), so a session can be resumed. Whether a session can be resumed is read
 * from OpenCode's own database: resuming one that is not there fails the turn,
 * and resuming one made for another folder makes the CLI wait forever.
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
import Database from 'better-sqlite3';

/** The login file copied from the operator's OpenCode data folder. */
export const AUTH_FILE = 'auth.json';
/** OpenCode's session database in its data folder (`OPENCODE_DISABLE_CHANNEL_DB` keeps the name fixed). */
export const SESSION_DB = 'opencode.db';
/** The plugin package OpenCode installs into every config folder it reads. */
export const PLUGIN_PACKAGE = '@opencode-ai/plugin';

export type HomeResult = { ok: true; home: string; source: string } | { ok: false; message: string };

export interface HomeInput {
  /** The session's environment (HOME, XDG_STATE_HOME, XDG_DATA_HOME). */
  env: Record<string, string>;
  /** `agent.command`, part of what makes a setup. */
  command: string | null;
}

function homeDir(env: Record<string, string>): string {
  return env.HOME !== undefined && env.HOME !== '' ? env.HOME : os.homedir();
}

function xdg(env: Record<string, string>, name: string, fallback: string[]): string {
  const value = env[name];
  return value !== undefined && value !== '' ? value : path.join(homeDir(env), ...fallback);
}

/** The operator's OpenCode data folder, where `opencode auth login` keeps its logins. */
export function sourceDataDir(env: Record<string, string>): string {
  return path.join(xdg(env, 'XDG_DATA_HOME', ['.local', 'share']), 'opencode');
}

/** Where managed folders live: `$XDG_STATE_HOME/orchestrator/opencode-homes`, by default under ~/.local/state. */
export function managedRoot(env: Record<string, string>): string {
  return path.join(xdg(env, 'XDG_STATE_HOME', ['.local', 'state']), 'orchestrator', 'opencode-homes');
}

/** The name of a setup's managed folder: its login source and command, hashed. */
export function setupHash(source: string, command: string | null): string {
  return createHash('sha256')
    .update(JSON.stringify([source, command]))
    .digest('hex')
    .slice(0, 16);
}

/** The four XDG folders inside a managed folder, as the CLI's environment names them. */
export interface XdgFolders {
  XDG_CONFIG_HOME: string;
  XDG_DATA_HOME: string;
  XDG_STATE_HOME: string;
  XDG_CACHE_HOME: string;
}

/** The four XDG folders of the managed folder `home`. */
export function xdgEnv(home: string): XdgFolders {
  return {
    XDG_CONFIG_HOME: path.join(home, 'config'),
    XDG_DATA_HOME: path.join(home, 'data'),
    XDG_STATE_HOME: path.join(home, 'state'),
    XDG_CACHE_HOME: path.join(home, 'cache'),
  };
}

/** The package.json and package-lock.json that make OpenCode's plugin install a no-op. */
export function pluginSeed(): { packageJson: string; packageLock: string } {
  const dependencies = { [PLUGIN_PACKAGE]: '*' };
  return {
    packageJson: `${JSON.stringify({ dependencies })}\n`,
    packageLock: `${JSON.stringify({ lockfileVersion: 3, packages: { '': { dependencies } } })}\n`,
  };
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

/** Copies `from` over `to` when `to` is missing or older; removes `to` when `from` is gone. Atomic. */
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

/** Prepares the managed folder of this setup; never writes to the operator's folders. */
export function prepareManagedHome(input: HomeInput): HomeResult {
  const source = sourceDataDir(input.env);
  const home = path.join(managedRoot(input.env), setupHash(source, input.command));
  const dirs = xdgEnv(home);
  const config = path.join(dirs.XDG_CONFIG_HOME, 'opencode');
  const data = path.join(dirs.XDG_DATA_HOME, 'opencode');
  try {
    mkdirSync(home, { recursive: true, mode: 0o700 });
    chmodSync(home, 0o700);
    for (const dir of [path.join(config, 'node_modules'), data, dirs.XDG_STATE_HOME, dirs.XDG_CACHE_HOME]) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    }
    const seed = pluginSeed();
    writeIfChanged(path.join(config, 'package.json'), seed.packageJson);
    writeIfChanged(path.join(config, 'package-lock.json'), seed.packageLock);
    if (path.resolve(source) !== path.resolve(data)) {
      refresh(path.join(source, AUTH_FILE), path.join(data, AUTH_FILE));
    }
  } catch (error) {
    return {
      ok: false,
      message: `opencode: cannot prepare the managed home ${home}: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  return { ok: true, home, source };
}

/** What OpenCode's database says about a session: absent, or stored for a folder. */
export type StoredSession = { stored: false } | { stored: true; directory: string };

/**
 * Looks `sessionId` up in the managed folder's session database; null when it cannot
 * be read (a newer schema, a lock), in which case the caller does not second-guess
 * the CLI. No database yet means no session.
 */
export function storedSession(home: string, sessionId: string): StoredSession | null {
  const file = path.join(xdgEnv(home).XDG_DATA_HOME, 'opencode', SESSION_DB);
  if (!existsSync(file)) return { stored: false };
  let db: Database.Database | null = null;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true, timeout: 2_000 });
    const row = db.prepare('SELECT directory FROM session WHERE id = ?').get(sessionId) as
      | { directory?: unknown }
      | undefined;
    if (row === undefined) return { stored: false };
    return typeof row.directory === 'string' ? { stored: true, directory: row.directory } : null;
  } catch {
    return null;
  } finally {
    db?.close();
  }
}
