/**
 * The codex sandbox probe. Without a CLI: the arguments carry the configured mode after the
 * block's overrides, the fixes name codex.home_root when the home sits in the temporary
 * folder, codex.home_root places managed homes (here and on a host), and a stand-in codex
 * shows that an exit 0 is usable, an unknown `sandbox` subcommand or a missing program is
 * unchecked, and danger-full-access runs nothing. With the pinned CLI: a managed home under
 * the temporary folder is unusable with Codex's own words (when a system bubblewrap without
 * --argv0 makes the refusal bite), and the same setup with codex.home_root outside it is usable.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type CodexConfig, codexBlock } from '../../../src/agent/codex/config.js';
import { managedRoot, prepareManagedHome } from '../../../src/agent/codex/home.js';
import { prepareRemoteHome } from '../../../src/agent/codex/remote-home.js';
import {
  probeCodexSandbox,
  READ_PROBE,
  sandboxFixes,
  sandboxProbeArgs,
  WRITE_PROBE,
} from '../../../src/agent/codex/sandbox.js';
import { LocalRemoteHost } from '../../support/local-remote-host.js';
import { CODEX_BIN, realCodexSkipReason } from './real-cli.js';
import { homeRootOutsideTemp, oldBwrapSkipReason } from './sandbox-support.js';
import { codexTestRoot } from './support.js';

const t = codexTestRoot('codex-sandbox-');
const made: string[] = [];
afterAll(() => {
  t.cleanup();
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function config(block: Record<string, unknown> = {}): CodexConfig {
  const parsed = codexBlock.parse(block);
  if (!parsed.ok) throw new Error(parsed.issues.map((i) => i.message).join('; '));
  return parsed.config;
}

/** A stand-in `codex` that records its arguments and answers as `body` says. */
function fakeCodex(body: string): { bin: string; argsFile: string } {
  const dir = path.join(t.root, `fake-${Math.random().toString(36).slice(2)}`);
  mkdirSync(dir);
  const argsFile = path.join(dir, 'args');
  const bin = path.join(dir, 'codex');
  writeFileSync(bin, `#!/bin/sh\nprintf '%s\\n' "$CODEX_HOME" "$PWD" "$@" > '${argsFile}'\n${body}\n`);
  chmodSync(bin, 0o755);
  return { bin, argsFile };
}

describe('codex sandbox probe: arguments, fixes, home location', () => {
  it('runs `sandbox` with the block overrides, then the configured mode, then a command that writes in the workspace', () => {
    expect(sandboxProbeArgs(config({ config: { 'sandbox_workspace_write.network_access': true } }))).toEqual([
      'sandbox',
      '-c',
      'sandbox_workspace_write.network_access=true',
      '-c',
      'sandbox_mode="workspace-write"',
      '--',
      'sh',
      '-c',
      WRITE_PROBE,
    ]);
    // A read-only sandbox may write nowhere: it only has to run something.
    expect(sandboxProbeArgs(config({ sandbox: 'read-only' })).at(-1)).toBe(READ_PROBE);
  });

  it('names codex.home_root first when the managed home is in the temporary folder, and danger-full-access always', () => {
    const [first, second] = sandboxFixes('/tmp/x/codex-homes/abc', { TMPDIR: '/tmp' }, '', false);
    expect(first).toBe(
      'set codex.home_root to a folder outside the temporary folder /tmp (the managed CODEX_HOME is ' +
        '/tmp/x/codex-homes/abc; XDG_STATE_HOME or HOME of the service outside it works too)',
    );
    // A home_root inside the temporary folder outranks the state folder: only moving it helps.
    expect(sandboxFixes('/tmp/r/abc', {}, '', true)[0]).not.toContain('XDG_STATE_HOME');
    expect(second).toContain('codex.sandbox: danger-full-access');
    // Codex's refusal names the cause even when TMPDIR is not in the agent environment.
    expect(
      sandboxFixes('/var/h', {}, 'Refusing to create helper binaries under temporary dir', false)[0],
    ).toContain('codex.home_root');
    expect(sandboxFixes('/var/h', {}, 'bwrap: setting up uid map: Permission denied', false)[0]).toContain(
      'make `codex sandbox` work',
    );
  });

  it('codex.home_root places the managed homes, ~ meaning the agent HOME', () => {
    expect(managedRoot({ HOME: '/home/op' }, '~/codex-homes')).toBe('/home/op/codex-homes');
    expect(managedRoot({ HOME: '/home/op' }, '/srv/codex')).toBe('/srv/codex');
    expect(managedRoot({ HOME: '/home/op' })).toBe('/home/op/.local/state/orchestrator/codex-homes');
    const root = path.join(t.root, 'homes-here');
    const home = prepareManagedHome({
      config: config({ home_root: root }),
      env: { HOME: t.home(), CODEX_API_KEY: 'k' },
      command: null,
    });
    expect(home.ok && path.dirname(home.home)).toBe(root);
  });

  it('codex.home_root places the managed home on an SSH host too, ~ being the host HOME', async () => {
    const hostHome = t.home();
    const host = new LocalRemoteHost({
      loginDir: hostHome,
      loginEnv: { HOME: hostHome, PATH: process.env.PATH ?? '' },
    });
    const home = await prepareRemoteHome({
      config: config({ home_root: '~/codex-homes' }),
      env: { CODEX_API_KEY: 'k' },
      command: null,
      host,
    });
    expect(home.ok && path.dirname(home.home)).toBe(path.join(hostHome, 'codex-homes'));
  });
});

