/**
 * The gemini kind end to end, as an operator runs it: the built CLI
 * (`npm run build`) runs `orchestrator run --until-idle` on a workflow with the
 * file tracker and `agent.kind: gemini`, the pinned Gemini CLI first on PATH and
 * pointed at the fake model server. The issue must reach the handoff state with
 * the file the tool wrote in its workspace, the run and turn recorded with the
 * fake's figures; and `orchestrator adapters` must list the kind with the pinned
 * version. Without the CLI the file skips and says why, except under CI.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AdapterJson } from '../../../src/cli/adapters-command.js';
import { BUILT_MAIN, cliEnv, ensureBuilt, runBuilt } from '../../support/cli.js';
import {
  type GeminiReply,
  geminiAnswersFunctionCall,
  geminiDialect,
} from '../../support/fake-model/gemini.js';
import { FakeModelServer, type RecordedRequest } from '../../support/fake-model/server.js';
import { pinnedCliPlan } from '../../support/headless-cli.js';
import { dbRuns, dbTurns } from '../../support/service.js';
import { GEMINI_BIN, GEMINI_MODEL, GEMINI_VERSION } from './real-cli.js';
import { DUMMY_KEY, scratchDir } from './support.js';

const plan = pinnedCliPlan('gemini', 'gemini');
if (!plan.run) console.warn(`gemini end-to-end tests skipped: ${plan.reason}`);

const RUN_TIMEOUT_MS = 150_000;
const PROMPT_MARK = 'Write hi to out.txt using the shell.';

const WORKFLOW = `---
tracker:
  kind: file
  active_states: [Todo]
  terminal_states: [Done]
  handoff_state: Review
file:
  path: issues.json
workspace:
  root: ./workspaces
agent:
  kind: gemini
  max_turns: 1
gemini:
  model: ${GEMINI_MODEL}
  max_attempts: 2
---
${PROMPT_MARK} This is {{ issue.identifier }}: {{ issue.title }}.
`;

const ISSUES = [
  { id: '1', identifier: 'GEM-1', title: 'Write the greeting', state: 'Todo', description: '' },
];

/** The model: a shell call for the issue's prompt, its answer after the call, "ready" for anything else. */
function script(request: RecordedRequest): GeminiReply {
  if (geminiAnswersFunctionCall(request)) {
    return {
      type: 'message',
      text: 'Done: wrote hi to out.txt.',
      usage: { prompt: 190, candidates: 21, cached: 120 },
    };
  }
  if (request.bodyText.includes(PROMPT_MARK)) {
    return {
      type: 'message',
      text: 'I will write the file.',
      functionCalls: [
        { name: 'run_shell_command', args: { command: 'echo hi > out.txt', description: 'write' } },
      ],
      usage: { prompt: 123, candidates: 45, cached: 7 },
    };
  }
  return { type: 'message', text: 'ready', usage: { prompt: 20, candidates: 1, cached: 0 } };
}

const children: ChildProcess[] = [];
let server: FakeModelServer | null = null;
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  await server?.close();
  server = null;
});

/** The service's environment: the pinned CLI first on PATH, its own HOME, state and temp folders. */
function serviceEnv(dir: string, baseUrl: string): Record<string, string> {
  for (const sub of ['home', 'state', 'tmp']) mkdirSync(path.join(dir, sub), { recursive: true });
  return cliEnv({
    PATH: `${path.dirname(GEMINI_BIN)}:${process.env.PATH ?? ''}`,
    HOME: path.join(dir, 'home'),
    XDG_STATE_HOME: path.join(dir, 'state'),
    TMPDIR: path.join(dir, 'tmp'),
    GEMINI_API_KEY: DUMMY_KEY,
    GOOGLE_GEMINI_BASE_URL: baseUrl,
  });
}

function runUntilIdle(dir: string, env: Record<string, string>) {
  const started = Date.now();
  const child = spawn(
    process.execPath,
    [BUILT_MAIN, 'run', 'WORKFLOW.md', '--until-idle', '--port', '0', '--log-format', 'json'],
    { cwd: dir, env },
  );
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (c: string) => {
    stdout += c;
  });
  child.stderr?.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
  return new Promise<{ code: number | null; stdout: string; stderr: string; wallMs: number }>((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, wallMs: Date.now() - started });
    });
  });
}

