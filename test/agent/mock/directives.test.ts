import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import '../../../src/agent/kinds.js';
import { promptPurpose, verdictPathIn } from '../../../src/agent/mock/directives.js';
import { agentKind } from '../../../src/agent/registry.js';
import type { AgentEvent, AgentSettings, TurnOutcome } from '../../../src/domain/agent.js';
import { retryDecision } from '../../../src/domain/errors.js';
import { runSelfReview } from '../../../src/orchestrator/self-review/loop.js';
import { parseVerdict } from '../../../src/orchestrator/self-review/verdict.js';
import { fixPrompt, type ReviewPromptInput, reviewPrompt } from '../../../src/prompt/self-review.js';
import { SAMPLE_ISSUE } from '../../../src/prompt/variables.js';
import {
  prepareSignalDir,
  readJsonSignal,
  readStatusSignal,
  VERDICT_MAX_BYTES,
} from '../../../src/workspace/signals.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'mock-dir-'));
let n = 0;

const AGENT: AgentSettings = {
  kind: 'mock',
  command: null,
  turnTimeoutMs: 20_000,
  readTimeoutMs: 5_000,
  stallTimeoutMs: 0,
};

async function runMock(
  prompt: string,
  opts: { agent?: Partial<AgentSettings>; abortAfterMs?: number; abortOnUsage?: boolean } = {},
) {
  const ws = path.join(root, `ws-${++n}`);
  mkdirSync(ws);
  const adapter = agentKind('mock')?.runtime?.factory();
  if (!adapter) throw new Error('mock not registered');
  const session = await adapter.startSession({
    workspacePath: ws,
    workspaceRoot: root,
    agent: { ...AGENT, ...opts.agent },
    options: {},
    resumeSessionId: null,
    env: { PATH: process.env.PATH ?? '' },
  });
  const events: AgentEvent[] = [];
  const controller = new AbortController();
  if (opts.abortAfterMs !== undefined) setTimeout(() => controller.abort(), opts.abortAfterMs);
  const outcome: TurnOutcome = await adapter.runTurn(session, {
    prompt,
    issue: SAMPLE_ISSUE,
    onEvent: (e) => {
      events.push(e);
      // Cancel once the usage figure is in: a condition, not a guess at how long start-up takes.
      if (opts.abortOnUsage === true && e.type === 'token_usage') controller.abort();
    },
    signal: controller.signal,
  });
  await adapter.stopSession(session);
  return { outcome, events };
}

interface Row {
  directive: string;
  exitReason: string;
  errorKind: string | null;
  retry: 'retry' | 'release' | 'wait_for_reset' | null;
  input: number;
  output: number;
  unaccounted: boolean;
  agent?: Partial<AgentSettings>;
  abortAfterMs?: number;
  abortOnUsage?: boolean;
}

const ROWS: Row[] = [
  {
    directive: '!ok all good',
    exitReason: 'turn_completed',
    errorKind: null,
    retry: null,
    input: 0,
    output: 0,
    unaccounted: false,
  },
  {
    directive: '!usage 120 30 5\n!ok',
    exitReason: 'turn_completed',
    errorKind: null,
    retry: null,
    input: 125,
    output: 30,
    unaccounted: false,
  },
  {
    directive: '!blocked which date?',
    exitReason: 'turn_completed',
    errorKind: null,
    retry: null,
    input: 0,
    output: 0,
    unaccounted: false,
  },
  {
    directive: '!usage 10 5\n!error boom',
    exitReason: 'turn_failed',
    errorKind: 'port_exit',
    retry: 'retry',
    input: 10,
    output: 5,
    unaccounted: true,
  },
  {
    directive: '!usage 10 5\n!crash',
    exitReason: 'turn_failed',
    errorKind: 'port_exit',
    retry: 'retry',
    input: 10,
    output: 5,
    unaccounted: true,
  },
  {
    directive: '!exit 0',
    exitReason: 'turn_failed',
    errorKind: 'turn_failed',
    retry: 'retry',
    input: 0,
    output: 0,
    unaccounted: false,
  },
  {
    directive: '!exit 127',
    exitReason: 'turn_failed',
    errorKind: 'agent_not_found',
    retry: 'release',
    input: 0,
    output: 0,
    unaccounted: false,
  },
  {
    directive: '!loop 3\n!ok',
    exitReason: 'turn_completed',
    errorKind: null,
    retry: null,
    input: 0,
    output: 0,
    unaccounted: true,
  },
  {
    directive: '!toolcall Bash\n!exit 0',
    exitReason: 'turn_completed',
    errorKind: null,
    retry: null,
    input: 0,
    output: 0,
    unaccounted: true,
  },
  {
    directive: '!usage 7 3\n!silent 30000\n!ok',
    exitReason: 'turn_failed',
    errorKind: 'response_timeout',
    retry: 'retry',
    input: 7,
    output: 3,
    unaccounted: true,
    agent: { stallTimeoutMs: 8000 },
  },
  {
    directive: '!usage 7 3\n!abort',
    exitReason: 'turn_failed',
    errorKind: 'turn_timeout',
    retry: 'retry',
    input: 7,
    output: 3,
    unaccounted: true,
    agent: { turnTimeoutMs: 15_000 },
  },
  {
    directive: '!usage 7 3\n!abort',
    exitReason: 'turn_cancelled',
    errorKind: 'turn_cancelled',
    retry: 'release',
    input: 7,
    output: 3,
    unaccounted: true,
    abortOnUsage: true,
  },
];

