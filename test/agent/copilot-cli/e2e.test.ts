/**
 * The built CLI (`npm run build`) with the pinned Copilot CLI on PATH: `orchestrator
 * adapters` lists the kind with the version the CLI prints, and `orchestrator run
 * --until-idle` on a file-tracker workflow with `agent.kind: copilot-cli` verifies
 * the credential against the fake model server, runs the turn (the shell call
 * writes its file in the issue's workspace) and hands the issue off, recording the
 * figures the fake served. Everything the CLI reaches is on 127.0.0.1.
 *
 * Without the CLI the file skips and says why, except under CI, where it fails.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BUILT_MAIN, cliEnv, ensureBuilt, runBuilt } from '../../support/cli.js';
import {
  type ChatReply,
  chatAnswersToolCall,
  chatDialect,
  chatOfferedTools,
} from '../../support/fake-model/chat.js';
import { FakeModelServer, type RecordedRequest } from '../../support/fake-model/server.js';
import { pinnedCliPlan, TOOL_CASE } from '../../support/headless-cli.js';
import { dbRuns } from '../../support/service.js';
import { COPILOT_BIN, COPILOT_VERSION, copilotEnv } from './real-cli.js';

const plan = pinnedCliPlan('copilot', 'copilot');
if (!plan.run) console.warn(`copilot-cli end-to-end tests skipped: ${plan.reason}`);

const RUN_TIMEOUT_MS = 150_000;

const dirs: string[] = [];
const children: ChildProcess[] = [];
let server: FakeModelServer | null = null;
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  await server?.close();
  server = null;
});

function tempDir(prefix: string): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), prefix)));
  dirs.push(dir);
  return dir;
}

/**
 * The orchestrator's environment: the CLI on PATH, its package cache already warm,
 * bring-your-own-key offline mode against `baseUrl`, and TMPDIR inside the project.
 */
function env(dir: string, baseUrl: string): Record<string, string> {
  const copilot = copilotEnv(path.join(dir, 'home'), baseUrl);
  return cliEnv({
    ...copilot,
    PATH: `${path.dirname(COPILOT_BIN)}:${process.env.PATH ?? copilot.PATH}`,
    TMPDIR: dir,
  });
}

const WORKFLOW = (root: string) => `---
tracker:
  kind: file
  active_states: [Todo]
  terminal_states: [Done]
  handoff_state: Review
file:
  path: issues.json
workspace:
  root: ${root}
agent:
  kind: copilot-cli
  max_turns: 1
  turn_timeout_ms: 120000
  stall_timeout_ms: 60000
copilot-cli:
  mode: autopilot
  max_autopilot_continues: 3
---
You are working on {{ issue.identifier }}: {{ issue.title }}.

{{ issue.description }}
`;

const ISSUES = [
  {
    id: '1',
    identifier: 'CP-1',
    title: 'Write hi to out.txt',
    state: 'Todo',
    description: TOOL_CASE.prompt,
  },
];

/**
 * The model's side: the credential check (a request offering no tools) gets a plain
 * answer; the working turn gets a bash call writing out.txt, then, once its result is
 * back, the completion that ends autopilot.
 */
const script = (request: RecordedRequest): ChatReply => {
  if (chatOfferedTools(request).length === 0) {
    return { type: 'message', text: 'ready', usage: { prompt: 31, completion: 5, cachedPrompt: 0 } };
  }
  if (chatAnswersToolCall(request)) {
    return {
      type: 'message',
      text: TOOL_CASE.finalText,
      toolCalls: [{ name: 'task_complete', arguments: { summary: TOOL_CASE.finalText } }],
      usage: { prompt: 190, completion: 21, cachedPrompt: 120 },
    };
  }
  return {
    type: 'message',
    text: TOOL_CASE.toolText,
    toolCalls: [
      { name: 'bash', arguments: { command: TOOL_CASE.command, description: TOOL_CASE.description } },
    ],
    usage: { prompt: 123, completion: 45, cachedPrompt: 7 },
  };
};

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
  durationMs: number;
}

function runUntilIdle(dir: string, environment: Record<string, string>): Promise<Finished> {
  const startedMs = Date.now();
  const child = spawn(
    process.execPath,
    [BUILT_MAIN, 'run', 'WORKFLOW.md', '--until-idle', '--port', '0', '--log-format', 'json'],
    { cwd: dir, env: environment },
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
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, durationMs: Date.now() - startedMs });
    }),
  );
}

describe.skipIf(!plan.run)('copilot-cli end to end with the built CLI', () => {
  beforeAll(() => ensureBuilt(), 300_000);

  it('orchestrator adapters lists copilot-cli as runnable, with the version the CLI prints', async () => {
    const dir = tempDir('orch-copilot-adapters-');
    const run = runBuilt(['adapters', '--json'], { env: env(dir, 'http://127.0.0.1:9') });
    expect(run.status, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout) as { adapters: Record<string, unknown>[] };
    expect(doc.adapters.find((a) => a.kind === 'copilot-cli')).toMatchObject({
      kind: 'copilot-cli',
      runnable: true,
      command: 'copilot',
      command_path: COPILOT_BIN,
      version: `GitHub Copilot CLI ${COPILOT_VERSION}.`,
      health: 'ok',
      usage_arrival: 'turn_end',
      usage_attribution: 'per_model',
      mcp_dialect: 'mcp-json',
    });
  }, 60_000);

  it('run --until-idle verifies the credential, runs the turn, leaves out.txt in the workspace and hands the issue off', {
    timeout: RUN_TIMEOUT_MS + 30_000,
  }, async () => {
    server = await FakeModelServer.start([chatDialect(script)]);
    const dir = tempDir('orch-copilot-run-');
    const root = path.join(dir, 'workspaces');
    writeFileSync(path.join(dir, 'WORKFLOW.md'), WORKFLOW(root));
    writeFileSync(path.join(dir, 'issues.json'), `${JSON.stringify(ISSUES, null, 2)}\n`);
    const environment = env(dir, server.url);

    const validate = runBuilt(['validate', 'WORKFLOW.md', '--strict'], { cwd: dir, env: environment });
    expect(validate.status, validate.stdout + validate.stderr).toBe(0);

    const finished = await runUntilIdle(dir, environment);
    const explain = `exit ${finished.code}\n${finished.stderr}\n${finished.stdout.slice(-6_000)}`;
    console.log(`copilot-cli end to end: run --until-idle took ${finished.durationMs} ms`);
    expect(finished.code, explain).toBe(0);
    const [issue] = JSON.parse(readFileSync(path.join(dir, 'issues.json'), 'utf8')) as { state: string }[];
    expect(issue?.state, explain).toBe('Review');
    expect(readFileSync(path.join(root, 'CP-1', TOOL_CASE.file), 'utf8')).toBe(TOOL_CASE.fileContent);

    // One verification request (no tools), then the turn's two calls.
    expect(server.requests.map((r) => chatOfferedTools(r).length > 0)).toEqual([false, true, true]);
    const [run] = dbRuns(path.join(dir, '.orchestrator.db'), 'CP-1');
    expect(run, explain).toMatchObject({
      agent_kind: 'copilot-cli',
      exit_kind: 'succeeded',
      turns: 1,
      // The turn's two calls: 123 + 190 in (7 + 120 cached), 45 + 21 out; the verification request is not the run's.
      input_tokens: 313,
      output_tokens: 66,
      cache_read_tokens: 127,
      provenance: 'reported',
      unaccounted_turns: 0,
    });
    expect(run?.session_id).toMatch(/^[0-9a-f-]{36}$/);
  });
});
