/**
 * The real Codex CLI in tests: the pinned build that scripts/install-agent-clis.sh
 * puts in the git-ignored cache, pointed at the fake model server through a
 * `[model_providers.fake]` table (Codex ignores OPENAI_BASE_URL for its built-in
 * provider), with every feature that would reach the network switched off, a
 * fresh HOME per run and a dummy key. Nothing leaves 127.0.0.1.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/** The pinned version the install script installs. */
export const CODEX_VERSION = '0.171.0';
/** Where the install script puts the CLI. */
export const CODEX_BIN = path.join(
  process.env.AGENT_CLIS_DIR ?? path.join(ROOT, '.cache/agent-clis'),
  'codex/node_modules/.bin/codex',
);

/** Why the real-CLI tests skip, or null when they run. Absent in CI is a failure, not a skip. */
export function realCodexSkipReason(): string | null {
  if (existsSync(CODEX_BIN)) return null;
  const reason = `the Codex CLI is not installed at ${CODEX_BIN} (run scripts/install-agent-clis.sh codex)`;
  if (process.env.CI !== undefined && process.env.CI !== '') {
    throw new Error(`${reason}; CI must run the real-CLI tests`);
  }
  return reason;
}

/** The variable the fake provider reads its key from. */
export const FAKE_KEY_ENV = 'FAKE_OPENAI_API_KEY';

/** Writes a source CODEX_HOME whose config points Codex at the fake server on `port`; returns it. */
export function writeFakeProviderHome(dir: string, port: number): string {
  mkdirSync(dir, { recursive: true });
  const toml = [
    'model = "gpt-5.5"',
    'model_provider = "fake"',
    'check_for_update_on_startup = false',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[feedback]',
    'enabled = false',
    '',
    '[features]',
    'plugins = false',
    'remote_plugin = false',
    'plugin_sharing = false',
    'apps = false',
    'in_app_updates = false',
    'browser_use = false',
    'computer_use = false',
    '',
    '[model_providers.fake]',
    'name = "Fake"',
    `base_url = "http://127.0.0.1:${port}/v1"`,
    `env_key = "${FAKE_KEY_ENV}"`,
    'wire_api = "responses"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
  ].join('\n');
  writeFileSync(path.join(dir, 'config.toml'), toml);
  return dir;
}

/** The environment of one real run: a fresh HOME, the dummy key, nothing inherited. */
export function realCodexEnv(home: string): Record<string, string> {
  mkdirSync(home, { recursive: true });
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    TERM: 'dumb',
    LANG: 'C.UTF-8',
    RUST_LOG: 'error',
    [FAKE_KEY_ENV]: 'sk-dummy-fake-key',
  };
}
