/**
 * Stand-ins for `codex app-server` in tests, as one small executable node script
 * (plain JS, no dependencies) written next to the test's files. It runs in one of
 * three modes, chosen by its first argument:
 *
 * - `replay <file>`: plays the server side of a recorded session: each response
 *   once our request with its id has arrived, everything else in order; then it
 *   waits for EOF on stdin. Lines carrying `"jsonrpc"` (a recording client's own
 *   requests) are skipped.
 * - `relay <fake> [args…]`: answers the handshake itself and runs the fake
 *   runtime (`internal-contracts/agent/fake-runtime.ts`) once per `turn/start`,
 *   with the prompt on its stdin and `$THREAD`/`$TURN` in its lines replaced by
 *   the ids, relaying its stdout and stderr. When the fake ends without having
 *   written a `turn/completed`, or ends badly, the relay ends the same way (a
 *   runtime that dies mid-turn). `turn/interrupt` stops the fake and completes
 *   the turn as interrupted. Every line it reads is logged to `<fake>.rpc.jsonl`.
 *   It reports the start of each MCP server its CODEX_HOME's config.toml defines
 *   (and no `-c mcp_servers.<name>.enabled=false` switches off) after `thread/start`:
 *   `starting`, then after `$FAKE_MCP_READY_MS` (default 0) `$FAKE_MCP_STATUS`
 *   (default `ready`). Its launch (argv, env), those reports and each `turn/start`
 *   are logged, stamped, to `<fake>.events.jsonl`.
 * - `no-app-server <fake> [args…]`: a build without `app-server`: refuses that
 *   subcommand as its argument parser would, and runs the fake for anything else.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const SCRIPT = `#!/usr/bin/env node
import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const [mode, target, ...rest] = process.argv.slice(2);
const write = (message) => process.stdout.write((typeof message === 'string' ? message : JSON.stringify(message)) + '\\n');
const mirror = (code, signal) => {
  if (signal) process.kill(process.pid, signal);
  else process.exit(code ?? 1);
};

if (mode === 'no-app-server') {
  if (rest.includes('app-server')) {
    process.stderr.write("error: unrecognized subcommand 'app-server'\\n\\nUsage: codex [OPTIONS] [PROMPT]\\n");
    process.exit(2);
  }
  const child = spawn(target, rest, { stdio: 'inherit' });
  child.on('exit', mirror);
} else if (mode === 'replay') {
  const lines = readFileSync(target, 'utf8').split('\\n').filter((l) => l.trim() !== '' && !l.includes('"jsonrpc"'));
  const seen = new Set();
  let waiting = null;
  const input = createInterface({ input: process.stdin });
  input.on('line', (line) => {
    try {
      const m = JSON.parse(line);
      if (m.id !== undefined && m.method !== undefined) seen.add(m.id);
    } catch {}
    if (waiting !== null && seen.has(waiting.id)) waiting.go();
  });
  input.on('close', () => process.exit(0));
  for (const line of lines) {
    const m = JSON.parse(line);
    if (m.id !== undefined && m.method === undefined && !seen.has(m.id)) {
      await new Promise((resolve) => {
        waiting = { id: m.id, go: () => { waiting = null; resolve(); } };
      });
    }
    write(line);
  }
  setInterval(() => undefined, 60_000);
} else if (mode === 'relay') {
  const log = target + '.rpc.jsonl';
  const note = (event) => appendFileSync(target + '.events.jsonl', JSON.stringify({ ...event, at: Date.now() }) + '\\n');
  note({ event: 'launch', argv: process.argv.slice(2), env: process.env });
  let servers = [];
  try {
    const toml = readFileSync(process.env.CODEX_HOME + '/config.toml', 'utf8');
    servers = [...toml.matchAll(/^\\[mcp_servers\\.([A-Za-z0-9_-]+)\\]$/gm)].map((m) => m[1])
      .filter((name) => !rest.includes('mcp_servers.' + name + '.enabled=false'));
  } catch {}
  const startServers = (threadId) => {
    const report = (name, status, error) =>
      write({ method: 'mcpServer/startupStatus/updated', params: { threadId, name, status, error } });
    for (const name of servers) {
      report(name, 'starting', null);
      setTimeout(() => {
        const status = process.env.FAKE_MCP_STATUS ?? 'ready';
        note({ event: 'mcp-' + status, name });
        report(name, status, status === 'failed' ? 'handshake failed' : null);
      }, Number(process.env.FAKE_MCP_READY_MS ?? 0));
    }
  };
  const thread = 'fake-thread';
  let turns = 0;
  let current = null;
  const answer = (id, result) => write({ id, result });
  const threadOf = (id) => ({ thread: { id, sessionId: id, status: { type: 'idle' }, turns: [] }, model: 'fake-model' });
  const input = createInterface({ input: process.stdin });
  input.on('line', (line) => {
    appendFileSync(log, line + '\\n');
    let m;
    try { m = JSON.parse(line); } catch { return; }
    if (m.method === undefined) return;
    switch (m.method) {
      case 'initialize':
        return answer(m.id, { userAgent: 'fake-app-server', codexHome: '', platformFamily: 'unix', platformOs: 'linux' });
      case 'thread/start':
        answer(m.id, threadOf(thread));
        write({ method: 'thread/started', params: threadOf(thread) });
        return startServers(thread);
      case 'thread/resume':
        return answer(m.id, threadOf(m.params.threadId));
      case 'turn/start': {
        note({ event: 'turn/start' });
        turns += 1;
        const turnId = 'fake-turn-' + turns;
        const threadId = m.params.threadId;
        answer(m.id, { turn: { id: turnId, items: [], status: 'inProgress', error: null } });
        const prompt = (m.params.input ?? []).map((i) => i.text ?? '').join('');
        const child = spawn(target, rest, { stdio: ['pipe', 'pipe', 'inherit'] });
        const turn = { child, turnId, threadId, completed: false };
        current = turn;
        child.stdin.on('error', () => {});
        child.stdin.end(prompt);
        createInterface({ input: child.stdout }).on('line', (out) => {
          const text = out.split('$THREAD').join(threadId).split('$TURN').join(turnId);
          if (text.includes('"turn/completed"')) turn.completed = true;
          write(text);
        });
        child.on('close', (code, signal) => {
          if (current === turn) current = null;
          if (turn.interrupted) return;
          if (!turn.completed || code !== 0 || signal) mirror(code, signal);
        });
        return;
      }
      case 'turn/interrupt': {
        answer(m.id, {});
        const turn = current;
        if (turn !== null && !turn.completed) {
          turn.interrupted = true;
          turn.child.kill('SIGTERM');
          write({ method: 'turn/completed', params: { threadId: turn.threadId, turn: { id: turn.turnId, items: [], status: 'interrupted', error: null } } });
        }
        return;
      }
      default:
        if (m.id !== undefined) write({ id: m.id, error: { code: -32601, message: 'unknown method ' + m.method } });
    }
  });
  input.on('close', () => {
    current?.child.kill('SIGTERM');
    process.exit(0);
  });
} else {
  process.stderr.write('fake app-server: unknown mode ' + mode + '\\n');
  process.exit(64);
}
`;

/** Writes the script into `dir` (once) and returns its absolute path. */
export function fakeAppServer(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const file = path.resolve(dir, 'fake-app-server.mjs');
  if (/\s/.test(file)) throw new Error(`fakeAppServer: the path ${file} contains whitespace`);
  if (!existsSync(file) || readFileSync(file, 'utf8') !== SCRIPT) {
    writeFileSync(file, SCRIPT);
    chmodSync(file, 0o755);
  }
  return file;
}

