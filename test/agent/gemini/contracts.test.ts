/**
 * The gemini kind against the shared adapter contracts: the disposition rule and
 * credential verification through fake runtimes that write Gemini CLI's own
 * lines, and usage reporting on a two-turn session of such a runtime. The kind
 * declares no work signal, so its clean exit after output without a result line
 * must fail (Gemini CLI exits 0 when it is stopped mid-turn). When the pinned CLI
 * is installed, the credential suite also verifies through it, against the fake
 * model server.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertCredentialVerification } from '../../../internal-contracts/agent/credential-verification.js';
import { assertDispositionContract } from '../../../internal-contracts/agent/disposition-contract.js';
import { fakeRuntime } from '../../../internal-contracts/agent/fake-runtime.js';
import { assertUsageReporting } from '../../../internal-contracts/agent/usage-reporting.js';
import '../../../src/agent/kinds.js';
import { geminiDialect } from '../../support/fake-model/gemini.js';
import { FakeModelServer } from '../../support/fake-model/server.js';
import { pinnedCliPlan } from '../../support/headless-cli.js';
import { GEMINI_MODEL } from './real-cli.js';
import {
  adapterOf,
  counts,
  geminiLines,
  realCliEnv,
  runSession,
  startParams,
  workspaceRoot,
} from './support.js';

const ws = workspaceRoot('gemini-contracts-');
const plan = pinnedCliPlan('gemini', 'gemini');
let server: FakeModelServer | null = null;

beforeAll(async () => {
  if (plan.run) server = await FakeModelServer.start([geminiDialect([{ type: 'message', text: 'ready' }])]);
});
afterAll(async () => {
  await server?.close();
  ws.cleanup();
});

const TIMEOUT = 60_000;

describe('gemini kind: disposition contract', () => {
  it(
    'ends every fake-runtime turn as the shared rule decides (result line, early exit, 127, signal, bare exit 0 after output)',
    async () => {
      const results = await assertDispositionContract({
        startWith: async (command) => {
          const adapter = adapterOf();
          return { adapter, session: await adapter.startSession(startParams({ ws, command })) };
        },
        successLine: geminiLines.success(),
        failure: {
          line: geminiLines.failure('[API Error: The model is overloaded. Please try again later.]'),
          kind: 'response_error',
        },
        preamble: [geminiLines.init(), geminiLines.user()],
        // Output without a result line is no evidence: the CLI prints it and exits 0 when stopped.
        workLines: null,
      });
      expect(results.map((r) => r.name)).toContain(
        'accepted output without work or a terminal report, then exit 0, fails (exit 0 alone is never success)',
      );
    },
    TIMEOUT,
  );

  it(
    'assistant text and a tool call, then exit 0 without a result line, is a failed turn (the SIGTERM shape)',
    async () => {
      const command = fakeRuntime(path.join(ws.root, 'no-result'), 'gemini', {
        steps: [
          { stdout: geminiLines.init() },
          { stdout: geminiLines.user() },
          { stdout: geminiLines.text('Working on it.\n') },
          { stdout: geminiLines.toolUse('t1', 'ls') },
          { stdout: geminiLines.toolResult('t1') },
          { exit: 0 },
        ],
      });
      const [turn] = await runSession(startParams({ ws, command }), ['go']);
      expect(turn?.outcome.result.exitReason).toBe('turn_failed');
      expect(turn?.outcome.error?.kind).toBe('turn_failed');
      expect(turn?.outcome.error?.detail).toMatch(/exited 0 without reporting an outcome/);
      // The model served output, and no figure covers it.
      expect(turn?.outcome.result.spendUnaccounted).toBe(true);
    },
    TIMEOUT,
  );
});

describe('gemini kind: credential verification', () => {
  it(
    'verifies an answering runtime and reuses the proof, reports a 401 as credential_unverified once, retries an early exit with full context',
    async () => {
      if (!plan.run) console.warn(`the real-runtime credential case is skipped: ${plan.reason}`);
      const results = await assertCredentialVerification({
        kind: 'gemini',
        startParams: (command) =>
          startParams({
            ws,
            command,
            options: { model: GEMINI_MODEL, max_attempts: 1 },
            ...(command === null && server !== null ? { env: realCliEnv(server.url) } : {}),
          }),
        answerLines: [
          geminiLines.init(),
          geminiLines.user(),
          geminiLines.text('ready'),
          geminiLines.success(),
        ],
        refusal: {
          lines: [
            geminiLines.init(),
            geminiLines.user(),
            geminiLines.failure(
              '[API Error: {"error":{"code":401,"message":"API key not valid. Please pass a valid API key.","status":"UNAUTHENTICATED"}}]',
            ),
          ],
          // What the real CLI exits with on a 401: the status modulo 256.
          exitCode: 145,
          kinds: ['credential_unverified'],
        },
        realRuntime: plan.run,
        timeoutMs: 45_000,
      });
      if (plan.run) expect(results.map((r) => r.name)).toContain("the kind's own runtime verifies");
    },
    TIMEOUT * 2,
  );
});

describe('gemini kind: usage reporting', () => {
  it(
    'reports one figure per turn after the work, cached inside input, thoughts inside output, and turn 2 adds to turn 1',
    async () => {
      const command = fakeRuntime(path.join(ws.root, 'usage-fake'), 'gemini', {
        turns: [
          [
            { stdout: geminiLines.init() },
            { stdout: geminiLines.user() },
            { stdout: geminiLines.text('looking\n') },
            { stdout: geminiLines.toolUse('t1', 'ls') },
            { stdout: geminiLines.toolResult('t1') },
            { stdout: geminiLines.text('done') },
            { stdout: geminiLines.success({ input: 300, output: 60, cached: 40, thoughts: 25 }) },
            { exit: 0 },
          ],
          [
            { stdout: geminiLines.init() },
            { stdout: geminiLines.user() },
            { stdout: geminiLines.text('again') },
            { stdout: geminiLines.success({ input: 50, output: 10, cached: 0 }) },
            { exit: 0 },
          ],
        ],
      });
      const turns = await runSession(startParams({ ws, command }), ['first', 'second']);
      assertUsageReporting('gemini', turns);
      const [first, second] = turns;
      expect(first?.outcome.result.usage).toEqual(counts(300, 85, 40));
      expect(second?.outcome.result.usage).toEqual(counts(350, 95, 40));
      expect(second?.outcome.result.usageByModel).toEqual({ 'gemini-fake': counts(350, 95, 40) });
      expect(second?.outcome.result).toMatchObject({
        usageMeasured: true,
        usageProvenance: 'reported',
        spendUnaccounted: false,
        reportedAmounts: [],
      });
      expect(first?.outcome.result.finalMessage).toBe('done');
    },
    TIMEOUT,
  );
});
