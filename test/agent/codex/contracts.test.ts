/**
 * The codex kind against the shared adapter contracts, in both of its modes:
 * `app-server` (a fake app-server relays each turn to a fake runtime, so the
 * contract's fakes decide how the turn ends) and `exec` (the contract's fakes are
 * the runtime). Usage reporting is proven on multi-turn sessions of each mode; the
 * real CLI proves it again in real-cli.test.ts.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { assertCredentialVerification } from '../../../internal-contracts/agent/credential-verification.js';
import {
  assertDispositionContract,
  type DispositionHarness,
} from '../../../internal-contracts/agent/disposition-contract.js';
import { fakeInvocations, fakeRuntime } from '../../../internal-contracts/agent/fake-runtime.js';
import { assertUsageReporting } from '../../../internal-contracts/agent/usage-reporting.js';
import { wire } from './fake-app-server.js';
import { execLine } from './lines.js';
import {
  appServerCommand,
  codexAdapter,
  codexParams,
  codexTestRoot,
  figure,
  runTurns,
  verdict,
} from './support.js';

const t = codexTestRoot('codex-contracts-');
afterAll(() => t.cleanup());
const TIMEOUT = 60_000;

const modes = {
  'app-server': (fake: string) => appServerCommand(t, 'relay', fake),
  exec: (fake: string) => `${fake} exec`,
} as const;

const CREDENTIAL_401 = { httpConnectionFailed: { httpStatusCode: 401 } };

const harnessLines = {
  'app-server': {
    success: wire.completed('completed'),
    failure: wire.completed('failed', { message: 'the request was refused', info: 'badRequest' }),
    preamble: [] as string[],
    answer: [
      wire.message('m1', 'ready'),
      wire.usage({ input: 20, output: 2, cached: 0 }),
      wire.completed('completed'),
    ],
    refusal: [
      wire.error('Reconnecting... 1/1', { responseStreamDisconnected: { httpStatusCode: 401 } }, true),
      wire.error('unexpected status 401 Unauthorized: Incorrect API key provided', CREDENTIAL_401, false),
      wire.completed('failed', { message: 'unexpected status 401 Unauthorized', info: CREDENTIAL_401 }),
    ],
  },
  exec: {
    success: execLine.completed({ input: 20, cached: 0, output: 2 }),
    failure: execLine.failed('the request was refused'),
    preamble: [execLine.threadStarted(), execLine.turnStarted()],
    answer: [
      execLine.threadStarted(),
      execLine.turnStarted(),
      execLine.message('item_0', 'ready'),
      execLine.completed({ input: 20, cached: 0, output: 2 }),
    ],
    refusal: [
      execLine.threadStarted(),
      execLine.turnStarted(),
      execLine.error('Reconnecting... 1/1 (unexpected status 401 Unauthorized: Incorrect API key provided)'),
      execLine.failed(
        'unexpected status 401 Unauthorized: Incorrect API key provided, url: http://127.0.0.1:1/v1/responses',
      ),
    ],
  },
};

for (const mode of ['app-server', 'exec'] as const) {
  const lines = harnessLines[mode];
  const command = modes[mode];

  describe(`codex kind (${mode}): disposition contract`, () => {
    it(
      'ends every fake-runtime turn as the shared rule decides; a runtime that ends without its terminal report never succeeds',
      async () => {
        const harness: DispositionHarness = {
          startWith: async (fake) => {
            const adapter = codexAdapter();
            return { adapter, session: await adapter.startSession(codexParams(t, command(fake))) };
          },
          successLine: lines.success,
          failure: { line: lines.failure, kind: 'turn_failed' },
          preamble: lines.preamble,
          // Codex always ends a turn with its own report: output without it is never a success.
          workLines: null,
        };
        const results = await assertDispositionContract(harness);
        expect(results.length).toBeGreaterThanOrEqual(7);
      },
      TIMEOUT,
    );
  });

  describe(`codex kind (${mode}): credential verification`, () => {
    it(
      'verifies an answering runtime and reuses the proof, reports a 401 as credential_unverified, retries an early exit with full context',
      async () => {
        const results = await assertCredentialVerification({
          kind: 'codex',
          startParams: (fake) => codexParams(t, fake === null ? null : command(fake)),
          answerLines: lines.answer,
          refusal: { lines: lines.refusal, kinds: ['credential_unverified'] },
        });
        expect(results).toHaveLength(4);
      },
      TIMEOUT,
    );
  });
}

describe('codex kind: usage reporting', () => {
  it(
    'app-server: in-turn thread totals settle once per turn, and turn 2 adds to turn 1',
    async () => {
      const fake = fakeRuntime(path.join(t.root, 'usage-app'), 'codex', {
        turns: [
          [
            { stdout: wire.turnStarted() },
            { stdout: wire.usage({ input: 123, output: 45, cached: 7 }) },
            { stdout: wire.commandStarted('call_1', "/bin/bash -lc 'echo hi > out.txt'") },
            { stdout: wire.commandCompleted('call_1', "/bin/bash -lc 'echo hi > out.txt'") },
            { stdout: wire.delta('msg_1', 'Do') },
            { stdout: wire.message('msg_1', 'Done.') },
            {
              stdout: wire.usage(
                { input: 246, output: 90, cached: 14 },
                { input: 123, output: 45, cached: 7 },
              ),
            },
            { stdout: wire.completed('completed') },
            { exit: 0 },
          ],
          [
            { stdout: wire.message('msg_2', 'Again.') },
            {
              stdout: wire.usage(
                { input: 369, output: 135, cached: 21 },
                { input: 123, output: 45, cached: 7 },
              ),
            },
            { stdout: wire.completed('completed') },
            { exit: 0 },
          ],
        ],
      });
      const { turns } = await runTurns(codexAdapter(), codexParams(t, modes['app-server'](fake)), [
        'one',
        'two',
      ]);
      expect(turns.map(verdict)).toEqual(['turn_completed/none', 'turn_completed/none']);
      assertUsageReporting('codex', turns);
      expect(turns.map(figure)).toEqual([
        [246, 90, 14],
        [369, 135, 21],
      ]);
      expect(turns.every((r) => r.outcome.result.coversSession)).toBe(true);
    },
    TIMEOUT,
  );

  it(
    'exec: the resumed thread reports its running total, and the run counts it once',
    async () => {
      const thread = '01a22a64-0000-7000-8000-0000000000aa';
      const fake = fakeRuntime(path.join(t.root, 'usage-exec'), 'codex', {
        turns: [
          [
            { stdout: execLine.threadStarted(thread) },
            { stdout: execLine.turnStarted() },
            { stdout: execLine.command('item_0', "/bin/bash -lc 'echo hi > out.txt'", 'started') },
            { stdout: execLine.command('item_0', "/bin/bash -lc 'echo hi > out.txt'", 'completed') },
            { stdout: execLine.message('item_1', 'Done.') },
            { stdout: execLine.completed({ input: 246, cached: 14, output: 90 }) },
            { exit: 0 },
          ],
          [
            { stdout: execLine.threadStarted(thread) },
            { stdout: execLine.turnStarted() },
            { stdout: execLine.message('item_0', 'Again.') },
            { stdout: execLine.completed({ input: 492, cached: 28, output: 180 }) },
            { exit: 0 },
          ],
        ],
      });
      const { turns } = await runTurns(codexAdapter(), codexParams(t, modes.exec(fake)), ['one', 'two']);
      assertUsageReporting('codex', turns);
      expect(turns.map(figure)).toEqual([
        [246, 90, 14],
        [492, 180, 28],
      ]);
      const argv = fakeInvocations(fake).map((i) => i.argv);
      expect(argv[0]).not.toContain('resume');
      expect(argv[1]?.slice(-3)).toEqual(['resume', thread, '-']);
      expect(fakeInvocations(fake).map((i) => i.stdin)).toEqual(['one', 'two']);
    },
    TIMEOUT,
  );
});
