/**
 * The pinned OpenCode CLI (scripts/install-agent-clis.sh puts it in .cache/agent-clis)
 * driven through the opencode adapter against the fake model server on 127.0.0.1,
 * configured the way an operator would: the fake as a provider in the block's
 * `config`, its key read from OPENAI_API_KEY. Each case has its own HOME and
 * managed-home root, and a PWD that is not the workspace. What only the real CLI
 * can show lives here: the tool really runs in the workspace, the figures are
 * exactly what the fake served and no title request is made, a 401 fails
 * credential verification in one request that offers no tools, an overloaded
 * provider is given up on, a cancel or a kill after output leaves the spend
 * unaccounted, a held stream trips our stall timer, and turn 2, and a later session
 * under the same id, resume the conversation with usage adding up, while an id the
 * database lacks starts afresh instead of failing.
 *
 * A real turn costs 7–40 s here (the CLI is CPU-bound), so every wait is on a
 * condition with a generous deadline, and the number of real turns is kept small.
 * Without the CLI the file skips and says why, except under CI, which installs it:
 * there it fails.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { assertUsageReporting } from '../../../internal-contracts/agent/usage-reporting.js';
import { MemoryProofStore, proofKey, verifyCredential } from '../../../src/agent/core/verify-credential.js';
import '../../../src/agent/kinds.js';
import { isRetryable } from '../../../src/domain/errors.js';
import { SAMPLE_ISSUE } from '../../../src/prompt/variables.js';
import {
  type ChatReply,
  chatAnswersToolCall,
  chatDialect,
  chatLastUserText,
  chatOfferedTools,
} from '../../support/fake-model/chat.js';
import { FakeModelServer, type RecordedRequest } from '../../support/fake-model/server.js';
import { pinnedCliPlan } from '../../support/headless-cli.js';
import { itHasThePinnedCli } from '../../support/pinned-cli.js';
import { OPENCODE_BIN } from './real-cli.js';
import {
  adapterOf,
  counts,
  DUMMY_KEY,
  ofType,
  realCliBlock,
  realCliEnv,
  runTurn,
  startParams,
  workspaceRoot,
} from './support.js';

const plan = pinnedCliPlan('opencode', 'opencode');
if (!plan.run) console.warn(`opencode adapter real-CLI tests skipped: ${plan.reason}`);

const TEST_TIMEOUT_MS = 240_000;
const ws = workspaceRoot('opencode-real-');
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

interface CaseParams {
  server: FakeModelServer;
  env?: Record<string, string>;
  workspacePath?: string;
  stallTimeoutMs?: number;
  resumeSessionId?: string | null;
}

function params(p: CaseParams) {
  return startParams({
    ws,
    command: null,
    options: realCliBlock(p.server.url),
    env: p.env ?? realCliEnv(),
    agent: { stallTimeoutMs: p.stallTimeoutMs ?? 0, turnTimeoutMs: 180_000 },
    resumeSessionId: p.resumeSessionId ?? null,
    ...(p.workspacePath === undefined ? {} : { workspacePath: p.workspacePath }),
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

const PROMPT = 'Write hi to out.txt using the shell.';
const SHELL_CALL = {
  name: 'bash',
  arguments: { command: 'echo hi > out.txt', description: 'Write hi to out.txt' },
};

/** The model's side of the shell case: a shell call, the answer after it, then one reply per later turn. */
function shellScript(later: readonly string[]): (request: RecordedRequest, index: number) => ChatReply {
  return (request, index) => {
    if (index >= 2) {
      const text = later[index - 2] ?? 'Nothing more.';
      return {
        type: 'message',
        text,
        usage: { prompt: 300 + 100 * (index - 2), completion: 5, cachedPrompt: 50 },
      };
    }
    if (chatAnswersToolCall(request)) {
      return {
        type: 'message',
        text: 'Done: wrote hi to out.txt.',
        usage: { prompt: 190, completion: 21, cachedPrompt: 120 },
      };
    }
    return {
      type: 'message',
      text: 'I will write the file.',
      toolCalls: [SHELL_CALL],
      usage: { prompt: 123, completion: 45, cachedPrompt: 7 },
    };
  };
}

/** A shell call with its figures, then a call the fake holds open after its first chunk. */
function heldAfterShellCall(request: RecordedRequest): ChatReply {
  if (chatAnswersToolCall(request)) return { type: 'message', text: 'Never finished.', holdAt: 'role' };
  return {
    type: 'message',
    toolCalls: [SHELL_CALL],
    usage: { prompt: 123, completion: 45, cachedPrompt: 7 },
  };
}

