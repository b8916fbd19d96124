/**
 * The two reference-format samples run as their users wrote them: the real CLI on
 * testdata/workflows/valid/symphony-linear.md against the fake Linear with a fake
 * `codex app-server`, and on sortie-jira.md against the fake Jira with a fake `claude`.
 * Each file is copied byte for byte; only the environment differs from production: the
 * tracker address (ORCHESTRATOR_TRACKER_ENDPOINT for Symphony, whose file names none; the
 * `$SORTIE_JIRA_ENDPOINT` the Sortie file reads), the tokens, HOME (for `~`), a free HTTP
 * port, a short poll, and a PATH whose `codex` / `claude` are fakes. The commands the files
 * name (`codex … app-server`, `claude`) are therefore run exactly as written.
 */
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { fakeRuntime } from '../../internal-contracts/agent/fake-runtime.js';
import { claudeLines } from '../agent/claude-code/support.js';
import { fakeAppServer, wire } from '../agent/codex/fake-app-server.js';
import { type FakeJira, startFakeJira } from '../support/fake-jira/server.js';
import { type FakeLinear, startFakeLinear } from '../support/fake-linear/server.js';
import { createProject, dbRuns, startService, useServiceCleanup, waitFor } from '../support/service.js';

useServiceCleanup();

const VALID = fileURLToPath(new URL('../../testdata/workflows/valid/', import.meta.url));
const LINEAR_TOKEN = 'lin_api_e2e_reference_3b9d';
const JIRA_EMAIL = 'bot@acme.example';
const JIRA_TOKEN = 'jira_e2e_reference_7c2f';

let linear: FakeLinear | null = null;
let jira: FakeJira | null = null;
afterEach(async () => {
  await linear?.close();
  await jira?.close();
  linear = null;
  jira = null;
});

/** A project directory holding the sample unchanged, a HOME for its `~`, and a bin dir for PATH. */
function sampleProject(sample: string) {
  const project = createProject({ issues: [] });
  copyFileSync(path.join(VALID, sample), project.workflowPath);
  const home = mkdtempSync(path.join(tmpdir(), 'orch-e2e-home-'));
  const bin = path.join(project.dir, 'bin');
  mkdirSync(bin);
  return { project, home, bin };
}

function executable(file: string, text: string): void {
  writeFileSync(file, text);
  chmodSync(file, 0o755);
}

const baseEnv = (home: string, bin: string) => ({
  HOME: home,
  PATH: `${bin}:${process.env.PATH ?? ''}`,
  ORCHESTRATOR_SERVER_PORT: '0',
  ORCHESTRATOR_POLLING_INTERVAL_MS: '200',
});

