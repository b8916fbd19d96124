/**
 * The opencode kind end to end, as an operator runs it: the built CLI
 * (`npm run build`) runs `orchestrator run --until-idle` on a workflow with the
 * file tracker and `agent.kind: opencode`, the fake model server declared as a
 * provider in the block's `config`, the pinned OpenCode CLI first on PATH. The
 * issue must reach the handoff state with the file the tool wrote in its
 * workspace, the run and turn recorded with the fake's figures, and nothing
 * written to the operator's own OpenCode folders; and `orchestrator adapters`
 * must list the kind with the pinned version. Without the CLI the file skips and
 * says why, except under CI.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AdapterJson } from '../../../src/cli/adapters-command.js';
import { BUILT_MAIN, cliEnv, ensureBuilt, runBuilt } from '../../support/cli.js';
import {
  type ChatReply,
  chatAnswersToolCall,
  chatDialect,
  chatOfferedTools,
} from '../../support/fake-model/chat.js';
import { FakeModelServer, type RecordedRequest } from '../../support/fake-model/server.js';
import { pinnedCliPlan } from '../../support/headless-cli.js';
import { dbRuns, dbTurns } from '../../support/service.js';
import { OPENCODE_BIN, OPENCODE_MODEL, OPENCODE_VERSION } from './real-cli.js';
import { DUMMY_KEY, scratchDir } from './support.js';

const plan = pinnedCliPlan('opencode', 'opencode');
if (!plan.run) console.warn(`opencode end-to-end tests skipped: ${plan.reason}`);

const RUN_TIMEOUT_MS = 240_000;
const PROMPT_MARK = 'Write hi to out.txt using the shell.';

const workflow = (baseUrl: string) => `---
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
  kind: opencode
  max_turns: 1
opencode:
  model: ${OPENCODE_MODEL}
  config:
    provider:
      fake:
        npm: "@ai-sdk/openai-compatible"
        name: Fake
        options:
          baseURL: ${baseUrl}/v1
          apiKey: "{env:OPENAI_API_KEY}"
        models:
          fake-model:
            name: Fake Model
            tool_call: true
            limit: { context: 200000, output: 8192 }
---
${PROMPT_MARK} This is {{ issue.identifier }}: {{ issue.title }}.
`;

const ISSUES = [{ id: '1', identifier: 'OC-1', title: 'Write the greeting', state: 'Todo', description: '' }];

/** The model: "ready" to the tool-less verification request, a shell call for the issue, its answer after it. */
function script(request: RecordedRequest): ChatReply {
  if (chatOfferedTools(request).length === 0) {
    return { type: 'message', text: 'ready', usage: { prompt: 20, completion: 1, cachedPrompt: 0 } };
  }
  if (chatAnswersToolCall(request)) {
    return {
      type: 'message',
      text: 'Done: wrote hi to out.txt.',
      usage: { prompt: 190, completion: 21, cachedPrompt: 120 },
    };
  }
  return {
    type: 'message',
    text: 'I will write the file.',
    toolCalls: [{ name: 'bash', arguments: { command: 'echo hi > out.txt', description: 'write' } }],
    usage: { prompt: 123, completion: 45, cachedPrompt: 7 },
  };
}

const children: ChildProcess[] = [];
let server: FakeModelServer | null = null;
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  await server?.close();
  server = null;
});

