/**
 * How the pinned OpenCode CLI runs against the fake model server: a custom
 * provider on the bundled OpenAI-compatible SDK, given inline through
 * OPENCODE_CONFIG_CONTENT, with every XDG folder inside a fresh HOME per run.
 *
 * The trap: on any start OpenCode runs `npm install @opencode-ai/plugin` in its
 * config folder in the background, which reaches the public registry. The
 * DISABLE switches do not stop it; a config folder that already has the
 * dependency in its package-lock.json and a node_modules folder does.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pinnedCliBin } from '../../support/headless-cli.js';

export const OPENCODE_PACKAGE = 'opencode-ai';
/** The version scripts/install-agent-clis.sh pins. */
export const OPENCODE_VERSION = '1.18.33';
export const OPENCODE_BIN = pinnedCliBin('opencode', 'opencode');
/** `<provider>/<model>` as OpenCode names the fake model. */
export const OPENCODE_MODEL = 'fake/fake-model';

/**
 * The argv of one headless turn; the prompt goes to stdin, which is then closed.
 * As an argument it would reach the model changed: OpenCode joins its positional
 * arguments with spaces and wraps any that holds a space in literal double quotes
 * (`--` does not stop it). Read from stdin it arrives byte for byte.
 */
export function opencodeArgs(): string[] {
  return ['run', '--format', 'json', '-m', OPENCODE_MODEL];
}

/** The inline config: the fake provider, its one model, and a policy that runs tools without asking. */
export function opencodeConfig(baseUrl: string): Record<string, unknown> {
  return {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    snapshot: false,
    model: OPENCODE_MODEL,
    permission: { bash: 'allow', edit: 'allow' },
    provider: {
      fake: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Fake',
        options: { baseURL: `${baseUrl}/v1`, apiKey: 'sk-dummy-fake-key' },
        models: {
          'fake-model': { name: 'Fake Model', tool_call: true, limit: { context: 200_000, output: 8_192 } },
        },
      },
    },
  };
}

/**
 * The whole environment of one run, after seeding `home`'s config folder so the
 * background plugin install finds nothing to do.
 */
export function opencodeEnv(home: string, baseUrl: string): Record<string, string> {
  const config = path.join(home, '.config');
  seedPluginInstall(path.join(config, 'opencode'));
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    TERM: 'dumb',
    LANG: 'C.UTF-8',
    XDG_CONFIG_HOME: config,
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_STATE_HOME: path.join(home, '.local', 'state'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    OPENCODE_CONFIG_CONTENT: JSON.stringify(opencodeConfig(baseUrl)),
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
    OPENCODE_DISABLE_SHARE: '1',
    OPENCODE_DISABLE_CLAUDE_CODE: '1',
    OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
  };
}

/** Marks the plugin dependency as installed in `dir`, OpenCode's config folder. */
function seedPluginInstall(dir: string): void {
  mkdirSync(path.join(dir, 'node_modules'), { recursive: true });
  const dependencies = { '@opencode-ai/plugin': '*' };
  writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify({ dependencies })}\n`);
  const lock = { lockfileVersion: 3, packages: { '': { dependencies } } };
  writeFileSync(path.join(dir, 'package-lock.json'), `${JSON.stringify(lock)}\n`);
}
