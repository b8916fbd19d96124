/**
 * The real Codex CLI on an SSH worker host: the pinned build, copied into a
 * world-readable directory (the repository may sit where the host's user cannot
 * read it), launched in app-server mode through a real sshd on 127.0.0.1 as a
 * non-root test user, in a workspace that user made, against the fake OpenAI
 * server on 127.0.0.1. The turns' outcome and figures must be exactly those of
 * the local real-CLI test's shell-tool case; the host shares this machine's
 * filesystem and /proc, so "it ran on the host" is proven by ownership (the
 * tool's file and the managed CODEX_HOME belong to the host's user) and by the
 * CLI's own processes (user, working directory, environment).
 *
 * The fake server reaches the CLI as an operator would point it at a provider:
 * a `[model_providers.fake]` table in the local source folder's config.toml,
 * which the adapter writes into the managed home on the host. The provider key
 * travels only in the session env, over the channel's stdin: it must never show
 * in any command line while the turns run, nor in the world-readable wrapper
 * (which carries only non-secret settings). After the session stops nothing of
 * the CLI is left on the host.
 *
 * Without the CLI the file skips and says why, except under CI, which installs it:
 * there it fails. A missing sshd is a failure (the harness throws).
 */
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StartSessionParams } from '../../../src/domain/agent.js';
import { type OpenAIReply, openaiDialect } from '../../support/fake-model/openai.js';
import { FakeModelServer, type RecordedRequest } from '../../support/fake-model/server.js';
import { itHasThePinnedCli } from '../../support/pinned-cli.js';
import { installRealCli, type RemoteCli } from '../../support/remote-agent.js';
import {
  expectNothingLeft,
  expectWatchedCli,
  makeHostWorkspace,
  userProcesses,
  useSshHost,
  watchCommandLines,
} from '../../support/ssh-session.js';
import { testUserName } from '../../support/sshd.js';
import {
  CODEX_BIN,
  CODEX_VERSION,
  FAKE_KEY_ENV,
  realCodexEnv,
  realCodexSkipReason,
  writeFakeProviderHome,
} from './real-cli.js';
import {
  codexAdapter,
  expectShellCaseTurns,
  runTurns,
  SHELL_CASE_PROMPTS,
  shellCaseScript,
} from './support.js';

const skip = realCodexSkipReason();
if (skip !== null) console.warn(`codex over SSH tests skipped: ${skip}`);

/** Used by this file only: every process of it is this file's. */
const USER = testUserName('orchssh-codex');
/** A key no other test uses, so finding it in a command line can only mean this file leaked it. */
const API_KEY = `sk-codex-ssh-${randomBytes(12).toString('hex')}`;
/** The package folder the install script made, and the CLI inside it (what the wrapper `exec`s). */
const INSTALL_DIR = path.resolve(path.dirname(CODEX_BIN), '../..');
const CLI_IN_PACKAGE = path.relative(INSTALL_DIR, CODEX_BIN);
const TEST_TIMEOUT_MS = 180_000;

const ssh = useSshHost(USER, { skip: skip !== null, hosts: { connectTimeoutMs: 10_000 } });
let server: FakeModelServer;
let cli: RemoteCli;
let local: string;
let script: (request: RecordedRequest, index: number) => OpenAIReply = () => ({
  type: 'error',
  status: 500,
  message: 'no script installed',
});
let mark = 0;
const caseRequests = () => server.requests.slice(mark);

beforeAll(async () => {
  if (skip !== null) return;
  // This file's user: its managed homes are this file's too.
  rmSync(hostHomes(), { recursive: true, force: true });
  server = await FakeModelServer.start([openaiDialect((request) => script(request, request.seq - 1 - mark))]);
  local = mkdtempSync(path.join(os.tmpdir(), 'codex-ssh-local-'));
  // The local run's environment, split: the key goes in the session env, the rest in the wrapper,
  // except PATH (the host's login PATH finds node; the wrapper runs the CLI by absolute path) and
  // HOME, fresh as locally but the host user's own.
  const { [FAKE_KEY_ENV]: key, PATH: _localPath, ...settings } = realCodexEnv(path.join(local, 'cli-home'));
  expect(key).toBe('sk-dummy-fake-key');
  chownSync(settings.HOME as string, ssh.user.uid, statSync(ssh.user.home).gid);
  cli = installRealCli(INSTALL_DIR, CLI_IN_PACKAGE, settings);
}, 120_000);

afterAll(async () => {
  await server?.close();
  cli?.remove();
  if (local !== undefined) rmSync(local, { recursive: true, force: true });
});

