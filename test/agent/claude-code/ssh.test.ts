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
import { chownSync, existsSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync } from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertUsageReporting } from '../../../internal-contracts/agent/usage-reporting.js';
import '../../../src/agent/kinds.js';
import type { AgentEvent } from '../../../src/domain/agent.js';
import { SshHosts } from '../../../src/ssh/index.js';
import {
  type AnthropicReply,
  answersToolCall,
  anthropicDialect,
} from '../../support/fake-model/anthropic.js';
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
  adapterOf,
  CLAUDE_CLI,
  CLAUDE_INSTALL_DIR,
  realCliEnv,
  realCliPlan,
  runTurn,
  startParams,
} from './support.js';

const plan = realCliPlan();
if (!plan.run) console.warn(`claude-code over SSH tests skipped: ${plan.reason}`);

/** Used by this file only: every process of it is this file's. */
const USER = 'orchssh-claude';
const MODEL = 'claude-sonnet-4-5';
/** Claude Code's price for claude-sonnet-4-5 per million tokens: input, output, cache read. */
const PRICE_PER_MTOK = { input: 3, output: 15, cacheRead: 0.3 };
/** What the CLI reports for n calls of 123 in / 45 out / 7 cache read, in micro-dollars. */
const microsFor = (calls: number) =>
  Math.round(
    calls * (123 * PRICE_PER_MTOK.input + 45 * PRICE_PER_MTOK.output + 7 * PRICE_PER_MTOK.cacheRead),
  );
/** A key no other test uses, so finding it in a command line can only mean this file leaked it. */
const API_KEY = `sk-ant-ssh-${randomBytes(12).toString('hex')}`;
/** The CLI inside its package folder (what the wrapper `exec`s). */
const CLI_IN_PACKAGE = path.relative(CLAUDE_INSTALL_DIR, CLAUDE_CLI);
const TEST_TIMEOUT_MS = 180_000;
const LEFTOVER_DEADLINE_MS = 15_000;

let user: TestUser;
let sshd: Sshd;
let hosts: SshHosts;
let server: FakeModelServer;
let cli: RemoteCli;
let home: string;
let knownHostsDir: string;
const roots: string[] = [];
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

beforeAll(async () => {
  if (!plan.run) return;
  user = ensureTestUser(USER);
  killUserProcesses(USER);
  sshd = await startSshd({ user: USER });
  knownHostsDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'claude-ssh-known-'));
  hosts = new SshHosts({
    strictHostKeyChecking: 'accept-new',
    knownHostsFile: path.join(knownHostsDir, 'known_hosts'),
    identityFile: sshd.clientKeyPath,
    agentSocket: null,
    defaultUser: USER,
    connectTimeoutMs: 10_000,
  });
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
  home = settings.HOME as string;
  chownSync(home, user.uid, statSync(user.home).gid);
  cli = installRealCli(CLAUDE_INSTALL_DIR, CLI_IN_PACKAGE, settings);
}, 120_000);

