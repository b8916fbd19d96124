import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  CODEX_BIN,
  CODEX_VERSION,
  FAKE_KEY_ENV,
  realCodexSkipReason,
  writeFakeProviderHome,
} from '../agent/codex/real-cli.js';
import {
  hasToolOutput,
  lastUserText,
  type OpenAIReply,
  openaiDialect,
} from '../support/fake-model/openai.js';
import { FakeModelServer, type RecordedRequest } from '../support/fake-model/server.js';
import { fileAt, firstPullRequest, git, type LoopWorld, startLoopWorld } from '../support/git-repo.js';
import { itHasThePinnedCli } from '../support/pinned-cli.js';
import {
  createProject,
  dbRuns,
  type Project,
  type ServiceHandle,
  startService,
  useServiceCleanup,
  waitFor,
} from '../support/service.js';

const skip = realCodexSkipReason();
if (skip !== null) console.warn(`pull request loop with the real Codex CLI skipped: ${skip}`);

useServiceCleanup();

const TOKEN = 'ghp_realCodexLoopToken_5b8e2c71f40d';
const MODEL_KEY = 'sk-dummy-fake-key';
const BRANCH = 'agent/1';
const ISSUE_TITLE = 'Add the greeting file';
const FAILING_LINE = 'expected "hi" got "hello"';
const JOB_LOG = `setting up runner\nnpm test\nFAIL greeting.test.ts\n${FAILING_LINE}\n`;

const PROMPT =
  '{% if ci_failure %}CI failed on {{ ci_failure.head_sha }} ({% for c in ci_failure.checks %}{{ c.name }} {{ c.conclusion }}{% endfor %}):\n' +
  '{{ ci_failure.log }}\nFix it and commit.{% else %}{{ issue.title }}: {{ issue.description }}{% endif %}\n';

/** Git identity for the agent's own commits (its HOME has no configuration). */
const AGENT_GIT = 'git -c user.name=codex-agent -c user.email=codex-agent@localhost';

/**
 * The first tool call: write and commit the file, then show the model the branch, the agent's
 * environment and the clone's config (so a token in any of them would reach the model).
 */
const FIRST_CMD = [
  "printf 'hello from codex\\n' > greeting.txt",
  'git add greeting.txt',
  `${AGENT_GIT} commit --quiet -m 'Add the greeting'`,
  'echo "branch=$(git rev-parse --abbrev-ref HEAD)"',
  'env | sort',
  'cat .git/config',
].join(' && ');

/** The fix: the greeting CI expects, and the head the prompt named, committed. */
function fixCmd(headSha: string): string {
  return [
    "printf 'hi\\n' > greeting.txt",
    `printf '%s\\n' '${headSha}' > ci-fixed-for.txt`,
    'git add greeting.txt ci-fixed-for.txt',
    `${AGENT_GIT} commit --quiet -m 'Fix the greeting for CI'`,
    'git log -1 --format=%s',
  ].join(' && ');
}

const exec = (cmd: string): OpenAIReply => ({
  type: 'message',
  functionCall: { name: 'exec_command', arguments: { cmd } },
});

/** The model: a shell call for the issue's prompt and for the CI fix prompt; text after a tool's output. */
function model(request: RecordedRequest): OpenAIReply {
  if (hasToolOutput(request)) return { type: 'message', text: 'Done: committed.' };
  const prompt = lastUserText(request);
  const failed = /CI failed on ([0-9a-f]{40})/.exec(prompt);
  if (failed !== null) return exec(fixCmd(failed[1] as string));
  if (prompt.startsWith(ISSUE_TITLE)) return exec(FIRST_CMD);
  return { type: 'message', text: 'ready' };
}

let world: LoopWorld | null = null;
let modelServer: FakeModelServer | null = null;

afterEach(async () => {
  await world?.close();
  await modelServer?.close();
  world = null;
  modelServer = null;
});

/** The text of every `function_call_output` item a request sent back to the model. */
function toolOutputs(request: RecordedRequest): string[] {
  const input = (request.body as { input?: unknown } | null)?.input;
  if (!Array.isArray(input)) return [];
  return input
    .filter((item) => (item as { type?: unknown } | null)?.type === 'function_call_output')
    .map((item) => JSON.stringify((item as { output?: unknown }).output));
}