describe('the mock directive table', () => {
  it.each(ROWS)('$directive → $exitReason / $errorKind', async (row) => {
    const { outcome, events } = await runMock(row.directive, {
      ...(row.agent ? { agent: row.agent } : {}),
      ...(row.abortAfterMs !== undefined ? { abortAfterMs: row.abortAfterMs } : {}),
      ...(row.abortOnUsage === true ? { abortOnUsage: true } : {}),
    });
    expect(outcome.result.exitReason).toBe(row.exitReason);
    expect(outcome.error?.kind ?? null).toBe(row.errorKind);
    expect(outcome.error ? retryDecision(outcome.error.kind) : null).toBe(row.retry);
    expect(outcome.result.usage.inputTokens).toBe(row.input);
    expect(outcome.result.usage.outputTokens).toBe(row.output);
    expect(outcome.result.spendUnaccounted).toBe(row.unaccounted);
    expect(outcome.result.usageProvenance).toBe('local');
    const terminal = events.filter((e) => e.type.startsWith('turn_'));
    expect(terminal).toHaveLength(1);
  });

  it('a blocked directive ends with a BLOCKED: final message', async () => {
    const { outcome } = await runMock('!blocked which date?');
    expect(outcome.result.finalMessage).toBe('BLOCKED: which date?');
  });

  it('a tool loop reports each tool call with its sanitised argument', async () => {
    const { events } = await runMock('!loop 2\n!ok');
    const tools = events.filter((e) => e.type === 'tool_result');
    expect(tools).toHaveLength(2);
    expect(tools[0]).toMatchObject({
      toolName: 'Bash',
      toolKind: 'shell',
      toolArgument: 'echo step 1',
      toolError: false,
    });
  });

  it('printenv reports a variable of the agent environment as a notification', async () => {
    const { events } = await runMock('!printenv PATH\n!printenv NOT_SET_ANYWHERE\n!ok');
    const notes = events.flatMap((e) => (e.type === 'notification' ? [e.message] : []));
    expect(notes).toContain(`PATH=${process.env.PATH ?? ''}`);
    expect(notes).toContain('NOT_SET_ANYWHERE=(unset)');
  });

  it('a slow start past the first-event timeout is a response_timeout', async () => {
    // The mock kind sets no first-event timeout of its own; the stall timer covers a silent start.
    const { outcome } = await runMock('!slowstart 6000\n!ok', { agent: { stallTimeoutMs: 1500 } });
    expect(outcome.error?.kind).toBe('response_timeout');
  });
});

