/**
 * The persistent-session skeleton against a small JSON-RPC runtime written for
 * these tests (its protocol is made up: `open`, `run`, `stop`, notifications
 * `output` and `done`). What is proven is the skeleton's part: one process for
 * many turns, requests of the runtime always answered, cancellation by asking
 * first and killing when ignored, an exit during a turn (even exit 0) as the
 * early-exit report, timers, handshake failures, and the fork-per-turn fallback
 * for a runtime that lacks the protocol.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { TurnContext } from '../../../src/agent/core/fork-per-turn.js';
import {
  type PersistentFallback,
  type PersistentHooks,
  PersistentSession,
} from '../../../src/agent/core/persistent-session.js';
import type { UsageSources } from '../../../src/agent/usage/index.js';
import { type AgentEvent, type TurnOutcome, ZERO_TOKENS } from '../../../src/domain/agent.js';
import { SAMPLE_ISSUE } from '../../../src/prompt/variables.js';

const RUNTIME = `#!/usr/bin/env node
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
const self = process.argv[1];
const out = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const answers = new Map();
let turn = 0;
let playing = null;
if (process.env.FAKE_OPEN === 'missing') {
  process.stderr.write("error: unrecognized subcommand 'serve'\\n");
  process.exit(2);
}
async function play(steps, n) {
  const me = { stopped: false };
  playing = me;
  for (const step of steps) {
    if (me.stopped) return;
    if (step.notify) out({ method: step.notify.method, params: { turn: n, ...step.notify.params } });
    else if (step.request) out({ id: step.request.id, method: step.request.method, params: step.request.params ?? {} });
    else if (step.awaitAnswer !== undefined) { while (!answers.has(step.awaitAnswer)) await sleep(5); }
    else if (step.sleepMs) await sleep(step.sleepMs);
    else if (step.stderr) process.stderr.write(step.stderr + '\\n');
    else if (step.exit !== undefined) process.exit(step.exit);
    else if (step.kill) process.kill(process.pid, step.kill);
    else if (step.hang) await new Promise(() => setInterval(() => {}, 60000));
    else if (step.done) out({ method: 'done', params: { turn: n, status: step.done } });
  }
}
const rl = createInterface({ input: process.stdin });
rl.on('line', (line) => {
  appendFileSync(self + '.log.jsonl', line + '\\n');
  const m = JSON.parse(line);
  if (m.method === undefined) { answers.set(m.id, m); return; }
  if (m.method === 'open') {
    if (process.env.FAKE_OPEN === 'error') return out({ id: m.id, error: { code: -32600, message: 'cannot open' } });
    if (process.env.FAKE_OPEN === 'silent') return;
    if (process.env.FAKE_OPEN === 'exit') { process.stderr.write('fake: fatal at open'); process.exit(3); }
    return out({ id: m.id, result: { pid: process.pid } });
  }
  if (m.method === 'run') {
    turn += 1;
    out({ id: m.id, result: { turn } });
    void play(m.params.steps, turn);
    return;
  }
  if (m.method === 'stop') {
    if (process.env.FAKE_STOP === 'ignore') return;
    out({ id: m.id, result: {} });
    if (playing) playing.stopped = true;
    out({ method: 'done', params: { turn, status: 'stopped' } });
  }
});
rl.on('close', () => process.exit(0));
`;

const dir = mkdtempSync(path.join(os.tmpdir(), 'jsonrpc-session-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const runtime = path.join(dir, 'fake-rpc-runtime.mjs');
writeFileSync(runtime, RUNTIME);
chmodSync(runtime, 0o755);
let workspaces = 0;

const SOURCES: UsageSources = {
  live: {
    category: 'local',
    strategy: 'live',
    spend: {
      shape: 'per_request',
      cacheInInput: false,
      reasoningInOutput: true,
      servedModel: false,
      duringTurn: true,
      lowerBound: false,
      amounts: [],
    },
  },
};

type Step = Record<string, unknown>;
const output = (text: string): Step => ({ notify: { method: 'output', params: { text } } });

interface Started {
  session: PersistentSession;
  log(): Record<string, unknown>[];
  opened: number;
}

function start(
  options: {
    env?: Record<string, string>;
    stallTimeoutMs?: number;
    readTimeoutMs?: number;
    stopGraceMs?: number;
    fallback?: PersistentFallback;
  } = {},
): Started {
  const ws = path.join(dir, `ws-${++workspaces}`);
  mkdirSync(ws);
  const copy = path.join(dir, `runtime-${workspaces}.mjs`);
  writeFileSync(copy, RUNTIME);
  chmodSync(copy, 0o755);
  const started: Started = {
    session: null as unknown as PersistentSession,
    opened: 0,
    log: () =>
      (existsSync(`${copy}.log.jsonl`) ? readFileSync(`${copy}.log.jsonl`, 'utf8') : '')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
  let lastDone: { status: string } | null = null;
  const hooks: PersistentHooks = {
    buildArgs: () => [],
    open: async (rpc) => {
      started.opened += 1;
      await rpc.request('open', {});
    },
    startTurn: async (rpc, ctx: TurnContext) => {
      lastDone = null;
      await rpc.request('run', { steps: JSON.parse(ctx.prompt) as Step[] });
    },
    onNotification: (method, params, ctx) => {
      if (method === 'output') {
        ctx.spend.markModelReached();
        ctx.emit({ type: 'notification', message: (params as { text: string }).text });
        return { type: 'accepted' };
      }
      if (method === 'done') {
        lastDone = params as { status: string };
        return { type: 'accepted', terminal: params };
      }
      return { type: 'ignored' };
    },
    answerRequest: (method) =>
      method === 'approve'
        ? { result: { decision: 'decline' } }
        : { error: { code: -32601, message: `${method} unknown` } },
    interrupt: async (rpc) => {
      await rpc.request('stop', {});
    },
    settleUsage: () => undefined,
    getUsage: () => ({ usage: ZERO_TOKENS, byModel: {}, measured: false }),
    getSessionId: () => 'core-session',
    onFinalize: (input) => ({
      terminal:
        input.terminal === undefined
          ? null
          : (lastDone as { status: string } | null)?.status === 'ok'
            ? { type: 'success', message: 'done ok' }
            : { type: 'failure', message: `done ${(lastDone as { status: string } | null)?.status}` },
      work: { work: 'undeclared', detail: 'no signal' },
    }),
  };
  started.session = new PersistentSession(
    {
      command: copy,
      args: [],
      workspacePath: ws,
      workspaceRoot: dir,
      withheldEnv: [],
      location: { type: 'local' },
    },
    hooks,
    {
      agent: {
        kind: 'test',
        command: null,
        turnTimeoutMs: 20_000,
        readTimeoutMs: options.readTimeoutMs ?? 5_000,
        stallTimeoutMs: options.stallTimeoutMs ?? 0,
      },
      env: { PATH: process.env.PATH ?? '', ...options.env },
      sources: SOURCES,
      stopGraceMs: options.stopGraceMs ?? 500,
      stdoutGraceMs: 200,
      ...(options.fallback === undefined ? {} : { fallback: options.fallback }),
    },
  );
  return started;
}

async function turn(
  s: Started,
  steps: Step[],
  signal: AbortSignal = new AbortController().signal,
  onEvent: (e: AgentEvent) => void = () => {},
): Promise<{ outcome: TurnOutcome; events: AgentEvent[]; pid: string }> {
  const events: AgentEvent[] = [];
  let pid = '';
  const outcome = await s.session.runTurn({
    prompt: JSON.stringify(steps),
    issue: SAMPLE_ISSUE,
    onEvent: (e) => {
      events.push(e);
      if (e.agentPid !== '') pid = e.agentPid;
      onEvent(e);
    },
    signal,
  });
  return { outcome, events, pid };
}

const kinds = (o: TurnOutcome) => `${o.result.exitReason}/${o.error?.kind ?? 'none'}`;

describe('persistent session', () => {
  it('runs two turns on one process, each ended by the runtime terminal notification', async () => {
    const s = start();
    try {
      const first = await turn(s, [output('hello'), { done: 'ok' }]);
      expect(kinds(first.outcome)).toBe('turn_completed/none');
      expect(first.events.map((e) => e.type)).toEqual(['notification', 'turn_completed']);
      const second = await turn(s, [output('again'), { done: 'failed' }]);
      expect(kinds(second.outcome)).toBe('turn_failed/turn_failed');
      expect(second.pid).toBe(first.pid);
      expect(s.opened).toBe(1);
    } finally {
      await s.session.stop();
    }
  });

  it('answers every request of the runtime, in and out of its policy, so none is left waiting', async () => {
    const s = start();
    try {
      const { outcome } = await turn(s, [
        { request: { id: 0, method: 'approve', params: { command: 'rm -rf /' } } },
        { awaitAnswer: 0 },
        { request: { id: 1, method: 'mystery' } },
        { awaitAnswer: 1 },
        { done: 'ok' },
      ]);
      expect(kinds(outcome)).toBe('turn_completed/none');
      const answers = s.log().filter((m) => m.method === undefined);
      expect(answers).toEqual([
        { id: 0, result: { decision: 'decline' } },
        { id: 1, error: { code: -32601, message: 'mystery unknown' } },
      ]);
    } finally {
      await s.session.stop();
    }
  });

  it('cancels by asking the runtime to stop; the process survives for the next turn', async () => {
    // A runtime slowed by a loaded machine still gets to answer the stop.
    const s = start({ stopGraceMs: 5_000 });
    try {
      const controller = new AbortController();
      // Aborted once the turn is under way (its output was seen), so there is a turn to stop.
      const running = turn(s, [output('working'), { hang: true }], controller.signal, (e) => {
        if (e.type === 'notification') controller.abort();
      });
      const first = await running;
      expect(kinds(first.outcome)).toBe('turn_cancelled/turn_cancelled');
      expect(s.log().some((m) => m.method === 'stop')).toBe(true);
      const second = await turn(s, [{ done: 'ok' }]);
      expect(kinds(second.outcome)).toBe('turn_completed/none');
      expect(s.opened).toBe(1);
    } finally {
      await s.session.stop();
    }
  });

  it('kills the group when the runtime ignores the stop, and the next turn starts a new process', async () => {
    const s = start({ env: { FAKE_STOP: 'ignore' } });
    try {
      const controller = new AbortController();
      const running = turn(s, [output('working'), { hang: true }], controller.signal);
      await waitFor(() => s.log().some((m) => m.method === 'run'));
      controller.abort();
      const first = await running;
      expect(kinds(first.outcome)).toBe('turn_cancelled/turn_cancelled');
      const second = await turn(s, [output('fresh'), { done: 'ok' }]);
      expect(kinds(second.outcome)).toBe('turn_completed/none');
      expect(second.pid).not.toBe(first.pid);
      expect(s.opened).toBe(2);
    } finally {
      await s.session.stop();
    }
  });

  it.each([
    [
      'exit 0 (never a success mid-turn)',
      [output('x'), { stderr: 'fake: lost the model' }, { exit: 0 }],
      'port_exit',
      /exit 0.*fake: lost the model/,
    ],
    ['exit 127', [{ exit: 127 }], 'agent_not_found', /exit 127/],
    ['a signal it did not get from us', [output('x'), { kill: 'SIGKILL' }], 'port_exit', /SIGKILL/],
  ])('a runtime that ends during a turn by %s is the early-exit report', async (_n, steps, kind, message) => {
    const s = start();
    try {
      const { outcome, events } = await turn(s, steps as Step[]);
      expect(kinds(outcome)).toBe(`turn_failed/${kind}`);
      expect(outcome.error?.detail).toMatch(message);
      expect(events.filter((e) => e.type === 'turn_failed')).toHaveLength(1);
    } finally {
      await s.session.stop();
    }
  });

  it('ends a turn whose runtime goes quiet with response_timeout when the stall timer fires', async () => {
    const s = start({ stallTimeoutMs: 400, env: { FAKE_STOP: 'ignore' } });
    try {
      const t0 = Date.now();
      const { outcome } = await turn(s, [output('x'), { hang: true }]);
      expect(kinds(outcome)).toBe('turn_failed/response_timeout');
      expect(outcome.error?.detail).toMatch(/stalled/);
      expect(Date.now() - t0).toBeLessThan(10_000);
    } finally {
      await s.session.stop();
    }
  });

  it.each([
    ['an error response to the handshake', { FAKE_OPEN: 'error' }, 'response_error', /cannot open/],
    [
      'no response to the handshake within the read timeout',
      { FAKE_OPEN: 'silent' },
      'response_timeout',
      /no response to open/,
    ],
    ['an exit during the handshake', { FAKE_OPEN: 'exit' }, 'port_exit', /exit 3.*fatal at open/],
  ])('fails the turn on %s', async (_n, env, kind, message) => {
    const s = start({ env, readTimeoutMs: 2_000 });
    try {
      const { outcome } = await turn(s, [{ done: 'ok' }]);
      expect(kinds(outcome)).toBe(`turn_failed/${kind}`);
      expect(outcome.error?.detail).toMatch(message);
    } finally {
      await s.session.stop();
    }
  });

  it('hands every turn to the fallback when the runtime lacks the protocol', async () => {
    const calls: string[] = [];
    const fallbackOutcome = { result: { exitReason: 'turn_completed' } } as TurnOutcome;
    const s = start({
      env: { FAKE_OPEN: 'missing' },
      fallback: {
        protocolMissing: (exit, stderr) => exit.exitCode === 2 && stderr.join('').includes('unrecognized'),
        runTurn: async (p) => {
          calls.push(p.prompt);
          return fallbackOutcome;
        },
        stop: async () => undefined,
      },
    });
    try {
      expect((await turn(s, [{ done: 'one' }])).outcome).toBe(fallbackOutcome);
      expect((await turn(s, [{ done: 'two' }])).outcome).toBe(fallbackOutcome);
      expect(calls).toHaveLength(2);
      expect(s.session.usingFallback).toBe(true);
    } finally {
      await s.session.stop();
    }
  });

  it('stop ends the process with EOF and is idempotent', async () => {
    const s = start();
    const { pid } = await turn(s, [output('x'), { done: 'ok' }]);
    await s.session.stop();
    await s.session.stop();
    expect(() => process.kill(Number(pid), 0)).toThrow();
    const after = await turn(s, [{ done: 'ok' }]);
    expect(kinds(after.outcome)).toBe('turn_cancelled/turn_cancelled');
  });
});

async function waitFor(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met');
    await new Promise((r) => setTimeout(r, 20));
  }
}
