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
import {
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
} from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertUsageReporting } from '../../../internal-contracts/agent/usage-reporting.js';
import type { StartSessionParams } from '../../../src/domain/agent.js';
import { SshHosts } from '../../../src/ssh/index.js';
import { type OpenAIReply, openaiDialect, shellThenAnswer } from '../../support/fake-model/openai.js';
import { FakeModelServer, type RecordedRequest } from '../../support/fake-model/server.js';
import { installRealCli, type RemoteCli } from '../../support/remote-agent.js';
import {
  allCommandLines,
  ensureTestUser,
  killUserProcesses,
  pollUntil,
  remoteProcesses,
  type Sshd,
  startSshd,
  type TestUser,
} from '../../support/sshd.js';
import {
  CODEX_BIN,
  CODEX_VERSION,
  FAKE_KEY_ENV,
  realCodexEnv,
  realCodexSkipReason,
  writeFakeProviderHome,
} from './real-cli.js';
import { codexAdapter, figure, runTurns, toolsOf, verdict } from './support.js';

const skip = realCodexSkipReason();
if (skip !== null) console.warn(`codex over SSH tests skipped: ${skip}`);

/** Used by this file only: every process of it is this file's. */
const USER = 'orchssh-codex';
/** A key no other test uses, so finding it in a command line can only mean this file leaked it. */
const API_KEY = `sk-codex-ssh-${randomBytes(12).toString('hex')}`;
/** The package folder the install script made, and the CLI inside it (what the wrapper `exec`s). */
const INSTALL_DIR = path.resolve(path.dirname(CODEX_BIN), '../..');
const CLI_IN_PACKAGE = path.relative(INSTALL_DIR, CODEX_BIN);
const PROMPT = 'Write hi to out.txt using the shell';
const TEST_TIMEOUT_MS = 180_000;
const LEFTOVER_DEADLINE_MS = 15_000;

let user: TestUser;
let sshd: Sshd;
let hosts: SshHosts;
let server: FakeModelServer;
let cli: RemoteCli;
let cliHome: string;
let local: string;
let knownHostsDir: string;
const cleanups: string[] = [];
let script: (request: RecordedRequest, index: number) => OpenAIReply = () => ({
  type: 'error',
  status: 500,
  message: 'no script installed',
});
let mark = 0;
const caseRequests = () => server.requests.slice(mark);

beforeAll(async () => {
  if (skip !== null) return;
  user = ensureTestUser(USER);
  killUserProcesses(USER);
  // This file's user: its managed homes are this file's too.
  rmSync(hostHomes(), { recursive: true, force: true });
  sshd = await startSshd({ user: USER });
  knownHostsDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'codex-ssh-known-'));
  hosts = new SshHosts({
    strictHostKeyChecking: 'accept-new',
    knownHostsFile: path.join(knownHostsDir, 'known_hosts'),
    identityFile: sshd.clientKeyPath,
    agentSocket: null,
    defaultUser: USER,
    connectTimeoutMs: 10_000,
  });
  server = await FakeModelServer.start([openaiDialect((request) => script(request, request.seq - 1 - mark))]);
  local = mkdtempSync(path.join(os.tmpdir(), 'codex-ssh-local-'));
  // The local run's environment, split: the key goes in the session env, the rest in the wrapper,
  // except PATH (the host's login PATH finds node; the wrapper runs the CLI by absolute path) and
  // HOME, fresh as locally but the host user's own.
  const { [FAKE_KEY_ENV]: key, PATH: _localPath, ...settings } = realCodexEnv(path.join(local, 'cli-home'));
  expect(key).toBe('sk-dummy-fake-key');
  cliHome = settings.HOME as string;
  chownSync(cliHome, user.uid, statSync(user.home).gid);
  cli = installRealCli(INSTALL_DIR, CLI_IN_PACKAGE, settings);
}, 120_000);