describe('the mock thread memory', () => {
  /** Runs `prompts` as the turns of one session in `ws`, returning each turn's final message. */
  async function sessionTurns(ws: string, prompts: string[]): Promise<string[]> {
    const adapter = agentKind('mock')?.runtime?.factory();
    if (!adapter) throw new Error('mock not registered');
    const session = await adapter.startSession({
      workspacePath: ws,
      workspaceRoot: root,
      agent: AGENT,
      options: {},
      resumeSessionId: null,
      env: { PATH: process.env.PATH ?? '' },
    });
    const finals: string[] = [];
    for (const prompt of prompts) {
      const { result } = await adapter.runTurn(session, {
        prompt,
        issue: SAMPLE_ISSUE,
        onEvent: () => undefined,
        signal: new AbortController().signal,
      });
      finals.push(result.finalMessage);
    }
    await adapter.stopSession(session);
    return finals;
  }

  it("a continuation prompt without directives replays the session's first ones, not a bare !ok", async () => {
    const ws = path.join(root, `ws-${++n}`);
    mkdirSync(ws);
    const finals = await sessionTurns(ws, ['Task.\n!ok Added the greeting.', 'Continue where you left off.']);
    expect(finals).toEqual(['Added the greeting.', 'Added the greeting.']);
    // Another session in the same workspace remembers nothing of the first.
    expect(await sessionTurns(ws, ['Continue where you left off.'])).toEqual(['done']);
  });

  it('a workspace the memory cannot be written to does not fail the turn (another host user made it)', async () => {
    const ws = path.join(root, `ws-${++n}`);
    mkdirSync(ws);
    // A file where the memory's folder would go: creating it fails as it does without permission.
    writeFileSync(path.join(ws, '.orchestrator'), '');
    expect(await sessionTurns(ws, ['Task.\n!ok fine'])).toEqual(['fine']);
  });
});

describe('how the mock tells the self-review prompts from work', () => {
  const review = (over: Partial<ReviewPromptInput> = {}) =>
    reviewPrompt({
      iteration: 2,
      maxIterations: 3,
      title: 'Fix the parser',
      description: '!ok from the issue',
      diff: { text: '+x', bytes: 2, truncated: false },
      verification: [],
      verdictPath: '.orchestrator/review_verdict.json',
      previousNote: 'Your review found the change not ready.',
      ...over,
    });

  it('knows the prompts of src/prompt/self-review.ts by their first line, whatever they quote', () => {
    expect(promptPurpose(review())).toBe('review');
    expect(promptPurpose(fixPrompt({ summary: 'Self-review, iteration 1 of 3.', issues: ['x'] }))).toBe(
      'fix',
    );
    expect(promptPurpose(fixPrompt({ unreadable: 'not JSON' }))).toBe('fix');
    expect(promptPurpose('Work on ENG-1.\n\nSelf-review, iteration 1 of 2.\n!ok')).toBe('work');
    expect(promptPurpose('Your task: Your review found the change not ready.')).toBe('work');
  });

  it('reads the verdict path a review prompt names', () => {
    expect(verdictPathIn(review())).toBe('.orchestrator/review_verdict.json');
    expect(verdictPathIn(review({ verdictPath: 'out/verdict.json' }))).toBe('out/verdict.json');
    expect(verdictPathIn('Work.')).toBeNull();
  });
});

