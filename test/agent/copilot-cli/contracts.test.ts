/**
 * The copilot-cli kind against the shared adapter contracts: the disposition rule
 * and credential verification through fake runtimes that write Copilot's own
 * lines, and usage reporting on a two-turn session whose figures come from the
 * session journal (a fake writes no usage summary, so this is the journal path;
 * the summary path is proven with the real CLI in adapter-real-cli.test.ts). When
 * the pinned CLI is installed, the credential suite also verifies through it,
 * against the fake model server.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertCredentialVerification } from '../../../internal-contracts/agent/credential-verification.js';
import { assertDispositionContract } from '../../../internal-contracts/agent/disposition-contract.js';
import { fakeRuntime } from '../../../internal-contracts/agent/fake-runtime.js';
import { assertUsageReporting } from '../../../internal-contracts/agent/usage-reporting.js';
import '../../../src/agent/kinds.js';
import { chatDialect } from '../../support/fake-model/chat.js';
import { FakeModelServer } from '../../support/fake-model/server.js';
import { pinnedCliPlan } from '../../support/headless-cli.js';
import { COPILOT_BIN, copilotEnv } from './real-cli.js';
import {
  adapterOf,
  copilotHomeDir,
  copilotLines,
  counts,
  FAKE_SESSION_ID,
  runSession,
  startParams,
  workspaceRoot,
  writeJournal,
} from './support.js';

const ws = workspaceRoot('copilot-contracts-');
const plan = pinnedCliPlan('copilot', 'copilot');
let server: FakeModelServer | null = null;

beforeAll(async () => {
  if (plan.run) server = await FakeModelServer.start([chatDialect([{ type: 'message', text: 'ready' }])]);
});
afterAll(async () => {
  await server?.close();
  ws.cleanup();
});

const TIMEOUT = 60_000;

/** The environment of the pinned CLI against the fake server, with `copilot` on PATH. */
function realEnv(url: string): Record<string, string> {
  const env = copilotEnv(copilotHomeDir(), url);
  return { ...env, PATH: `${path.dirname(COPILOT_BIN)}:${env.PATH}` };
}

describe('copilot-cli kind: disposition contract', () => {
  it(
    'ends every fake-runtime turn as the shared rule decides (result line, early exit, 127, signal, work, bare exit 0)',
    async () => {
      const results = await assertDispositionContract({
        startWith: async (command) => {
          const adapter = adapterOf();
          return { adapter, session: await adapter.startSession(startParams({ ws, command })) };
        },
        successLine: copilotLines.result({ exitCode: 0 }),
        failure: { line: copilotLines.result({ exitCode: 1 }), kind: 'turn_failed' },
        preamble: [copilotLines.toolsUpdated(), copilotLines.backgroundTasks()],
        workLines: [
          copilotLines.message('m-w1', 'working on it', [{ id: 't-w1', name: 'bash' }]),
          copilotLines.toolStart('t-w1', 'bash', { command: 'ls' }),
          copilotLines.toolComplete('t-w1'),
        ],
      });
      expect(results.length).toBeGreaterThanOrEqual(9);
    },
    TIMEOUT,
  );
});

describe('copilot-cli kind: credential verification', () => {
  it(
    'verifies an answering runtime and reuses the proof, reports a 401 as credential_unverified once, retries an early exit with full context',
    async () => {
      if (!plan.run) console.warn(`the real-runtime credential case is skipped: ${plan.reason}`);
      const results = await assertCredentialVerification({
        kind: 'copilot-cli',
        startParams: (command) =>
          startParams({
            ws,
            command,
            ...(command === null && server !== null ? { env: realEnv(server.url) } : {}),
          }),
        answerLines: [
          copilotLines.toolsUpdated(),
          copilotLines.message('m-ready', 'ready'),
          copilotLines.result({ exitCode: 0 }),
        ],
        refusal: {
          lines: [
            copilotLines.toolsUpdated(),
            copilotLines.callFailure(401, 0),
            copilotLines.sessionError(
              'authentication',
              'Authentication failed with provider (HTTP 401).',
              401,
            ),
            copilotLines.result({ exitCode: 1 }),
          ],
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

describe('copilot-cli kind: usage reporting', () => {
  it(
    'settles each turn once, after the work, from the journal when no summary came, and adds turn 2 to turn 1',
    async () => {
      const command = fakeRuntime(`${ws.root}/usage-fake`, 'copilot', {
        turns: [
          [
            { stdout: copilotLines.toolsUpdated() },
            { stdout: copilotLines.message('m1', 'looking', [{ id: 't1', name: 'bash' }]) },
            { stdout: copilotLines.toolStart('t1', 'bash', { command: 'ls' }) },
            { stdout: copilotLines.backgroundTasks() },
            { stdout: copilotLines.toolComplete('t1') },
            { stdout: copilotLines.message('m2', 'done') },
            { stdout: copilotLines.result({ premiumRequests: 1 }) },
            { exit: 0 },
          ],
          [
            { stdout: copilotLines.message('m3', 'again') },
            { stdout: copilotLines.result({ premiumRequests: 2 }) },
            { exit: 0 },
          ],
        ],
      });
      const home = copilotHomeDir();
      const journal = [
        copilotLines.usageRecord('c1', 100, 10, 20),
        copilotLines.usageRecord('c2', 120, 5, 60),
      ];
      const turns = await runSession(
        startParams({ ws, command, env: { PATH: process.env.PATH ?? '', COPILOT_HOME: home } }),
        ['first', 'second'],
        (n) => {
          // What the session's journal holds by the end of turn n.
          if (n === 1) journal.push(copilotLines.usageRecord('c3', 50, 4, 30));
          writeJournal(home, FAKE_SESSION_ID, journal);
        },
      );
      assertUsageReporting('copilot-cli', turns);
      expect(turns.map((t) => t.outcome.result.usage)).toEqual([counts(220, 15, 80), counts(270, 19, 110)]);
      // Records settle the total only; the event still names the model the stream showed.
      expect(turns[1]?.outcome.result.usageByModel).toEqual({});
      expect(turns[1]?.events.filter((e) => e.type === 'token_usage')).toMatchObject([{ model: 'gpt-fake' }]);
      for (const turn of turns) {
        // The journal holds every call, but only a summary the CLI wrote can claim to cover a finished turn.
        expect(turn.outcome.result).toMatchObject({
          exitReason: 'turn_completed',
          sessionId: FAKE_SESSION_ID,
          usageMeasured: true,
          usageProvenance: 'reported',
          spendUnaccounted: true,
        });
      }
    },
    TIMEOUT,
  );

  it(
    'a turn with output and neither summary nor journal stays unmeasured: unknown spend, never zero',
    async () => {
      const command = fakeRuntime(`${ws.root}/unmeasured-fake`, 'copilot', {
        steps: [
          { stdout: copilotLines.message('m1', 'hello') },
          { stdout: copilotLines.result() },
          { exit: 0 },
        ],
      });
      const [turn] = await runSession(startParams({ ws, command }), ['hi']);
      expect(turn?.outcome.result).toMatchObject({
        exitReason: 'turn_completed',
        usageMeasured: false,
        usageProvenance: 'unmeasured',
        spendUnaccounted: true,
        usage: counts(0, 0),
      });
      expect(turn?.events.filter((e) => e.type === 'token_usage')).toEqual([]);
    },
    TIMEOUT,
  );
});
