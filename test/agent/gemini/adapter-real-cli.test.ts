/**
 * The pinned Gemini CLI (scripts/install-agent-clis.sh puts it in .cache/agent-clis)
 * driven through the gemini adapter against the fake model server on 127.0.0.1.
 * Each case has its own HOME, managed-home root and temp folder, and a dummy key.
 * What only the real CLI can show lives here: the tool really runs in the
 * workspace, the figures are exactly what the fake served (thinking tokens
 * included), a 401 fails credential verification in one request, an overloaded
 * model is given up on after the block's attempts instead of minutes of backoff,
 * a cancel or a kill after output leaves the spend unaccounted, a SIGTERM from
 * elsewhere (after which the CLI exits 0) is not a success, a held stream trips
 * our stall timer, and turn 2, and a later session under the same id, resume the
 * conversation with usage adding up.
 *
 * A real turn costs 2–4 s here, so every wait is on a condition with a generous
 * deadline. Without the CLI the file skips and says why, except under CI, which
 * installs it: there it fails.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { assertUsageReporting } from '../../../internal-contracts/agent/usage-reporting.js';
import { MemoryProofStore, proofKey, verifyCredential } from '../../../src/agent/core/verify-credential.js';
import { DEFAULT_MAX_ATTEMPTS } from '../../../src/agent/gemini/config.js';
import '../../../src/agent/kinds.js';
import { isRetryable } from '../../../src/domain/errors.js';
import { SAMPLE_ISSUE } from '../../../src/prompt/variables.js';
import {
  type GeminiReply,
  geminiAnswersFunctionCall,
  geminiDialect,
} from '../../support/fake-model/gemini.js';
import { FakeModelServer, type RecordedRequest } from '../../support/fake-model/server.js';
import { pinnedCliPlan } from '../../support/headless-cli.js';
import { itHasThePinnedCli } from '../../support/pinned-cli.js';
import { GEMINI_BIN, GEMINI_MODEL } from './real-cli.js';
import {
  adapterOf,
  counts,
  DUMMY_KEY,
  ofType,
  realCliEnv,
  runTurn,
  startParams,
  workspaceRoot,
} from './support.js';

const plan = pinnedCliPlan('gemini', 'gemini');
if (!plan.run) console.warn(`gemini adapter real-CLI tests skipped: ${plan.reason}`);

const TEST_TIMEOUT_MS = 180_000;
const ws = workspaceRoot('gemini-real-');
let servers: FakeModelServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function fakeServer(
  script: readonly GeminiReply[] | ((r: RecordedRequest, i: number) => GeminiReply),
): Promise<FakeModelServer> {
  const server = await FakeModelServer.start([geminiDialect(script)]);
  servers.push(server);
  return server;
}

interface CaseParams {
  env: Record<string, string>;
  workspacePath?: string;
  stallTimeoutMs?: number;
  options?: Record<string, unknown>;
  resumeSessionId?: string | null;
}

function params(p: CaseParams) {
  return startParams({
    ws,
    command: null,
    options: { model: GEMINI_MODEL, ...p.options },
    env: p.env,
    agent: { stallTimeoutMs: p.stallTimeoutMs ?? 0, turnTimeoutMs: 120_000 },
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

/** Text the fake cuts in two: the first frame ends after a line break, so the adapter reports it at once. */
const HELD_TEXT = 'Hello there, working.\nThe rest of this answer never comes';
const HELD_FIRST_LINE = 'Hello there, working.';
const STALL_TIMEOUT_MS = 10_000;

/** The model's side of the shell case: a shell call, the answer after it, then one reply per later turn. */
function shellScript(later: readonly string[]): (request: RecordedRequest, index: number) => GeminiReply {
  return (request, index) => {
    if (index >= 2) {
      const text = later[index - 2] ?? 'Nothing more.';
      return { type: 'message', text, usage: { prompt: 300 + 100 * (index - 2), candidates: 5, cached: 50 } };
    }
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
        {
          name: 'run_shell_command',
          args: { command: 'echo hi > out.txt', description: 'Write hi to out.txt' },
        },
      ],
      usage: { prompt: 123, candidates: 45, cached: 7, thoughts: 11 },
    };
  };
}

