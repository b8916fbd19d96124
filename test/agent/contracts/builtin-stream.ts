/**
 * What the contract suites need to drive the built-in kinds (mock and echo):
 * lines of the JSON-lines stream their runtimes write (`src/agent/mock/stream.ts`),
 * workspaces inside a workspace root, and harnesses for the shared suites. A
 * fake runtime replaces the built-in one through `agent.command`.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CredentialHarness } from '../../../internal-contracts/agent/credential-verification.js';
import type { DispositionHarness } from '../../../internal-contracts/agent/disposition-contract.js';
import type { UsageRun } from '../../../internal-contracts/agent/usage-reporting.js';
import { agentKind } from '../../../src/agent/registry.js';
import type {
  AgentAdapter,
  AgentEvent,
  AgentSettings,
  StartSessionParams,
} from '../../../src/domain/agent.js';
import type { Issue } from '../../../src/domain/issue.js';
import { SAMPLE_ISSUE } from '../../../src/prompt/variables.js';

/** Lines of the built-in stream, as a runtime writes them. */
export const stream = {
  start: (sessionId = 'fake-session') =>
    JSON.stringify({ type: 'start', session_id: sessionId, model: 'fake-model' }),
  message: (id: string, text: string, usage?: { input: number; output: number }) =>
    JSON.stringify({ type: 'message', id, model: 'fake-model', text, ...(usage ? { usage } : {}) }),
  toolCall: (id: string) => JSON.stringify({ type: 'tool_call', id, name: 'Bash', input: { command: 'ls' } }),
  toolResult: (id: string) => JSON.stringify({ type: 'tool_result', id, ok: true }),
  result: (status: 'success' | 'error', text: string) => JSON.stringify({ type: 'result', status, text }),
};

/** A workspace root for one test file; `workspace()` makes a new workspace inside it. */
export function workspaceRoot(prefix: string): { root: string; workspace(): string; cleanup(): void } {
  const root = mkdtempSync(path.join(os.tmpdir(), prefix));
  let n = 0;
  return {
    root,
    workspace() {
      const ws = path.join(root, `ws-${++n}`);
      mkdirSync(ws);
      return ws;
    },
    cleanup() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}

export interface BuiltinKind {
  kind: 'mock' | 'echo';
  /** The kind's pass-through block. */
  options: Record<string, unknown>;
  ws: ReturnType<typeof workspaceRoot>;
}

const AGENT: Omit<AgentSettings, 'kind' | 'command'> = {
  turnTimeoutMs: 30_000,
  readTimeoutMs: 5_000,
  stallTimeoutMs: 0,
};

export function adapterOf(kind: string): AgentAdapter {
  const adapter = agentKind(kind)?.runtime?.factory();
  if (adapter === undefined) throw new Error(`kind ${kind} is not registered with a runtime`);
  return adapter;
}

/** Session parameters with a fresh workspace; `command` null runs the kind's own runtime. */
export function startParams(k: BuiltinKind, command: string | null): StartSessionParams {
  return {
    workspacePath: k.ws.workspace(),
    workspaceRoot: k.ws.root,
    agent: { ...AGENT, kind: k.kind, command },
    options: k.options,
    resumeSessionId: null,
    env: { PATH: process.env.PATH ?? '' },
  };
}

/** Runs the prompts as consecutive turns of one session, collecting each turn's events and outcome. */
export async function runSession(
  k: BuiltinKind,
  prompts: readonly string[],
  opts: { command?: string | null; issue?: Issue } = {},
): Promise<UsageRun[]> {
  const adapter = adapterOf(k.kind);
  const session = await adapter.startSession(startParams(k, opts.command ?? null));
  const turns: UsageRun[] = [];
  try {
    for (const prompt of prompts) {
      const events: AgentEvent[] = [];
      const outcome = await adapter.runTurn(session, {
        prompt,
        issue: opts.issue ?? SAMPLE_ISSUE,
        onEvent: (e) => events.push(e),
        signal: new AbortController().signal,
      });
      turns.push({ events, outcome });
    }
  } finally {
    await adapter.stopSession(session);
  }
  return turns;
}

/** The disposition harness of a built-in kind: fakes write the built-in stream. */
export function dispositionHarness(k: BuiltinKind): DispositionHarness {
  return {
    startWith: async (command) => {
      const adapter = adapterOf(k.kind);
      return { adapter, session: await adapter.startSession(startParams(k, command)) };
    },
    successLine: stream.result('success', 'all done'),
    failure: { line: stream.result('error', 'the runtime gave up'), kind: 'turn_failed' },
    preamble: [stream.start()],
    workLines: [
      stream.message('req-1', 'working on it'),
      stream.toolCall('tool-1'),
      stream.toolResult('tool-1'),
    ],
  };
}

/** The credential harness of a built-in kind. */
export function credentialHarness(k: BuiltinKind): CredentialHarness {
  return {
    kind: k.kind,
    startParams: (command) => startParams(k, command),
    answerLines: [stream.start(), stream.message('req-1', 'ready'), stream.result('success', 'ready')],
    // The built-in stream has no structured credential refusal: an error result is a failed turn.
    refusal: {
      lines: [stream.start(), stream.result('error', 'invalid credential')],
      kinds: ['turn_failed', 'credential_unverified'],
    },
    realRuntime: true,
  };
}