describe('the mock in a git workspace', () => {
  const GIT_ENV = {
    PATH: process.env.PATH ?? '',
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@x',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@x',
  };

  function gitIn(ws: string, ...args: string[]): string {
    const ran = spawnSync('git', args, { cwd: ws, encoding: 'utf8', env: GIT_ENV });
    if (ran.status !== 0) throw new Error(`git ${args.join(' ')}: ${ran.stderr}`);
    return ran.stdout.trim();
  }

  /** A clone-like workspace: a repository with one commit and no user identity configured. */
  function repo(): string {
    const ws = path.join(root, `ws-${++n}`);
    mkdirSync(ws);
    gitIn(ws, 'init', '--quiet', '--initial-branch=main');
    writeFileSync(path.join(ws, 'README.md'), 'hello\n');
    gitIn(ws, 'add', 'README.md');
    gitIn(ws, 'commit', '--quiet', '-m', 'first');
    return ws;
  }

  /** Runs `prompts` as the turns of one mock session in `ws`. */
  async function turns(ws: string, prompts: string[]) {
    const adapter = agentKind('mock')?.runtime?.factory();
    if (!adapter) throw new Error('mock not registered');
    const session = await adapter.startSession({
      workspacePath: ws,
      workspaceRoot: root,
      agent: AGENT,
      options: {},
      resumeSessionId: null,
      // No HOME: no global git identity either, as on a fresh host.
      env: { PATH: process.env.PATH ?? '' },
    });
    const out: { outcome: TurnOutcome; notes: string[] }[] = [];
    for (const prompt of prompts) {
      const notes: string[] = [];
      const outcome = await adapter.runTurn(session, {
        prompt,
        issue: SAMPLE_ISSUE,
        onEvent: (e) => {
          if (e.type === 'notification') notes.push(e.message);
        },
        signal: new AbortController().signal,
      });
      out.push({ outcome, notes });
    }
    await adapter.stopSession(session);
    return out;
  }

  const reviewOf = (description: string, iteration = 1) =>
    reviewPrompt({
      iteration,
      maxIterations: 3,
      title: 'Mock task',
      description,
      diff: null,
      verification: [],
      verdictPath: '.orchestrator/review_verdict.json',
      previousNote: null,
    });

  const verdictIn = (ws: string) => {
    const read = readJsonSignal(ws, 'review_verdict.json', VERDICT_MAX_BYTES);
    return read.kind === 'read' ? parseVerdict(read.value) : read;
  };

  it('!write and !commit make a real commit with the file (mock-agent as author, its own files left out)', async () => {
    const ws = repo();
    const [turn] = await turns(ws, ['Task.\n!write notes/a.txt hello\\nworld\n!commit Add the notes\n!ok']);
    expect(turn?.outcome.result.exitReason).toBe('turn_completed');
    expect(turn?.notes).toEqual([]);
    expect(gitIn(ws, 'log', '-1', '--format=%s|%an|%ae')).toBe(
      'Add the notes|mock-agent|mock-agent@localhost',
    );
    expect(gitIn(ws, 'show', 'HEAD:notes/a.txt')).toBe('hello\nworld');
    expect(readFileSync(path.join(ws, 'notes/a.txt'), 'utf8')).toBe('hello\nworld\n');
    expect(gitIn(ws, 'rev-list', '--count', 'HEAD')).toBe('2');
    // The thread memory under .orchestrator/ exists but was not committed.
    expect(existsSync(path.join(ws, '.orchestrator', 'mock-threads'))).toBe(true);
    expect(gitIn(ws, 'ls-tree', '-r', '--name-only', 'HEAD')).toBe('README.md\nnotes/a.txt');
  });

  it('an identity the repository has is kept', async () => {
    const ws = repo();
    gitIn(ws, 'config', 'user.name', 'Repo Person');
    gitIn(ws, 'config', 'user.email', 'repo@example.com');
    await turns(ws, ['!write b.txt b\n!commit b\n!ok']);
    expect(gitIn(ws, 'log', '-1', '--format=%an|%ae')).toBe('Repo Person|repo@example.com');
  });

  it('!write refuses a path out of the workspace, into .git, absolute or through a symlink out, and goes on', async () => {
    const ws = repo();
    const outside = mkdtempSync(path.join(os.tmpdir(), 'mock-outside-'));
    symlinkSync(outside, path.join(ws, 'out-link'));
    const [turn] = await turns(ws, [
      [
        '!write ../x escaped',
        '!write .git/x inside git',
        '!write sub/../.git/hooks/pre-commit evil',
        `!write ${path.join(ws, 'abs.txt')} absolute`,
        '!write out-link/y through a link',
        '!write ok.txt fine',
        '!ok finished',
      ].join('\n'),
    ]);
    expect(turn?.outcome.result.exitReason).toBe('turn_completed');
    expect(turn?.outcome.result.finalMessage).toBe('finished');
    expect(turn?.notes).toEqual([
      '!write refused: ../x is outside the workspace',
      '!write refused: .git/x is inside .git',
      '!write refused: sub/../.git/hooks/pre-commit is inside .git',
      // The event layer shortens workspace paths in messages; the refusal is what counts.
      expect.stringMatching(/^!write refused: \S*abs\.txt is an absolute path$/),
      '!write refused: out-link/y leads outside the workspace',
    ]);
    expect(existsSync(path.join(root, 'x'))).toBe(false);
    expect(existsSync(path.join(ws, '.git', 'x'))).toBe(false);
    expect(existsSync(path.join(ws, '.git', 'hooks', 'pre-commit'))).toBe(false);
    expect(existsSync(path.join(ws, 'abs.txt'))).toBe(false);
    expect(existsSync(path.join(outside, 'y'))).toBe(false);
    expect(readFileSync(path.join(ws, 'ok.txt'), 'utf8')).toBe('fine\n');
    rmSync(outside, { recursive: true, force: true });
  });

  it('!commit with nothing to commit is a notice, not a failure; a git failure is a notice too', async () => {
    const ws = repo();
    const head = gitIn(ws, 'rev-parse', 'HEAD');
    const [clean] = await turns(ws, ['!commit nothing here\n!ok still fine']);
    expect(clean?.outcome.result.exitReason).toBe('turn_completed');
    expect(clean?.outcome.result.finalMessage).toBe('still fine');
    expect(clean?.notes).toEqual(['!commit: nothing to commit']);
    expect(gitIn(ws, 'rev-parse', 'HEAD')).toBe(head);

    const plain = path.join(root, `ws-${++n}`);
    mkdirSync(plain);
    const [noRepo] = await turns(plain, ['!write a.txt a\n!commit a\n!ok went on']);
    expect(noRepo?.outcome.result.finalMessage).toBe('went on');
    expect(noRepo?.notes).toHaveLength(1);
    expect(noRepo?.notes[0]).toMatch(/^!commit: git add failed: .*not a git repository/i);
  });

  it('!status writes the status signal the orchestrator reads', async () => {
    const ws = repo();
    const [turn] = await turns(ws, ['!status needs-human-review\n!ok']);
    expect(turn?.notes).toEqual([]);
    expect(readFileSync(path.join(ws, '.orchestrator', 'status'), 'utf8')).toBe('needs-human-review\n');
    expect(readStatusSignal(ws)).toEqual({ kind: 'read', value: 'needs-human-review' });
  });

  it('!verdict answers review prompts in order (iterate, then pass) and is ignored on work prompts; !fix runs only on a fix prompt', async () => {
    const ws = repo();
    const task = [
      'Add a.txt.',
      '!write a.txt a',
      '!commit Add a',
      '!verdict iterate pass',
      '!fix write fixed.txt yes',
      '!fix commit Fix it',
      '!ok worked',
    ].join('\n');
    const results = await turns(ws, [
      task,
      // A review prompt carrying the issue's directives: only !verdict acts (a.txt is not rewritten).
      reviewOf(task),
      fixPrompt({ summary: 'mock review 1', issues: ['mock issue 1'] }),
      // A review prompt without any: the remembered ones answer.
      reviewOf('', 2),
      // A continuation still replays the work directives, not the review's or the fix's.
      'Continue.',
    ]);
    expect(results.map((r) => r.outcome.result.finalMessage)).toEqual([
      'worked',
      'done',
      'done',
      'done',
      'worked',
    ]);
    expect(results.every((r) => r.outcome.result.exitReason === 'turn_completed')).toBe(true);
    expect(results.flatMap((r) => r.notes)).toEqual(['!commit: nothing to commit']);
    // The work turn wrote and committed a.txt, and nothing of the fix.
    expect(gitIn(ws, 'log', '--format=%s')).toBe('Fix it\nAdd a\nfirst');
    expect(gitIn(ws, 'show', '--name-only', '--format=', 'HEAD')).toBe('fixed.txt');
    expect(readFileSync(path.join(ws, '.orchestrator', 'mock-verdict-count'), 'utf8')).toBe('2\n');
    expect(verdictIn(ws)).toEqual({
      ok: true,
      verdict: { verdict: 'pass', summary: 'mock review 2', issues: [] },
    });
  });

  it('the first review writes an iterate verdict with its issue; a work prompt writes none', async () => {
    const ws = repo();
    const task = '!verdict iterate pass\n!fix write fixed.txt yes\n!ok worked';
    const [work] = await turns(ws, [task]);
    expect(work?.outcome.result.finalMessage).toBe('worked');
    expect(existsSync(path.join(ws, '.orchestrator', 'review_verdict.json'))).toBe(false);
    expect(existsSync(path.join(ws, 'fixed.txt'))).toBe(false);
    const [review] = await turns(ws, [reviewOf(task)]);
    expect(review?.outcome.result.finalMessage).toBe('done');
    expect(existsSync(path.join(ws, 'fixed.txt'))).toBe(false);
    expect(verdictIn(ws)).toEqual({
      ok: true,
      verdict: {
        verdict: 'iterate',
        summary: 'mock review 1',
        issues: [{ file: null, line: null, endLine: null, severity: 'major', message: 'mock issue 1' }],
      },
    });
    // The list's last word repeats past its end.
    await turns(ws, [reviewOf(task, 2), reviewOf(task, 3)]);
    expect(verdictIn(ws)).toMatchObject({ ok: true, verdict: { verdict: 'pass', summary: 'mock review 3' } });
  });

  it('a review prompt writes to the verdict path it names', async () => {
    const ws = repo();
    const prompt = reviewPrompt({
      iteration: 1,
      maxIterations: 1,
      title: 't',
      description: '!verdict pass',
      diff: null,
      verification: [],
      verdictPath: 'out/verdict.json',
      previousNote: null,
    });
    await turns(ws, [prompt]);
    expect(JSON.parse(readFileSync(path.join(ws, 'out', 'verdict.json'), 'utf8'))).toMatchObject({
      verdict: 'pass',
    });
    expect(existsSync(path.join(ws, '.orchestrator', 'review_verdict.json'))).toBe(false);
  });

  it('a session that starts with a review prompt remembers none of it for a later continuation', async () => {
    const ws = repo();
    const results = await turns(ws, [reviewOf('!verdict pass\n!ok reviewed'), 'Continue.']);
    expect(results.map((r) => r.outcome.result.finalMessage)).toEqual(['done', 'done']);
    expect(existsSync(path.join(ws, '.orchestrator', 'mock-threads'))).toBe(false);
  });

  it('drives the real self-review loop: iterate, a fix commit, then pass', async () => {
    const ws = repo();
    prepareSignalDir(ws);
    const task =
      '!write a.txt a\n!commit Add a\n!verdict iterate pass\n!fix write a.txt b\n!fix commit Fix a\n!ok';
    const adapter = agentKind('mock')?.runtime?.factory();
    if (!adapter) throw new Error('mock not registered');
    const session = await adapter.startSession({
      workspacePath: ws,
      workspaceRoot: root,
      agent: AGENT,
      options: {},
      resumeSessionId: null,
      env: { PATH: process.env.PATH ?? '' },
    });
    const run = (prompt: string) =>
      adapter.runTurn(session, {
        prompt,
        issue: SAMPLE_ISSUE,
        onEvent: () => undefined,
        signal: new AbortController().signal,
      });
    expect((await run(task)).result.exitReason).toBe('turn_completed');
    const purposes: string[] = [];
    const outcome = await runSelfReview(
      {
        maxIterations: 3,
        title: 'Mock task',
        description: '',
        verdictPath: '.orchestrator/review_verdict.json',
      },
      {
        diff: async () => null,
        verify: async () => [],
        clearVerdict: () => rmSync(path.join(ws, '.orchestrator', 'review_verdict.json'), { force: true }),
        readVerdict: () => readJsonSignal(ws, 'review_verdict.json', VERDICT_MAX_BYTES),
        runTurn: async (prompt, purpose) => {
          purposes.push(purpose);
          const turn = await run(prompt);
          return turn.result.exitReason === 'turn_completed' ? { ok: true } : { ok: false, detail: 'failed' };
        },
        stopRequested: () => readStatusSignal(ws).kind === 'read',
      },
    );
    await adapter.stopSession(session);
    expect(outcome.status).toBe('passed');
    expect(purposes).toEqual(['review', 'fix', 'review']);
    expect(outcome.iterations.map((i) => i.verdict)).toEqual(['iterate', 'pass']);
    expect(gitIn(ws, 'log', '--format=%s')).toBe('Fix a\nAdd a\nfirst');
    expect(gitIn(ws, 'show', 'HEAD:a.txt')).toBe('b');
    expect(gitIn(ws, 'status', '--porcelain')).toBe('');
  });
});