/**
 * The CLI's processes on the host: the test user's, running the copied package (its native
 * binary, or node running its launcher), not the shell that is about to `exec` the wrapper.
 */
function cliProcesses(): { pid: number; cmdline: string }[] {
  const inPackage = (word: string | undefined) => word?.startsWith(`${cli.dir}/`) === true;
  return userProcesses(USER).filter((p) => {
    const [program, first] = p.cmdline.split(' ');
    return inPackage(program) || (/(^|\/)node$/.test(program ?? '') && inPackage(first));
  });
}

describe.skipIf(skip !== null)(`codex ${CODEX_VERSION} (real CLI) on an SSH host`, () => {
  itHasThePinnedCli(CODEX_BIN);

  it(
    'app-server: a shell tool turn on the host as its user with exact usage, a resumed second turn adding up, the managed home on the host, the key off every command line, nothing left after stop',
    async () => {
      // A workspace the host's user made (and owns).
      const { root, workspace } = await makeHostWorkspace(ssh, 'codex-ws-');
      script = shellCaseScript();
      mark = server.requests.length;
      // The operator's source folder, on this machine: the provider table names the key variable only.
      const source = writeFakeProviderHome(path.join(local, 'source'), server.port);
      expect(cli.wrapperText).not.toContain(API_KEY);

      const params: StartSessionParams = {
        workspacePath: workspace,
        workspaceRoot: root,
        agent: {
          kind: 'codex',
          command: `${cli.command} app-server`,
          turnTimeoutMs: 90_000,
          readTimeoutMs: 60_000,
          stallTimeoutMs: 0,
        },
        options: { sandbox: 'danger-full-access', credentials_home: source },
        resumeSessionId: null,
        env: { [FAKE_KEY_ENV]: API_KEY },
        remote: ssh.host,
      };
      const watch = watchCommandLines(API_KEY, { noting: cliProcesses, vars: [FAKE_KEY_ENV, 'CODEX_HOME'] });
      let scan: Awaited<ReturnType<typeof watch.stop>>;
      let turns: Awaited<ReturnType<typeof runTurns>>['turns'];
      try {
        const started = Date.now();
        ({ turns } = await runTurns(codexAdapter(), params, SHELL_CASE_PROMPTS));
        console.log(`codex real app-server session of two turns over SSH: ${Date.now() - started} ms wall`);
      } finally {
        scan = await watch.stop();
      }
      // What the local real-CLI test asserts, the file included, here in the host's workspace; the
      // key the CLI sent is the one from the session env.
      expectShellCaseTurns(turns, { workspace, requests: caseRequests(), key: API_KEY });
      // The tool ran on the host, as the host's user.
      expect(statSync(path.join(workspace, 'out.txt')).uid).toBe(ssh.user.uid);

      // The managed home is on the host, in its user's ~/.local/state, made by that user.
      const homes = hostHomes();
      const made = readdirNames(homes);
      expect(made).toHaveLength(1);
      const codexHome = path.join(homes, made[0] as string);
      ssh.removeAfter(codexHome);
      expect(statSync(codexHome).uid).toBe(ssh.user.uid);
      expect(statSync(codexHome).mode & 0o777).toBe(0o700);
      const config = path.join(codexHome, 'config.toml');
      expect(statSync(config).uid).toBe(ssh.user.uid);
      expect(statSync(config).mode & 0o777).toBe(0o600);
      expect(readFileSync(config, 'utf8')).toBe(readFileSync(path.join(source, 'config.toml'), 'utf8'));
      // The source has no auth.json (the key is the provider's variable): none on the host either.
      expect(existsSync(path.join(source, 'auth.json'))).toBe(false);
      expect(existsSync(path.join(codexHome, 'auth.json'))).toBe(false);

      // The key was in no command line. The scan saw the CLI running as the host user, in the host
      // workspace, with the key in its environment and the host folder as its CODEX_HOME: the scan
      // was looking at the right thing.
      expectWatchedCli(scan, {
        cwd: workspace,
        env: { [FAKE_KEY_ENV]: API_KEY, CODEX_HOME: codexHome },
        cmdline: /codex/,
      });
      expect(scan.seen.some((p) => / app-server( |$)/.test(p.cmdline))).toBe(true);

      await expectNothingLeft(USER, /codex/i);
    },
    TEST_TIMEOUT_MS,
  );
});

/** Where the host user's managed homes go by default. */
function hostHomes(): string {
  return path.join(ssh.user.home, '.local', 'state', 'orchestrator', 'codex-homes');
}

function readdirNames(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
