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
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { assertUsageReporting } from '../../../internal-contracts/agent/usage-reporting.js';
import { MemoryProofStore, proofKey, verifyCredential } from '../../../src/agent/core/verify-credential.js';
import '../../../src/agent/kinds.js';
import type { AgentEvent } from '../../../src/domain/agent.js';
import { isRetryable } from '../../../src/domain/errors.js';
import { SAMPLE_ISSUE } from '../../../src/prompt/variables.js';
import {
  type AnthropicReply,
  answersToolCall,
  anthropicDialect,
  offeredTools,
} from '../../support/fake-model/anthropic.js';
import { FakeModelServer, type RecordedRequest } from '../../support/fake-model/server.js';
import {
  adapterOf,
  CLAUDE_CLI,
  realCliEnv,
  realCliPlan,
  runTurn,
  startParams,
  workspaceRoot,
} from './support.js';

const plan = realCliPlan();
if (!plan.run) console.warn(`claude-code real-CLI tests skipped: ${plan.reason}`);

const MODEL = 'claude-sonnet-4-5';
/** Claude Code's price for claude-sonnet-4-5 per million tokens: input, output, cache read. */
const PRICE_PER_MTOK = { input: 3, output: 15, cacheRead: 0.3 };
/** What the CLI reports for n calls of 123 in / 45 out / 7 cache read, in micro-dollars. */
const microsFor = (calls: number) =>
  Math.round(
    calls * (123 * PRICE_PER_MTOK.input + 45 * PRICE_PER_MTOK.output + 7 * PRICE_PER_MTOK.cacheRead),
  );

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
    options: { model: MODEL },
    env: realCliEnv(server.url),
    agent: { stallTimeoutMs: extra.stallTimeoutMs ?? 0, turnTimeoutMs: 120_000 },
    ...(extra.workspacePath === undefined ? {} : { workspacePath: extra.workspacePath }),
  });
}

const ofType = <T extends AgentEvent['type']>(events: AgentEvent[], type: T) =>
  events.filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type);

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
  it('the pinned CLI is installed (CI runs scripts/install-agent-clis.sh)', () => {
    expect(existsSync(CLAUDE_CLI), `${CLAUDE_CLI} is missing`).toBe(true);
  });

  it(
    "a shell tool call writes the file, figures are exactly the fake's, and turn 2 resumes the session adding up",
    async () => {
      const server = await fakeServer((request, index) => {
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
      const workspace = ws.workspace();
      const adapter = adapterOf();
      const session = await adapter.startSession(params(server, { workspacePath: workspace }));
      try {
        const started = Date.now();
        const first = await runTurn(adapter, session, 'Write hi to out.txt using bash.');
        const wallMs = Date.now() - started;
        console.log(`claude-code real turn with one tool call: ${wallMs} ms wall`);
        const r1 = first.outcome.result;
        expect(first.outcome.error, first.outcome.error?.detail).toBeUndefined();
        expect(r1.exitReason).toBe('turn_completed');
        expect(readFileSync(path.join(workspace, 'out.txt'), 'utf8')).toBe('hi\n');
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
        expect(server.requestsTo('anthropic')).toHaveLength(2);

        const second = await runTurn(adapter, session, 'Now say you are done.');
        const r2 = second.outcome.result;
        expect(r2.exitReason).toBe('turn_completed');
        expect(r2.sessionId).toBe(sessionId);
        // The resumed request carries turn 1's conversation.
        const resumed = server.requestsTo('anthropic')[2];
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