describe.skipIf(skip !== null)(`pull request loop with the real Codex CLI ${CODEX_VERSION}`, () => {
  itHasThePinnedCli(CODEX_BIN);

  it('codex commits on agent/1, the orchestrator pushes and opens one pull request, and a red CI run brings the failing log to codex whose fix lands on the same pull request', {
    timeout: 120_000,
  }, async () => {
    const started = Date.now();
    modelServer = await FakeModelServer.start([openaiDialect(model)]);
    const m = modelServer;
    world = await startLoopWorld(TOKEN, {
      title: ISSUE_TITLE,
      body: 'Write "hello from codex" to greeting.txt and commit it.',
    });
    const { fake: f, origin: o } = world;

    const project: Project = createProject({
      issues: [],
      prompt: PROMPT,
      config: world.config({
        mock: null,
        agent: {
          kind: 'codex',
          command: `${CODEX_BIN} app-server`,
          max_turns: 1,
          stall_timeout_ms: 30_000,
          turn_timeout_ms: 60_000,
        },
        git: { pull_request: { body: 'Work of codex for {{ issue.identifier }}.' } },
        reactions: { ci_failure: { poll_interval_ms: 1000, max_retries: 2, max_log_lines: 3 } },
      }),
    });
    // Codex's source home: the fake provider, its key read from OPENAI_API_KEY (a Codex
    // credential variable, the one secret the agent environment keeps).
    const source = writeFakeProviderHome(path.join(project.dir, 'codex-source'), m.port);
    const toml = path.join(source, 'config.toml');
    writeFileSync(toml, readFileSync(toml, 'utf8').replace(`"${FAKE_KEY_ENV}"`, '"OPENAI_API_KEY"'));
    const home = path.join(project.dir, 'home');
    mkdirSync(home);
    project.writeWorkflow({
      codex: {
        sandbox: 'danger-full-access',
        credentials_home: source,
        home_root: path.join(project.dir, 'codex-homes'),
      },
    });

    const service: ServiceHandle = startService(project, {
      logLevel: 'debug',
      env: { HOME: home, GITHUB_TOKEN: TOKEN, OPENAI_API_KEY: MODEL_KEY, RUST_LOG: 'error' },
    });
    const explain = () =>
      `${service.tail(40)}\nheads: ${JSON.stringify(o.heads())}\nmodel requests: ${m.requests.length}`;

    // 1. Codex commits on the branch; the orchestrator pushes it and opens the pull request.
    const { pr, head: first } = await firstPullRequest(world, BRANCH, explain);
    expect(first).toMatch(/^[0-9a-f]{40}$/);
    expect(fileAt(o.bareDir, BRANCH, 'greeting.txt')).toBe('hello from codex\n');
    // The agent's own commit, one on top of main, was pushed (not a leftover commit of the orchestrator).
    expect(git(['-C', o.bareDir, 'log', '--format=%an %s', `main..${BRANCH}`])).toBe(
      'codex-agent Add the greeting',
    );
    expect(f.pulls.all().filter((p) => p.head === BRANCH)).toHaveLength(1);
    expect(f.pulls.pull(pr.number).headSha).toBe(first);
    expect(f.issue(pr.number).body).toContain('Closes #1');
    expect(f.issue(pr.number).body).toContain('Work of codex for 1.');
    // The shell call ran on the branch the orchestrator checked out before the first turn.
    const firstOutputs = m.requests.flatMap(toolOutputs);
    expect(
      firstOutputs.some((t) => t.includes(`branch=${BRANCH}`)),
      firstOutputs.join('\n'),
    ).toBe(true);
    // Its output (environment and .git/config) reached the model: what the token check below covers.
    expect(firstOutputs.some((t) => t.includes('[remote \\"origin\\"]') && t.includes(o.url))).toBe(true);
    // Every push carried the token, through the askpass helper.
    const pushes = o.requests.filter((r) => r.path.endsWith('git-receive-pack'));
    expect(pushes.length).toBeGreaterThan(0);
    expect(pushes.every((r) => r.authorised)).toBe(true);

    // 2. CI fails on that head: the failing log lines reach codex, whose fix is pushed to the same pull request.
    const requestsBeforeCi = m.requests.length;
    f.pulls.setJobLog(901, JOB_LOG);
    f.pulls.setCheckRuns(first, [
      { id: 901, name: 'test', status: 'completed', conclusion: 'failure' },
      { id: 902, name: 'lint', status: 'completed', conclusion: 'success' },
    ]);
    const second = await waitFor(
      'the CI fix pushed',
      () => (o.heads()[BRANCH] !== first ? o.heads()[BRANCH] : null),
      { timeoutMs: 60_000, explain },
    );
    const fixPrompts = m.requests
      .slice(requestsBeforeCi)
      .map(lastUserText)
      .filter((t) => t.startsWith('CI failed on'));
    expect(fixPrompts.length, explain()).toBeGreaterThan(0);
    const fixPrompt = fixPrompts[0] as string;
    expect(fixPrompt).toContain(`CI failed on ${first} (test failure):`);
    expect(fixPrompt).toContain(FAILING_LINE);
    expect(fixPrompt).toContain('FAIL greeting.test.ts\n');
    // max_log_lines: 3 keeps the last three lines of the log only.
    expect(fixPrompt).not.toContain('setting up runner');
    expect(fixPrompt).toContain('Fix it and commit.');
    expect(fixPrompt).not.toContain(ISSUE_TITLE);
    // The fix commit sits on top of the first and holds what codex wrote for that head.
    expect(git(['-C', o.bareDir, 'rev-parse', `${second}^`])).toBe(first);
    expect(git(['-C', o.bareDir, 'log', '-1', '--format=%an %s', second])).toBe(
      'codex-agent Fix the greeting for CI',
    );
    expect(fileAt(o.bareDir, BRANCH, 'greeting.txt')).toBe('hi\n');
    expect(fileAt(o.bareDir, BRANCH, 'ci-fixed-for.txt')).toBe(`${first}\n`);
    await waitFor('#1 back in Review', () => f.issue(1).labels.includes('Review'), {
      timeoutMs: 30_000,
      explain,
    });
    // Still exactly one pull request, now at the fix.
    expect(f.pulls.all().filter((p) => p.head === BRANCH)).toHaveLength(1);
    expect(f.pulls.pull(pr.number).headSha).toBe(second);
    // The issue may not leave Review during a fix run: wait for the fix run's record itself.
    const runKinds = () =>
      dbRuns(project.dbPath, '1').map((r) => [
        r.exit_kind,
        (r as unknown as { reaction: string | null }).reaction,
      ]);
    await waitFor('the fix run recorded', () => runKinds().length === 2 && runKinds()[1]?.[0] !== null, {
      timeoutMs: 30_000,
      explain: () => `${explain()}
runs: ${JSON.stringify(runKinds())}`,
    });
    expect(runKinds()).toEqual([
      ['succeeded', null],
      ['succeeded', 'ci_failure'],
    ]);

    expect((await service.stop(30_000)).code).toBe(0);

    // 3. The token: not in anything the model saw, the clone's config, or the service's logs.
    expect(m.requests.length).toBeGreaterThan(requestsBeforeCi);
    for (const request of m.requests) {
      expect(request.bodyText).not.toContain(TOKEN);
      expect(JSON.stringify(request.headers)).not.toContain(TOKEN);
    }
    // The model key did reach the model: the scan above looks where a credential would show.
    expect(m.requests.some((r) => r.headers.authorization === `Bearer ${MODEL_KEY}`)).toBe(true);
    const workspace = path.join(project.workspaceRoot, '1');
    expect(readFileSync(path.join(workspace, '.git', 'config'), 'utf8')).toContain(o.url);
    expect(readFileSync(path.join(workspace, '.git', 'config'), 'utf8')).not.toContain(TOKEN);
    expect(service.stderr()).not.toContain(TOKEN);
    const logs = readdirSync(project.dir).filter((n) => n.endsWith('.jsonl'));
    expect(logs.length).toBeGreaterThan(0);
    for (const file of logs) expect(readFileSync(path.join(project.dir, file), 'utf8')).not.toContain(TOKEN);
    console.log(`pull request loop with the real Codex CLI: ${Date.now() - started} ms`);
  });
});
