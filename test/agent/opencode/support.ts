/**
 * What the opencode tests share: where the public transcripts live (and whether a
 * test may skip without them), session parameters inside a workspace root with a
 * managed-home root of their own (so no test writes under the real
 * ~/.local/state), a turn driver, the block and environment of a real-CLI run
 * (the fake model server as an OpenAI-compatible provider whose key comes from a
 * declared credential variable), and OpenCode's `--format json` lines for fake
 * runtimes.
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
import { OPENCODE_BIN, OPENCODE_MODEL } from './real-cli.js';

export { SHARED_FIXTURES } from '../../support/adapter-kit.js';
export { workspaceRoot } from '../contracts/builtin-stream.js';

/** null when the shared fixtures are present, else why fixture tests skip. */
export const sharedFixturesMissing = (): string | null => missingFixtures('opencode');

export const AGENT: Omit<AgentSettings, 'command'> = {
  kind: 'opencode',
  turnTimeoutMs: 120_000,
  readTimeoutMs: 10_000,
  stallTimeoutMs: 0,
};

/** The dummy key every real run carries, through a declared credential variable; the fake takes any. */
export const DUMMY_KEY = 'sk-dummy-opencode-key';

export const adapterOf = (): AgentAdapter => adapterFor('opencode');

export { runTurn, scratchDir };

/** An environment whose HOME and managed homes live in `root`. */
export function isolatedEnv(root: string, extra: Record<string, string> = {}): Record<string, string> {
  mkdirSync(path.join(root, 'home'), { recursive: true });
  return {
    PATH: process.env.PATH ?? '',
    HOME: path.join(root, 'home'),
    XDG_STATE_HOME: path.join(root, 'state'),
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
 * The `opencode:` block of a real-CLI run: the fake model server as a provider on the
 * OpenAI-compatible SDK OpenCode bundles, its key read from OPENAI_API_KEY (a declared
 * credential, so it survives the secret filter), and the fake's model.
 */
export function realCliBlock(baseUrl: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model: OPENCODE_MODEL,
    config: {
      provider: {
        fake: {
          npm: '@ai-sdk/openai-compatible',
          name: 'Fake',
          options: { baseURL: `${baseUrl}/v1`, apiKey: '{env:OPENAI_API_KEY}' },
          models: {
            'fake-model': { name: 'Fake Model', tool_call: true, limit: { context: 200_000, output: 8_192 } },
          },
        },
      },
    },
    ...extra,
  };
}

/**
 * The environment of one real-CLI run: the pinned CLI first on PATH, the dummy key, a
 * fresh HOME and managed-home root, and a PWD that is not the workspace (the trap the
 * adapter must defuse: OpenCode would work in PWD).
 */
export function realCliEnv(): Record<string, string> {
  const root = scratchDir('opencode-env-');
  const elsewhere = path.join(root, 'elsewhere');
  mkdirSync(elsewhere);
  return isolatedEnv(root, {
    PATH: `${path.dirname(OPENCODE_BIN)}:/usr/local/bin:/usr/bin:/bin`,
    TERM: 'dumb',
    LANG: 'C.UTF-8',
    PWD: elsewhere,
    OPENAI_API_KEY: DUMMY_KEY,
  });
}

/** The events of one type. */
export const ofType = <T extends AgentEvent['type']>(events: AgentEvent[], type: T) =>
  events.filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type);

/** Token counts in our classes (input includes the cache classes); total = input + output. */
export const counts = (input: number, output: number, cacheRead: number, cacheWrite = 0) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: cacheRead,
  cacheWriteTokens: cacheWrite,
  totalTokens: input + output,
});

export const SESSION = 'ses_2f1a0c9e7ffeQ3xYzAbCdEfGhI';
const at = 1_796_000_000_000;
let parts = 0;
const part = (messageID: string) => ({ id: `prt_${++parts}`, messageID, sessionID: SESSION });

export interface StepInput {
  /** The prompt less its cache classes, as OpenCode prints it. */
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
  reasoning?: number;
  cost?: number;
  reason?: string;
}

/** Lines of OpenCode's `run --format json` output, in its own shapes, for fake runtimes. */
export const opencodeLines = {
  stepStart: (message = 'msg_1', sessionId = SESSION) =>
    JSON.stringify({
      type: 'step_start',
      timestamp: at,
      sessionID: sessionId,
      part: { ...part(message), sessionID: sessionId, type: 'step-start' },
    }),
  text: (text: string, message = 'msg_1') =>
    JSON.stringify({
      type: 'text',
      timestamp: at,
      sessionID: SESSION,
      part: { ...part(message), type: 'text', text, time: { start: at, end: at + 5 } },
    }),
  tool: (command: string, opts: { tool?: string; ok?: boolean; message?: string; input?: unknown } = {}) =>
    JSON.stringify({
      type: 'tool_use',
      timestamp: at,
      sessionID: SESSION,
      part: {
        ...part(opts.message ?? 'msg_1'),
        type: 'tool',
        tool: opts.tool ?? 'bash',
        callID: `call_${parts}`,
        state: {
          status: opts.ok === false ? 'error' : 'completed',
          input: opts.input ?? { command, description: 'run it' },
          output: '',
          time: { start: at, end: at + 250 },
        },
      },
    }),
  stepFinish: (s: StepInput, message = 'msg_1') =>
    JSON.stringify({
      type: 'step_finish',
      timestamp: at,
      sessionID: SESSION,
      part: {
        ...part(message),
        type: 'step-finish',
        reason: s.reason ?? 'stop',
        tokens: {
          total: s.input + s.output + (s.cacheRead ?? 0),
          input: s.input,
          output: s.output,
          reasoning: s.reasoning ?? 0,
          cache: { read: s.cacheRead ?? 0, write: s.cacheWrite ?? 0 },
        },
        cost: s.cost ?? 0,
      },
    }),
  error: (message: string, data: { statusCode?: number; isRetryable?: boolean; name?: string } = {}) =>
    JSON.stringify({
      type: 'error',
      timestamp: at,
      sessionID: SESSION,
      error: {
        name: data.name ?? 'APIError',
        data: {
          message,
          ...(data.statusCode === undefined ? {} : { statusCode: data.statusCode }),
          ...(data.isRetryable === undefined ? {} : { isRetryable: data.isRetryable }),
        },
      },
    }),
};