describe('reference-format workflows run unchanged', () => {
  it('Symphony: a Linear project worked by codex app-server, only issues with the required label', {
    timeout: 150_000,
  }, async () => {
    linear = await startFakeLinear({
      token: LINEAR_TOKEN,
      projectSlug: 'payments-7f3c21d9a0be',
      states: [
        'Backlog',
        'Todo',
        'In Progress',
        'Rework',
        'Human Review',
        'Done',
        'Closed',
        'Cancelled',
        'Canceled',
        'Duplicate',
      ],
    });
    const first = linear.addIssue({ title: 'Fix rounding', state: 'Todo', priority: 2, labels: ['agent'] });
    const second = linear.addIssue({
      title: 'Add refunds',
      state: 'In Progress',
      priority: 3,
      labels: ['Agent'],
    });
    const unlabelled = linear.addIssue({ title: 'Not for agents', state: 'Todo', priority: 1 });
    const { project, home, bin } = sampleProject('symphony-linear.md');

    // `codex` on PATH: the test app-server (handshake, one turn program per turn/start); the
    // sandbox probe's `codex sandbox … -- cmd` runs the command as an unconfined sandbox would.
    const turn = fakeRuntime(path.join(project.dir, 'fakes'), 'codex-turn', {
      steps: [
        { sleepMs: 100 },
        { stdout: wire.message('m1', 'Working on it.') },
        { stdout: wire.completed('completed') },
      ],
    });
    const appServer = fakeAppServer(path.join(project.dir, 'fakes'));
    executable(
      path.join(bin, 'codex'),
      [
        '#!/bin/sh',
        'for a in "$@"; do',
        '  if [ "$a" = sandbox ]; then while [ "$1" != "--" ]; do shift; done; shift; exec "$@"; fi',
        'done',
        `exec ${process.execPath} ${appServer} relay ${turn} "$@"`,
        '',
      ].join('\n'),
    );
    const service = startService(project, {
      env: {
        ...baseEnv(home, bin),
        LINEAR_API_KEY: LINEAR_TOKEN,
        OPENAI_API_KEY: 'sk-fake-for-e2e',
        ORCHESTRATOR_TRACKER_ENDPOINT: linear.endpoint,
      },
    });
    const f = linear;
    const turned = (identifier: string) =>
      service.logs().some((l) => l.msg === 'turn started' && l.issue_identifier === identifier);
    // Symphony's agents move their own tickets (through Linear's API); the test does it for the fake one.
    for (const issue of [first, second]) {
      const identifier = f.identifierOf(issue);
      await waitFor(`a turn of ${identifier}`, () => turned(identifier), {
        timeoutMs: 60_000,
        explain: () => service.tail(),
      });
      f.setState(issue.id, 'Human Review');
    }
    for (const issue of [first, second]) {
      const identifier = f.identifierOf(issue);
      const runs = await waitFor(
        `the runs of ${identifier} to end`,
        () => {
          const rows = dbRuns(path.join(project.dir, '.orchestrator.db'), identifier);
          return rows.length > 0 && rows.every((r) => r.ended_at != null) ? rows : null;
        },
        { timeoutMs: 60_000, explain: () => service.tail() },
      );
      expect(
        runs.map((r) => r.exit_kind).filter((k) => k === 'failed'),
        identifier,
      ).toEqual([]);
      expect(f.stateOf(issue)).toBe('Human Review');
    }
    // The workflow's hooks ran in a workspace under the `~` of its workspace.root.
    expect(
      readFileSync(
        path.join(home, 'code', 'payments-workspaces', f.identifierOf(first), '.git', 'HEAD'),
        'utf8',
      ),
    ).toContain('ref:');
    expect(turned(f.identifierOf(unlabelled))).toBe(false);
    expect(new Set(f.requests.map((r) => r.key))).toEqual(new Set(['raw']));
    const stopped = await service.stop(30_000);
    expect(stopped.code, service.tail()).toBe(0);
  });

  it('Sortie: a Jira project worked by Claude Code, handed off to In Review with comments', {
    timeout: 150_000,
  }, async () => {
    jira = await startFakeJira({
      projects: ['PLAT'],
      email: JIRA_EMAIL,
      token: JIRA_TOKEN,
      statuses: ['To Do', 'In Progress', 'In Review', 'Done', "Won't Do"],
    });
    const ready = jira.addIssue({
      summary: 'Tidy the CI',
      status: 'To Do',
      priority: 2,
      labels: ['agent-ready'],
    });
    const other = jira.addIssue({ summary: 'Not yet', status: 'To Do', priority: 1 });
    const { project, home, bin } = sampleProject('sortie-jira.md');
    // `claude` on PATH: one successful stream-json turn, as Claude Code prints it.
    const claude = fakeRuntime(path.join(project.dir, 'fakes'), 'claude', {
      steps: [
        { stdout: claudeLines.init() },
        {
          stdout: claudeLines.assistantText('msg_1', 'Done: CI tidied.', {
            input: 20,
            output: 5,
            cacheRead: 0,
            cacheWrite: 0,
          }),
        },
        {
          stdout: JSON.stringify({
            type: 'result',
            subtype: 'success',
            is_error: false,
            result: 'Done: CI tidied.',
            session_id: '0c9c1a4e-5d0f-4c6e-9a51-6f1b2f0c7d11',
            usage: { input_tokens: 20, output_tokens: 5 },
          }),
        },
        { exit: 0 },
      ],
    });
    executable(path.join(bin, 'claude'), `#!/bin/sh\nexec ${claude} "$@"\n`);
    const service = startService(project, {
      env: {
        ...baseEnv(home, bin),
        SORTIE_JIRA_ENDPOINT: jira.url,
        SORTIE_JIRA_API_KEY: `${JIRA_EMAIL}:${JIRA_TOKEN}`,
        ANTHROPIC_API_KEY: 'sk-ant-fake-for-e2e',
      },
    });
    const f = jira;
    await waitFor(`${ready.key} handed off to In Review`, () => f.issue(ready.key).status === 'In Review', {
      timeoutMs: 90_000,
      explain: () => service.tail(),
    });
    // The comments the file asks for (on dispatch and on completion) landed.
    await waitFor('the completion comment', () => f.commentTexts(ready.key).length >= 2, {
      explain: () => service.tail(),
    });
    // Its hooks ran with Sortie's variables read as ours: the branch and the run log name the issue.
    const workspace = path.join(home, 'sortie-workspaces', 'platform', ready.key);
    expect(readFileSync(path.join(workspace, '.git', 'HEAD'), 'utf8')).toContain(`sortie/${ready.key}`);
    expect(readFileSync(path.join(workspace, '.sortie-runs.log'), 'utf8')).toContain(
      `of ${ready.key} finished`,
    );
    // Outside the query filter: never touched.
    expect(f.issue(other.key).status).toBe('To Do');
    expect(f.issue(other.key).comments).toEqual([]);
    const stopped = await service.stop(30_000);
    expect(stopped.code, service.tail()).toBe(0);
  });
});
