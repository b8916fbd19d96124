/**
 * What the claude-code tests share: where the public transcripts and the installed
 * CLI live (and whether a test may skip without them), session parameters inside a
 * workspace root, a turn driver, the hermetic environment of a real-CLI run (fresh
 * HOME, pointed at the fake model server, every switch that keeps traffic on
 * 127.0.0.1), the shell-tool case the local and the SSH real-CLI tests both run
 * (its script and what its turns must show), and the lines of Claude Code's stream
 * for fake runtimes.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect } from 'vitest';
import { assertUsageReporting, type UsageRun } from '../../../internal-contracts/agent/usage-reporting.js';
import { agentKind } from '../../../src/agent/registry.js';
import type {
  AgentAdapter,
  AgentEvent,
  AgentSession,
  AgentSettings,
  StartSessionParams,
} from '../../../src/domain/agent.js';
import { SAMPLE_ISSUE } from '../../../src/prompt/variables.js';
import { REPO_ROOT } from '../../support/cli.js';
import { type AnthropicReply, answersToolCall, offeredTools } from '../../support/fake-model/anthropic.js';
import type { RecordedRequest } from '../../support/fake-model/server.js';
import { AGENT_CLIS_DIR } from '../../support/headless-cli.js';
import { TOOL_CALLS } from '../../support/tool-session.js';

export { workspaceRoot } from '../contracts/builtin-stream.js';

/** `../shared/fixtures` beside the repository (CI lays a copy there too). */
export const SHARED_FIXTURES = path.resolve(REPO_ROOT, '..', 'shared', 'fixtures');

/** null when the shared fixtures are present, else why fixture tests skip. */
export function sharedFixturesMissing(): string | null {
  return existsSync(path.join(SHARED_FIXTURES, 'claude-code'))
    ? null
    : `the public transcripts are not at ${SHARED_FIXTURES} (../shared is absent)`;
}

/** The folder scripts/install-agent-clis.sh installs the pinned Claude Code package into. */
export const CLAUDE_INSTALL_DIR = path.join(AGENT_CLIS_DIR, 'claude');

/** Where scripts/install-agent-clis.sh puts the pinned Claude Code. */
export const CLAUDE_CLI = path.join(CLAUDE_INSTALL_DIR, 'node_modules', '.bin', 'claude');

/**
 * Whether real-CLI tests run: the CLI is installed → run; absent outside CI → skip
 * with the printed reason; absent in CI (which runs the install script) → run and fail.
 */
export function realCliPlan(): { run: boolean; reason: string | null } {
  if (existsSync(CLAUDE_CLI)) return { run: true, reason: null };
  const reason = `Claude Code is not installed at ${CLAUDE_CLI} (run scripts/install-agent-clis.sh)`;
  return { run: process.env.CI !== undefined && process.env.CI !== '', reason };
}

export const AGENT: Omit<AgentSettings, 'command'> = {
  kind: 'claude-code',
  turnTimeoutMs: 120_000,
  readTimeoutMs: 10_000,
  stallTimeoutMs: 0,
};

export function adapterOf(): AgentAdapter {
  const adapter = agentKind('claude-code')?.runtime?.factory();
  if (adapter === undefined) throw new Error('claude-code is not registered with a runtime');
  return adapter;
}

export interface ParamsInput {
  ws: { root: string; workspace(): string };
  command: string | null;
  options?: Record<string, unknown>;
  env?: Record<string, string>;
  agent?: Partial<AgentSettings>;
  resumeSessionId?: string | null;
  workspacePath?: string;
}

/** Session parameters with a fresh workspace (or the one given). */
export function startParams(p: ParamsInput): StartSessionParams {
  return {
    workspacePath: p.workspacePath ?? p.ws.workspace(),
    workspaceRoot: p.ws.root,
    agent: { ...AGENT, command: p.command, ...p.agent },
    options: p.options ?? {},
    resumeSessionId: p.resumeSessionId ?? null,
    env: p.env ?? { PATH: process.env.PATH ?? '' },
  };
}

/** Runs one turn, collecting its events; `onEvent` sees each as it arrives. */
export async function runTurn(
  adapter: AgentAdapter,
  session: AgentSession,
  prompt: string,
  opts: { signal?: AbortSignal; onEvent?: (e: AgentEvent) => void } = {},
): Promise<UsageRun> {
  const events: AgentEvent[] = [];
  const outcome = await adapter.runTurn(session, {
    prompt,
    issue: SAMPLE_ISSUE,
    onEvent: (e) => {
      events.push(e);
      opts.onEvent?.(e);
    },
    signal: opts.signal ?? new AbortController().signal,
  });
  return { events, outcome };
}