/** Every line the relay read from the client while running `fake`, parsed. */
export function relayLog(fake: string): Record<string, unknown>[] {
  const file = `${fake}.rpc.jsonl`;
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** One stamped entry of the relay's events log: its launch, a server's start report, a turn's start. */
export interface RelayEvent {
  event: string;
  at: number;
  argv?: string[];
  env?: Record<string, string>;
  name?: string;
}

/** What the relay logged while running `fake`, in order. */
export function relayEvents(fake: string): RelayEvent[] {
  const file = `${fake}.events.jsonl`;
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as RelayEvent);
}

/** App-server notifications for the relay's fake to write (`$THREAD`/`$TURN` are filled in by the relay). */
export const wire = {
  turnStarted: () =>
    JSON.stringify({
      method: 'turn/started',
      params: { threadId: '$THREAD', turn: { id: '$TURN', status: 'inProgress' } },
    }),
  message: (id: string, text: string) =>
    JSON.stringify({
      method: 'item/completed',
      params: { threadId: '$THREAD', turnId: '$TURN', item: { type: 'agentMessage', id, text } },
    }),
  delta: (id: string, delta: string) =>
    JSON.stringify({
      method: 'item/agentMessage/delta',
      params: { threadId: '$THREAD', turnId: '$TURN', itemId: id, delta },
    }),
  commandStarted: (id: string, command: string) =>
    JSON.stringify({
      method: 'item/started',
      params: {
        threadId: '$THREAD',
        turnId: '$TURN',
        item: { type: 'commandExecution', id, command, status: 'inProgress', exitCode: null },
      },
    }),
  commandCompleted: (id: string, command: string, exitCode = 0) =>
    JSON.stringify({
      method: 'item/completed',
      params: {
        threadId: '$THREAD',
        turnId: '$TURN',
        item: {
          type: 'commandExecution',
          id,
          command,
          status: exitCode === 0 ? 'completed' : 'failed',
          exitCode,
        },
      },
    }),
  usage: (total: { input: number; output: number; cached: number }, last = total) => {
    const breakdown = (c: { input: number; output: number; cached: number }) => ({
      totalTokens: c.input + c.output,
      inputTokens: c.input,
      cachedInputTokens: c.cached,
      cacheWriteInputTokens: 0,
      outputTokens: c.output,
      reasoningOutputTokens: 0,
    });
    return JSON.stringify({
      method: 'thread/tokenUsage/updated',
      params: {
        threadId: '$THREAD',
        turnId: '$TURN',
        tokenUsage: { total: breakdown(total), last: breakdown(last), modelContextWindow: 1000 },
      },
    });
  },
  error: (message: string, info: unknown, willRetry: boolean) =>
    JSON.stringify({
      method: 'error',
      params: {
        threadId: '$THREAD',
        turnId: '$TURN',
        willRetry,
        error: { message, codexErrorInfo: info, additionalDetails: null },
      },
    }),
  completed: (
    status: 'completed' | 'failed' | 'interrupted',
    error: { message: string; info: unknown } | null = null,
  ) =>
    JSON.stringify({
      method: 'turn/completed',
      params: {
        threadId: '$THREAD',
        turn: {
          id: '$TURN',
          items: [],
          status,
          error:
            error === null
              ? null
              : { message: error.message, codexErrorInfo: error.info, additionalDetails: null },
        },
      },
    }),
  approvalRequest: (id: number, command: string) =>
    JSON.stringify({
      id,
      method: 'item/commandExecution/requestApproval',
      params: { threadId: '$THREAD', turnId: '$TURN', itemId: 'call-x', command, cwd: '/' },
    }),
};
