/**
 * The real Claude Code CLI on an SSH worker host: the pinned build, copied into a
 * world-readable directory (the repository may sit where the host's user cannot
 * read it), launched through a real sshd on 127.0.0.1 as a non-root test user, in
 * a workspace that user made, against the fake model server on 127.0.0.1. The
 * turn's outcome and figures must be exactly those of the local real-CLI test for
 * the same script; the host shares this machine's filesystem and /proc, so "it ran
 * on the host" is proven by ownership (the tool's file belongs to the host's user)
 * and by the CLI's own process (its user, its working directory, its environment).
 *
 * The API key travels only in the session env, which goes over the channel's
 * stdin: it must never show in any command line while the turn runs, nor in the
 * world-readable wrapper, which carries only the non-secret settings of
 * `realCliEnv`. After the session stops nothing of the CLI is left on the host.
 *
 * Without the CLI the file skips and says why, except under CI, which installs it:
 * there it fails. A missing sshd is a failure (the harness throws).
 */
import { randomBytes } from 'node:crypto';
import { chownSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import '../../../src/agent/kinds.js';
import { type AnthropicReply, anthropicDialect } from '../../support/fake-model/anthropic.js';
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
  withoutForks,
} from '../../support/ssh-session.js';
import { testUserName } from '../../support/sshd.js';
import {
  adapterOf,
  CLAUDE_CLI,
  CLAUDE_INSTALL_DIR,
  expectShellCaseFirstTurn,
  expectShellCaseSecondTurn,
  REAL_CLI_MODEL,
  realCliEnv,
  realCliPlan,
  runTurn,
  SHELL_CASE_PROMPTS,
  shellCaseScript,
  startParams,
} from './support.js';

const plan = realCliPlan();
if (!plan.run) console.warn(`claude-code over SSH tests skipped: ${plan.reason}`);

/** Used by this file only: every process of it is this file's. */
const USER = testUserName('orchssh-claude');
/** A key no other test uses, so finding it in a command line can only mean this file leaked it. */
const API_KEY = `sk-ant-ssh-${randomBytes(12).toString('hex')}`;
/** The CLI inside its package folder (what the wrapper `exec`s). */
const CLI_IN_PACKAGE = path.relative(CLAUDE_INSTALL_DIR, CLAUDE_CLI);
const TEST_TIMEOUT_MS = 180_000;

const ssh = useSshHost(USER, { skip: !plan.run, hosts: { connectTimeoutMs: 10_000 } });
let server: FakeModelServer;
let cli: RemoteCli;
/** The reply script of the running test (the server outlives tests: its URL is in the wrapper). */
let script: (request: RecordedRequest, index: number) => AnthropicReply = () => ({
  type: 'error',
  status: 500,
  errorType: 'api_error',
  message: 'no script set',
});
let scriptStart = 0;

/** Starts the reply script of one test, its index counted from 0 again. */
function useScript(next: (request: RecordedRequest, index: number) => AnthropicReply): void {
  script = next;
  scriptStart = server.requestsTo('anthropic').length;
}

/** The requests of the running test's script. */
const scriptRequests = () => server.requestsTo('anthropic').slice(scriptStart);

beforeAll(async () => {
  if (!plan.run) return;
  let served = 0;
  server = await FakeModelServer.start([
    anthropicDialect((request) => {
      const index = served++ - scriptStart;
      return script(request, index);
    }),
  ]);
  // The local run's environment, split: the key goes in the session env, the rest in the wrapper,
  // except PATH (the host's login PATH; the wrapper runs the CLI by absolute path) and HOME, fresh
  // as locally but the host user's own.
  const {
    ANTHROPIC_API_KEY,
    PATH: _localPath,
    ...settings
  } = realCliEnv(server.url, {
    ANTHROPIC_API_KEY: API_KEY,
  });
  expect(ANTHROPIC_API_KEY).toBe(API_KEY);
  chownSync(settings.HOME as string, ssh.user.uid, statSync(ssh.user.home).gid);
  cli = installRealCli(CLAUDE_INSTALL_DIR, CLI_IN_PACKAGE, settings);
}, 120_000);

