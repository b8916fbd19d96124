/**
 * What the codex tests share: the shared fixtures read in place (tests skip with
 * a printed reason only when ../shared is absent), workspaces inside one root per
 * test file, session parameters with a dummy credential and a fresh HOME, a loop
 * that runs prompts as consecutive turns of one session, and the shell-tool case the
 * local and the SSH real-CLI tests both run (its script and what its turns must show).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { assertUsageReporting, type UsageRun } from '../../../internal-contracts/agent/usage-reporting.js';
import '../../../src/agent/kinds.js';
import { agentKind } from '../../../src/agent/registry.js';
import type {
  AgentAdapter,
  AgentEvent,
  AgentSession,
  StartSessionParams,
} from '../../../src/domain/agent.js';
import { SAMPLE_ISSUE } from '../../../src/prompt/variables.js';
import { type OpenAIReply, shellThenAnswer } from '../../support/fake-model/openai.js';
import type { RecordedRequest } from '../../support/fake-model/server.js';
import { fakeAppServer } from './fake-app-server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/** The shared fixtures, read in place. */
export const FIXTURES = path.resolve(ROOT, '../shared/fixtures');

/** Why fixture tests skip, or null when ../shared is there. */
export function fixturesSkipReason(): string | null {
  if (existsSync(FIXTURES)) return null;
  const reason = `the shared fixtures are not at ${FIXTURES}`;
  console.warn(`codex fixture tests skipped: ${reason}`);
  return reason;
}

export interface CodexTestRoot {
  root: string;
  /** The fake app-server script, written once per root. */
  appServer: string;
  workspace(): string;
  /** A fresh HOME under the root. */
  home(): string;
  cleanup(): void;
}

