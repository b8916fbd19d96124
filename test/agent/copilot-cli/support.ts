/**
 * What the copilot-cli tests share: where the public transcripts and the checked-in
 * recordings are, session parameters inside a workspace root with a COPILOT_HOME of
 * their own, a turn driver, Copilot's own lines for fake runtimes, and a way to lay
 * down a session journal (`session-state/<id>/events.jsonl`) where the adapter
 * looks for it, since a fake runtime writes only stdout.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { UsageRun } from '../../../internal-contracts/agent/usage-reporting.js';
import type {
  AgentAdapter,
  AgentEvent,
  AgentSettings,
  StartSessionParams,
} from '../../../src/domain/agent.js';
import {
  adapterFor,
  runSession as kitRunSession,
  sharedFixturesMissing as missingFixtures,
  type ParamsInput,
  runTurn,
  scratchDir,
  sessionParams,
} from '../../support/adapter-kit.js';

export type { ParamsInput } from '../../support/adapter-kit.js';
export { SHARED_FIXTURES } from '../../support/adapter-kit.js';
export { workspaceRoot } from '../contracts/builtin-stream.js';
export { runTurn };

/** null when the shared Copilot fixtures are present, else why fixture tests skip. */
export const sharedFixturesMissing = (): string | null => missingFixtures('copilot');

/** The recordings of the pinned CLI checked in beside these tests. */
export const RECORDINGS = path.join(import.meta.dirname, 'recordings');

export const AGENT: Omit<AgentSettings, 'command'> = {
  kind: 'copilot-cli',
  turnTimeoutMs: 120_000,
  readTimeoutMs: 10_000,
  stallTimeoutMs: 0,
};

export const adapterOf = (): AgentAdapter => adapterFor('copilot-cli');

/** A fresh, empty COPILOT_HOME, removed after the test file. */
export const copilotHomeDir = (): string => scratchDir('copilot-home-');

/** Session parameters with a fresh workspace (or the one given); default env: PATH and a fresh COPILOT_HOME. */
export const startParams = (p: ParamsInput): StartSessionParams =>
  sessionParams(AGENT, p, () => ({ PATH: process.env.PATH ?? '', COPILOT_HOME: copilotHomeDir() }));

/**
 * Runs the prompts as consecutive turns of one new session; `beforeTurn(n)` runs
 * before turn n (0-based), e.g. to lay down what the runtime's files hold by then.
 */
export const runSession = (
  params: StartSessionParams,
  prompts: readonly string[],
  beforeTurn?: (n: number) => void,
): Promise<UsageRun[]> => kitRunSession(adapterOf(), params, prompts, beforeTurn);

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
  /** A tool an MCP server serves: Copilot names it `<server>-<tool>` and says which server's it is. */
  mcpToolStart: (toolCallId: string, server: string, tool: string, args: Record<string, unknown>) =>
    event('tool.execution_start', {
      toolCallId,
      toolName: `${server}-${tool}`,
      arguments: args,
      turnId: '0',
      mcpServerName: server,
      mcpConfigServerName: server,
      mcpTransport: 'stdio',
      mcpToolName: tool,
    }),
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
