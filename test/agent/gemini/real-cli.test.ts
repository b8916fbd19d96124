/**
 * The pinned Gemini CLI, run headless against the fake model server's Gemini
 * `streamGenerateContent` wire on 127.0.0.1 (API-key auth with a dummy key, fresh
 * HOME with a settings file): the proof that the future `gemini` kind can be
 * tested against the real binary. The shell call really runs in the working
 * directory, the closing `result` line adds up exactly what the fake served, and a
 * 401 ends with `result.status: "error"` and an exit code that is the HTTP status
 * modulo 256 (145), which no exit-code table would expect.
 *
 * Set RECORD_AGENT_CLIS=1 to rewrite ./recordings from these runs (README there).
 * Without the CLI the file skips and says why, except under CI, where it fails.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  type GeminiReply,
  geminiAnswersFunctionCall,
  geminiDialect,
  geminiOfferedTools,
} from '../../support/fake-model/gemini.js';
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
import {
  GEMINI_BIN,
  GEMINI_MAX_ATTEMPTS,
  GEMINI_MODEL,
  GEMINI_PACKAGE,
  GEMINI_VERSION,
  geminiArgs,
  geminiEnv,
} from './real-cli.js';

const plan = pinnedCliPlan('gemini', 'gemini');
if (!plan.run) console.warn(`gemini real-CLI tests skipped: ${plan.reason}`);

const RUN_TIMEOUT_MS = 150_000;
const TEST_TIMEOUT_MS = 200_000;
const RECORDINGS = path.join(import.meta.dirname, 'recordings');
const STREAM_PATH = `/v1beta/models/${GEMINI_MODEL}:streamGenerateContent?alt=sse`;

const scratch = scratchRoot('gemini-real-');
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
  script: (request: RecordedRequest) => GeminiReply,
  served: readonly string[],
): Promise<CaseRun> {
  server = await FakeModelServer.start([geminiDialect(script)]);
  const workspace = scratch.dir('ws');
  const home = scratch.dir('home');
  const env = geminiEnv(home, server.url);
  const args = geminiArgs(TOOL_CASE.prompt);
  const run = await runHeadless(GEMINI_BIN, args, { cwd: workspace, env, timeoutMs: RUN_TIMEOUT_MS });
  console.log(`gemini ${name}: exit ${run.exitCode} after ${run.wallMs} ms`);
  const requests = [...server.requests];
  if (RECORDING) {
    writeRecording(RECORDINGS, name, {
      run,
      requests,
      package: GEMINI_PACKAGE,
      version: GEMINI_VERSION,
      args,
      env,
      placeholders: { [workspace]: '<workspace>', [home]: '<home>', [server.url]: 'http://127.0.0.1:<port>' },
      served,
    });
  }
  return { run, requests, workspace };
}

const toolScript = (request: RecordedRequest): GeminiReply => {
  const [first, second] = TOOL_CASE.usage;
  if (geminiAnswersFunctionCall(request)) {
    return {
      type: 'message',
      text: TOOL_CASE.finalText,
      usage: { prompt: second.input, candidates: second.output, cached: second.cached },
    };
  }
  return {
    type: 'message',
    text: TOOL_CASE.toolText,
    functionCalls: [
      { name: 'run_shell_command', args: { command: TOOL_CASE.command, description: TOOL_CASE.description } },
    ],
    usage: { prompt: first.input, candidates: first.output, cached: first.cached },
  };
};

const sum = (key: 'input' | 'output' | 'cached') => TOOL_CASE.usage.reduce((n, u) => n + u[key], 0);

describe.skipIf(!plan.run)('gemini: the pinned Gemini CLI against the fake model server', () => {
  itHasThePinnedCli(GEMINI_BIN);

  it(
    '--version names the pinned version',
    async () => {
      const home = scratch.dir('home');
      const run = await runHeadless(GEMINI_BIN, ['--version'], {
        cwd: home,
        env: geminiEnv(home, 'http://127.0.0.1:9'),
        timeoutMs: RUN_TIMEOUT_MS,
      });
      expect(run.exitCode).toBe(0);
      expect(run.stdout.trim()).toBe(GEMINI_VERSION);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a shell call writes the file in the cwd, and the result line adds up exactly what the fake served',
    async () => {
      const { run, requests, workspace } = await runCase('tool', toolScript, [
        'run_shell_command call',
        'final text',
      ]);
      expect(run.timedOut).toBe(false);
      expect(run.exitCode, run.stderr).toBe(0);
      expect(readFileSync(path.join(workspace, TOOL_CASE.file), 'utf8')).toBe(TOOL_CASE.fileContent);

      // Exactly the turn's two streamed calls: no side request with these settings.
      expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual([
        `POST ${STREAM_PATH}`,
        `POST ${STREAM_PATH}`,
      ]);
      for (const request of requests) expect(geminiOfferedTools(request)).toContain('run_shell_command');
      expect(requests[0]?.headers['x-goog-api-key']).toBe('dummy-gemini-key');

      const lines = jsonLines(run.stdout);
      expect(lines[0]).toMatchObject({ type: 'init', model: GEMINI_MODEL });
      expect(lines.filter((l) => l.type === 'tool_use')).toMatchObject([
        { tool_name: 'run_shell_command', parameters: { command: TOOL_CASE.command } },
      ]);
      expect(lines.filter((l) => l.type === 'tool_result')).toMatchObject([{ status: 'success' }]);
      const text = lines
        .filter((l) => l.type === 'message' && l.role === 'assistant')
        .map((l) => String(l.content))
        .join('');
      expect(text).toBe(`${TOOL_CASE.toolText}${TOOL_CASE.finalText}`);
      // input_tokens includes the cached tokens; `input` is the uncached part.
      const figures = {
        input_tokens: sum('input'),
        output_tokens: sum('output'),
        cached: sum('cached'),
        input: sum('input') - sum('cached'),
        total_tokens: sum('input') + sum('output'),
      };
      expect(lines.at(-1)).toMatchObject({
        type: 'result',
        status: 'success',
        stats: { ...figures, tool_calls: 1, models: { [GEMINI_MODEL]: figures } },
      });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a 401 is a result with status error, not retried, and exit 145 (the HTTP status modulo 256)',
    async () => {
      const { run, requests } = await runCase(
        'error-401',
        () => ({ type: 'error', status: 401, message: 'API key not valid. Please pass a valid API key.' }),
        ['HTTP 401 UNAUTHENTICATED on every call'],
      );
      expect(run.timedOut).toBe(false);
      expect(run.exitCode).toBe(401 % 256);
      expect(requests).toHaveLength(1);
      expect(jsonLines(run.stdout).at(-1)).toMatchObject({ type: 'result', status: 'error' });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'a 503 is tried maxAttempts times, then a result with status error and exit 247 (503 modulo 256)',
    async () => {
      const { run, requests } = await runCase(
        'error-503',
        () => ({ type: 'error', status: 503, message: 'The model is overloaded. Please try again later.' }),
        ['HTTP 503 UNAVAILABLE (retry-after 0) on every call'],
      );
      expect(run.timedOut).toBe(false);
      expect(run.exitCode).toBe(503 % 256);
      expect(requests).toHaveLength(GEMINI_MAX_ATTEMPTS);
      expect(jsonLines(run.stdout).at(-1)).toMatchObject({ type: 'result', status: 'error' });
    },
    TEST_TIMEOUT_MS,
  );
});