export function codexTestRoot(prefix: string): CodexTestRoot {
  const root = mkdtempSync(path.join(os.tmpdir(), prefix));
  let n = 0;
  return {
    root,
    appServer: fakeAppServer(path.join(root, 'bin')),
    workspace() {
      const ws = path.join(root, `ws-${++n}`);
      mkdirSync(ws);
      return ws;
    },
    home() {
      const home = path.join(root, `home-${++n}`);
      mkdirSync(home);
      return home;
    },
    cleanup() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}

export function codexAdapter(): AgentAdapter {
  const adapter = agentKind('codex')?.runtime?.factory();
  if (adapter === undefined) throw new Error('codex is not registered with a runtime');
  return adapter;
}

export interface ParamsOptions {
  options?: Record<string, unknown>;
  env?: Record<string, string>;
  resumeSessionId?: string | null;
  stallTimeoutMs?: number;
  readTimeoutMs?: number;
  turnTimeoutMs?: number;
}

/** Session parameters with a fresh workspace and HOME and a dummy key. */
export function codexParams(
  t: CodexTestRoot,
  command: string | null,
  o: ParamsOptions = {},
): StartSessionParams {
  return {
    workspacePath: t.workspace(),
    workspaceRoot: t.root,
    agent: {
      kind: 'codex',
      command,
      turnTimeoutMs: o.turnTimeoutMs ?? 60_000,
      readTimeoutMs: o.readTimeoutMs ?? 20_000,
      stallTimeoutMs: o.stallTimeoutMs ?? 0,
    },
    options: o.options ?? {},
    resumeSessionId: o.resumeSessionId ?? null,
    env: o.env ?? { PATH: process.env.PATH ?? '', HOME: t.home(), CODEX_API_KEY: 'sk-test-dummy' },
  };
}

/** Runs the prompts as consecutive turns of one session. */
export async function runTurns(
  adapter: AgentAdapter,
  params: StartSessionParams,
  prompts: readonly string[],
  signals: readonly (AbortSignal | undefined)[] = [],
): Promise<{ turns: UsageRun[]; session: AgentSession }> {
  const session = await adapter.startSession(params);
  const turns: UsageRun[] = [];
  try {
    for (const [i, prompt] of prompts.entries()) {
      const events: AgentEvent[] = [];
      const outcome = await adapter.runTurn(session, {
        prompt,
        issue: SAMPLE_ISSUE,
        onEvent: (e) => events.push(e),
        signal: signals[i] ?? new AbortController().signal,
      });
      turns.push({ events, outcome });
    }
  } finally {
    await adapter.stopSession(session);
  }
  return { turns, session };
}

/** `exitReason/kind` of a turn, for compact assertions. */
export const verdict = (run: UsageRun) =>
  `${run.outcome.result.exitReason}/${run.outcome.error?.kind ?? 'none'}`;

/** Tool results as [name, kind, argument, error]. */
export const toolsOf = (run: UsageRun) =>
  run.events.flatMap((e) =>
    e.type === 'tool_result' ? [[e.toolName, e.toolKind, e.toolArgument, e.toolError] as const] : [],
  );

/** A figure as [input, output, cacheRead]. */
export const figure = (run: UsageRun) => {
  const u = run.outcome.result.usage;
  return [u.inputTokens, u.outputTokens, u.cacheReadTokens];
};

/** The command of the fake app-server in `mode` with its arguments. */
export function appServerCommand(
  t: CodexTestRoot,
  mode: 'replay' | 'relay' | 'no-app-server',
  arg: string,
): string {
  return `${t.appServer} ${mode} ${arg}`;
}

/** The prompts of the shell-tool case's two turns. */
export const SHELL_CASE_PROMPTS = ['Write hi to out.txt using the shell', 'Is it still there?'] as const;

/**
 * The model's side of the shell-tool case: a shell call writing hi to out.txt and the
 * answer to it, then turn 2's message. `index` counts the case's requests from 0.
 */
export function shellCaseScript(): (request: RecordedRequest, index: number) => OpenAIReply {
  return (request, index) =>
    index < 2
      ? shellThenAnswer('echo hi > out.txt', 'Done: wrote hi to out.txt.')(request)
      : { type: 'message', text: 'Still done.' };
}

/**
 * The two turns of the shell-tool case: the tool wrote the file in `workspace`, exact
 * figures for both turns (turn 2 resuming the session and adding up), the usage-reporting
 * contract, and the case's three `requests`, each carrying `key` and turn 2's longer
 * than turn 1's (it continued the thread). Returns the turns.
 */
export function expectShellCaseTurns(
  turns: readonly UsageRun[],
  c: { workspace: string; requests: readonly RecordedRequest[]; key: string },
): [UsageRun, UsageRun] {
  const [first, second] = turns as [UsageRun, UsageRun];
  expect(verdict(first), first.outcome.error?.detail).toBe('turn_completed/none');
  expect(readFileSync(path.join(c.workspace, 'out.txt'), 'utf8')).toBe('hi\n');
  expect(toolsOf(first)).toEqual([['exec_command', 'shell', 'echo hi > out.txt', false]]);
  // Two calls of 123 in (7 cached) / 45 out.
  expect(figure(first)).toEqual([246, 90, 14]);
  expect(first.outcome.result).toMatchObject({
    usageMeasured: true,
    usageProvenance: 'reported',
    spendUnaccounted: false,
    coversSession: true,
    reportedAmounts: [],
  });

  expect(verdict(second), second.outcome.error?.detail).toBe('turn_completed/none');
  expect(first.outcome.result.sessionId).not.toBe('');
  expect(second.outcome.result.sessionId).toBe(first.outcome.result.sessionId);
  expect(figure(second)).toEqual([369, 135, 21]);
  expect(second.outcome.result.spendUnaccounted).toBe(false);
  assertUsageReporting('codex', turns);
  expect(c.requests).toHaveLength(3);
  expect(c.requests.every((r) => r.path === '/v1/responses')).toBe(true);
  expect(c.requests.every((r) => r.headers.authorization === `Bearer ${c.key}`)).toBe(true);
  // The second turn continued the thread: its request carries the first turn's history.
  const inputs = c.requests.map((r) => ((r.body as { input?: unknown[] }).input ?? []).length);
  expect(inputs[2]).toBeGreaterThan(inputs[0] ?? 0);
  return [first, second];
}

export { SAMPLE_ISSUE };
