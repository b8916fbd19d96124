/**
 * A small harness for driving `ForkPerTurnSession` directly with real processes:
 * tiny test hooks that speak a JSON-lines protocol (`{"t":"done"}` is the turn's
 * terminal), node child programs written to a temp dir, and process-liveness
 * checks read from `/proc`.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  type ForkPerTurnHooks,
  type ForkPerTurnOptions,
  ForkPerTurnSession,
  type TurnContext,
} from '../../../../src/agent/core/fork-per-turn.js';
import type { LaunchTarget } from '../../../../src/agent/core/launch-target.js';
import { MOCK_USAGE_SOURCES } from '../../../../src/agent/mock/usage.js';
import { ZERO } from '../../../../src/agent/usage/index.js';
import type { AgentEvent, AgentSettings, TurnOutcome } from '../../../../src/domain/agent.js';
import { SAMPLE_ISSUE } from '../../../../src/prompt/variables.js';

/** A temp area: `root` is the workspace root, `scripts` lives outside it. */
export interface Scratch {
  dir: string;
  root: string;
  scripts: string;
  /** Writes a child program and returns its absolute path. */
  script(name: string, source: string): string;
  /** A fresh workspace directory under the root. */
  workspace(name: string): string;
  cleanup(): void;
}

export function makeScratch(prefix = 'skeleton-'): Scratch {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  const root = path.join(dir, 'root');
  const scripts = path.join(dir, 'scripts');
  mkdirSync(root);
  mkdirSync(scripts);
  return {
    dir,
    root,
    scripts,
    script(name, source) {
      const file = path.join(scripts, name);
      writeFileSync(file, source);
      return file;
    },
    workspace(name) {
      const ws = path.join(root, name);
      mkdirSync(ws, { recursive: true });
      return ws;
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** What the test hooks saw: every accepted JSON object, in order. */
export interface HookLog {
  accepted: Record<string, unknown>[];
  /** Calls of parseLine, including the ones that came after the turn resolved (there must be none). */
  parseCalls: number;
  buildArgsCalls: number;
}

export interface TestHookOptions {
  promptOnStdin?: boolean;
  firstEventTimeoutMs?: number;
  args?: string[];
}

/**
 * Hooks of a minimal runtime: each stdout line must be a JSON object; `{"t":"done"}`
 * is the terminal (a success whose message is its `msg`); anything else is rejected.
 */
export function testHooks(options: TestHookOptions = {}): { hooks: ForkPerTurnHooks; log: HookLog } {
  const log: HookLog = { accepted: [], parseCalls: 0, buildArgsCalls: 0 };
  let terminal: Record<string, unknown> | null = null;
  const hooks: ForkPerTurnHooks = {
    promptOnStdin: options.promptOnStdin ?? false,
    ...(options.firstEventTimeoutMs !== undefined
      ? { firstEventTimeoutMs: options.firstEventTimeoutMs }
      : {}),
    beginTurn: () => {
      terminal = null;
    },
    buildArgs: () => {
      log.buildArgsCalls += 1;
      return options.args ?? [];
    },
    parseLine: (line: string, _ctx: TurnContext) => {
      log.parseCalls += 1;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        return { type: 'rejected', reason: 'not JSON' };
      }
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        return { type: 'rejected', reason: 'not a JSON object' };
      }
      const o = value as Record<string, unknown>;
      log.accepted.push(o);
      if (o.t === 'done') {
        terminal = o;
        return { type: 'accepted', terminal: o };
      }
      return { type: 'accepted' };
    },
    settleUsage: () => undefined,
    getUsage: () => ({ usage: ZERO, byModel: {}, measured: false }),
    getSessionId: () => 'test-session',
    finalMessage: () => (typeof terminal?.msg === 'string' ? terminal.msg : ''),
    onFinalize: (input) => ({
      terminal:
        input.lastTerminal === undefined
          ? null
          : {
              type: 'success',
              message: String((input.lastTerminal as Record<string, unknown>).msg ?? 'done'),
            },
      work: { work: 'none', detail: 'the test runtime reports no work signal' },
    }),
  };
  return { hooks, log };
}

export function agentSettings(overrides: Partial<AgentSettings> = {}): AgentSettings {
  return {
    kind: 'skeleton-test',
    command: null,
    turnTimeoutMs: 20_000,
    readTimeoutMs: 5_000,
    stallTimeoutMs: 0,
    ...overrides,
  };
}

/** A launch target running `scriptPath` with this node binary. */
export function nodeTarget(scriptPath: string, workspacePath: string, workspaceRoot: string): LaunchTarget {
  return {
    command: process.execPath,
    args: [scriptPath],
    workspacePath,
    workspaceRoot,
    withheldEnv: [],
    location: { type: 'local' },
  };
}

export interface SessionSetup {
  script: string;
  workspace: string;
  root: string;
  hooks?: TestHookOptions;
  agent?: Partial<AgentSettings>;
  options?: Partial<Omit<ForkPerTurnOptions, 'agent' | 'sources'>>;
  /** Override the command (a missing binary, say). */
  command?: string;
}

export interface Harness {
  session: ForkPerTurnSession;
  log: HookLog;
  /** Runs one turn, recording events and flagging any delivered after it resolved. */
  turn(params?: { prompt?: string; signal?: AbortSignal }): Promise<{
    outcome: TurnOutcome;
    events: AgentEvent[];
    elapsedMs: number;
  }>;
  /** Events delivered after some runTurn had resolved (must stay empty). */
  lateEvents: AgentEvent[];
}

export function makeSession(setup: SessionSetup): Harness {
  const { hooks, log } = testHooks(setup.hooks);
  const target = nodeTarget(setup.script, setup.workspace, setup.root);
  if (setup.command !== undefined) target.command = setup.command;
  const session = new ForkPerTurnSession(target, hooks, {
    agent: agentSettings(setup.agent),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    sources: MOCK_USAGE_SOURCES,
    stopGraceMs: 500,
    stdoutGraceMs: 300,
    stderrDrainMs: 300,
    ...setup.options,
  });
  const lateEvents: AgentEvent[] = [];
  return {
    session,
    log,
    lateEvents,
    async turn(params = {}) {
      const events: AgentEvent[] = [];
      let resolved = false;
      const signal = params.signal ?? new AbortController().signal;
      const started = Date.now();
      const outcome = await session.runTurn({
        prompt: params.prompt ?? 'do the thing',
        issue: SAMPLE_ISSUE,
        signal,
        onEvent: (event) => {
          if (resolved) {
            lateEvents.push(event);
            return;
          }
          events.push(event);
        },
      });
      resolved = true;
      return { outcome, events, elapsedMs: Date.now() - started };
    },
  };
}

/** True while `/proc/<pid>` names a live (non-zombie) process. */
export function isAlive(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2).charAt(0);
  return state !== 'Z' && state !== 'X';
}

/** Polls `condition` every 10 ms; throws naming `what` after `timeoutMs`. */
export async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** SIGKILLs pids a failed test may have left; missing pids are fine. */
export function killQuietly(pids: Iterable<number>): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

/** The pids that accepted lines announced as `{"t":"child","pid":N}`. */
export function announcedPids(log: HookLog): number[] {
  return log.accepted.filter((o) => o.t === 'child' && typeof o.pid === 'number').map((o) => o.pid as number);
}

/** Events of one type, narrowed. */
export function eventsOf<T extends AgentEvent['type']>(
  events: readonly AgentEvent[],
  type: T,
): Extract<AgentEvent, { type: T }>[] {
  return events.filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type);
}
