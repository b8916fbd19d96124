import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import '../../../src/agent/kinds.js';
import { agentKind } from '../../../src/agent/registry.js';
import type { AgentEvent, AgentSettings, TurnOutcome } from '../../../src/domain/agent.js';
import { retryDecision } from '../../../src/domain/errors.js';
import { SAMPLE_ISSUE } from '../../../src/prompt/variables.js';

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
