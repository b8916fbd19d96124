/**
 * The opencode kind against the shared adapter contracts: the disposition rule and
 * credential verification through fake runtimes that write OpenCode's own lines,
 * and usage reporting on a two-turn session of such a runtime. The kind declares
 * no work signal: OpenCode prints no result event, so output that never reached a
 * finishing step, then exit 0, must fail. When the pinned CLI is installed, the
 * credential suite also verifies through it, against the fake model server.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertCredentialVerification } from '../../../internal-contracts/agent/credential-verification.js';
import { assertDispositionContract } from '../../../internal-contracts/agent/disposition-contract.js';
import { fakeInvocations, fakeRuntime } from '../../../internal-contracts/agent/fake-runtime.js';
import { assertUsageReporting } from '../../../internal-contracts/agent/usage-reporting.js';
import '../../../src/agent/kinds.js';
import { chatDialect } from '../../support/fake-model/chat.js';
import { FakeModelServer } from '../../support/fake-model/server.js';
import { pinnedCliPlan } from '../../support/headless-cli.js';
import {
  adapterOf,
  counts,
  opencodeLines,
  realCliBlock,
  realCliEnv,
  runSession,
  SESSION,
  startParams,
  workspaceRoot,
} from './support.js';

const ws = workspaceRoot('opencode-contracts-');
const plan = pinnedCliPlan('opencode', 'opencode');
let server: FakeModelServer | null = null;

beforeAll(async () => {
  if (plan.run) server = await FakeModelServer.start([chatDialect([{ type: 'message', text: 'ready' }])]);
});
afterAll(async () => {
  await server?.close();
  ws.cleanup();
});

const TIMEOUT = 60_000;

describe('opencode kind: disposition contract', () => {
  it(
    'ends every fake-runtime turn as the shared rule decides (finishing step, error line, early exit, 127, signal, bare exit 0 after output)',
    async () => {
      const results = await assertDispositionContract({
        startWith: async (command) => {
          const adapter = adapterOf();
          return { adapter, session: await adapter.startSession(startParams({ ws, command })) };
        },
        successLine: opencodeLines.stepFinish({ input: 10, output: 5 }),
        failure: {
          line: opencodeLines.error('The server is overloaded', { statusCode: 503, isRetryable: true }),
          kind: 'response_error',
        },
        preamble: [opencodeLines.stepStart()],
        // No result event: output without a finishing step proves nothing.
        workLines: null,
      });
      expect(results.map((r) => r.name)).toContain(
        'accepted output without work or a terminal report, then exit 0, fails (exit 0 alone is never success)',
      );
    },
    TIMEOUT,
  );

  it(
    'text and a tool call whose step asked for more, then exit 0, is a failed turn (the loop was cut short)',
    async () => {
      const command = fakeRuntime(path.join(ws.root, 'cut-short'), 'opencode', {
        steps: [
          { stdout: opencodeLines.stepStart() },
          { stdout: opencodeLines.text('Working on it.') },
          { stdout: opencodeLines.tool('ls') },
          { stdout: opencodeLines.stepFinish({ input: 10, output: 5, reason: 'tool-calls' }) },
          { exit: 0 },
        ],
      });
      const [turn] = await runSession(startParams({ ws, command }), ['go']);
      expect(turn?.outcome.result.exitReason).toBe('turn_failed');
      expect(turn?.outcome.error?.kind).toBe('turn_failed');
      expect(turn?.outcome.error?.detail).toMatch(/exited 0 without reporting an outcome/);
      // The model served output, and nothing says the figure covers the turn.
      expect(turn?.outcome.result.spendUnaccounted).toBe(true);
    },
    TIMEOUT,
  );

  it(
    'an error line with exit 0 is still a failure (an older CLI exits 0 after a provider refusal)',
    async () => {
      const command = fakeRuntime(path.join(ws.root, 'error-exit-0'), 'opencode', {
        steps: [
          { stdout: opencodeLines.stepStart() },
          { stdout: opencodeLines.error('invalid api key', { name: 'ProviderAuthError' }) },
          { exit: 0 },
        ],
      });
      const [turn] = await runSession(startParams({ ws, command }), ['go']);
      expect(turn?.outcome.result.exitReason).toBe('turn_failed');
      expect(turn?.outcome.error?.kind).toBe('credential_unverified');
      expect(turn?.outcome.error?.detail).toBe('invalid api key (ProviderAuthError)');
      expect(turn?.outcome.result.spendUnaccounted).toBe(false);
    },
    TIMEOUT,
  );
});

describe('opencode kind: credential verification', () => {
  it(
    'verifies an answering runtime and reuses the proof, reports a 401 as credential_unverified once, retries an early exit with full context',
    async () => {
      if (!plan.run) console.warn(`the real-runtime credential case is skipped: ${plan.reason}`);
      const results = await assertCredentialVerification({
        kind: 'opencode',
        startParams: (command) =>
          startParams({
            ws,
            command,
            ...(command === null && server !== null
              ? { env: realCliEnv(), options: realCliBlock(server.url) }
              : {}),
          }),
        answerLines: [
          opencodeLines.stepStart(),
          opencodeLines.text('ready'),
          opencodeLines.stepFinish({ input: 20, output: 1 }),
        ],
        refusal: {
          lines: [opencodeLines.error('Incorrect API key provided', { statusCode: 401, isRetryable: false })],
          exitCode: 1,
          kinds: ['credential_unverified'],
        },
        realRuntime: plan.run,
        timeoutMs: 120_000,
      });
      if (plan.run) expect(results.map((r) => r.name)).toContain("the kind's own runtime verifies");
    },
    TIMEOUT * 4,
  );
});

describe('opencode kind: usage reporting', () => {
  it(
    'reports each step while the turn works, cache and reasoning into our classes, a priced step as USD, and turn 2 adds to turn 1 under the same session',
    async () => {
      const command = fakeRuntime(path.join(ws.root, 'usage-fake'), 'opencode', {
        turns: [
          [
            { stdout: opencodeLines.stepStart('msg_1') },
            { stdout: opencodeLines.text('I will look.', 'msg_1') },
            { stdout: opencodeLines.tool('ls', { message: 'msg_1' }) },
            {
              stdout: opencodeLines.stepFinish(
                { input: 116, output: 45, cacheRead: 7, reason: 'tool-calls', cost: 0.0015 },
                'msg_1',
              ),
            },
            { stdout: opencodeLines.stepStart('msg_2') },
            { stdout: opencodeLines.text('done', 'msg_2') },
            {
              stdout: opencodeLines.stepFinish(
                { input: 70, output: 21, cacheRead: 120, cacheWrite: 4, reasoning: 9, cost: 0.0005 },
                'msg_2',
              ),
            },
            { exit: 0 },
          ],
          [
            { stdout: opencodeLines.stepStart('msg_3') },
            { stdout: opencodeLines.text('again', 'msg_3') },
            { stdout: opencodeLines.stepFinish({ input: 50, output: 10 }, 'msg_3') },
            { exit: 0 },
          ],
        ],
      });
      const turns = await runSession(startParams({ ws, command }), ['first', 'second']);
      assertUsageReporting('opencode', turns);
      const [first, second] = turns;
      // 116 + 7 and 70 + 120 + 4 in; 45 and 21 + 9 out.
      expect(first?.outcome.result.usage).toEqual(counts(317, 75, 127, 4));
      expect(second?.outcome.result.usage).toEqual(counts(367, 85, 127, 4));
      expect(second?.outcome.result).toMatchObject({
        sessionId: SESSION,
        usageMeasured: true,
        usageProvenance: 'reported',
        spendUnaccounted: false,
        usageByModel: {},
        reportedAmounts: [{ unit: 'USD', micros: 2_000 }],
      });
      expect(first?.outcome.result.finalMessage).toBe('done');
      // The prompt reached stdin; turn 2 continued turn 1's session by id, without a title.
      const calls = fakeInvocations(command);
      expect(calls.map((c) => c.stdin)).toEqual(['first', 'second']);
      expect(calls[0]?.argv).toContain('--title');
      expect(calls[1]?.argv.slice(-2)).toEqual(['--session', SESSION]);
    },
    TIMEOUT,
  );
});