/** Runs the prompts as consecutive turns of one new session. */
export async function runSession(
  params: StartSessionParams,
  prompts: readonly string[],
): Promise<UsageRun[]> {
  const adapter = adapterOf();
  const session = await adapter.startSession(params);
  const turns: UsageRun[] = [];
  try {
    for (const prompt of prompts) turns.push(await runTurn(adapter, session, prompt));
  } finally {
    await adapter.stopSession(session);
  }
  return turns;
}

/** Homes made by `realCliEnv`, removed after the test file that made them. */
const cliHomes: string[] = [];
afterAll(() => {
  for (const home of cliHomes.splice(0)) rmSync(home, { recursive: true, force: true });
});

/**
 * The environment of one real-CLI run: a fresh HOME, the fake model server as the
 * API, a dummy key, and the switches that stop telemetry, error reports, update
 * checks and other non-essential traffic, so nothing leaves 127.0.0.1.
 */
export function realCliEnv(baseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  const home = mkdtempSync(path.join(os.tmpdir(), 'claude-home-'));
  cliHomes.push(home);
  return {
    PATH: `${path.dirname(CLAUDE_CLI)}:/usr/local/bin:/usr/bin:/bin`,
    HOME: home,
    TERM: 'dumb',
    LANG: 'C.UTF-8',
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: 'sk-ant-fake-key',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_MAX_RETRIES: '1',
    ...extra,
  };
}

/** The events of one type. */
export const ofType = <T extends AgentEvent['type']>(events: AgentEvent[], type: T) =>
  events.filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type);

/** The model of the real-CLI runs. */
export const REAL_CLI_MODEL = 'claude-sonnet-4-5';
/** Claude Code's price for claude-sonnet-4-5 per million tokens: input, output, cache read. */
const PRICE_PER_MTOK = { input: 3, output: 15, cacheRead: 0.3 };
/** What the CLI reports for n calls of 123 in / 45 out / 7 cache read, in micro-dollars. */
export const microsFor = (calls: number) =>
  Math.round(
    calls * (123 * PRICE_PER_MTOK.input + 45 * PRICE_PER_MTOK.output + 7 * PRICE_PER_MTOK.cacheRead),
  );

/** Token counts with no cache writes (the fake's calls make none). */
const tokenCounts = (
  inputTokens: number,
  outputTokens: number,
  cacheReadTokens: number,
  totalTokens: number,
) => ({
  inputTokens,
  outputTokens,
  cacheReadTokens,
  cacheWriteTokens: 0,
  totalTokens,
});

/** The prompts of the shell-tool case's two turns. */
export const SHELL_CASE_PROMPTS = ['Write hi to out.txt using bash.', 'Now say you are done.'] as const;

/**
 * The model's side of the shell-tool case: a Bash call writing hi to out.txt in
 * `workspace`, the answer once the tool's result came back, then turn 2's message.
 * `index` counts the case's requests from 0.
 */
export function shellCaseScript(
  workspace: string,
): (request: RecordedRequest, index: number) => AnthropicReply {
  return (request, index) => {
    if (index >= 2) return { type: 'message', text: 'Second turn done.' };
    if (answersToolCall(request)) return { type: 'message', text: 'Done: wrote hi to out.txt.' };
    return {
      type: 'message',
      text: 'I will write the file.',
      toolCall: {
        name: 'Bash',
        input: {
          command: `bash -lc 'echo hi > ${workspace}/out.txt'`,
          description: 'Write hi to out.txt',
        },
      },
    };
  };
}

/**
 * Turn 1 of the shell-tool case: completed, the file written in `workspace`, the
 * tool reported as a shell call, figures exactly the fake's two calls, and the
 * case's `requests` so far are those two. Returns the session id.
 */
export function expectShellCaseFirstTurn(
  first: UsageRun,
  workspace: string,
  requests: readonly RecordedRequest[],
): string {
  const r1 = first.outcome.result;
  expect(first.outcome.error, first.outcome.error?.detail).toBeUndefined();
  expect(r1.exitReason).toBe('turn_completed');
  expect(readFileSync(path.join(workspace, 'out.txt'), 'utf8')).toBe('hi\n');
  expect(ofType(first.events, 'tool_result')).toMatchObject([
    { toolName: 'Bash', toolKind: 'shell', toolArgument: 'echo hi > out.txt', toolError: false },
  ]);
  const sessionId = ofType(first.events, 'session_started')[0]?.sessionId;
  expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
  expect(r1.sessionId).toBe(sessionId);
  // Two calls of 123 in / 45 out / 7 cache read: 246 / 90 / 14; our input includes the cache reads.
  const twoCalls = tokenCounts(260, 90, 14, 350);
  expect(r1.usage).toEqual(twoCalls);
  expect(r1.usageByModel).toEqual({ [REAL_CLI_MODEL]: twoCalls });
  expect(r1.reportedAmounts).toEqual([{ unit: 'USD', micros: microsFor(2) }]);
  expect(r1).toMatchObject({
    usageMeasured: true,
    usageProvenance: 'reported',
    spendUnaccounted: false,
  });
  expect(r1.finalMessage).toBe('Done: wrote hi to out.txt.');
  expect(requests).toHaveLength(2);
  return sessionId as string;
}