afterAll(async () => {
  await hosts?.close();
  await sshd?.stop();
  await server?.close();
  killUserProcesses(USER);
  cli?.remove();
  for (const dir of [home, knownHostsDir, ...roots]) {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
});

/** A workspace root in the user's home, and a workspace in it, both made on the host by its user. */
async function hostWorkspace(): Promise<{ root: string; workspace: string }> {
  const root = path.join(user.home, `claude-ws-${randomBytes(6).toString('hex')}`);
  roots.push(root);
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

const ofType = <T extends AgentEvent['type']>(events: AgentEvent[], type: T) =>
  events.filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type);

/** The CLI's processes on the host: the test user's, running the copied package. */
function cliProcesses(): { pid: number; cmdline: string }[] {
  return remoteProcesses(USER).filter((p) => p.cmdline.startsWith(`${cli.dir}/`));
}

/** The user's processes that mention claude, except sshd's own session processes (`sshd: orchssh-claude@notty`). */
function claudeLeftovers(): { pid: number; cmdline: string }[] {
  return remoteProcesses(USER).filter((p) => /claude/i.test(p.cmdline) && !/^sshd[:\s]/.test(p.cmdline));
}

interface SeenCli {
  pid: number;
  /** Its process group (the turn's CLI leads its own; a child forked before its exec shares it). */
  pgid: number;
  cmdline: string;
  cwd: string | null;
  /** The key was in the process's environment. */
  keyInEnviron: boolean;
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
          const stat = readFileSync(`/proc/${p.pid}/stat`, 'utf8');
          seen.set(p.pid, {
            pid: p.pid,
            pgid: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]),
            cmdline: p.cmdline,
            cwd: readlinkSync(`/proc/${p.pid}/cwd`),
            keyInEnviron: environ.includes(`ANTHROPIC_API_KEY=${API_KEY}`),
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

describe.skipIf(!plan.run)('claude-code with the real CLI on an SSH host', () => {
  it('the pinned CLI is installed (CI runs scripts/install-agent-clis.sh)', () => {
    expect(existsSync(CLAUDE_CLI), `${CLAUDE_CLI} is missing`).toBe(true);
  });

  it(
    "a shell tool call writes the file on the host as its user, figures are exactly the fake's, turn 2 resumes adding up, the key stays off every command line and nothing is left after stop",
    async () => {
      const { root, workspace } = await hostWorkspace();
      expect(statSync(workspace).uid).toBe(user.uid);
      useScript((request, index) => {
        if (index >= 2) return { type: 'message', text: 'Second turn done.' };
        if (answersToolCall(request)) return { type: 'message', text: 'Done: wrote hi to out.txt.' };
        return {
          type: 'message',
          text: 'I will write the file.',
          toolCall: {
            name: 'Bash',
            input: {
              command: `bash -lc 'echo hi > ${workspace}/out.txt'`,
              description: 'Write hi to out.txt',
            },
          },
        };
      });
      // The wrapper every host user can read holds the settings, never the key.
      expect(cli.wrapperText).toContain(`export ANTHROPIC_BASE_URL='${server.url}'`);
      expect(cli.wrapperText).not.toContain(API_KEY);

      const host = hosts.host(sshd.spec);
      const adapter = adapterOf();
      const scanner = startScanner();
      const session = await adapter.startSession({
        ...startParams({
          ws: { root, workspace: () => workspace },
          command: cli.command,
          options: { model: MODEL },
          env: { ANTHROPIC_API_KEY: API_KEY },
          agent: { stallTimeoutMs: 0, turnTimeoutMs: 120_000 },
          workspacePath: workspace,
        }),
        remote: host,
      });
      let stopped = false;
      try {
        const started = Date.now();
        const first = await runTurn(adapter, session, 'Write hi to out.txt using bash.');
        console.log(`claude-code real turn with one tool call over SSH: ${Date.now() - started} ms wall`);
        const r1 = first.outcome.result;
        expect(first.outcome.error, first.outcome.error?.detail).toBeUndefined();
        expect(r1.exitReason).toBe('turn_completed');
        // The tool ran on the host, as the host's user, in the host's workspace.
        const out = path.join(workspace, 'out.txt');
        expect(readFileSync(out, 'utf8')).toBe('hi\n');
        expect(statSync(out).uid).toBe(user.uid);
        expect(ofType(first.events, 'tool_result')).toMatchObject([
          { toolName: 'Bash', toolKind: 'shell', toolArgument: 'echo hi > out.txt', toolError: false },
        ]);
        const sessionId = ofType(first.events, 'session_started')[0]?.sessionId;
        expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
        expect(r1.sessionId).toBe(sessionId);
        // Two calls of 123 in / 45 out / 7 cache read: 246 / 90 / 14; our input includes the cache reads.
        const twoCalls = {
          inputTokens: 260,
          outputTokens: 90,
          cacheReadTokens: 14,
          cacheWriteTokens: 0,
          totalTokens: 350,
        };
        expect(r1.usage).toEqual(twoCalls);
        expect(r1.usageByModel).toEqual({ [MODEL]: twoCalls });
        expect(r1.reportedAmounts).toEqual([{ unit: 'USD', micros: microsFor(2) }]);
        expect(r1).toMatchObject({
          usageMeasured: true,
          usageProvenance: 'reported',
          spendUnaccounted: false,
        });
        expect(r1.finalMessage).toBe('Done: wrote hi to out.txt.');
        const requests = server.requestsTo('anthropic').slice(scriptStart);
        expect(requests).toHaveLength(2);
        // The key the CLI sent is the one from the session env.
        expect(requests[0]?.headers['x-api-key']).toBe(API_KEY);
        // The CLI told the model it works in the host's workspace.
        expect(requests[0]?.bodyText).toContain(workspace);

        const second = await runTurn(adapter, session, 'Now say you are done.');
        const r2 = second.outcome.result;
        expect(second.outcome.error, second.outcome.error?.detail).toBeUndefined();
        expect(r2.exitReason).toBe('turn_completed');
        expect(r2.sessionId).toBe(sessionId);
        expect(r2.finalMessage).toBe('Second turn done.');
        // The resumed request carries turn 1's conversation (kept in the host user's HOME).
        const resumed = server.requestsTo('anthropic').slice(scriptStart)[2];
        expect(resumed?.bodyText).toContain('I will write the file.');
        expect(r2.usage).toEqual({
          inputTokens: 390,
          outputTokens: 135,
          cacheReadTokens: 21,
          cacheWriteTokens: 0,
          totalTokens: 525,
        });
        expect(r2.reportedAmounts).toEqual([{ unit: 'USD', micros: microsFor(2) + microsFor(1) }]);
        assertUsageReporting('claude-code', [first, second]);

        await adapter.stopSession(session);
        stopped = true;
        const scan = await scanner.stop();
        expect(scan.leaks, 'the API key appeared in a command line').toEqual([]);
        // The scan saw each turn's CLI (one process per turn) running as the host user, in the
        // host workspace, with the key in its environment: the scan was looking at the right thing.
        // One CLI per turn, each the leader of its own group (the scan may also catch a child the CLI
        // forked, before that child's exec).
        const leaders = scan.seen.filter((p) => p.pgid === p.pid);
        expect(
          leaders.map((p) => (p.cmdline.includes(' --resume ') ? 'resume' : 'create')),
          `CLI processes seen in ${scan.scans} scans: ${JSON.stringify(scan.seen)}`,
        ).toEqual(['create', 'resume']);
        for (const p of scan.seen) {
          expect(p).toMatchObject({ cwd: workspace, keyInEnviron: true });
          // What the leftover check below looks for.
          expect(p.cmdline).toMatch(/claude/);
        }

        const gone = await pollUntil(() => claudeLeftovers().length === 0, LEFTOVER_DEADLINE_MS);
        expect(gone, `left on the host: ${JSON.stringify(claudeLeftovers())}`).toBe(true);
      } finally {
        if (!stopped) {
          await adapter.stopSession(session);
          await scanner.stop();
        }
      }
    },
    TEST_TIMEOUT_MS,
  );
});