describe.skipIf(!plan.run)('gemini adapter with the real CLI against the fake model server', () => {
  itHasThePinnedCli(GEMINI_BIN);

  it(
    "a shell call writes the file with exactly the fake's figures; turn 2 and a later session resume the conversation",
    async () => {
      const workspace = ws.workspace();
      const server = await fakeServer(shellScript(['Second turn done.', 'Third, in a new session.']));
      const env = realCliEnv(server.url);
      const adapter = adapterOf();
      const session = await adapter.startSession(params({ env, workspacePath: workspace }));
      let sessionId = '';
      try {
        let started = Date.now();
        const first = await runTurn(adapter, session, 'Write hi to out.txt using the shell.');
        console.log(`gemini real turn with one tool call: ${Date.now() - started} ms wall`);
        const r1 = first.outcome.result;
        expect(first.outcome.error, first.outcome.error?.detail).toBeUndefined();
        expect(r1.exitReason).toBe('turn_completed');
        expect(readFileSync(path.join(workspace, 'out.txt'), 'utf8')).toBe('hi\n');
        expect(ofType(first.events, 'tool_result')).toMatchObject([
          {
            toolName: 'run_shell_command',
            toolKind: 'shell',
            toolArgument: 'echo hi > out.txt',
            toolError: false,
          },
        ]);
        sessionId = ofType(first.events, 'session_started')[0]?.sessionId ?? '';
        expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
        expect(r1.sessionId).toBe(sessionId);
        // 123 + 190 in (7 + 120 cached), 45 + 21 out plus 11 thinking tokens.
        expect(r1.usage).toEqual(counts(313, 77, 127));
        expect(r1.usageByModel).toEqual({ [GEMINI_MODEL]: counts(313, 77, 127) });
        expect(r1).toMatchObject({
          usageMeasured: true,
          usageProvenance: 'reported',
          spendUnaccounted: false,
        });
        expect(r1.finalMessage).toBe('Done: wrote hi to out.txt.');
        expect(server.requests).toHaveLength(2);
        expect(server.requests[0]?.headers['x-goog-api-key']).toBe(DUMMY_KEY);

        started = Date.now();
        const second = await runTurn(adapter, session, 'Now say you are done.');
        console.log(`gemini real resumed turn: ${Date.now() - started} ms wall`);
        const r2 = second.outcome.result;
        expect(second.outcome.error, second.outcome.error?.detail).toBeUndefined();
        expect(r2.sessionId).toBe(sessionId);
        expect(r2.finalMessage).toBe('Second turn done.');
        // The resumed request carries turn 1's conversation.
        expect(server.requests[2]?.bodyText).toContain('Write hi to out.txt using the shell.');
        expect(server.requests[2]?.bodyText).toContain('I will write the file.');
        expect(r2.usage).toEqual(counts(313 + 300, 77 + 5, 127 + 50));
        assertUsageReporting('gemini', [first, second]);
      } finally {
        await adapter.stopSession(session);
      }

      // A later run resumes the session under the same id, from the same managed home.
      const again = adapterOf();
      const later = await again.startSession(
        params({ env, workspacePath: workspace, resumeSessionId: sessionId }),
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
    TEST_TIMEOUT_MS,
  );

  it(
    'resuming a session whose record is gone starts it afresh with a warning instead of failing every turn',
    async () => {
      const server = await fakeServer([{ type: 'message', text: 'Fresh start.' }]);
      const adapter = adapterOf();
      const lost = randomUUID();
      const session = await adapter.startSession(
        params({ env: realCliEnv(server.url), resumeSessionId: lost }),
      );
      try {
        const turn = await runTurn(adapter, session, 'Carry on.');
        expect(turn.outcome.error, turn.outcome.error?.detail).toBeUndefined();
        expect(ofType(turn.events, 'warning').map((e) => e.message)).toEqual([
          expect.stringContaining(`no record of session ${lost}`),
        ]);
        expect(turn.outcome.result.sessionId).toBe(lost);
      } finally {
        await adapter.stopSession(session);
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a 401 fails credential verification as credential_unverified after one request, and fails a working turn alike',
    async () => {
      const server = await fakeServer([
        { type: 'error', status: 401, message: 'API key not valid. Please pass a valid API key.' },
      ]);
      const env = realCliEnv(server.url);
      const start = params({ env });
      const store = new MemoryProofStore();
      const key = proofKey('gemini', null, start.options, [DUMMY_KEY, '', '']);
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
      expect(server.requests).toHaveLength(1);

      const adapter = adapterOf();
      const session = await adapter.startSession(params({ env }));
      try {
        const turn = await runTurn(adapter, session, 'Say hello.');
        expect(turn.outcome.error?.kind).toBe('credential_unverified');
        expect(turn.outcome.error?.detail).toMatch(/HTTP status 401/);
        expect(turn.outcome.result.spendUnaccounted).toBe(false);
      } finally {
        await adapter.stopSession(session);
      }
    },
    TEST_TIMEOUT_MS,
  );

  it.each([
    [2, { max_attempts: 2 }],
    [DEFAULT_MAX_ATTEMPTS, {}],
  ])(
    'an overloaded model (503) is tried %i times, then a retryable response_error within seconds, not minutes',
    async (attempts, options) => {
      const server = await fakeServer([
        { type: 'error', status: 503, message: 'The model is overloaded. Please try again later.' },
      ]);
      const adapter = adapterOf();
      const session = await adapter.startSession(params({ env: realCliEnv(server.url), options }));
      try {
        const started = Date.now();
        const turn = await runTurn(adapter, session, 'Say hello.');
        const wallMs = Date.now() - started;
        console.log(`gemini 503 turn with ${attempts} attempts: ${wallMs} ms wall`);
        expect(turn.outcome.result.exitReason).toBe('turn_failed');
        expect(turn.outcome.error?.kind).toBe('response_error');
        expect(isRetryable(turn.outcome.error?.kind)).toBe(true);
        expect(turn.outcome.error?.detail).toMatch(/overloaded.*HTTP status 503/);
        expect(server.requests).toHaveLength(attempts);
        expect(wallMs).toBeLessThan(60_000);
      } finally {
        await adapter.stopSession(session);
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a cancel after the model served output is turn_cancelled with the spend unaccounted, and the CLI is gone',
    async () => {
      const server = await fakeServer([{ type: 'message', text: HELD_TEXT, holdAt: 'first_frame' }]);
      const adapter = adapterOf();
      const session = await adapter.startSession(params({ env: realCliEnv(server.url) }));
      const controller = new AbortController();
      let pid = 0;
      try {
        const turn = await runTurn(adapter, session, 'Say hello slowly.', {
          signal: controller.signal,
          onEvent: (e) => {
            if (e.type === 'notification' && e.message === HELD_FIRST_LINE) {
              pid = Number(e.agentPid);
              controller.abort();
            }
          },
        });
        const { result, error } = turn.outcome;
        expect(result.exitReason).toBe('turn_cancelled');
        expect(error?.kind).toBe('turn_cancelled');
        expect(result.spendUnaccounted).toBe(true);
        // No result line, so no figure: the spend is unknown, not zero.
        expect(result.usageMeasured).toBe(false);
        expect(pid).toBeGreaterThan(0);
        expect(alive(pid)).toBe(false);
      } finally {
        await adapter.stopSession(session);
      }
    },
    TEST_TIMEOUT_MS,
  );

  it.each([
    ['SIGKILL', 'port_exit', /killed by SIGKILL/],
    // The CLI exits 0 after a SIGTERM and prints no result: exit 0 is not a success.
    ['SIGTERM', 'turn_failed', /exited 0 without reporting an outcome/],
  ] as const)(
    'the CLI sent %s mid-turn by someone else is a failed turn (%s), with the spend unaccounted',
    async (signal, kind, detail) => {
      const server = await fakeServer([{ type: 'message', text: HELD_TEXT, holdAt: 'first_frame' }]);
      const adapter = adapterOf();
      const session = await adapter.startSession(params({ env: realCliEnv(server.url) }));
      try {
        const turn = await runTurn(adapter, session, 'Say hello slowly.', {
          onEvent: (e) => {
            if (e.type === 'notification' && e.message === HELD_FIRST_LINE)
              process.kill(Number(e.agentPid), signal);
          },
        });
        const { result, error } = turn.outcome;
        expect(result.exitReason).toBe('turn_failed');
        expect(error?.kind).toBe(kind);
        expect(error?.detail).toMatch(detail);
        expect(result.spendUnaccounted).toBe(true);
      } finally {
        await adapter.stopSession(session);
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a stream the fake holds open trips our stall timeout',
    async () => {
      const server = await fakeServer([{ type: 'message', text: HELD_TEXT, holdAt: 'first_frame' }]);
      const adapter = adapterOf();
      // Long enough that a CLI starting slowly on a loaded machine reaches the held stream first.
      const session = await adapter.startSession(
        params({ env: realCliEnv(server.url), stallTimeoutMs: STALL_TIMEOUT_MS }),
      );
      try {
        const started = Date.now();
        const turn = await runTurn(adapter, session, 'Say hello.');
        expect(turn.outcome.error?.detail, 'the stall must fire while the fake holds the stream').toMatch(
          /stalled/,
        );
        expect(turn.outcome.result.exitReason).toBe('turn_failed');
        expect(turn.outcome.error?.kind).toBe('response_timeout');
        expect(ofType(turn.events, 'notification').map((e) => e.message)).toContain(HELD_FIRST_LINE);
        expect(server.requests).toHaveLength(1);
        expect(Date.now() - started).toBeLessThan(60_000);
      } finally {
        await adapter.stopSession(session);
      }
    },
    TEST_TIMEOUT_MS,
  );
});
