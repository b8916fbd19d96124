/**
 * The real Claude Code CLI (the pinned build scripts/install-agent-clis.sh puts in
 * .cache/agent-clis) driven through the adapter against the fake model server on
 * 127.0.0.1. Each run has a fresh HOME, a dummy key and the switches that keep all
 * traffic local. What only the real CLI can show lives here: the tool really runs
 * in the workspace, its figures are exactly what the fake served, a 401 fails
 * credential verification, overload is retryable, a cancel or a kill after output
 * leaves the spend unaccounted, a held stream trips our stall timer, and turn 2
 * resumes the session with usage adding up.
 *
 * A real turn costs about 2 s and 300 MB here, so the cases share runs where they
 * can, and every wait is on a condition with a generous deadline. Without the CLI
 * the file skips and says why, except under CI, which installs it: there it fails.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryProofStore, proofKey, verifyCredential } from '../../../src/agent/core/verify-credential.js';
import '../../../src/agent/kinds.js';
import { isRetryable } from '../../../src/domain/errors.js';
import { SAMPLE_ISSUE } from '../../../src/prompt/variables.js';
import { type AnthropicReply, anthropicDialect, offeredTools } from '../../support/fake-model/anthropic.js';
import { FakeModelServer, type RecordedRequest } from '../../support/fake-model/server.js';
import { itHasThePinnedCli } from '../../support/pinned-cli.js';
import {
  adapterOf,
  CLAUDE_CLI,
  expectShellCaseFirstTurn,
  expectShellCaseSecondTurn,
  ofType,
  REAL_CLI_MODEL,
  realCliEnv,
  realCliPlan,
  runTurn,
  SHELL_CASE_PROMPTS,
  shellCaseScript,
  startParams,
  workspaceRoot,
} from './support.js';

const plan = realCliPlan();
if (!plan.run) console.warn(`claude-code real-CLI tests skipped: ${plan.reason}`);

const TEST_TIMEOUT_MS = 180_000;

const ws = workspaceRoot('claude-real-');
let servers: FakeModelServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function fakeServer(
  script: readonly AnthropicReply[] | ((r: RecordedRequest, i: number) => AnthropicReply),
): Promise<FakeModelServer> {
  const server = await FakeModelServer.start([anthropicDialect(script)]);
  servers.push(server);
  return server;
}

function params(server: FakeModelServer, extra: { stallTimeoutMs?: number; workspacePath?: string } = {}) {
  return startParams({
    ws,
    command: null,
    options: { model: REAL_CLI_MODEL },
    env: realCliEnv(server.url),
    agent: { stallTimeoutMs: extra.stallTimeoutMs ?? 0, turnTimeoutMs: 120_000 },
    ...(extra.workspacePath === undefined ? {} : { workspacePath: extra.workspacePath }),
  });
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const HELD_TEXT = 'Hello there, working on it';
const STALL_TIMEOUT_MS = 10_000;

describe.skipIf(!plan.run)('claude-code with the real CLI against the fake model server', () => {
  itHasThePinnedCli(CLAUDE_CLI);

  it(
    "a shell tool call writes the file, figures are exactly the fake's, and turn 2 resumes the session adding up",
    async () => {
      const workspace = ws.workspace();
      const server = await fakeServer(shellCaseScript(workspace));
      const adapter = adapterOf();
      const session = await adapter.startSession(params(server, { workspacePath: workspace }));
      try {
        const started = Date.now();
        const first = await runTurn(adapter, session, SHELL_CASE_PROMPTS[0]);
        const wallMs = Date.now() - started;
        console.log(`claude-code real turn with one tool call: ${wallMs} ms wall`);
        const sessionId = expectShellCaseFirstTurn(first, workspace, server.requestsTo('anthropic'));

        const second = await runTurn(adapter, session, SHELL_CASE_PROMPTS[1]);
        // The resumed request carries turn 1's conversation.
        expectShellCaseSecondTurn([first, second], sessionId, server.requestsTo('anthropic'));
      } finally {
        await adapter.stopSession(session);
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a 401 fails credential verification as credential_unverified, in one attempt, with a reduced-context request',
    async () => {
      const server = await fakeServer([
        { type: 'error', status: 401, errorType: 'authentication_error', message: 'invalid x-api-key' },
      ]);
      const workspace = ws.workspace();
      writeFileSync(path.join(workspace, 'CLAUDE.md'), 'PROJECT-INSTRUCTIONS-MARKER\n');
      const start = params(server, { workspacePath: workspace });
      const store = new MemoryProofStore();
      const key = proofKey('claude-code', null, start.options, ['sk-ant-fake-key']);
      const result = await verifyCredential({
        adapter: adapterOf(),
        start,
        key,
        store,
        issue: SAMPLE_ISSUE,
        timeoutMs: 90_000,
      });
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.error.kind).toBe('credential_unverified');
      expect(isRetryable(result.error.kind)).toBe(false);
      expect(result.attempts).toBe(1);
      expect(store.get(key)).toBeNull();
      const requests = server.requestsTo('anthropic');
      expect(requests.length).toBeGreaterThanOrEqual(1);
      for (const request of requests) {
        expect(offeredTools(request)).toEqual([]);
        expect(request.bodyText).not.toContain('PROJECT-INSTRUCTIONS-MARKER');
      }
    },
    TEST_TIMEOUT_MS,
  );

  it.each([
    [529, 'overloaded_error', 'Overloaded'],
    [503, 'api_error', 'Service Unavailable'],
  ])(
    'HTTP %i after the CLI retries is a retryable response_error',
    async (status, errorType, message) => {
      const server = await fakeServer([{ type: 'error', status, errorType, message }]);
      const adapter = adapterOf();
      const session = await adapter.startSession(params(server));
      try {
        const turn = await runTurn(adapter, session, 'Say hello.');
        expect(turn.outcome.result.exitReason).toBe('turn_failed');
        expect(turn.outcome.error?.kind).toBe('response_error');
        expect(isRetryable(turn.outcome.error?.kind)).toBe(true);
        expect(turn.outcome.error?.detail).toContain(`API status ${status}`);
        expect(ofType(turn.events, 'notification').some((e) => e.message.includes(`status ${status}`))).toBe(
          true,
        );
      } finally {
        await adapter.stopSession(session);
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a cancel after the model served output is turn_cancelled with the spend unaccounted, and the CLI is gone',
    async () => {
      const server = await fakeServer([{ type: 'message', text: HELD_TEXT, holdAt: 'text_block' }]);
      const adapter = adapterOf();
      const session = await adapter.startSession(params(server));
      const controller = new AbortController();
      let pid = 0;
      try {
        const turn = await runTurn(adapter, session, 'Say hello slowly.', {
          signal: controller.signal,
          onEvent: (e) => {
            if (e.type === 'notification' && e.message === HELD_TEXT) {
              pid = Number(e.agentPid);
              controller.abort();
            }
          },
        });
        const { result, error } = turn.outcome;
        expect(result.exitReason).toBe('turn_cancelled');
        expect(error?.kind).toBe('turn_cancelled');
        expect(result.spendUnaccounted).toBe(true);
        expect(result.usageMeasured).toBe(true);
        expect(pid).toBeGreaterThan(0);
        expect(alive(pid)).toBe(false);
      } finally {
        await adapter.stopSession(session);
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'the CLI killed mid-turn is port_exit naming the signal, with the spend unaccounted',
    async () => {
      const server = await fakeServer([{ type: 'message', text: HELD_TEXT, holdAt: 'text_block' }]);
      const adapter = adapterOf();
      const session = await adapter.startSession(params(server));
      try {
        const turn = await runTurn(adapter, session, 'Say hello slowly.', {
          onEvent: (e) => {
            if (e.type === 'notification' && e.message === HELD_TEXT)
              process.kill(Number(e.agentPid), 'SIGKILL');
          },
        });
        const { result, error } = turn.outcome;
        expect(result.exitReason).toBe('turn_failed');
        expect(error?.kind).toBe('port_exit');
        expect(error?.detail).toMatch(/SIGKILL/);
        expect(result.spendUnaccounted).toBe(true);
      } finally {
        await adapter.stopSession(session);
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a stream the fake holds open trips our stall timeout (the CLI has none of its own)',
    async () => {
      const server = await fakeServer([{ type: 'message', text: HELD_TEXT, holdAt: 'message_start' }]);
      const adapter = adapterOf();
      // Long enough that a CLI starting slowly on a loaded machine reaches the held stream first.
      const session = await adapter.startSession(params(server, { stallTimeoutMs: STALL_TIMEOUT_MS }));
      try {
        const started = Date.now();
        const turn = await runTurn(adapter, session, 'Say hello.');
        expect(turn.outcome.error?.detail, 'the stall must fire while the fake holds the stream').toMatch(
          /stalled/,
        );
        expect(turn.outcome.result.exitReason).toBe('turn_failed');
        expect(turn.outcome.error?.kind).toBe('response_timeout');
        const held = server.requestsTo('anthropic')[0];
        expect(held, 'the CLI never reached the fake before the stall fired').toBeDefined();
        expect(Date.now() - started).toBeLessThan(60_000);
      } finally {
        await adapter.stopSession(session);
      }
    },
    TEST_TIMEOUT_MS,
  );
});
