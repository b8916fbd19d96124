/**
 * What the copilot-cli tests share: where the public transcripts and the checked-in
 * recordings are, session parameters inside a workspace root with a COPILOT_HOME of
 * their own, a turn driver, Copilot's own lines for fake runtimes, and a way to lay
 * down a session journal (`session-state/<id>/events.jsonl`) where the adapter
 * looks for it, since a fake runtime writes only stdout.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import type { UsageRun } from '../../../internal-contracts/agent/usage-reporting.js';
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

export { workspaceRoot } from '../contracts/builtin-stream.js';

/** `../shared/fixtures` beside the repository (CI lays a copy there too). */
export const SHARED_FIXTURES = path.resolve(REPO_ROOT, '..', 'shared', 'fixtures');

/** null when the shared Copilot fixtures are present, else why fixture tests skip. */
export function sharedFixturesMissing(): string | null {
  return existsSync(path.join(SHARED_FIXTURES, 'copilot'))
    ? null
    : `the public transcripts are not at ${SHARED_FIXTURES}/copilot (../shared is absent)`;
}

/** The recordings of the pinned CLI checked in beside these tests. */
export const RECORDINGS = path.join(import.meta.dirname, 'recordings');

export const AGENT: Omit<AgentSettings, 'command'> = {
  kind: 'copilot-cli',
  turnTimeoutMs: 120_000,
  readTimeoutMs: 10_000,
  stallTimeoutMs: 0,
};

export function adapterOf(): AgentAdapter {
  const adapter = agentKind('copilot-cli')?.runtime?.factory();
  if (adapter === undefined) throw new Error('copilot-cli is not registered with a runtime');
  return adapter;
}

/** Folders made by `copilotHomeDir`, removed after the test file that made them. */
const homes: string[] = [];
afterAll(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

/** A fresh, empty COPILOT_HOME. */
export function copilotHomeDir(): string {
  const home = mkdtempSync(path.join(os.tmpdir(), 'copilot-home-'));
  homes.push(home);
  return home;
}

export interface ParamsInput {
  ws: { root: string; workspace(): string };
  command: string | null;
  options?: Record<string, unknown>;
  /** The whole environment; default PATH and a fresh COPILOT_HOME. */
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
    env: p.env ?? { PATH: process.env.PATH ?? '', COPILOT_HOME: copilotHomeDir() },
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

/**
 * Runs the prompts as consecutive turns of one new session; `beforeTurn(n)` runs
 * before turn n (0-based), e.g. to lay down what the runtime's files hold by then.
 */
export async function runSession(
  params: StartSessionParams,
  prompts: readonly string[],
  beforeTurn: (n: number) => void = () => undefined,
): Promise<UsageRun[]> {
  const adapter = adapterOf();
  const session = await adapter.startSession(params);
  const turns: UsageRun[] = [];
  try {
    for (const [n, prompt] of prompts.entries()) {
      beforeTurn(n);
      turns.push(await runTurn(adapter, session, prompt));
    }
  } finally {
    await adapter.stopSession(session);
  }
  return turns;
}

/** The events of one type. */
export const ofType = <T extends AgentEvent['type']>(events: readonly AgentEvent[], type: T) =>
  events.filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type);

/** Token counts with total = input + output. */
export const counts = (input: number, output: number, cacheRead = 0, cacheWrite = 0) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: cacheRead,
  cacheWriteTokens: cacheWrite,
  totalTokens: input + output,
});

/** Writes `events` as the journal of session `sessionId` under `home`, replacing what was there. */
export function writeJournal(home: string, sessionId: string, events: readonly string[]): void {
  const dir = path.join(home, 'session-state', sessionId);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'events.jsonl'), events.map((e) => `${e}\n`).join(''));
}

let ids = 0;
const eventId = () => `00000000-0000-4000-8000-${String(++ids).padStart(12, '0')}`;
const event = (type: string, data: Record<string, unknown>, ephemeral = false) =>
  JSON.stringify({
    type,
    data,
    id: eventId(),
    timestamp: '2026-12-02T01:07:50.000Z',
    parentId: null,
    ...(ephemeral ? { ephemeral: true } : {}),
  });

export const FAKE_SESSION_ID = '6f0c1c1e-8a7b-4c1d-9e2f-0a1b2c3d4e5f';
export const FAKE_MODEL = 'gpt-fake';

/** Lines of Copilot's JSON stream (and its journal), in its own shapes, for fake runtimes. */
export const copilotLines = {
  toolsUpdated: (model = FAKE_MODEL) => event('session.tools_updated', { model }, true),
  backgroundTasks: () => event('session.background_tasks_changed', {}, true),
  turnStart: (turnId = '0') => event('assistant.turn_start', { turnId, interactionId: 'i-1' }),
  delta: (messageId: string, text: string) =>
    event('assistant.message_delta', { messageId, deltaContent: text }, true),
  message: (messageId: string, content: string, toolCalls: { id: string; name: string }[] = []) =>
    event('assistant.message', {
      messageId,
      model: FAKE_MODEL,
      content,
      toolRequests: toolCalls.map((t) => ({
        toolCallId: t.id,
        name: t.name,
        arguments: {},
        type: 'function',
      })),
      turnId: '0',
    }),
  toolStart: (toolCallId: string, toolName: string, args: Record<string, unknown>) =>
    event('tool.execution_start', { toolCallId, toolName, arguments: args, turnId: '0' }),
  toolComplete: (toolCallId: string, success = true) =>
    event('tool.execution_complete', { toolCallId, success, result: { content: 'ok' } }),
  callFailure: (statusCode: number, retryAttempt: number) =>
    event('model.call_failure', { model: FAKE_MODEL, statusCode, retryAttempt }, true),
  sessionError: (errorType: string, message: string, statusCode: number | null) =>
    event('session.error', { errorType, message, ...(statusCode === null ? {} : { statusCode }) }),
  taskComplete: (summary: string) => event('session.task_complete', { summary, success: true }),
  result: (fields: { sessionId?: string; exitCode?: number; premiumRequests?: number } = {}) =>
    JSON.stringify({
      type: 'result',
      timestamp: '2026-12-02T01:07:51.976Z',
      sessionId: fields.sessionId ?? FAKE_SESSION_ID,
      exitCode: fields.exitCode ?? 0,
      usage: {
        premiumRequests: fields.premiumRequests ?? 0,
        totalApiDurationMs: 120,
        sessionDurationMs: 2_000,
        codeChanges: { linesAdded: 0, linesRemoved: 0, filesModified: [] },
      },
    }),
  /** A journal's per-call usage record. */
  usageRecord: (apiCallId: string, input: number, output: number, cacheRead: number, model = FAKE_MODEL) =>
    event('session.usage_record', {
      usage: {
        model,
        inputTokens: input,
        outputTokens: output,
        cacheReadTokens: cacheRead,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
        cost: 0,
        apiCallId,
      },
    }),
  /** A journal's closing event, with the session's premium requests so far. */
  shutdown: (totalPremiumRequests: number) =>
    event('session.shutdown', { shutdownType: 'routine', totalPremiumRequests, modelMetrics: {} }),
};
