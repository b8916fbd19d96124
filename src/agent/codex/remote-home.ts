/**
 * The managed CODEX_HOME of a session on an SSH worker host. The setup is decided
 * here exactly as for a local session (the same source folder, credential check
 * and setup hash), but the folder lives on the host:
 * `codex.home_root` (a leading `~` being the host's HOME), else
 * `${XDG_STATE_HOME:-$HOME/.local/state}/orchestrator/codex-homes/<setup>` as the
 * host sees those variables (the session env's own HOME / XDG_STATE_HOME when it
 * sets them, else the host login's), mode 700, made by one script that prints its
 * absolute path. The source folder's `auth.json` and `config.toml` are written
 * there with mode 600; their contents travel as values of the script's
 * environment, which goes over the channel's standard input, never in the script
 * text or any command line. A copy is rewritten only when the source file changed
 * since it was last sent (its mtime and size, kept beside the copy), so a token
 * the host's Codex refreshed is not rolled back by every new session; a file gone
 * from the source is removed from the host, as locally. Nothing is copied back.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { RemoteHost } from '../../domain/remote.js';
import { outputTail, runHostScript } from '../core/host-script.js';
import {
  COPIED_FILES,
  type HomeInput,
  type HomeResult,
  missingCredential,
  setupHash,
  sourceHome,
} from './home.js';

/** How long the host may take to prepare the folder. */
const PREPARE_TIMEOUT_MS = 30_000;

/** The script's variables for one copied file: its contents and the stamp of the source version. */
function fileVars(file: (typeof COPIED_FILES)[number]): { content: string; stamp: string } {
  const base = `ORCH_CODEX_${file.replace(/\W/g, '_').toUpperCase()}`;
  return { content: base, stamp: `${base}_STAMP` };
}

/** `put NAME CONTENT_VAR STAMP_VAR`: writes the file when its stamp changed, removes it when the source has none. */
const PUT_FUNCTION = [
  'put() {',
  '  eval "__set=\\${$2+set} __content=\\${$2-} __stamp=\\${$3-}"',
  '  if [ "$__set" != set ]; then rm -f -- "$1" "$1.stamp"; return 0; fi',
  '  if [ -f "$1" ] && [ -f "$1.stamp" ] && [ "$(cat -- "$1.stamp")" = "$__stamp" ]; then chmod 600 -- "$1"; return 0; fi',
  '  printf \'%s\' "$__content" > "$1.tmp.$$"',
  '  chmod 600 -- "$1.tmp.$$"',
  '  mv -f -- "$1.tmp.$$" "$1"',
  '  printf \'%s\' "$__stamp" > "$1.stamp"',
  '}',
];

/** The script that prepares the folder; it names variables only, never their values. */
export function remoteHomeScript(): string {
  return [
    'set -e',
    'umask 077',
    // `codex.home_root`, as written (a leading ~ is the host's HOME), else the state folder.
    'if [ -n "${ORCH_CODEX_ROOT:-}" ]; then',
    '  case $ORCH_CODEX_ROOT in "~") __root=$HOME;; "~/"*) __root=$HOME/${ORCH_CODEX_ROOT#"~/"};; *) __root=$ORCH_CODEX_ROOT;; esac',
    'elif [ -n "${XDG_STATE_HOME:-}" ]; then __root=$XDG_STATE_HOME/orchestrator/codex-homes',
    'elif [ -n "${HOME:-}" ]; then __root=$HOME/.local/state/orchestrator/codex-homes',
    "else echo 'neither XDG_STATE_HOME nor HOME is set on the host' >&2; exit 1; fi",
    '__home=$__root/$ORCH_CODEX_SETUP',
    'mkdir -p -- "$__home"',
    'chmod 700 -- "$__home"',
    'cd -- "$__home"',
    ...PUT_FUNCTION,
    ...COPIED_FILES.map((file) => {
      const v = fileVars(file);
      return `put ${file} ${v.content} ${v.stamp}`;
    }),
    'pwd -P',
  ].join('\n');
}

export interface RemoteHomeInput extends HomeInput {
  host: RemoteHost;
}

/** Prepares the managed CODEX_HOME of this setup on the host; the home is a path there. */
export async function prepareRemoteHome(input: RemoteHomeInput): Promise<HomeResult> {
  const source = sourceHome(input.config, input.env);
  const missing = missingCredential(source, input.config, input.env);
  if (missing !== null) return { ok: false, message: missing };
  const fail = (why: string): HomeResult => ({
    ok: false,
    message: `codex: cannot prepare the managed CODEX_HOME on ${input.host.name}: ${why}`,
  });
  const env: Record<string, string> = { ORCH_CODEX_SETUP: setupHash(source, input) };
  if (input.config.homeRoot !== null) env.ORCH_CODEX_ROOT = input.config.homeRoot;
  for (const name of ['HOME', 'XDG_STATE_HOME'] as const) {
    const value = input.env[name];
    if (value !== undefined && value !== '') env[name] = value;
  }
  for (const file of COPIED_FILES) {
    const from = path.join(source, file);
    let content: string;
    let stamp: string;
    try {
      const st = statSync(from);
      content = readFileSync(from, 'utf8');
      stamp = `${st.mtimeMs}:${st.size}`;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      return fail(`cannot read ${from}: ${error instanceof Error ? error.message : String(error)}`);
    }
    const v = fileVars(file);
    env[v.content] = content;
    env[v.stamp] = stamp;
  }
  const ran = await runHostScript(input.host, remoteHomeScript(), env, PREPARE_TIMEOUT_MS);
  if (!ran.ok) return fail(ran.message);
  const { output } = ran;
  const home = output.split('\n').at(-1)?.trim() ?? '';
  if (!home.startsWith('/')) return fail(`the script printed no absolute path: ${outputTail(output)}`);
  return { ok: true, home, source };
}
