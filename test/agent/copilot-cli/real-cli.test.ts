/**
 * The pinned GitHub Copilot CLI, run headless against the fake model server's Chat
 * Completions wire on 127.0.0.1 (bring-your-own-key, offline, fresh COPILOT_HOME):
 * the proof that the future `copilot-cli` kind can be tested against the real
 * binary. The shell call really runs in the working directory; the figures the
 * fake served come back, though only in the session's events file; a 401 ends in
 * an authentication error with exit 1.
 *
 * Set RECORD_AGENT_CLIS=1 to rewrite ./recordings from these runs (README there).
 * Without the CLI the file skips and says why, except under CI, where it fails.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  type ChatReply,
  chatAnswersToolCall,
  chatDialect,
  chatOfferedTools,
} from '../../support/fake-model/chat.js';
import { FakeModelServer, type RecordedRequest } from '../../support/fake-model/server.js';
import {
  AGENT_CLIS_DIR,
  type HeadlessRun,
  jsonLines,
  pinnedCliPlan,
  RECORDING,
  runHeadless,
  scratchRoot,
  TOOL_CASE,
  writeRecording,
} from '../../support/headless-cli.js';
import { itHasThePinnedCli } from '../../support/pinned-cli.js';
import {
  COPILOT_BIN,
  COPILOT_PACKAGE,
  COPILOT_VERSION,
  copilotArgs,
  copilotEnv,
  copilotSessionEvents,
} from './real-cli.js';

const plan = pinnedCliPlan('copilot', 'copilot');
if (!plan.run) console.warn(`copilot-cli real-CLI tests skipped: ${plan.reason}`);

const RUN_TIMEOUT_MS = 150_000;
const TEST_TIMEOUT_MS = 200_000;
const RECORDINGS = path.join(import.meta.dirname, 'recordings');

const scratch = scratchRoot('copilot-real-');
afterAll(() => scratch.cleanup());
let server: FakeModelServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

interface CaseRun {
  run: HeadlessRun;
  requests: RecordedRequest[];
  workspace: string;
  home: string;
}

async function runCase(
  name: string,
  script: (request: RecordedRequest, index: number) => ChatReply,
  served: readonly string[],
): Promise<CaseRun> {
  server = await FakeModelServer.start([chatDialect(script)]);
  const workspace = scratch.dir('ws');
  const home = scratch.dir('home');
  const env = copilotEnv(home, server.url);
  const args = copilotArgs(TOOL_CASE.prompt);
  const run = await runHeadless(COPILOT_BIN, args, { cwd: workspace, env, timeoutMs: RUN_TIMEOUT_MS });
  console.log(`copilot-cli ${name}: exit ${run.exitCode} after ${run.wallMs} ms`);
  const requests = [...server.requests];
  if (RECORDING) {
    const sessionId = sessionIdOf(run);
    const events = sessionId === null ? null : copilotSessionEvents(home, sessionId);
    writeRecording(RECORDINGS, name, {
      run,
      requests,
      package: COPILOT_PACKAGE,
      version: COPILOT_VERSION,
      args,
      env,
      placeholders: {
        [workspace]: '<workspace>',
        [home]: '<home>',
        [AGENT_CLIS_DIR]: '<agent-clis>',
        [server.url]: 'http://127.0.0.1:<port>',
      },
      served,
      // BYOK usage is only in the session's events file: keep it beside the output.
      ...(events !== null && existsSync(events)
        ? { extra: { [`${name}.session-events.jsonl`]: readFileSync(events, 'utf8') } }
        : {}),
    });
  }
  return { run, requests, workspace, home };
}

function sessionIdOf(run: HeadlessRun): string | null {
  const result = jsonLines(run.stdout).findLast((l) => l.type === 'result');
  return typeof result?.sessionId === 'string' ? result.sessionId : null;
}

const toolScript = (request: RecordedRequest): ChatReply => {
  const [first, second] = TOOL_CASE.usage;
  if (chatAnswersToolCall(request)) {
    return {
      type: 'message',
      text: TOOL_CASE.finalText,
      usage: { prompt: second.input, completion: second.output, cachedPrompt: second.cached },
    };
  }
  return {
    type: 'message',
    text: TOOL_CASE.toolText,
    toolCalls: [
      { name: 'bash', arguments: { command: TOOL_CASE.command, description: TOOL_CASE.description } },
    ],
    usage: { prompt: first.input, completion: first.output, cachedPrompt: first.cached },
  };
};

describe.skipIf(!plan.run)('copilot-cli: the pinned Copilot CLI against the fake model server', () => {
  itHasThePinnedCli(COPILOT_BIN);

  it(
    '--version names the pinned version',
    async () => {
      const home = scratch.dir('home');
      const run = await runHeadless(COPILOT_BIN, ['--version'], {
        cwd: home,
        env: copilotEnv(home, 'http://127.0.0.1:9'),
        timeoutMs: RUN_TIMEOUT_MS,
      });
      expect(run.exitCode).toBe(0);
      expect(run.stdout).toContain(`GitHub Copilot CLI ${COPILOT_VERSION}.`);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a bash call writes the file in the cwd, and the usage the fake served reaches the session events (not stdout)',
    async () => {
      const { run, requests, workspace, home } = await runCase('tool', toolScript, [
        'bash tool call',
        'final text',
      ]);
      expect(run.timedOut).toBe(false);
      expect(run.exitCode, run.stderr).toBe(0);
      expect(readFileSync(path.join(workspace, TOOL_CASE.file), 'utf8')).toBe(TOOL_CASE.fileContent);

      // Exactly the two calls of the turn, both offering bash and asking for the usage chunk.
      expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual([
        'POST /v1/chat/completions',
        'POST /v1/chat/completions',
      ]);
      for (const request of requests) {
        expect(chatOfferedTools(request)).toContain('bash');
        expect(request.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
      }

      const lines = jsonLines(run.stdout);
      const result = lines.at(-1);
      expect(result).toMatchObject({ type: 'result', exitCode: 0 });
      expect(lines.filter((l) => l.type === 'tool.execution_complete')).toMatchObject([
        { data: { success: true } },
      ]);
      const messages = lines.filter((l) => l.type === 'assistant.message');
      expect(messages.at(-1)).toMatchObject({ data: { content: TOOL_CASE.finalText } });
      // No token figure reaches stdout in BYOK mode: the adapter must read the events file.
      expect(run.stdout).not.toMatch(/"inputTokens"|"outputTokens"|"prompt_tokens"/);

      const sessionId = sessionIdOf(run);
      expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
      const events = jsonLines(readFileSync(copilotSessionEvents(home, sessionId as string), 'utf8'));
      const records = events.filter((e) => e.type === 'session.usage_record');
      expect(records.map((r) => (r.data as { usage: unknown }).usage)).toMatchObject(
        TOOL_CASE.usage.map((u) => ({
          inputTokens: u.input,
          outputTokens: u.output,
          cacheReadTokens: u.cached,
        })),
      );
      const shutdown = events.find((e) => e.type === 'session.shutdown');
      const sum = (key: 'input' | 'output' | 'cached') => TOOL_CASE.usage.reduce((n, u) => n + u[key], 0);
      expect(shutdown).toMatchObject({
        data: {
          modelMetrics: {
            'gpt-4.1': {
              requests: { count: 2 },
              usage: {
                inputTokens: sum('input'),
                outputTokens: sum('output'),
                cacheReadTokens: sum('cached'),
              },
            },
          },
        },
      });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a 401 from the provider is an authentication session.error, a result with exitCode 1, and exit 1',
    async () => {
      const { run, requests } = await runCase(
        'error-401',
        () => ({
          type: 'error',
          status: 401,
          message: 'Incorrect API key provided',
          code: 'invalid_api_key',
        }),
        ['HTTP 401 invalid_api_key on every call'],
      );
      expect(run.timedOut).toBe(false);
      expect(run.exitCode).toBe(1);
      expect(requests.length).toBeGreaterThanOrEqual(1);
      const lines = jsonLines(run.stdout);
      expect(lines.find((l) => l.type === 'session.error')).toMatchObject({
        data: { errorType: 'authentication' },
      });
      expect(lines.at(-1)).toMatchObject({ type: 'result', exitCode: 1 });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a provider that stays overloaded (503) is retried, then a query session.error, a result with exitCode 1, and exit 1',
    async () => {
      const { run, requests } = await runCase(
        'error-503',
        () => ({
          type: 'error',
          status: 503,
          message: 'The server is overloaded',
          code: 'server_is_overloaded',
        }),
        ['HTTP 503 server_is_overloaded (retry-after 0) on every call'],
      );
      expect(run.timedOut).toBe(false);
      expect(run.exitCode).toBe(1);
      expect(requests.length).toBeGreaterThan(1);
      const lines = jsonLines(run.stdout);
      expect(lines.find((l) => l.type === 'session.error')).toMatchObject({ data: { errorType: 'query' } });
      expect(lines.at(-1)).toMatchObject({ type: 'result', exitCode: 1 });
    },
    TEST_TIMEOUT_MS,
  );
});