describe('codex sandbox probe with a stand-in codex', () => {
  const env = () => ({ PATH: process.env.PATH ?? '', HOME: t.home(), CODEX_API_KEY: 'k' });

  it('an exit 0 is usable; it ran in the workspace with the managed home, after the command own leading words', async () => {
    const { bin, argsFile } = fakeCodex('exit 0');
    const ws = t.workspace();
    const found = await probeCodexSandbox({
      command: `${bin} --profile ci app-server`,
      options: {},
      env: env(),
      workspacePath: ws,
      timeoutMs: 10_000,
    });
    expect(found).toEqual({
      status: 'usable',
      detail: 'codex.sandbox workspace-write can run a command that writes a file in the workspace',
    });
    const [home, cwd, ...args] = readFileSync(argsFile, 'utf8').trimEnd().split('\n');
    expect(home).toMatch(/\/\.local\/state\/orchestrator\/codex-homes\/[0-9a-f]{16}$/);
    expect(cwd).toBe(ws);
    expect(args.slice(0, 3)).toEqual(['--profile', 'ci', 'sandbox']);
  });

  it('a failing sandbox is unusable with what the CLI printed', async () => {
    const { bin } = fakeCodex("echo 'bwrap: setting up uid map: Permission denied' >&2; exit 1");
    const found = await probeCodexSandbox({
      command: bin,
      options: {},
      env: env(),
      workspacePath: t.workspace(),
      timeoutMs: 10_000,
    });
    expect(found).toMatchObject({
      status: 'unusable',
      cause: 'bwrap: setting up uid map: Permission denied',
    });
  });

  it('a build without `codex sandbox`, or a program not on PATH, is unchecked, not a pass', async () => {
    const { bin } = fakeCodex('echo "error: unrecognized subcommand \'sandbox\'" >&2; exit 2');
    const base = { options: {}, env: env(), workspacePath: t.workspace(), timeoutMs: 10_000 };
    expect(await probeCodexSandbox({ ...base, command: bin })).toMatchObject({ status: 'unchecked' });
    expect(await probeCodexSandbox({ ...base, command: 'no-such-codex-here app-server' })).toEqual({
      status: 'unchecked',
      reason: 'no-such-codex-here is not on PATH',
    });
  });

  it('danger-full-access confines nothing, so nothing is run', async () => {
    const { bin, argsFile } = fakeCodex('exit 1');
    const found = await probeCodexSandbox({
      command: bin,
      options: { sandbox: 'danger-full-access' },
      env: env(),
      workspacePath: t.workspace(),
      timeoutMs: 10_000,
    });
    expect(found.status).toBe('off');
    expect(existsSync(argsFile)).toBe(false);
  });
});

const cliSkip = realCodexSkipReason();
const bwrapSkip = cliSkip ?? oldBwrapSkipReason();
if (cliSkip !== null) console.warn(`codex sandbox real-CLI tests skipped: ${cliSkip}`);
else if (bwrapSkip !== null) console.warn(`codex sandbox failure cases skipped: ${bwrapSkip}`);

describe.skipIf(cliSkip !== null)('codex sandbox probe with the pinned CLI', () => {
  /** HOME in the temporary folder, as on many CI runners; no XDG_STATE_HOME, no TMPDIR. */
  const tempHomeEnv = () => ({ PATH: process.env.PATH ?? '', HOME: t.home(), OPENAI_API_KEY: 'sk-dummy' });

  it.skipIf(bwrapSkip !== null)(
    'a managed home under the temporary folder is unusable, in Codex own words, naming codex.home_root',
    async () => {
      const found = await probeCodexSandbox({
        command: `${CODEX_BIN} app-server`,
        options: {},
        env: tempHomeEnv(),
        workspacePath: t.workspace(),
        timeoutMs: 30_000,
      });
      expect(found.status).toBe('unusable');
      if (found.status !== 'unusable') return;
      expect(found.cause).toContain('Refusing to create helper binaries under temporary dir "/tmp"');
      expect(found.cause).toContain('bwrap: execvp codex-linux-sandbox: No such file or directory');
      expect(found.summary).toContain('`codex sandbox` exited 1');
      expect(found.fixes[0]).toContain('codex.home_root');
      expect(found.fixes[1]).toContain('codex.sandbox: danger-full-access');
    },
    60_000,
  );

  it.each(['workspace-write', 'read-only'])(
    'with codex.home_root outside the temporary folder, %s is usable and leaves the workspace as it was',
    async (sandbox) => {
      const homeRoot = homeRootOutsideTemp('probe');
      made.push(homeRoot);
      const ws = t.workspace();
      const found = await probeCodexSandbox({
        command: `${CODEX_BIN} app-server`,
        options: { sandbox, home_root: homeRoot },
        env: tempHomeEnv(),
        workspacePath: ws,
        timeoutMs: 30_000,
      });
      expect(found.status, JSON.stringify(found)).toBe('usable');
      expect(readdirSync(ws)).toEqual([]);
      expect(readdirSync(homeRoot)).toHaveLength(1);
    },
    60_000,
  );
});
