/**
 * The pinned OpenCode CLI, run headless against the fake model server's Chat
 * Completions wire on 127.0.0.1 (a custom OpenAI-compatible provider, fresh HOME
 * and XDG folders, the plugin install pre-seeded): the proof that the future
 * `opencode` kind can be tested against the real binary. The shell call really
 * runs in the working directory, each step's figures are the fake's (input net of
 * the cached part), the side request for a title is answered and leaves no trace
 * in the output, and a 401 is one `error` line with exit 1.
 *
 * A turn costs several CPU-seconds here, so timeouts are generous. Set
 * RECORD_AGENT_CLIS=1 to rewrite ./recordings from these runs (README there).
 * Without the CLI the file skips and says why, except under CI, where it fails.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  type ChatReply,
  chatAnswersToolCall,
  chatDialect,
  chatLastUserText,
  chatOfferedTools,
} from '../../support/fake-model/chat.js';
import { FakeModelServer, type RecordedRequest } from '../../support/fake-model/server.js';
import {
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
import { OPENCODE_BIN, OPENCODE_PACKAGE, OPENCODE_VERSION, opencodeArgs, opencodeEnv } from './real-cli.js';

const plan = pinnedCliPlan('opencode', 'opencode');
if (!plan.run) console.warn(`opencode real-CLI tests skipped: ${plan.reason}`);

const RUN_TIMEOUT_MS = 150_000;
const TEST_TIMEOUT_MS = 200_000;
const RECORDINGS = path.join(import.meta.dirname, 'recordings');
const TITLE_TEXT = 'Write hi to a file';

const scratch = scratchRoot('opencode-real-');
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
}

async function runCase(
  name: string,
  script: (request: RecordedRequest) => ChatReply,
  served: readonly string[],
): Promise<CaseRun> {
  server = await FakeModelServer.start([chatDialect(script)]);
  const workspace = scratch.dir('ws');
  const home = scratch.dir('home');
  const env = opencodeEnv(home, server.url);
  const args = opencodeArgs();
  const stdin = TOOL_CASE.prompt;
  const run = await runHeadless(OPENCODE_BIN, args, {
    cwd: workspace,
    env,
    stdin,
    timeoutMs: RUN_TIMEOUT_MS,
  });
  console.log(`opencode ${name}: exit ${run.exitCode} after ${run.wallMs} ms`);
  const requests = [...server.requests];
  if (RECORDING) {
    writeRecording(RECORDINGS, name, {
      run,
      requests,
      package: OPENCODE_PACKAGE,
      version: OPENCODE_VERSION,
      args,
      stdin,
      env,
      placeholders: { [workspace]: '<workspace>', [home]: '<home>', [server.url]: 'http://127.0.0.1:<port>' },
      served,
    });
  }
  return { run, requests, workspace };
}

/** A request offering no tools is OpenCode's title request, answered with its own figures. */
const isTitleRequest = (request: RecordedRequest) => chatOfferedTools(request).length === 0;

const toolScript = (request: RecordedRequest): ChatReply => {
  const [first, second] = TOOL_CASE.usage;
  const side = TOOL_CASE.sideUsage;
  if (isTitleRequest(request)) {
    return {
      type: 'message',
      text: TITLE_TEXT,
      usage: { prompt: side.input, completion: side.output, cachedPrompt: side.cached },
    };
  }
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

describe.skipIf(!plan.run)('opencode: the pinned OpenCode CLI against the fake model server', () => {
  itHasThePinnedCli(OPENCODE_BIN);

  it(
    '--version names the pinned version',
    async () => {
      const home = scratch.dir('home');
      const run = await runHeadless(OPENCODE_BIN, ['--version'], {
        cwd: home,
        env: opencodeEnv(home, 'http://127.0.0.1:9'),
        timeoutMs: RUN_TIMEOUT_MS,
      });
      expect(run.exitCode).toBe(0);
      expect(run.stdout.trim()).toBe(OPENCODE_VERSION);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a bash call writes the file in the cwd, and each step reports the figures the fake served',
    async () => {
      const { run, requests, workspace } = await runCase('tool', toolScript, [
        'title request (no tools): text',
        'bash tool call',
        'final text',
      ]);
      expect(run.timedOut).toBe(false);
      expect(run.exitCode, run.stderr).toBe(0);
      expect(readFileSync(path.join(workspace, TOOL_CASE.file), 'utf8')).toBe(TOOL_CASE.fileContent);

      // The title request and the turn's two calls; the prompt from stdin arrives unquoted.
      expect(requests).toHaveLength(3);
      expect(requests.filter(isTitleRequest)).toHaveLength(1);
      for (const request of requests.filter((r) => !isTitleRequest(r))) {
        expect(chatOfferedTools(request)).toContain('bash');
        expect(chatLastUserText(request).trim()).toBe(TOOL_CASE.prompt);
        expect(request.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
      }

      const lines = jsonLines(run.stdout);
      expect(lines.filter((l) => l.type === 'tool_use')).toMatchObject([
        { part: { tool: 'bash', state: { status: 'completed', input: { command: TOOL_CASE.command } } } },
      ]);
      expect(lines.filter((l) => l.type === 'text').at(-1)).toMatchObject({
        part: { text: TOOL_CASE.finalText },
      });
      // One step_finish per turn call; the title call's figures appear nowhere. Input is net of the cache.
      const steps = lines.filter((l) => l.type === 'step_finish');
      expect(steps).toMatchObject(
        TOOL_CASE.usage.map((u, i) => ({
          part: {
            reason: i === 0 ? 'tool-calls' : 'stop',
            tokens: { input: u.input - u.cached, output: u.output, cache: { read: u.cached } },
          },
        })),
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a 401 from the provider is one error line naming the status, not retried, and exit 1',
    async () => {
      const { run, requests } = await runCase(
        'error-401',
        () => ({
          type: 'error',
          status: 401,
          message: 'Incorrect API key provided',
          code: 'invalid_api_key',
        }),
        ['HTTP 401 invalid_api_key on every call (the title request included)'],
      );
      expect(run.timedOut).toBe(false);
      expect(run.exitCode).toBe(1);
      // The title request and the turn's first call, each tried once.
      expect(requests.length).toBeLessThanOrEqual(2);
      const lines = jsonLines(run.stdout);
      expect(lines).toMatchObject([
        { type: 'error', error: { name: 'APIError', data: { statusCode: 401, isRetryable: false } } },
      ]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a provider that stays overloaded (503) is retried, then one retryable error line, and exit 1',
    async () => {
      const { run, requests } = await runCase(
        'error-503',
        () => ({
          type: 'error',
          status: 503,
          message: 'The server is overloaded',
          code: 'server_is_overloaded',
        }),
        ['HTTP 503 server_is_overloaded (retry-after 0) on every call (the title request included)'],
      );
      expect(run.timedOut).toBe(false);
      expect(run.exitCode).toBe(1);
      expect(requests.length).toBeGreaterThan(2);
      expect(jsonLines(run.stdout)).toMatchObject([
        { type: 'error', error: { name: 'APIError', data: { statusCode: 503, isRetryable: true } } },
      ]);
    },
    TEST_TIMEOUT_MS,
  );
});