afterAll(async () => {
  await hosts?.close();
  await sshd?.stop();
  await server?.close();
  if (skip === null) killUserProcesses(USER);
  cli?.remove();
  for (const dir of [local, knownHostsDir, ...cleanups]) {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
});

/** A workspace root in the user's home, and a workspace in it, both made on the host by its user. */
async function hostWorkspace(): Promise<{ root: string; workspace: string }> {
  const root = path.join(user.home, `codex-ws-${randomBytes(6).toString('hex')}`);
  cleanups.push(root);
  const ran = await hosts.host(sshd.spec).run({
    script: 'mkdir -p -- "$WS" && cd -- "$WS" && pwd -P',
    cwd: null,
    env: { WS: path.join(root, 'E-1') },
    timeoutMs: 30_000,
  });
  if (!ran.ok) throw new Error(`mkdir on the host failed: ${ran.message}`);
  expect(ran.result, ran.result.output).toMatchObject({ exitCode: 0, timedOut: false });
  const workspace = ran.result.output.trim();
  expect(workspace).toBe(path.join(realpathSync(root), 'E-1'));
  return { root: path.dirname(workspace), workspace };
}

/**
 * The CLI's processes on the host: the test user's, running the copied package (its native
 * binary, or node running its launcher), not the shell that is about to `exec` the wrapper.
 */
function cliProcesses(): { pid: number; cmdline: string }[] {
  const inPackage = (word: string | undefined) => word?.startsWith(`${cli.dir}/`) === true;
  return remoteProcesses(USER).filter((p) => {
    const [program, first] = p.cmdline.split(' ');
    return inPackage(program) || (/(^|\/)node$/.test(program ?? '') && inPackage(first));
  });
}

/** The user's processes that mention codex, except sshd's own session processes. */
function codexLeftovers(): { pid: number; cmdline: string }[] {
  return remoteProcesses(USER).filter((p) => /codex/i.test(p.cmdline) && !/^sshd[:\s]/.test(p.cmdline));
}

interface SeenCli {
  pid: number;
  cmdline: string;
  cwd: string | null;
  /** The key was in the process's environment. */
  keyInEnviron: boolean;
  codexHome: string | null;
}

/** Scans every command line for the key, and notes each CLI process of the host user, until stopped. */
function startScanner(): { stop(): Promise<{ leaks: string[]; seen: SeenCli[]; scans: number }> } {
  const leaks: string[] = [];
  const seen = new Map<number, SeenCli>();
  let scans = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const p of allCommandLines()) if (p.cmdline.includes(API_KEY)) leaks.push(p.cmdline);
      for (const p of cliProcesses()) {
        if (seen.has(p.pid)) continue;
        try {
          const environ = readFileSync(`/proc/${p.pid}/environ`, 'utf8').split('\0');
          seen.set(p.pid, {
            pid: p.pid,
            cmdline: p.cmdline,
            cwd: readlinkSync(`/proc/${p.pid}/cwd`),
            keyInEnviron: environ.includes(`${FAKE_KEY_ENV}=${API_KEY}`),
            codexHome: environ.find((v) => v.startsWith('CODEX_HOME='))?.slice('CODEX_HOME='.length) ?? null,
          });
        } catch {
          // Gone while reading; the next one is read next time.
        }
      }
      scans += 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { leaks, seen: [...seen.values()], scans };
    },
  };
}

