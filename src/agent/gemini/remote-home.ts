/**
 * The managed home of a session on an SSH worker host. The setup is decided here
 * exactly as for a local session (the same settings, tool servers' `mcpServers`
 * included, credential check and setup hash), but the folder lives on the host:
 * `${XDG_STATE_HOME:-$HOME/.local/state}/orchestrator/gemini-homes/<setup>` as the
 * host sees those variables, mode 700, made by one script that prints the folder
 * and the setup's temp folder. The settings (whose tool servers hold references
 * only, never a token's value), and for a Google login the login
 * files read here, travel as values of the script's environment (which goes over
 * the channel, never in the script text or a command line). A login file is
 * rewritten only when the source changed since it was last sent (its mtime and
 * size, kept beside the copy), so a token the host's CLI refreshed is not rolled
 * back by every session. Nothing is copied back.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { RemoteHost } from '../../domain/remote.js';
import { outputTail, runHostScript } from '../core/host-script.js';
import {
  ERROR_REPORT_TTL_MS,
  type HomeInput,
  type HomeResult,
  LOGIN_FILES,
  missingCredential,
  settingsText,
  setupHash,
  sourceHome,
} from './home.js';

/** How long the host may take to prepare the folder. */
const PREPARE_TIMEOUT_MS = 30_000;

/** The script's variables for one login file: its contents and the stamp of the source version. */
function fileVars(file: (typeof LOGIN_FILES)[number]): { content: string; stamp: string } {
  const base = `ORCH_GEMINI_${file.replace(/\W/g, '_').toUpperCase()}`;
  return { content: base, stamp: `${base}_STAMP` };
}

/** The script that prepares the folder; it names variables only, never their values. */
export function remoteHomeScript(): string {
  const ttlDays = Math.round(ERROR_REPORT_TTL_MS / (24 * 60 * 60_000));
  return [
    'set -e',
    'umask 077',
    'if [ -n "${XDG_STATE_HOME:-}" ]; then __state=$XDG_STATE_HOME',
    'elif [ -n "${HOME:-}" ]; then __state=$HOME/.local/state',
    "else echo 'neither XDG_STATE_HOME nor HOME is set on the host' >&2; exit 1; fi",
    '__home=$__state/orchestrator/gemini-homes/$ORCH_GEMINI_SETUP',
    '__tmp=${TMPDIR:-/tmp}/orchestrator-gemini-$ORCH_GEMINI_SETUP',
    'mkdir -p -- "$__home/.gemini" "$__tmp"',
    'chmod 700 -- "$__home" "$__tmp"',
    'cd -- "$__home/.gemini"',
    'printf \'%s\' "$ORCH_GEMINI_SETTINGS" > "settings.json.tmp.$$"',
    'mv -f -- "settings.json.tmp.$$" settings.json',
    'put() {',
    '  eval "__set=\\${$2+set} __content=\\${$2-} __stamp=\\${$3-}"',
    '  if [ "$__set" != set ]; then return 0; fi',
    '  if [ -f "$1" ] && [ -f "$1.stamp" ] && [ "$(cat -- "$1.stamp")" = "$__stamp" ]; then return 0; fi',
    '  printf \'%s\' "$__content" > "$1.tmp.$$"',
    '  chmod 600 -- "$1.tmp.$$"',
    '  mv -f -- "$1.tmp.$$" "$1"',
    '  printf \'%s\' "$__stamp" > "$1.stamp"',
    '}',
    ...LOGIN_FILES.map((file) => {
      const v = fileVars(file);
      return `put ${file} ${v.content} ${v.stamp}`;
    }),
    `find "$__tmp" -maxdepth 1 -name 'gemini-client-error-*' -mtime +${ttlDays} -exec rm -f {} + 2>/dev/null || true`,
    'cd -- "$__home" && pwd -P',
    'cd -- "$__tmp" && pwd -P',
  ].join('\n');
}

export interface RemoteHomeInput extends HomeInput {
  host: RemoteHost;
}

/** Prepares the managed home of this setup on the host; the paths are paths there. */
export async function prepareRemoteHome(input: RemoteHomeInput): Promise<HomeResult> {
  const source = sourceHome(input.config, input.env);
  const missing = missingCredential(input.config, input.env, source);
  if (missing !== null) return { ok: false, message: missing };
  const fail = (why: string): HomeResult => ({
    ok: false,
    message: `gemini: cannot prepare the managed home on ${input.host.name}: ${why}`,
  });
  const env: Record<string, string> = {
    ORCH_GEMINI_SETUP: setupHash(source, input),
    ORCH_GEMINI_SETTINGS: settingsText(input.config, input.mcpServers ?? null),
  };
  for (const name of ['HOME', 'XDG_STATE_HOME', 'TMPDIR'] as const) {
    const value = input.env[name];
    if (value !== undefined && value !== '') env[name] = value;
  }
  if (input.config.authType === 'oauth-personal') {
    for (const file of LOGIN_FILES) {
      const from = path.join(source, file);
      try {
        const st = statSync(from);
        const v = fileVars(file);
        env[v.content] = readFileSync(from, 'utf8');
        env[v.stamp] = `${st.mtimeMs}:${st.size}`;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        return fail(`cannot read ${from}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
  const ran = await runHostScript(input.host, remoteHomeScript(), env, PREPARE_TIMEOUT_MS);
  if (!ran.ok) return fail(ran.message);
  const { output } = ran;
  const [home = '', tmpDir = ''] = output
    .split('\n')
    .slice(-2)
    .map((l) => l.trim());
  if (!home.startsWith('/') || !tmpDir.startsWith('/')) {
    return fail(`the script printed no absolute paths: ${outputTail(output)}`);
  }
  return { ok: true, home, tmpDir, source };
}