afterAll(async () => {
  await server?.close();
  cli?.remove();
});

/** The CLI's processes on the host: the test user's, running the copied package. */
function cliProcesses(): { pid: number; cmdline: string }[] {
  return userProcesses(USER).filter((p) => p.cmdline.startsWith(`${cli.dir}/`));
}

describe.skipIf(!plan.run)('claude-code with the real CLI on an SSH host', () => {
  itHasThePinnedCli(CLAUDE_CLI);

  it(
    "a shell tool call writes the file on the host as its user, figures are exactly the fake's, turn 2 resumes adding up, the key stays off every command line and nothing is left after stop",
    async () => {
      // A workspace the host's user made (and owns).
      const { root, workspace } = await makeHostWorkspace(ssh, 'claude-ws-');
      useScript(shellCaseScript(workspace));
      // The wrapper every host user can read holds the settings, never the key.
      expect(cli.wrapperText).toContain(`export ANTHROPIC_BASE_URL='${server.url}'`);
      expect(cli.wrapperText).not.toContain(API_KEY);

      const adapter = adapterOf();
      const watch = watchCommandLines(API_KEY, { noting: cliProcesses, vars: ['ANTHROPIC_API_KEY'] });
      const session = await adapter.startSession({
        ...startParams({
          ws: { root, workspace: () => workspace },
          command: cli.command,
          options: { model: REAL_CLI_MODEL },
          env: { ANTHROPIC_API_KEY: API_KEY },
          agent: { stallTimeoutMs: 0, turnTimeoutMs: 120_000 },
          workspacePath: workspace,
        }),
        remote: ssh.host,
      });
      let stopped = false;
      try {
        const started = Date.now();
        const first = await runTurn(adapter, session, SHELL_CASE_PROMPTS[0]);
        console.log(`claude-code real turn with one tool call over SSH: ${Date.now() - started} ms wall`);
        // What the local real-CLI test asserts, the file included, here in the host's workspace.
        const sessionId = expectShellCaseFirstTurn(first, workspace, scriptRequests());
        // The tool ran on the host, as the host's user.
        expect(statSync(path.join(workspace, 'out.txt')).uid).toBe(ssh.user.uid);
        const requests = scriptRequests();
        // The key the CLI sent is the one from the session env.
        expect(requests[0]?.headers['x-api-key']).toBe(API_KEY);
        // The CLI told the model it works in the host's workspace.
        expect(requests[0]?.bodyText).toContain(workspace);

        const second = await runTurn(adapter, session, SHELL_CASE_PROMPTS[1]);
        // The resumed request carries turn 1's conversation (kept in the host user's HOME).
        expectShellCaseSecondTurn([first, second], sessionId, scriptRequests());

        await adapter.stopSession(session);
        stopped = true;
        const scan = await watch.stop();
        // The key was in no command line. The scan saw the CLI running as the host user, in the
        // host workspace, with the key in its environment: the scan was looking at the right thing.
        expectWatchedCli(scan, { cwd: workspace, env: { ANTHROPIC_API_KEY: API_KEY }, cmdline: /claude/ });
        // One CLI per turn, each the leader of its own group. The scan may also catch a child the CLI
        // forked for a tool before that child's exec, already leading its own group:
        // `withoutForks` leaves those out.
        const leaders = withoutForks(scan.seen).filter((p) => p.pgid === p.pid);
        expect(
          leaders.map((p) => (p.cmdline.includes(' --resume ') ? 'resume' : 'create')),
          `CLI processes seen in ${scan.scans} scans: ${JSON.stringify(scan.seen)}`,
        ).toEqual(['create', 'resume']);

        await expectNothingLeft(USER, /claude/i);
      } finally {
        if (!stopped) {
          await adapter.stopSession(session);
          await watch.stop();
        }
      }
    },
    TEST_TIMEOUT_MS,
  );
});