/**
 * Turn 2 of the shell-tool case: completed in the same session, its request (the
 * case's third) carrying turn 1's conversation, its figures adding to turn 1's, and
 * both turns agreeing with the usage-reporting contract.
 */
export function expectShellCaseSecondTurn(
  [first, second]: readonly [UsageRun, UsageRun],
  sessionId: string,
  requests: readonly RecordedRequest[],
): void {
  const r2 = second.outcome.result;
  expect(second.outcome.error, second.outcome.error?.detail).toBeUndefined();
  expect(r2.exitReason).toBe('turn_completed');
  expect(r2.sessionId).toBe(sessionId);
  expect(r2.finalMessage).toBe('Second turn done.');
  expect(requests[2]?.bodyText).toContain('I will write the file.');
  expect(r2.usage).toEqual(tokenCounts(390, 135, 21, 525));
  expect(r2.reportedAmounts).toEqual([{ unit: 'USD', micros: microsFor(2) + microsFor(1) }]);
  assertUsageReporting('claude-code', [first, second]);
}

/** Lines of Claude Code's stream, in its own shapes, for fake runtimes. */
export const claudeLines = {
  init: (sessionId = '0c9c1a4e-5d0f-4c6e-9a51-6f1b2f0c7d11', model = 'claude-fake') =>
    JSON.stringify({ type: 'system', subtype: 'init', session_id: sessionId, model, tools: ['Bash'] }),
  assistantText: (id: string, text: string, usage = { input: 10, output: 1, cacheRead: 0, cacheWrite: 0 }) =>
    JSON.stringify({
      type: 'assistant',
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model: 'claude-fake',
        content: [{ type: 'text', text }],
        usage: {
          input_tokens: usage.input,
          output_tokens: usage.output,
          cache_read_input_tokens: usage.cacheRead,
          cache_creation_input_tokens: usage.cacheWrite,
        },
      },
    }),
  assistantTool: (id: string, toolId: string, command: string) =>
    JSON.stringify({
      type: 'assistant',
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model: 'claude-fake',
        content: [{ type: 'tool_use', id: toolId, name: 'Bash', input: { command } }],
        usage: {
          input_tokens: 10,
          output_tokens: 1,
          cache_read_input_tokens: 0,
          cache_creation_input_tokens: 0,
        },
      },
    }),
  toolResult: (toolId: string, isError = false) =>
    JSON.stringify({
      type: 'user',
      message: {
        role: 'user',
        content: [{ tool_use_id: toolId, type: 'tool_result', content: 'ok', is_error: isError }],
      },
    }),
  result: (
    fields: {
      isError?: boolean;
      text?: string;
      subtype?: string;
      apiErrorStatus?: number | null;
      usage?: { input: number; output: number; cacheRead: number; cacheWrite: number };
      costUsd?: number;
    } = {},
  ) => {
    const u = fields.usage ?? { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 };
    return JSON.stringify({
      type: 'result',
      subtype: fields.subtype ?? 'success',
      is_error: fields.isError ?? false,
      api_error_status: fields.apiErrorStatus ?? null,
      result: fields.text ?? 'done',
      total_cost_usd: fields.costUsd ?? 0.001,
      usage: {
        input_tokens: u.input,
        output_tokens: u.output,
        cache_read_input_tokens: u.cacheRead,
        cache_creation_input_tokens: u.cacheWrite,
      },
      modelUsage: {},
    });
  },
};

/** How Claude Code names a tool of our tool server. */
export const OURS = 'mcp__orchestrator__';

/** The tool results a request carries back, oldest first, as text. */
export function toolResults(request: RecordedRequest): string[] {
  const messages = (request.body as { messages?: { content?: unknown }[] } | null)?.messages ?? [];
  return messages.flatMap((m) =>
    Array.isArray(m.content)
      ? m.content
          .filter((b) => (b as { type?: unknown }).type === 'tool_result')
          .map((b) => JSON.stringify((b as { content?: unknown }).content))
      : [],
  );
}

/** The tool case's model: its calls of our tools in a row, then done; the CLI's side calls (no tools offered) get text. */
export function toolCaseScript(request: RecordedRequest): AnthropicReply {
  if (!offeredTools(request).some((t) => t.startsWith(OURS))) return { type: 'message', text: 'OK' };
  const next = TOOL_CALLS[toolResults(request).length];
  return next === undefined
    ? { type: 'message', text: 'Done with the tools.' }
    : { type: 'message', toolCall: { name: `${OURS}${next.tool}`, input: next.input } };
}
