/**
 * The managed folder of a session on an SSH worker host. It is laid out exactly as
 * a local one (the four XDG folders, the config folder pre-seeded so OpenCode's
 * plugin install has nothing to do), but lives on the host:
 * `${XDG_STATE_HOME:-$HOME/.local/state}/orchestrator/opencode-homes/<setup>` as the
 * host sees those variables, mode 700, made by one script that prints the folder.
 * The login copied in is the host's own `auth.json` (from its OpenCode data folder),
 * newer copies only; credentials given as variables travel with the session's
 * environment as for any kind. The seed files travel as values of the script's
 * environment, never in the script text or a command line.
 */
import type { RemoteHost } from '../../domain/remote.js';
import { outputTail, runHostScript } from '../core/host-script.js';
import { AUTH_FILE, type HomeInput, type HomeResult, pluginSeed, setupHash } from './home.js';

/** How long the host may take to prepare the folder. */
const PREPARE_TIMEOUT_MS = 30_000;
/** What names the host's own login source in the setup hash. */
const HOST_SOURCE = 'the host data folder';

/** The script that prepares the folder; it names variables only, never their values. */
export function remoteHomeScript(): string {
  return [
    'set -e',
    'umask 077',
    'if [ -n "${XDG_STATE_HOME:-}" ]; then __state=$XDG_STATE_HOME',
    'elif [ -n "${HOME:-}" ]; then __state=$HOME/.local/state',
    "else echo 'neither XDG_STATE_HOME nor HOME is set on the host' >&2; exit 1; fi",
    'if [ -n "${XDG_DATA_HOME:-}" ]; then __source=$XDG_DATA_HOME/opencode',
    'else __source=${HOME:-/nonexistent}/.local/share/opencode; fi',
    '__home=$__state/orchestrator/opencode-homes/$ORCH_OPENCODE_SETUP',
    'mkdir -p -- "$__home/config/opencode/node_modules" "$__home/data/opencode" "$__home/state" "$__home/cache"',
    'chmod 700 -- "$__home"',
    'cd -- "$__home/config/opencode"',
    'printf \'%s\' "$ORCH_OPENCODE_PACKAGE_JSON" > "package.json.tmp.$$"',
    'mv -f -- "package.json.tmp.$$" package.json',
    'printf \'%s\' "$ORCH_OPENCODE_PACKAGE_LOCK" > "package-lock.json.tmp.$$"',
    'mv -f -- "package-lock.json.tmp.$$" package-lock.json',
    'cd -- "$__home/data/opencode"',
    `if [ -f "$__source/${AUTH_FILE}" ]; then`,
    `  if [ ! -f ${AUTH_FILE} ] || [ "$__source/${AUTH_FILE}" -nt ${AUTH_FILE} ]; then`,
    `    cp -- "$__source/${AUTH_FILE}" "${AUTH_FILE}.tmp.$$"`,
    `    chmod 600 -- "${AUTH_FILE}.tmp.$$"`,
    `    mv -f -- "${AUTH_FILE}.tmp.$$" ${AUTH_FILE}`,
    '  fi',
    `else rm -f -- ${AUTH_FILE}; fi`,
    'cd -- "$__home" && pwd -P',
  ].join('\n');
}

export interface RemoteHomeInput extends HomeInput {
  host: RemoteHost;
}

/** Prepares the managed folder of this setup on the host; the path is a path there. */
export async function prepareRemoteHome(input: RemoteHomeInput): Promise<HomeResult> {
  const fail = (why: string): HomeResult => ({
    ok: false,
    message: `opencode: cannot prepare the managed home on ${input.host.name}: ${why}`,
  });
  const seed = pluginSeed();
  const env: Record<string, string> = {
    ORCH_OPENCODE_SETUP: setupHash(HOST_SOURCE, input.command),
    ORCH_OPENCODE_PACKAGE_JSON: seed.packageJson,
    ORCH_OPENCODE_PACKAGE_LOCK: seed.packageLock,
  };
  for (const name of ['HOME', 'XDG_STATE_HOME', 'XDG_DATA_HOME'] as const) {
    const value = input.env[name];
    if (value !== undefined && value !== '') env[name] = value;
  }
  const ran = await runHostScript(input.host, remoteHomeScript(), env, PREPARE_TIMEOUT_MS);
  if (!ran.ok) return fail(ran.message);
  const { output } = ran;
  const home = (output.split('\n').at(-1) ?? '').trim();
  if (!home.startsWith('/')) return fail(`the script printed no absolute path: ${outputTail(output)}`);
  return { ok: true, home, source: HOST_SOURCE };
}
