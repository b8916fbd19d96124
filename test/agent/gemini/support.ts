/**
 * What the gemini tests share: where the public transcripts live (and whether a
 * test may skip without them), session parameters inside a workspace root with
 * a managed-home root of their own (so no test writes under the real
 * ~/.local/state), a turn driver, the hermetic environment of a real-CLI run
 * (pointed at the fake model server, dummy key), and Gemini CLI's stream-json
 * lines for fake runtimes.
 */
import { mkdirSync } from 'node:fs';
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
import { GEMINI_BIN } from './real-cli.js';

export { SHARED_FIXTURES } from '../../support/adapter-kit.js';
export { workspaceRoot } from '../contracts/builtin-stream.js';

/** null when the shared fixtures are present, else why fixture tests skip. */
export const sharedFixturesMissing = (): string | null => missingFixtures('gemini');

export const AGENT: Omit<AgentSettings, 'command'> = {
  kind: 'gemini',
  turnTimeoutMs: 120_000,
  readTimeoutMs: 10_000,
  stallTimeoutMs: 0,
};

/** The dummy key every run carries; the fake model server takes any. */
export const DUMMY_KEY = 'dummy-gemini-key';

export const adapterOf = (): AgentAdapter => adapterFor('gemini');

export { runTurn, scratchDir };

/** An environment whose managed homes and temp folders live in `root`, with the dummy key. */
export function isolatedEnv(root: string, extra: Record<string, string> = {}): Record<string, string> {
  const tmp = path.join(root, 'tmp');
  mkdirSync(tmp, { recursive: true });
  return {
    PATH: process.env.PATH ?? '',
    HOME: path.join(root, 'home'),
    XDG_STATE_HOME: path.join(root, 'state'),
    TMPDIR: tmp,
    GEMINI_API_KEY: DUMMY_KEY,
    ...extra,
  };
}

export type { ParamsInput } from '../../support/adapter-kit.js';

/** Session parameters with a fresh workspace (or the one given); managed homes under the root. */
export const startParams = (p: ParamsInput): StartSessionParams =>
  sessionParams(AGENT, p, () => isolatedEnv(path.join(p.ws.root, '.env-root')));

/** Runs the prompts as consecutive turns of one new session. */
export const runSession = (params: StartSessionParams, prompts: readonly string[]): Promise<UsageRun[]> =>
  kitRunSession(adapterOf(), params, prompts);

/**
 * The environment of one real-CLI run: the pinned CLI first on PATH, the fake model
 * server as the API root, a dummy key, and managed homes, HOME and temp folders in a
 * fresh folder of their own.
 */
export function realCliEnv(baseUrl: string): Record<string, string> {
  return isolatedEnv(scratchDir('gemini-env-'), {
    PATH: `${path.dirname(GEMINI_BIN)}:/usr/local/bin:/usr/bin:/bin`,
    TERM: 'dumb',
    LANG: 'C.UTF-8',
    GOOGLE_GEMINI_BASE_URL: baseUrl,
  });
}

/** The events of one type. */
export const ofType = <T extends AgentEvent['type']>(events: AgentEvent[], type: T) =>
  events.filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type);

/** Token counts in our classes (input includes the cached tokens); total = input + output. */
export const counts = (input: number, output: number, cacheRead: number) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: cacheRead,
  cacheWriteTokens: 0,
  totalTokens: input + output,
});

const SESSION = '3f0b6f3e-2c51-4d5c-9f0e-6a1d2b3c4d5e';

interface StatsInput {
  input: number;
  output: number;
  cached: number;
  /** Thinking tokens: inside total_tokens only. */
  thoughts?: number;
  model?: string;
}

function stats(s: StatsInput): Record<string, unknown> {
  const figures = {
    total_tokens: s.input + s.output + (s.thoughts ?? 0),
    input_tokens: s.input,
    output_tokens: s.output,
    cached: s.cached,
    input: s.input - s.cached,
  };
  return { ...figures, duration_ms: 100, tool_calls: 0, models: { [s.model ?? 'gemini-fake']: figures } };
}

const at = '2026-12-01T10:00:00.000Z';

/** Lines of Gemini CLI's stream-json output, in its own shapes, for fake runtimes. */
export const geminiLines = {
  init: (sessionId = SESSION, model = 'gemini-fake') =>
    JSON.stringify({ type: 'init', timestamp: at, session_id: sessionId, model }),
  user: (content = 'the prompt') => JSON.stringify({ type: 'message', timestamp: at, role: 'user', content }),
  text: (content: string) =>
    JSON.stringify({ type: 'message', timestamp: at, role: 'assistant', content, delta: true }),
  toolUse: (toolId: string, command: string) =>
    JSON.stringify({
      type: 'tool_use',
      timestamp: at,
      tool_name: 'run_shell_command',
      tool_id: toolId,
      parameters: { command, description: 'run it' },
    }),
  toolResult: (toolId: string, ok = true) =>
    JSON.stringify({
      type: 'tool_result',
      timestamp: at,
      tool_id: toolId,
      status: ok ? 'success' : 'error',
      output: '',
    }),
  success: (s: StatsInput = { input: 10, output: 5, cached: 0 }) =>
    JSON.stringify({ type: 'result', timestamp: at, status: 'success', stats: stats(s) }),
  failure: (message: string, type = 'unknown') =>
    JSON.stringify({
      type: 'result',
      timestamp: at,
      status: 'error',
      error: { type, message },
      stats: stats({ input: 0, output: 0, cached: 0 }),
    }),
};
