/**
 * How the pinned Gemini CLI runs against the fake model server: API-key auth with
 * a dummy key, the API root moved by GOOGLE_GEMINI_BASE_URL, and a settings file
 * in a fresh HOME per run that turns off what would reach Google (usage
 * statistics, telemetry, update checks) and caps the retries.
 *
 * The trap: its default retry budget (ten attempts with backoff) outlasts any test
 * on a 5xx, and its exit code on an API error is the HTTP status modulo 256.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pinnedCliBin } from '../../support/headless-cli.js';

export const GEMINI_PACKAGE = '@google/gemini-cli';
/** The version scripts/install-agent-clis.sh pins. */
export const GEMINI_VERSION = '0.61.0';
export const GEMINI_BIN = pinnedCliBin('gemini', 'gemini');
export const GEMINI_MODEL = 'gemini-2.5-flash';
/** Attempts per model call, the first included. */
export const GEMINI_MAX_ATTEMPTS = 2;

/** The argv of one headless turn; yolo approves every tool call. */
export function geminiArgs(prompt: string): string[] {
  return ['-p', prompt, '--output-format', 'stream-json', '-m', GEMINI_MODEL, '--approval-mode', 'yolo'];
}

/** `~/.gemini/settings.json` for the runs. */
export function geminiSettings(): Record<string, unknown> {
  return {
    security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
    general: {
      enableAutoUpdate: false,
      enableAutoUpdateNotification: false,
      maxAttempts: GEMINI_MAX_ATTEMPTS,
    },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false, logPrompts: false },
    model: { skipNextSpeakerCheck: true },
    tools: { useRipgrep: false },
  };
}

/** The whole environment of one run, after writing the settings into `home`. */
export function geminiEnv(home: string, baseUrl: string): Record<string, string> {
  mkdirSync(path.join(home, '.gemini'), { recursive: true });
  writeFileSync(
    path.join(home, '.gemini', 'settings.json'),
    `${JSON.stringify(geminiSettings(), null, 2)}\n`,
  );
  // Error reports land in the temp folder: keep them inside the run's HOME.
  const tmp = path.join(home, 'tmp');
  mkdirSync(tmp, { recursive: true });
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    TERM: 'dumb',
    LANG: 'C.UTF-8',
    TMPDIR: tmp,
    GEMINI_API_KEY: 'dummy-gemini-key',
    GOOGLE_GEMINI_BASE_URL: baseUrl,
    // Without it the CLI starts itself again in a second node with a bigger heap.
    GEMINI_CLI_NO_RELAUNCH: 'true',
    GEMINI_CLI_TRUST_WORKSPACE: 'true',
  };
}
