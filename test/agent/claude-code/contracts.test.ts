/**
 * The claude-code kind against the shared adapter contracts: the disposition rule
 * and credential verification through fake runtimes that write Claude Code's own
 * lines, and usage reporting on a two-turn session of such a runtime. The real CLI
 * is proven against the same suites in real-cli.test.ts; when it is installed, the
 * credential suite here also verifies through it, against the fake model server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertCredentialVerification } from '../../../internal-contracts/agent/credential-verification.js';
import { assertDispositionContract } from '../../../internal-contracts/agent/disposition-contract.js';
import { fakeRuntime } from '../../../internal-contracts/agent/fake-runtime.js';
import { assertUsageReporting } from '../../../internal-contracts/agent/usage-reporting.js';
import '../../../src/agent/kinds.js';
import { anthropicDialect } from '../../support/fake-model/anthropic.js';
import { FakeModelServer } from '../../support/fake-model/server.js';
import {
  adapterOf,
  claudeLines,
  realCliEnv,
  realCliPlan,
  runSession,
  startParams,
  workspaceRoot,
} from './support.js';

const ws = workspaceRoot('claude-contracts-');
const plan = realCliPlan();
let server: FakeModelServer | null = null;

beforeAll(async () => {
  if (plan.run)
    server = await FakeModelServer.start([anthropicDialect([{ type: 'message', text: 'ready' }])]);
});
afterAll(async () => {
  await server?.close();
  ws.cleanup();
});

const TIMEOUT = 60_000;

const refusalLines = [
  claudeLines.init(),
  JSON.stringify({
    type: 'system',
    subtype: 'api_retry',
    attempt: 1,
    max_retries: 1,
    error_status: 401,
    error: 'authentication_failed',
  }),
  JSON.stringify({
    type: 'assistant',
    error: 'authentication_failed',
    message: {
      id: 'synthetic-1',
      model: '<synthetic>',
      content: [{ type: 'text', text: 'Invalid API key' }],
    },
  }),
  claudeLines.result({ isError: true, apiErrorStatus: 401, text: 'Invalid API key', costUsd: 0 }),
];

describe('claude-code kind: disposition contract', () => {
  it(
    'ends every fake-runtime turn as the shared rule decides (result line, early exit, 127, signal, work, bare exit 0)',
    async () => {
      const results = await assertDispositionContract({
        startWith: async (command) => {
          const adapter = adapterOf();
          return { adapter, session: await adapter.startSession(startParams({ ws, command })) };
        },
        successLine: claudeLines.result({ text: 'all done' }),
        failure: {
          line: claudeLines.result({ isError: true, apiErrorStatus: 529, text: 'API Error: 529 Overloaded' }),
          kind: 'response_error',
        },
        preamble: [claudeLines.init()],
        workLines: [
          claudeLines.assistantText('msg_w1', 'working on it'),
          claudeLines.assistantTool('msg_w1', 'toolu_w1', 'ls'),
          claudeLines.toolResult('toolu_w1'),
        ],
      });
      expect(results.length).toBeGreaterThanOrEqual(9);
    },
    TIMEOUT,
  );
});

describe('claude-code kind: credential verification', () => {
  it(
    'verifies an answering runtime and reuses the proof, reports a 401 as credential_unverified once, retries an early exit with full context',
    async () => {
      if (plan.reason !== null && !plan.run)
        console.warn(`the real-runtime credential case is skipped: ${plan.reason}`);
      const results = await assertCredentialVerification({
        kind: 'claude-code',
        startParams: (command) =>
          startParams({
            ws,
            command,
            ...(command === null && server !== null ? { env: realCliEnv(server.url) } : {}),
          }),
        answerLines: [
          claudeLines.init(),
          claudeLines.assistantText('msg_ready', 'ready'),
          claudeLines.result({ text: 'ready' }),
        ],
        refusal: { lines: refusalLines, kinds: ['credential_unverified'] },
        realRuntime: plan.run,
        timeoutMs: 45_000,
      });
      if (plan.run) expect(results.map((r) => r.name)).toContain("the kind's own runtime verifies");
    },
    TIMEOUT * 2,
  );
});

describe('claude-code kind: usage reporting', () => {
  it(
    'reports per-request figures while the turn works, settles on the result, and adds turn 2 to turn 1',
    async () => {
      const command = fakeRuntime(`${ws.root}/usage-fake`, 'claude', {
        turns: [
          [
            { stdout: claudeLines.init() },
            {
              stdout: claudeLines.assistantText('msg_u1', 'looking', {
                input: 100,
                output: 1,
                cacheRead: 20,
                cacheWrite: 0,
              }),
            },
            { stdout: claudeLines.assistantTool('msg_u1', 'toolu_u1', 'ls') },
            { stdout: claudeLines.toolResult('toolu_u1') },
            {
              stdout: claudeLines.assistantText('msg_u2', 'done', {
                input: 120,
                output: 1,
                cacheRead: 20,
                cacheWrite: 0,
              }),
            },
            {
              stdout: claudeLines.result({
                usage: { input: 220, output: 60, cacheRead: 40, cacheWrite: 0 },
                costUsd: 0.01,
              }),
            },
            { exit: 0 },
          ],
          [
            { stdout: claudeLines.init() },
            {
              stdout: claudeLines.assistantText('msg_u3', 'again', {
                input: 50,
                output: 1,
                cacheRead: 0,
                cacheWrite: 0,
              }),
            },
            {
              stdout: claudeLines.result({
                usage: { input: 50, output: 10, cacheRead: 0, cacheWrite: 0 },
                costUsd: 0.002,
              }),
            },
            { exit: 0 },
          ],
        ],
      });
      const turns = await runSession(startParams({ ws, command }), ['first', 'second']);
      assertUsageReporting('claude-code', turns);
      expect(turns.map((t) => t.outcome.result.usage.inputTokens)).toEqual([260, 310]);
      expect(turns.map((t) => t.outcome.result.usage.outputTokens)).toEqual([60, 70]);
      expect(turns[1]?.outcome.result.reportedAmounts).toEqual([{ unit: 'USD', micros: 12_000 }]);
    },
    TIMEOUT,
  );
});
