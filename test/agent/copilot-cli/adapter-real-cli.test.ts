/**
 * The pinned Copilot CLI (scripts/install-agent-clis.sh puts it in .cache/agent-clis)
 * driven through the copilot-cli adapter against the fake model server on 127.0.0.1,
 * in bring-your-own-key offline mode with a fresh COPILOT_HOME per session and the
 * shared, already unpacked package cache. What only the real CLI can show lives
 * here: the shell call really writes the file; the figures the adapter reports are
 * exactly what the fake served, from the usage summary the CLI writes at exit and
 * matching its session journal call by call; turn 2 resumes the session and adds
 * up; a later run resuming the session counts only its own spend; a 401 fails
 * credential verification; a 503 the CLI gave up on is retryable; a cancel or a
 * kill after output leaves the spend unaccounted; a held stream trips our stall
 * timer (the CLI has none of its own).
 *
 * Without the CLI the file skips and says why, except under CI, where it fails.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { assertUsageReporting } from '../../../internal-contracts/agent/usage-reporting.js';
import { journalPath } from '../../../src/agent/copilot-cli/session-files.js';
import { PREMIUM_REQUESTS } from '../../../src/agent/copilot-cli/usage.js';
import { MemoryProofStore, proofKey, verifyCredential } from '../../../src/agent/core/verify-credential.js';
import '../../../src/agent/kinds.js';
import { isRetryable } from '../../../src/domain/errors.js';
import { SAMPLE_ISSUE } from '../../../src/prompt/variables.js';
import {
  type ChatReply,
  chatAnswersToolCall,
  chatDialect,
  chatOfferedTools,
} from '../../support/fake-model/chat.js';
import { FakeModelServer, type RecordedRequest } from '../../support/fake-model/server.js';
import { pinnedCliPlan, TOOL_CASE } from '../../support/headless-cli.js';
import { itHasThePinnedCli } from '../../support/pinned-cli.js';
import { COPILOT_BIN, COPILOT_MODEL, copilotEnv, copilotHome } from './real-cli.js';
import { adapterOf, copilotHomeDir, counts, ofType, runTurn, startParams, workspaceRoot } from './support.js';

const plan = pinnedCliPlan('copilot', 'copilot');
if (!plan.run) console.warn(`copilot-cli adapter real-CLI tests skipped: ${plan.reason}`);

const TEST_TIMEOUT_MS = 180_000;
const STALL_TIMEOUT_MS = 10_000;
const HELD_TEXT = 'Hello there, working on it';

const ws = workspaceRoot('copilot-adapter-real-');
afterAll(() => ws.cleanup());
let servers: FakeModelServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function fakeServer(
  script: readonly ChatReply[] | ((r: RecordedRequest, i: number) => ChatReply),
): Promise<FakeModelServer> {
  const server = await FakeModelServer.start([chatDialect(script)]);
  servers.push(server);
  return server;
}

/** A real-CLI session's parameters: its own HOME (so its own COPILOT_HOME), the CLI on PATH. */
function params(
  server: FakeModelServer,
  extra: { home?: string; stallTimeoutMs?: number; workspacePath?: string; resumeSessionId?: string } = {},
) {
  const home = extra.home ?? copilotHomeDir();
  const env = copilotEnv(home, server.url);
  return {
    home,
    start: startParams({
      ws,
      command: null,
      env: { ...env, PATH: `${path.dirname(COPILOT_BIN)}:${env.PATH}` },
      agent: { stallTimeoutMs: extra.stallTimeoutMs ?? 0, turnTimeoutMs: 120_000 },
      ...(extra.workspacePath === undefined ? {} : { workspacePath: extra.workspacePath }),
      ...(extra.resumeSessionId === undefined ? {} : { resumeSessionId: extra.resumeSessionId }),
    }),
  };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Per call, the figures the fake serves: [prompt (cached included), completion, cached]. */
const CALLS = {
  tool: [123, 45, 7],
  done: [190, 21, 120],
  second: [300, 11, 200],
  resumed: [400, 9, 350],
} as const;
const usageOf = ([prompt, completion, cachedPrompt]: readonly [number, number, number]) => ({
  prompt,
  completion,
  cachedPrompt,
});
/** Autopilot ends a turn when the agent calls task_complete; a reply that only talks is continued. */
const complete = (text: string, call: readonly [number, number, number]): ChatReply => ({
  type: 'message',
  text,
  toolCalls: [{ name: 'task_complete', arguments: { summary: text } }],
  usage: usageOf(call),
});

/**
 * The model's side of the shell case: a bash call writing hi to out.txt, the
 * completion once its result came back, then one completing reply per later turn.
 */
function shellScript(later: ChatReply[]): (request: RecordedRequest, index: number) => ChatReply {
  return (request, index) => {
    if (index === 0) {
      return {
        type: 'message',
        text: TOOL_CASE.toolText,
        toolCalls: [
          { name: 'bash', arguments: { command: TOOL_CASE.command, description: TOOL_CASE.description } },
        ],
        usage: usageOf(CALLS.tool),
      };
    }
    if (index === 1 && chatAnswersToolCall(request)) return complete(TOOL_CASE.finalText, CALLS.done);
    return later[index - 2] ?? { type: 'message', text: 'Nothing more.' };
  };
}

/** The journal's per-call usage records of a session, as the CLI wrote them. */
function journalUsage(home: string, sessionId: string): number[][] {
  return readFileSync(journalPath(copilotHome(home), sessionId), 'utf8')
    .split('\n')
    .filter((l) => l.includes('"session.usage_record"'))
    .map((l) => {
      const u = (JSON.parse(l) as { data: { usage: Record<string, number> } }).data.usage;
      return [u.inputTokens as number, u.outputTokens as number, u.cacheReadTokens as number];
    });
}

describe.skipIf(!plan.run)('copilot-cli with the real CLI against the fake model server', () => {
  itHasThePinnedCli(COPILOT_BIN);

  it(
    "a shell call writes the file, figures are exactly the fake's, turn 2 resumes the session adding up, and a later run resuming it counts only its own spend",
    async () => {
      const workspace = ws.workspace();
      const server = await fakeServer(
        shellScript([
          complete('Second turn done.', CALLS.second),
          complete('Resumed turn done.', CALLS.resumed),
        ]),
      );
      const { home, start } = params(server, { workspacePath: workspace });
      const adapter = adapterOf();
      const session = await adapter.startSession(start);
      let sessionId = '';
      try {
        const started = Date.now();
        const first = await runTurn(adapter, session, TOOL_CASE.prompt);
        console.log(`copilot-cli real turn with one tool call: ${Date.now() - started} ms wall`);
        const r1 = first.outcome.result;
        expect(first.outcome.error, first.outcome.error?.detail).toBeUndefined();
        expect(r1.exitReason).toBe('turn_completed');
        expect(readFileSync(path.join(workspace, TOOL_CASE.file), 'utf8')).toBe(TOOL_CASE.fileContent);
        expect(ofType(first.events, 'tool_result')).toMatchObject([
          { toolName: 'bash', toolKind: 'shell', toolArgument: TOOL_CASE.command, toolError: false },
          { toolName: 'task_complete', toolKind: null, toolError: false },
        ]);
        // The id we named the session with is the one the CLI reports.
        sessionId = ofType(first.events, 'session_started')[0]?.sessionId ?? '';
        expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
        expect(r1.sessionId).toBe(sessionId);
        expect(ofType(first.events, 'session_started')).toHaveLength(1);
        // 123 + 190 prompt tokens (7 + 120 cached), 45 + 21 completion: our input includes the cache reads.
        const firstTurn = counts(313, 66, 127);
        expect(r1.usage).toEqual(firstTurn);
        expect(r1.usageByModel).toEqual({ [COPILOT_MODEL]: firstTurn });
        expect(r1.reportedAmounts).toEqual([{ unit: PREMIUM_REQUESTS, micros: 0 }]);
        expect(r1).toMatchObject({
          usageMeasured: true,
          usageProvenance: 'reported',
          spendUnaccounted: false,
          coversSession: true,
        });
        expect(r1.finalMessage).toBe(TOOL_CASE.finalText);
        // The session journal agrees call by call.
        expect(journalUsage(home, sessionId)).toEqual([[...CALLS.tool], [...CALLS.done]]);
        expect(server.requests).toHaveLength(2);
        for (const request of server.requests) expect(chatOfferedTools(request)).toContain('bash');

        const secondStarted = Date.now();
        const second = await runTurn(adapter, session, 'Now say you are done.');
        console.log(`copilot-cli real resumed turn 2: ${Date.now() - secondStarted} ms wall`);
        const r2 = second.outcome.result;
        expect(second.outcome.error, second.outcome.error?.detail).toBeUndefined();
        expect(r2.exitReason).toBe('turn_completed');
        expect(r2.sessionId).toBe(sessionId);
        expect(r2.finalMessage).toBe('Second turn done.');
        // The resumed request carries turn 1's conversation.
        expect(server.requests[2]?.bodyText).toContain(TOOL_CASE.toolText);
        expect(r2.usage).toEqual(counts(613, 77, 327));
        expect(r2.spendUnaccounted).toBe(false);
        assertUsageReporting('copilot-cli', [first, second]);
      } finally {
        await adapter.stopSession(session);
      }

      // A later run resumes the session: the CLI's summary still holds turns 1 and 2,
      // and the journal read at the start tells the ledger to leave them out.
      const resumed = adapterOf();
      const again = await resumed.startSession(
        params(server, { home, workspacePath: workspace, resumeSessionId: sessionId }).start,
      );
      try {
        const third = await runTurn(resumed, again, 'Pick up where you left off.');
        const r3 = third.outcome.result;
        expect(third.outcome.error, third.outcome.error?.detail).toBeUndefined();
        expect(r3.sessionId).toBe(sessionId);
        expect(r3.finalMessage).toBe('Resumed turn done.');
        expect(r3.usage).toEqual(counts(400, 9, 350));
        expect(r3).toMatchObject({ usageProvenance: 'reported', spendUnaccounted: false });
        assertUsageReporting('copilot-cli', third);
      } finally {
        await resumed.stopSession(again);
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a 401 fails credential verification as credential_unverified, in one attempt, with a request carrying no tools and no project instructions',
    async () => {
      const server = await fakeServer([
        { type: 'error', status: 401, message: 'Incorrect API key provided', code: 'invalid_api_key' },
      ]);
      const workspace = ws.workspace();
      writeFileSync(path.join(workspace, 'AGENTS.md'), 'PROJECT-INSTRUCTIONS-MARKER\n');
      const { start } = params(server, { workspacePath: workspace });
      const store = new MemoryProofStore();
      const key = proofKey('copilot-cli', null, start.options, ['sk-dummy-fake-key']);
      const started = Date.now();
      const result = await verifyCredential({
        adapter: adapterOf(),
        start,
        key,
        store,
        issue: SAMPLE_ISSUE,
        timeoutMs: 90_000,
      });
      console.log(`copilot-cli 401 verification: ${Date.now() - started} ms wall`);
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.error.kind).toBe('credential_unverified');
      expect(isRetryable(result.error.kind)).toBe(false);
      expect(result.error.detail).toContain('HTTP 401');
      expect(result.attempts).toBe(1);
      expect(store.get(key)).toBeNull();
      expect(server.requests.length).toBeGreaterThanOrEqual(1);
      for (const request of server.requests) {
        expect(chatOfferedTools(request)).toEqual([]);
        expect(request.bodyText).not.toContain('PROJECT-INSTRUCTIONS-MARKER');
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a provider that stays overloaded (503) past the CLI retries is a retryable response_error',
    async () => {
      const server = await fakeServer([
        { type: 'error', status: 503, message: 'The server is overloaded', code: 'server_is_overloaded' },
      ]);
      const adapter = adapterOf();
      const session = await adapter.startSession(params(server).start);
      try {
        const started = Date.now();
        const turn = await runTurn(adapter, session, 'Say hello.');
        console.log(
          `copilot-cli 503 turn: ${Date.now() - started} ms wall, ${server.requests.length} requests`,
        );
        expect(turn.outcome.result.exitReason).toBe('turn_failed');
        expect(turn.outcome.error?.kind).toBe('response_error');
        expect(isRetryable(turn.outcome.error?.kind)).toBe(true);
        expect(turn.outcome.error?.detail).toContain('HTTP 503');
        expect(
          ofType(turn.events, 'notification').filter((e) =>
            e.message.startsWith('model call failed (status 503'),
          ),
        ).toHaveLength(server.requests.length);
        expect(turn.outcome.result.spendUnaccounted).toBe(false);
      } finally {
        await adapter.stopSession(session);
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a cancel after the model served output is turn_cancelled with the spend unaccounted, and the CLI is gone',
    async () => {
      const server = await fakeServer([{ type: 'message', text: HELD_TEXT, holdAt: 'first_delta' }]);
      const adapter = adapterOf();
      const session = await adapter.startSession(params(server).start);
      const controller = new AbortController();
      let pid = 0;
      try {
        const turn = await runTurn(adapter, session, 'Say hello slowly.', {
          signal: controller.signal,
          onEvent: (e) => {
            if (e.type === 'notification' && HELD_TEXT.startsWith(e.message) && pid === 0) {
              pid = Number(e.agentPid);
              controller.abort();
            }
          },
        });
        const { result, error } = turn.outcome;
        console.log(
          `copilot-cli cancelled turn: measured ${result.usageMeasured}, provenance ${result.usageProvenance}`,
        );
        expect(result.exitReason).toBe('turn_cancelled');
        expect(error?.kind).toBe('turn_cancelled');
        expect(result.spendUnaccounted).toBe(true);
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
      const server = await fakeServer([{ type: 'message', text: HELD_TEXT, holdAt: 'first_delta' }]);
      const adapter = adapterOf();
      const session = await adapter.startSession(params(server).start);
      let killed = false;
      try {
        const turn = await runTurn(adapter, session, 'Say hello slowly.', {
          onEvent: (e) => {
            if (e.type === 'notification' && HELD_TEXT.startsWith(e.message) && !killed) {
              killed = true;
              process.kill(Number(e.agentPid), 'SIGKILL');
            }
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
      const server = await fakeServer([{ type: 'message', text: HELD_TEXT, holdAt: 'role' }]);
      const adapter = adapterOf();
      const session = await adapter.startSession(params(server, { stallTimeoutMs: STALL_TIMEOUT_MS }).start);
      try {
        const started = Date.now();
        const turn = await runTurn(adapter, session, 'Say hello.');
        console.log(`copilot-cli stalled turn: ${Date.now() - started} ms wall`);
        expect(turn.outcome.error?.detail, 'the stall must fire while the fake holds the stream').toMatch(
          /stalled/,
        );
        expect(turn.outcome.result.exitReason).toBe('turn_failed');
        expect(turn.outcome.error?.kind).toBe('response_timeout');
        expect(server.requests[0], 'the CLI never reached the fake before the stall fired').toBeDefined();
        expect(Date.now() - started).toBeLessThan(60_000);
      } finally {
        await adapter.stopSession(session);
      }
    },
    TEST_TIMEOUT_MS,
  );
});