describe.skipIf(skip !== null)(`codex ${CODEX_VERSION} (real CLI) on an SSH host`, () => {
  it('the pinned CLI is installed (CI runs scripts/install-agent-clis.sh)', () => {
    expect(existsSync(CODEX_BIN), `${CODEX_BIN} is missing`).toBe(true);
  });

  it(
    'app-server: a shell tool turn on the host as its user with exact usage, a resumed second turn adding up, the managed home on the host, the key off every command line, nothing left after stop',
    async () => {
      const { root, workspace } = await hostWorkspace();
      expect(statSync(workspace).uid).toBe(user.uid);
      script = (request, index) =>
        index < 2
          ? shellThenAnswer('echo hi > out.txt', 'Done: wrote hi to out.txt.')(request)
          : { type: 'message', text: 'Still done.' };
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
        remote: hosts.host(sshd.spec),
      };
      const scanner = startScanner();
      let scan: Awaited<ReturnType<ReturnType<typeof startScanner>['stop']>>;
      let turns: Awaited<ReturnType<typeof runTurns>>['turns'];
      try {
        const started = Date.now();
        ({ turns } = await runTurns(codexAdapter(), params, [PROMPT, 'Is it still there?']));
        console.log(`codex real app-server session of two turns over SSH: ${Date.now() - started} ms wall`);
      } finally {
        scan = await scanner.stop();
      }
      const [first, second] = turns as [(typeof turns)[0], (typeof turns)[0]];
      expect(verdict(first), first.outcome.error?.detail).toBe('turn_completed/none');
      // The tool ran on the host, as the host's user, in the host's workspace.
      const out = path.join(workspace, 'out.txt');
      expect(readFileSync(out, 'utf8')).toBe('hi\n');
      expect(statSync(out).uid).toBe(user.uid);
      expect(toolsOf(first)).toEqual([['exec_command', 'shell', 'echo hi > out.txt', false]]);
      // Two calls of 123 in (7 cached) / 45 out: the local real-CLI figures.
      expect(figure(first)).toEqual([246, 90, 14]);
      expect(first.outcome.result).toMatchObject({
        usageMeasured: true,
        usageProvenance: 'reported',
        spendUnaccounted: false,
        coversSession: true,
        reportedAmounts: [],
      });
      expect(verdict(second)).toBe('turn_completed/none');
      expect(first.outcome.result.sessionId).not.toBe('');
      expect(second.outcome.result.sessionId).toBe(first.outcome.result.sessionId);
      expect(figure(second)).toEqual([369, 135, 21]);
      expect(second.outcome.result.spendUnaccounted).toBe(false);
      assertUsageReporting('codex', turns);
      const requests = caseRequests();
      expect(requests).toHaveLength(3);
      expect(requests.every((r) => r.path === '/v1/responses')).toBe(true);
      // The key the CLI sent is the one from the session env.
      expect(requests.every((r) => r.headers.authorization === `Bearer ${API_KEY}`)).toBe(true);
      const inputs = requests.map((r) => ((r.body as { input?: unknown[] }).input ?? []).length);
      expect(inputs[2]).toBeGreaterThan(inputs[0] ?? 0);

      // The managed home is on the host, in its user's ~/.local/state, made by that user.
      const homes = hostHomes();
      const made = readdirNames(homes);
      expect(made).toHaveLength(1);
      const codexHome = path.join(homes, made[0] as string);
      cleanups.push(codexHome);
      expect(statSync(codexHome).uid).toBe(user.uid);
      expect(statSync(codexHome).mode & 0o777).toBe(0o700);
      const config = path.join(codexHome, 'config.toml');
      expect(statSync(config).uid).toBe(user.uid);
      expect(statSync(config).mode & 0o777).toBe(0o600);
      expect(readFileSync(config, 'utf8')).toBe(readFileSync(path.join(source, 'config.toml'), 'utf8'));
      // The source has no auth.json (the key is the provider's variable): none on the host either.
      expect(existsSync(path.join(source, 'auth.json'))).toBe(false);
      expect(existsSync(path.join(codexHome, 'auth.json'))).toBe(false);

      expect(scan.leaks, 'the API key appeared in a command line').toEqual([]);
      // The scan saw the CLI running as the host user, in the host workspace, with the key in its
      // environment and the host folder as its CODEX_HOME: the scan was looking at the right thing.
      expect(scan.seen.length, `CLI processes seen in ${scan.scans} scans`).toBeGreaterThan(0);
      expect(scan.seen.some((p) => / app-server( |$)/.test(p.cmdline))).toBe(true);
      for (const p of scan.seen) {
        expect(p, JSON.stringify(scan.seen)).toMatchObject({ cwd: workspace, keyInEnviron: true, codexHome });
        expect(p.cmdline).toMatch(/codex/);
      }

      const gone = await pollUntil(() => codexLeftovers().length === 0, LEFTOVER_DEADLINE_MS);
      expect(gone, `left on the host: ${JSON.stringify(codexLeftovers())}`).toBe(true);
    },
    TEST_TIMEOUT_MS,
  );
});

/** Where the host user's managed homes go by default. */
function hostHomes(): string {
  return path.join(user.home, '.local', 'state', 'orchestrator', 'codex-homes');
}

function readdirNames(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
