/**
 * The pinned Gemini CLI on an SSH worker host: the package copied into a
 * world-readable directory, launched through a real sshd on 127.0.0.1 as a
 * non-root test user, in a workspace that user made, against the fake model
 * server on 127.0.0.1. The managed home is prepared on the host, under the host
 * user's own state folder, and the turn runs with it: the tool's file belongs to
 * the host's user, the figures are exactly the fake's, turn 2 resumes from the
 * record the host keeps, and the API key, which travels only in the session env
 * (over the channel's stdin), never shows in a command line or in the wrapper.
 *
 * Without the CLI the file skips and says why, except under CI, which installs it:
 * there it fails. A missing sshd is a failure (the harness throws).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertUsageReporting } from '../../../internal-contracts/agent/usage-reporting.js';
import '../../../src/agent/kinds.js';
import {
  type GeminiReply,
  geminiAnswersFunctionCall,
  geminiDialect,
} from '../../support/fake-model/gemini.js';
import { FakeModelServer, type RecordedRequest } from '../../support/fake-model/server.js';
import { AGENT_CLIS_DIR, pinnedCliPlan } from '../../support/headless-cli.js';
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
import { GEMINI_BIN, GEMINI_MODEL } from './real-cli.js';
import { adapterOf, counts, ofType, runTurn, startParams } from './support.js';

const plan = pinnedCliPlan('gemini', 'gemini');
if (!plan.run) console.warn(`gemini over SSH tests skipped: ${plan.reason}`);

/** Used by this file only: every process of it is this file's. */
const USER = testUserName('orchssh-gemini');
/** A key no other test uses, so finding it in a command line can only mean this file leaked it. */
const API_KEY = `gemini-ssh-${randomBytes(12).toString('hex')}`;
const INSTALL_DIR = path.join(AGENT_CLIS_DIR, 'gemini');
const TEST_TIMEOUT_MS = 180_000;

const ssh = useSshHost(USER, { skip: !plan.run, hosts: { connectTimeoutMs: 10_000 } });
let server: FakeModelServer;
let cli: RemoteCli;

function script(request: RecordedRequest, index: number): GeminiReply {
  if (index >= 2)
    return { type: 'message', text: 'Second turn done.', usage: { prompt: 300, candidates: 5, cached: 50 } };
  if (geminiAnswersFunctionCall(request)) {
    return {
      type: 'message',
      text: 'Done: wrote hi to out.txt.',
      usage: { prompt: 190, candidates: 21, cached: 120 },
    };
  }
  return {
    type: 'message',
    text: 'I will write the file.',
    functionCalls: [
      { name: 'run_shell_command', args: { command: 'echo hi > out.txt', description: 'write' } },
    ],
    usage: { prompt: 123, candidates: 45, cached: 7 },
  };
}

beforeAll(async () => {
  if (!plan.run) return;
  server = await FakeModelServer.start([geminiDialect(script)]);
  // Settings in the world-readable wrapper; the key only in the session env.
  cli = installRealCli(INSTALL_DIR, path.relative(INSTALL_DIR, GEMINI_BIN), {
    GOOGLE_GEMINI_BASE_URL: server.url,
    TERM: 'dumb',
    LANG: 'C.UTF-8',
  });
}, 120_000);

afterAll(async () => {
  await server?.close();
  cli?.remove();
});

/** The CLI's processes on the host: the test user's node running the copied package (not the launching shell). */
function cliProcesses(): { pid: number; cmdline: string }[] {
  return userProcesses(USER).filter((p) => p.cmdline.includes(`${cli.dir}/node_modules/`));
}

describe.skipIf(!plan.run)('gemini with the real CLI on an SSH host', () => {
  itHasThePinnedCli(GEMINI_BIN);

  it(
    "a shell call writes the file on the host as its user with the fake's figures, turn 2 resumes, the key stays off every command line",
    async () => {
      const { root, workspace } = await makeHostWorkspace(ssh, 'gemini-ws-');
      expect(cli.wrapperText).not.toContain(API_KEY);
      const adapter = adapterOf();
      const watch = watchCommandLines(API_KEY, { noting: cliProcesses, vars: ['GEMINI_API_KEY'] });
      const session = await adapter.startSession({
        ...startParams({
          ws: { root, workspace: () => workspace },
          command: cli.command,
          options: { model: GEMINI_MODEL, max_attempts: 2 },
          env: { GEMINI_API_KEY: API_KEY },
          agent: { stallTimeoutMs: 0, turnTimeoutMs: 120_000 },
          workspacePath: workspace,
        }),
        remote: ssh.host,
      });
      let stopped = false;
      try {
        const started = Date.now();
        const first = await runTurn(adapter, session, 'Write hi to out.txt using the shell.');
        console.log(`gemini real turn with one tool call over SSH: ${Date.now() - started} ms wall`);
        expect(first.outcome.error, first.outcome.error?.detail).toBeUndefined();
        expect(readFileSync(path.join(workspace, 'out.txt'), 'utf8')).toBe('hi\n');
        expect(statSync(path.join(workspace, 'out.txt')).uid).toBe(ssh.user.uid);
        expect(ofType(first.events, 'tool_result')).toMatchObject([
          { toolName: 'run_shell_command', toolKind: 'shell', toolArgument: 'echo hi > out.txt' },
        ]);
        expect(first.outcome.result.usage).toEqual(counts(313, 66, 127));
        expect(server.requests[0]?.headers['x-goog-api-key']).toBe(API_KEY);
        // The managed home is the host user's, with the settings this kind writes.
        const homes = path.join(ssh.user.home, '.local', 'state', 'orchestrator', 'gemini-homes');
        expect(existsSync(homes)).toBe(true);
        expect(statSync(homes).uid).toBe(ssh.user.uid);

        const second = await runTurn(adapter, session, 'Now say you are done.');
        expect(second.outcome.error, second.outcome.error?.detail).toBeUndefined();
        expect(second.outcome.result.sessionId).toBe(first.outcome.result.sessionId);
        expect(server.requests[2]?.bodyText).toContain('Write hi to out.txt using the shell.');
        expect(second.outcome.result.usage).toEqual(counts(613, 71, 177));
        assertUsageReporting('gemini', [first, second]);

        await adapter.stopSession(session);
        stopped = true;
        const scan = await watch.stop();
        // The CLI itself: one group leader per turn. A child it forks for the shell tool can be
        // caught before its exec (with an environment Gemini CLI trimmed of the key, and maybe
        // already leading its own group): `withoutForks` leaves those out.
        const leaders = withoutForks(scan.seen).filter((p) => p.pgid === p.pid);
        expect(leaders.map((p) => (p.cmdline.includes(' --resume ') ? 'resume' : 'create'))).toEqual([
          'create',
          'resume',
        ]);
        expectWatchedCli(
          { ...scan, seen: leaders },
          { cwd: workspace, env: { GEMINI_API_KEY: API_KEY }, cmdline: /gemini/ },
        );
        await expectNothingLeft(USER, /gemini/i);
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
