/**
 * How the pinned GitHub Copilot CLI runs against the fake model server with no
 * GitHub login: bring-your-own-key mode (`COPILOT_PROVIDER_*`) on the OpenAI Chat
 * Completions wire, offline mode so nothing but the provider is contacted, a fresh
 * COPILOT_HOME per run, and a shared XDG cache that the install script warmed
 * (Copilot unpacks about 235 MB there on its first start).
 *
 * The trap: in this mode stdout carries no token counts at all. The per-call usage
 * is written to the session's events file under COPILOT_HOME, named by the
 * session id that only the closing `result` line gives.
 */
import path from 'node:path';
import { AGENT_CLIS_DIR, pinnedCliBin } from '../../support/headless-cli.js';

export const COPILOT_PACKAGE = '@github/copilot';
/** The version scripts/install-agent-clis.sh pins. */
export const COPILOT_VERSION = '1.0.102';
export const COPILOT_BIN = pinnedCliBin('copilot', 'copilot');
/** The XDG cache the install script warmed; shared by every run. */
export const COPILOT_XDG_CACHE = path.join(AGENT_CLIS_DIR, 'copilot', '.xdg-cache');
/** Any model name: the provider is ours; Copilot sends it through. */
export const COPILOT_MODEL = 'gpt-4.1';

/** The argv of one headless turn. `--allow-all-tools` is required with `-p`. */
export function copilotArgs(prompt: string): string[] {
  return [
    '-p',
    prompt,
    '--output-format',
    'json',
    '--allow-all-tools',
    '--no-auto-update',
    '--disable-client-telemetry',
  ];
}

/** The whole environment of one run: `home` fresh per run, `baseUrl` the fake server's root. */
export function copilotEnv(home: string, baseUrl: string): Record<string, string> {
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    TERM: 'dumb',
    LANG: 'C.UTF-8',
    XDG_CACHE_HOME: COPILOT_XDG_CACHE,
    COPILOT_HOME: copilotHome(home),
    COPILOT_OFFLINE: 'true',
    COPILOT_AUTO_UPDATE: 'false',
    COPILOT_PROVIDER_TYPE: 'openai',
    COPILOT_PROVIDER_WIRE_API: 'completions',
    COPILOT_PROVIDER_BASE_URL: `${baseUrl}/v1`,
    COPILOT_PROVIDER_API_KEY: 'sk-dummy-fake-key',
    COPILOT_MODEL,
  };
}

/** Copilot's state folder inside a run's HOME. */
export function copilotHome(home: string): string {
  return path.join(home, '.copilot');
}

/** The events file Copilot keeps for session `sessionId`: the only place BYOK usage shows. */
export function copilotSessionEvents(home: string, sessionId: string): string {
  return path.join(copilotHome(home), 'session-state', sessionId, 'events.jsonl');
}
