/**
 * The codex adapter's own behaviour, with fakes standing in for Codex: the
 * fallback to `exec` for a build without `app-server`, approvals answered and
 * never left waiting, cancel through `turn/interrupt` keeping the process, a
 * retried error that does not end the turn, resuming a thread from an earlier
 * run, sessions keeping their own settings, and the missing-credential failure.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeInvocations, fakeRuntime } from '../../../internal-contracts/agent/fake-runtime.js';
import { helpListsSubcommand } from '../../../src/agent/codex/command.js';
import { AgentError, type AgentEvent } from '../../../src/domain/agent.js';
import { relayLog, wire } from './fake-app-server.js';
import { execLine } from './lines.js';
import {
  appServerCommand,
  codexAdapter,
  codexParams,
  codexTestRoot,
  figure,
  runTurns,
  SAMPLE_ISSUE,
  toolsOf,
  verdict,
} from './support.js';

const t = codexTestRoot('codex-adapter-');
afterAll(() => t.cleanup());
const TIMEOUT = 30_000;
let fakes = 0;
const fake = (turns: Parameters<typeof fakeRuntime>[2]) =>
  fakeRuntime(path.join(t.root, 'fakes', `f${++fakes}`), 'codex', turns);

describe('codex adapter', () => {
  it(
    'falls back to exec --json when the installed Codex has no app-server, and resumes the thread on turn 2',
    async () => {
      const thread = '01a22a64-0000-7000-8000-0000000000bb';
      const runtime = fake({
        turns: [
          [
            { stdout: execLine.threadStarted(thread) },
            { stdout: execLine.turnStarted() },
            { stdout: execLine.message('item_0', 'one') },
            { stdout: execLine.completed({ input: 100, cached: 0, output: 10 }) },
            { exit: 0 },
          ],
          [
            { stdout: execLine.threadStarted(thread) },
            { stdout: execLine.turnStarted() },
            { stdout: execLine.message('item_0', 'two') },
            { stdout: execLine.completed({ input: 250, cached: 0, output: 30 }) },
            { exit: 0 },
          ],
        ],
      });
      const { turns, session } = await runTurns(
        codexAdapter(),
        codexParams(t, appServerCommand(t, 'no-app-server', runtime)),
        ['first', 'second'],
      );
      expect(turns.map(verdict)).toEqual(['turn_completed/none', 'turn_completed/none']);
      expect(turns.map(figure)).toEqual([
        [100, 10, 0],
        [250, 30, 0],
      ]);
      expect(session.sessionId).toBe(thread);
      const argv = fakeInvocations(runtime).map((i) => i.argv);
      expect(argv.map((a) => a[0])).toEqual(['exec', 'exec']);
      expect(argv[1]).toEqual(expect.arrayContaining(['resume', thread]));
    },
    TIMEOUT,
  );

  it('reads a help text for the app-server subcommand', () => {
    expect(
      helpListsSubcommand('Commands:\n  exec  Run\n  app-server  [experimental] Run', 'app-server'),
    ).toBe(true);
    expect(helpListsSubcommand('Commands:\n  exec  Run\n  app-server-x  Other', 'app-server')).toBe(false);
    expect(helpListsSubcommand('Commands:\n  exec  Run Codex', 'app-server')).toBe(false);
  });

  it(
    'declines an approval request at once and reports it; the refused command is a failed tool call',
    async () => {
      const command = "/bin/bash -lc 'rm -rf /tmp/x'";
      const runtime = fake({
        steps: [
          { stdout: wire.commandStarted('call-x', command) },
          { stdout: wire.approvalRequest(7, command) },
          { sleepMs: 300 },
          {
            stdout: JSON.stringify({
              method: 'item/completed',
              params: {
                threadId: '$THREAD',
                turnId: '$TURN',
                item: { type: 'commandExecution', id: 'call-x', command, status: 'declined', exitCode: null },
              },
            }),
          },
          { stdout: wire.message('m1', 'I could not run it.') },
          { stdout: wire.completed('completed') },
          { exit: 0 },
        ],
      });
      const params = codexParams(t, appServerCommand(t, 'relay', runtime), {
        options: { approval_policy: 'untrusted' },
      });
      const { turns } = await runTurns(codexAdapter(), params, ['clean up']);
      const run = turns[0] as NonNullable<(typeof turns)[0]>;
      expect(verdict(run)).toBe('turn_completed/none');
      expect(relayLog(runtime).filter((m) => m.id === 7)).toEqual([
        { id: 7, result: { decision: 'decline' } },
      ]);
      expect(toolsOf(run)).toEqual([['exec_command', 'shell', 'rm -rf /tmp/x', true]]);
      expect(
        run.events.some((e) => e.type === 'notification' && /command approval declined/.test(e.message)),
      ).toBe(true);
      const threadStart = relayLog(runtime).find((m) => m.method === 'thread/start');
      expect(threadStart?.params).toMatchObject({ approvalPolicy: 'untrusted', sandbox: 'workspace-write' });
    },
    TIMEOUT,
  );

  it(
    'cancels through turn/interrupt after output: turn_cancelled, spend unaccounted, and the process serves the next turn',
    async () => {
      const runtime = fake({
        turns: [
          [
            { stdout: wire.turnStarted() },
            { stdout: wire.delta('m1', 'Hel') },
            { stdout: wire.usage({ input: 123, output: 45, cached: 7 }) },
            { stdout: wire.message('m0', 'working on it') },
            { hang: true },
          ],
          [{ stdout: wire.message('m2', 'ok') }, { stdout: wire.completed('completed') }, { exit: 0 }],
        ],
      });
      const adapter = codexAdapter();
      const session = await adapter.startSession(codexParams(t, appServerCommand(t, 'relay', runtime)));
      try {
        const events: AgentEvent[] = [];
        const abort = new AbortController();
        const first = await adapter.runTurn(session, {
          prompt: 'long',
          issue: SAMPLE_ISSUE,
          signal: abort.signal,
          onEvent: (e) => {
            events.push(e);
            if (e.type === 'notification') abort.abort();
          },
        });
        expect(first.result.exitReason).toBe('turn_cancelled');
        expect(first.result.spendUnaccounted).toBe(true);
        expect(first.result.usage.inputTokens).toBe(123);
        expect(relayLog(runtime).some((m) => m.method === 'turn/interrupt')).toBe(true);
        const second = await adapter.runTurn(session, {
          prompt: 'next',
          issue: SAMPLE_ISSUE,
          signal: new AbortController().signal,
          onEvent: () => undefined,
        });
        expect(second.result.exitReason).toBe('turn_completed');
        expect(relayLog(runtime).filter((m) => m.method === 'initialize')).toHaveLength(1);
      } finally {
        await adapter.stopSession(session);
      }
    },
    TIMEOUT,
  );

  it(
    'an error the runtime retries (willRetry) does not end the turn; turn/completed decides',
    async () => {
      const runtime = fake({
        steps: [
          {
            stdout: wire.error(
              'Reconnecting... 1/5',
              { responseStreamDisconnected: { httpStatusCode: 502 } },
              true,
            ),
          },
          { stdout: wire.message('m1', 'recovered') },
          { stdout: wire.usage({ input: 10, output: 2, cached: 0 }) },
          { stdout: wire.completed('completed') },
          { exit: 0 },
        ],
      });
      const { turns } = await runTurns(
        codexAdapter(),
        codexParams(t, appServerCommand(t, 'relay', runtime)),
        ['go'],
      );
      expect(turns.map(verdict)).toEqual(['turn_completed/none']);
    },
    TIMEOUT,
  );

  it.each([
    ['usageLimitExceeded', 'UsageLimitExceeded', 'usage_limit'],
    ['unauthorized (PascalCase as the docs write it)', 'Unauthorized', 'credential_unverified'],
    ['serverOverloaded', 'serverOverloaded', 'response_error'],
    [
      'an HTTP 503 inside an object variant',
      { responseTooManyFailedAttempts: { httpStatusCode: 503 } },
      'response_error',
    ],
    ['contextWindowExceeded', 'contextWindowExceeded', 'turn_failed'],
  ])(
    'a failed turn with codexErrorInfo %s is %s',
    async (_name, info, kind) => {
      const runtime = fake({
        steps: [{ stdout: wire.completed('failed', { message: 'refused', info }) }, { exit: 0 }],
      });
      const { turns } = await runTurns(
        codexAdapter(),
        codexParams(t, appServerCommand(t, 'relay', runtime)),
        ['go'],
      );
      expect(turns.map(verdict)).toEqual([`turn_failed/${kind}`]);
    },
    TIMEOUT,
  );

  it(
    'resumes a thread from an earlier run with thread/resume; its history is estimated from the first figure',
    async () => {
      const runtime = fake({
        steps: [
          {
            stdout: wire.usage(
              { input: 1_123, output: 145, cached: 7 },
              { input: 123, output: 45, cached: 7 },
            ),
          },
          { stdout: wire.message('m1', 'continued') },
          { stdout: wire.completed('completed') },
          { exit: 0 },
        ],
      });
      const params = codexParams(t, appServerCommand(t, 'relay', runtime), {
        resumeSessionId: 'earlier-thread',
      });
      const { turns } = await runTurns(codexAdapter(), params, ['continue']);
      const run = turns[0] as NonNullable<(typeof turns)[0]>;
      expect(verdict(run)).toBe('turn_completed/none');
      expect(relayLog(runtime).find((m) => m.method === 'thread/resume')?.params).toMatchObject({
        threadId: 'earlier-thread',
      });
      expect(relayLog(runtime).some((m) => m.method === 'thread/start')).toBe(false);
      expect(run.events.filter((e) => e.type === 'session_started')).toMatchObject([
        { sessionId: 'earlier-thread' },
      ]);
      // Only this run's request counts; the thread's 1000 earlier tokens are history.
      expect(figure(run)).toEqual([123, 45, 7]);
      expect(run.outcome.result).toMatchObject({ usageProvenance: 'token_estimate', spendUnaccounted: true });
    },
    TIMEOUT,
  );

  it(
    'two sessions of one adapter keep their own blocks',
    async () => {
      const adapter = codexAdapter();
      const runtimeA = fake({ steps: [{ stdout: wire.completed('completed') }, { exit: 0 }] });
      const runtimeB = fake({ steps: [{ stdout: wire.completed('completed') }, { exit: 0 }] });
      const a = await adapter.startSession(
        codexParams(t, appServerCommand(t, 'relay', runtimeA), {
          options: { model: 'model-a', effort: 'low' },
        }),
      );
      const b = await adapter.startSession(
        codexParams(t, appServerCommand(t, 'relay', runtimeB), { options: { model: 'model-b' } }),
      );
      try {
        const run = (s: typeof a) =>
          adapter.runTurn(s, {
            prompt: 'p',
            issue: SAMPLE_ISSUE,
            onEvent: () => undefined,
            signal: new AbortController().signal,
          });
        await Promise.all([run(a), run(b)]);
      } finally {
        await adapter.stopSession(a);
        await adapter.stopSession(b);
      }
      const turnA = relayLog(runtimeA).find((m) => m.method === 'turn/start')?.params;
      const turnB = relayLog(runtimeB).find((m) => m.method === 'turn/start')?.params;
      expect(turnA).toMatchObject({ model: 'model-a', effort: 'low' });
      expect(turnB).toMatchObject({ model: 'model-b' });
      expect(turnB).not.toHaveProperty('effort');
    },
    TIMEOUT,
  );

  it('fails the session start with a clear message when Codex has no credential at all', async () => {
    const params = codexParams(t, appServerCommand(t, 'relay', '/nonexistent'), {
      env: { PATH: process.env.PATH ?? '', HOME: t.home() },
    });
    const error = await codexAdapter()
      .startSession(params)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentError);
    expect((error as AgentError).kind).toBe('agent_not_found');
    expect((error as AgentError).detail).toMatch(/codex has no credential/);
  });
});