describe.skipIf(!plan.run)('gemini end to end with the built CLI', () => {
  beforeAll(() => ensureBuilt(), 300_000);

  it(
    'orchestrator run takes a file-tracker issue to the handoff state with the file the tool wrote',
    async () => {
      server = await FakeModelServer.start([geminiDialect(script)]);
      const dir = realpathSync(scratchDir('gemini-e2e-'));
      writeFileSync(path.join(dir, 'WORKFLOW.md'), WORKFLOW);
      writeFileSync(path.join(dir, 'issues.json'), `${JSON.stringify(ISSUES, null, 2)}\n`);
      const env = serviceEnv(dir, server.url);

      const validate = runBuilt(['validate', 'WORKFLOW.md', '--strict'], { cwd: dir, env });
      expect(validate.status, validate.stdout + validate.stderr).toBe(0);

      const finished = await runUntilIdle(dir, env);
      const explain = `exit ${finished.code}\n${finished.stderr}\n${finished.stdout.slice(-6_000)}`;
      console.log(`gemini end to end: run --until-idle took ${finished.wallMs} ms`);
      expect(finished.code, explain).toBe(0);

      const [issue] = JSON.parse(readFileSync(path.join(dir, 'issues.json'), 'utf8')) as { state: string }[];
      expect(issue?.state, explain).toBe('Review');
      const runs = dbRuns(path.join(dir, '.orchestrator.db'), 'GEM-1');
      expect(runs, explain).toMatchObject([{ exit_kind: 'succeeded', turns: 1 }]);
      const [run] = runs;
      expect(readFileSync(path.join(run?.workspace ?? '', 'out.txt'), 'utf8')).toBe('hi\n');
      // The working turn's two calls: 313 in (127 cached) and 66 out.
      expect(run).toMatchObject({ input_tokens: 313, output_tokens: 66, total_tokens: 379 });
      const turns = dbTurns(path.join(dir, '.orchestrator.db'), run?.id ?? -1);
      expect(turns).toMatchObject([
        { exit_reason: 'turn_completed', final_message: 'Done: wrote hi to out.txt.', total_tokens: 379 },
      ]);
      expect(turns[0]?.session_id).toMatch(/^[0-9a-f-]{36}$/);
      // The verification request, then the turn's two calls.
      expect(server.requests.map((r) => r.path)).toEqual([
        `/v1beta/models/${GEMINI_MODEL}:streamGenerateContent?alt=sse`,
        `/v1beta/models/${GEMINI_MODEL}:streamGenerateContent?alt=sse`,
        `/v1beta/models/${GEMINI_MODEL}:streamGenerateContent?alt=sse`,
      ]);
      // Nothing was written to the operator's own ~/.gemini.
      expect(() => readFileSync(path.join(dir, 'home', '.gemini', 'settings.json'))).toThrow();
    },
    RUN_TIMEOUT_MS + 60_000,
  );

  it('orchestrator adapters lists gemini as runnable with the pinned version and its usage disposition', () => {
    const dir = scratchDir('gemini-adapters-');
    const env = serviceEnv(dir, 'http://127.0.0.1:9');
    const listed = runBuilt(['adapters', '--json'], { cwd: dir, env });
    expect(listed.status, listed.stderr).toBe(0);
    const { adapters } = JSON.parse(listed.stdout) as { adapters: AdapterJson[] };
    expect(adapters.find((a) => a.kind === 'gemini')).toMatchObject({
      kind: 'gemini',
      runnable: true,
      health: 'ok',
      command: 'gemini',
      command_path: GEMINI_BIN,
      version: GEMINI_VERSION,
      usage_arrival: 'turn_end',
      usage_attribution: 'per_model',
      mcp_dialect: 'settings-json',
    });
    const text = runBuilt(['adapters'], { cwd: dir, env });
    expect(text.stdout).toMatch(
      new RegExp(`^gemini\\s+ok\\s+${GEMINI_VERSION.replace(/\./g, '\\.')}\\s+turn_end/per_model`, 'm'),
    );
  }, 60_000);
});