describe.skipIf(!plan.run)('opencode adapter with the real CLI against the fake model server', () => {
  itHasThePinnedCli(OPENCODE_BIN);

  it(
    "a shell call writes the file in the workspace with exactly the fake's figures; turn 2 and a later session resume the conversation",
    async () => {
      const workspace = ws.workspace();
      const server = await fakeServer(shellScript(['Second turn done.', 'Third, in a new session.']));
      const env = realCliEnv();
      const adapter = adapterOf();
      const session = await adapter.startSession(params({ server, env, workspacePath: workspace }));
      let sessionId = '';
      try {
        let started = Date.now();
        const first = await runTurn(adapter, session, PROMPT);
        console.log(`opencode real turn with one tool call: ${Date.now() - started} ms wall`);
        const r1 = first.outcome.result;
        expect(first.outcome.error, first.outcome.error?.detail).toBeUndefined();
        expect(r1.exitReason).toBe('turn_completed');
        // In the workspace, not in the PWD the service was started from.
        expect(readFileSync(path.join(workspace, 'out.txt'), 'utf8')).toBe('hi\n');
        expect(ofType(first.events, 'tool_result')).toMatchObject([
          { toolName: 'bash', toolKind: 'shell', toolArgument: 'echo hi > out.txt', toolError: false },
        ]);
        sessionId = ofType(first.events, 'session_started')[0]?.sessionId ?? '';
        expect(sessionId).toMatch(/^ses_/);
        expect(r1.sessionId).toBe(sessionId);
        // 123 + 190 in (7 + 120 cached), 45 + 21 out; each step reported while the turn ran.
        expect(r1.usage).toEqual(counts(313, 66, 127));
        expect(ofType(first.events, 'token_usage').map((e) => e.usage)).toEqual([
          counts(123, 45, 7),
          counts(313, 66, 127),
        ]);
        expect(r1).toMatchObject({
          usageMeasured: true,
          usageProvenance: 'reported',
          spendUnaccounted: false,
          // The fake's model has no price: OpenCode's cost of 0 is not reported as free.
          reportedAmounts: [],
        });
        expect(r1.finalMessage).toBe('Done: wrote hi to out.txt.');
        // No title request: the turn's two calls only, with the key from the declared variable.
        expect(server.requests).toHaveLength(2);
        for (const request of server.requests) {
          expect(chatOfferedTools(request)).toContain('bash');
          expect(request.headers.authorization).toBe(`Bearer ${DUMMY_KEY}`);
        }
        expect(chatLastUserText(server.requests[0] as RecordedRequest).trim()).toBe(PROMPT);

        started = Date.now();
        const second = await runTurn(adapter, session, 'Now say you are done.');
        console.log(`opencode real resumed turn: ${Date.now() - started} ms wall`);
        const r2 = second.outcome.result;
        expect(second.outcome.error, second.outcome.error?.detail).toBeUndefined();
        expect(r2.sessionId).toBe(sessionId);
        expect(r2.finalMessage).toBe('Second turn done.');
        // The resumed request carries turn 1's conversation.
        expect(server.requests[2]?.bodyText).toContain(PROMPT);
        expect(server.requests[2]?.bodyText).toContain('I will write the file.');
        expect(r2.usage).toEqual(counts(313 + 300, 66 + 5, 127 + 50));
        assertUsageReporting('opencode', [first, second]);
      } finally {
        await adapter.stopSession(session);
      }

      // A later run resumes the session under the same id, from the same managed home.
      const again = adapterOf();
      const later = await again.startSession(
        params({ server, env, workspacePath: workspace, resumeSessionId: sessionId }),
      );
      try {
        const third = await runTurn(again, later, 'Anything else?');
        expect(third.outcome.error, third.outcome.error?.detail).toBeUndefined();
        expect(third.outcome.result.sessionId).toBe(sessionId);
        expect(ofType(third.events, 'warning')).toEqual([]);
        expect(server.requests[3]?.bodyText).toContain('Now say you are done.');
        // A new run's figures start from this run's own turns.
        expect(third.outcome.result.usage).toEqual(counts(400, 5, 50));
      } finally {
        await again.stopSession(later);
      }
    },
    TEST_TIMEOUT_MS * 2,
  );

  it(
    'resuming an id the session database lacks starts afresh with a warning instead of failing every turn',
    async () => {
      const server = await fakeServer([{ type: 'message', text: 'Fresh start.' }]);
      const env = realCliEnv();
      // A database exists (an earlier session made it), without the id asked for.
      const seed = adapterOf();
      const made = await seed.startSession(params({ server, env }));
      try {
        expect((await runTurn(seed, made, 'Hello.')).outcome.error).toBeUndefined();
      } finally {
        await seed.stopSession(made);
      }
      const adapter = adapterOf();
      const lost = 'ses_0000000000000000000000000';
      const session = await adapter.startSession(params({ server, env, resumeSessionId: lost }));
      try {
        const turn = await runTurn(adapter, session, 'Carry on.');
        expect(turn.outcome.error, turn.outcome.error?.detail).toBeUndefined();
        expect(ofType(turn.events, 'warning').map((e) => e.message)).toEqual([
          expect.stringContaining(`no record of session ${lost}`),
        ]);
        expect(turn.outcome.result.sessionId).toMatch(/^ses_/);
        expect(turn.outcome.result.sessionId).not.toBe(lost);
      } finally {
        await adapter.stopSession(session);
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a 401 fails credential verification as credential_unverified after one request offering no tools',
    async () => {
      const server = await fakeServer([
        { type: 'error', status: 401, message: 'Incorrect API key provided', code: 'invalid_api_key' },
      ]);
      const start = params({ server });
      const store = new MemoryProofStore();
      const key = proofKey('opencode', null, start.options, [DUMMY_KEY]);
      const started = Date.now();
      const result = await verifyCredential({
        adapter: adapterOf(),
        start,
        key,
        store,
        issue: SAMPLE_ISSUE,
        timeoutMs: 150_000,
      });
      console.log(`opencode 401 verification: ${Date.now() - started} ms wall`);
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.error.kind).toBe('credential_unverified');
      expect(result.error.detail).toMatch(/Incorrect API key provided \(HTTP status 401, APIError\)/);
      expect(isRetryable(result.error.kind)).toBe(false);
      expect(result.attempts).toBe(1);
      expect(store.get(key)).toBeNull();
      // One request, not retried, and the reduced session offered the model no tool.
      expect(server.requests).toHaveLength(1);
      expect(chatOfferedTools(server.requests[0] as RecordedRequest)).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'an overloaded provider (503) is retried by the CLI, then a retryable response_error',
    async () => {
      const server = await fakeServer([
        { type: 'error', status: 503, message: 'The server is overloaded', code: 'server_is_overloaded' },
      ]);
      const adapter = adapterOf();
      const session = await adapter.startSession(params({ server }));
      try {
        const started = Date.now();
        const turn = await runTurn(adapter, session, 'Say hello.');
        const wallMs = Date.now() - started;
        console.log(`opencode 503 turn: ${server.requests.length} requests, ${wallMs} ms wall`);
        expect(turn.outcome.result.exitReason).toBe('turn_failed');
        expect(turn.outcome.error?.kind).toBe('response_error');
        expect(isRetryable(turn.outcome.error?.kind)).toBe(true);
        expect(turn.outcome.error?.detail).toBe('The server is overloaded (HTTP status 503, APIError)');
        expect(server.requests.length).toBeGreaterThan(1);
        expect(turn.outcome.result.spendUnaccounted).toBe(false);
      } finally {
        await adapter.stopSession(session);
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a cancel after the model served a step is turn_cancelled with the step's figure kept and the spend unaccounted; the CLI is gone",
    async () => {
      const server = await fakeServer(heldAfterShellCall);
      const adapter = adapterOf();
      const session = await adapter.startSession(params({ server }));
      const controller = new AbortController();
      let pid = 0;
      try {
        const turn = await runTurn(adapter, session, PROMPT, {
          signal: controller.signal,
          onEvent: (e) => {
            if (e.type === 'token_usage' && pid === 0) {
              pid = Number(e.agentPid);
              controller.abort();
            }
          },
        });
        const { result, error } = turn.outcome;
        expect(result.exitReason).toBe('turn_cancelled');
        expect(error?.kind).toBe('turn_cancelled');
        expect(result.spendUnaccounted).toBe(true);
        // What was reported before the cancel stays counted: the first call's figures.
        expect(result.usageMeasured).toBe(true);
        expect(result.usage).toEqual(counts(123, 45, 7));
        expect(pid).toBeGreaterThan(0);
        expect(alive(pid)).toBe(false);
      } finally {
        await adapter.stopSession(session);
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'the CLI killed (SIGKILL) mid-turn by someone else is a failed turn (port_exit), with the spend unaccounted',
    async () => {
      const server = await fakeServer(heldAfterShellCall);
      const adapter = adapterOf();
      const session = await adapter.startSession(params({ server }));
      try {
        let killed = false;
        const turn = await runTurn(adapter, session, PROMPT, {
          onEvent: (e) => {
            if (e.type === 'token_usage' && !killed) {
              killed = true;
              process.kill(Number(e.agentPid), 'SIGKILL');
            }
          },
        });
        const { result, error } = turn.outcome;
        expect(result.exitReason).toBe('turn_failed');
        expect(error?.kind).toBe('port_exit');
        expect(error?.detail).toMatch(/killed by SIGKILL/);
        expect(result.spendUnaccounted).toBe(true);
        expect(result.usage).toEqual(counts(123, 45, 7));
      } finally {
        await adapter.stopSession(session);
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a stream the fake holds open trips our stall timeout',
    async () => {
      const server = await fakeServer(heldAfterShellCall);
      const adapter = adapterOf();
      // Long enough that a CLI starting slowly on a loaded machine reaches the held stream first.
      const stallTimeoutMs = 30_000;
      const session = await adapter.startSession(params({ server, stallTimeoutMs }));
      try {
        const started = Date.now();
        const turn = await runTurn(adapter, session, PROMPT);
        console.log(`opencode stalled turn: ${Date.now() - started} ms wall`);
        expect(turn.outcome.error?.detail, 'the stall must fire while the fake holds the stream').toMatch(
          /stalled/,
        );
        expect(turn.outcome.result.exitReason).toBe('turn_failed');
        expect(turn.outcome.error?.kind).toBe('response_timeout');
        expect(ofType(turn.events, 'tool_result')).toHaveLength(1);
        expect(server.requests).toHaveLength(2);
        expect(turn.outcome.result.spendUnaccounted).toBe(true);
      } finally {
        await adapter.stopSession(session);
      }
    },
    TEST_TIMEOUT_MS,
  );
});
