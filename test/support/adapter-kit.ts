/**
 * What the per-kind test support of the fork-per-turn adapters shares: the kind's adapter,
 * scratch folders removed after the file, session parameters with a fresh workspace, and
 * turns and sessions run with their events collected. Each kind's support.ts adds only what is
 * its own (the environment, the dummy key, its CLI's block).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import type { UsageRun } from '../../internal-contracts/agent/usage-reporting.js';
import { agentKind } from '../../src/agent/registry.js';
import type {
  AgentAdapter,
  AgentEvent,
  AgentSession,
  AgentSettings,
  StartSessionParams,
} from '../../src/domain/agent.js';
import { SAMPLE_ISSUE } from '../../src/prompt/variables.js';
import { REPO_ROOT } from './cli.js';

/** `../shared/fixtures` beside the repository: the developers' research material, absent on a fresh clone. */
export const SHARED_FIXTURES = path.resolve(REPO_ROOT, '..', 'shared', 'fixtures');

/** null when the shared fixtures of `folder` are present, else why fixture tests skip. */
export function sharedFixturesMissing(folder: string): string | null {
  return existsSync(path.join(SHARED_FIXTURES, folder))
    ? null
    : `the public transcripts are not at ${SHARED_FIXTURES} (../shared is absent)`;
}

/** The registered adapter of `kind`. */
export function adapterFor(kind: string): AgentAdapter {
  const adapter = agentKind(kind)?.runtime?.factory();
  if (adapter === undefined) throw new Error(`${kind} is not registered with a runtime`);
  return adapter;
}

/** Folders made here, removed after the test file that made them. */
const made: string[] = [];
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh folder removed after the file. */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
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

/** Session parameters with a fresh workspace (or the one given); `defaultEnv` when the input names none. */
export function sessionParams(
  agent: Omit<AgentSettings, 'command'>,
  p: ParamsInput,
  defaultEnv: () => Record<string, string>,
): StartSessionParams {
  return {
    workspacePath: p.workspacePath ?? p.ws.workspace(),
    workspaceRoot: p.ws.root,
    agent: { ...agent, command: p.command, ...p.agent },
    options: p.options ?? {},
    resumeSessionId: p.resumeSessionId ?? null,
    env: p.env ?? defaultEnv(),
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
 * Runs the prompts as consecutive turns of one session of `adapter`; `beforeTurn(n)` runs
 * before turn n (0-based), e.g. to lay down what a fake runtime's files hold by then.
 */
export async function runSession(
  adapter: AgentAdapter,
  params: StartSessionParams,
  prompts: readonly string[],
  beforeTurn: (n: number) => void = () => undefined,
): Promise<UsageRun[]> {
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