/** The service's environment: the pinned CLI first on PATH, its own HOME and state folder, the dummy key. */
function serviceEnv(dir: string): Record<string, string> {
  for (const sub of ['home', 'state']) mkdirSync(path.join(dir, sub), { recursive: true });
  return cliEnv({
    PATH: `${path.dirname(OPENCODE_BIN)}:${process.env.PATH ?? ''}`,
    HOME: path.join(dir, 'home'),
    XDG_STATE_HOME: path.join(dir, 'state'),
    OPENAI_API_KEY: DUMMY_KEY,
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

describe.skipIf(!plan.run)('opencode end to end with the built CLI', () => {
  beforeAll(() => ensureBuilt(), 300_000);

  it(
    'orchestrator run takes a file-tracker issue to the handoff state with the file the tool wrote',
    async () => {
      server = await FakeModelServer.start([chatDialect(script)]);
      const dir = realpathSync(scratchDir('opencode-e2e-'));
      writeFileSync(path.join(dir, 'WORKFLOW.md'), workflow(server.url));
      writeFileSync(path.join(dir, 'issues.json'), `${JSON.stringify(ISSUES, null, 2)}\n`);
      const env = serviceEnv(dir);

      const validate = runBuilt(['validate', 'WORKFLOW.md', '--strict'], { cwd: dir, env });
      expect(validate.status, validate.stdout + validate.stderr).toBe(0);

      const finished = await runUntilIdle(dir, env);
      const explain = `exit ${finished.code}\n${finished.stderr}\n${finished.stdout.slice(-6_000)}`;
      console.log(`opencode end to end: run --until-idle took ${finished.wallMs} ms`);
      expect(finished.code, explain).toBe(0);

      const [issue] = JSON.parse(readFileSync(path.join(dir, 'issues.json'), 'utf8')) as { state: string }[];
      expect(issue?.state, explain).toBe('Review');
      const runs = dbRuns(path.join(dir, '.orchestrator.db'), 'OC-1');
      expect(runs, explain).toMatchObject([{ exit_kind: 'succeeded', turns: 1 }]);
      const [run] = runs;
      expect(readFileSync(path.join(run?.workspace ?? '', 'out.txt'), 'utf8')).toBe('hi\n');
      // The working turn's two calls: 313 in (127 cached) and 66 out.
      expect(run).toMatchObject({ input_tokens: 313, output_tokens: 66, total_tokens: 379 });
      const turns = dbTurns(path.join(dir, '.orchestrator.db'), run?.id ?? -1);
      expect(turns).toMatchObject([
        { exit_reason: 'turn_completed', final_message: 'Done: wrote hi to out.txt.', total_tokens: 379 },
      ]);
      expect(turns[0]?.session_id).toMatch(/^ses_/);
      // The verification request (no tools offered), then the turn's two calls; no title request.
      expect(server.requests.map((r) => chatOfferedTools(r).includes('bash'))).toEqual([false, true, true]);
      // Nothing was written to the operator's own OpenCode folders.
      expect(existsSync(path.join(dir, 'home', '.config', 'opencode'))).toBe(false);
      expect(existsSync(path.join(dir, 'home', '.local', 'share', 'opencode'))).toBe(false);
    },
    RUN_TIMEOUT_MS + 60_000,
  );

  it('orchestrator adapters lists opencode as runnable with the pinned version and its usage disposition', () => {
    const dir = scratchDir('opencode-adapters-');
    const env = serviceEnv(dir);
    const listed = runBuilt(['adapters', '--json'], { cwd: dir, env });
    expect(listed.status, listed.stderr).toBe(0);
    const { adapters } = JSON.parse(listed.stdout) as { adapters: AdapterJson[] };
    expect(adapters.find((a) => a.kind === 'opencode')).toMatchObject({
      kind: 'opencode',
      runnable: true,
      health: 'ok',
      command: 'opencode',
      command_path: OPENCODE_BIN,
      version: OPENCODE_VERSION,
      usage_arrival: 'incremental',
      usage_attribution: 'session_total',
      mcp_dialect: 'inline-config-json',
    });
    const text = runBuilt(['adapters'], { cwd: dir, env });
    expect(text.stdout).toMatch(
      new RegExp(
        `^opencode\\s+ok\\s+${OPENCODE_VERSION.replace(/\./g, '\\.')}\\s+incremental/session_total`,
        'm',
      ),
    );
  }, 120_000);
});
