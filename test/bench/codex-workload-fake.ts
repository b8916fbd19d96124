/**
 * The fake `codex app-server` of the `codex-workload` benchmark: a small plain-JS node
 * script (no dependencies) written into the bench's temp directory. It speaks just enough
 * of the app-server JSON-RPC protocol for the codex adapter, and answers at once:
 *
 * - `initialize` → a result; `initialized` (a notification) is taken in silence;
 * - `thread/start` → a result naming a thread (one id per process), and in the same write a
 *   `mcpServer/startupStatus/updated` `ready` for each MCP server its CODEX_HOME's config.toml
 *   defines and no `-c mcp_servers.<name>.enabled=false` switches off (without those reports
 *   a session given tools would wait out its grace before the first turn);
 * - `thread/resume` → a result naming the thread asked for;
 * - `turn/start` → the result AND, in the same stdout write, the whole turn: `turn/started`,
 *   one agent message item, `thread/tokenUsage/updated` (so the turn's usage is measured)
 *   and `turn/completed` with status `completed`;
 * - `turn/interrupt` → an empty result; any other request → "method not found";
 * - EOF on stdin → exit 0.
 *
 * `sandbox … -- <cmd…>` (the start-up sandbox probe) runs the command and exits with its
 * status; `--help` lists `app-server` among the commands.
 *
 * The same script serves the credential-verification session (same protocol, an ephemeral
 * thread) and the floor, which drives it from the bench process.
 */
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const SCRIPT = `#!/usr/bin/env node
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
if (args[0] === 'sandbox') {
  const at = args.indexOf('--');
  const command = at < 0 ? [] : args.slice(at + 1);
  if (command.length === 0) process.exit(0);
  const ran = spawnSync(command[0], command.slice(1), { stdio: 'inherit' });
  process.exit(ran.status ?? 1);
}
if (args[0] === '--help') {
  process.stdout.write('Usage: codex [OPTIONS] [PROMPT]\\n\\nCommands:\\n  exec        Run non-interactively\\n  app-server  Run the app server\\n  sandbox     Run a command in the sandbox\\n');
  process.exit(0);
}
if (args[0] !== 'app-server') {
  process.stderr.write("error: unrecognized subcommand '" + (args[0] ?? '') + "'\\n");
  process.exit(2);
}

const line = (message) => JSON.stringify(message) + '\\n';
const out = (...messages) => process.stdout.write(messages.map(line).join(''));
const thread = 'bench-thread-' + process.pid;
const threadOf = (id) => ({ thread: { id, sessionId: id, status: { type: 'idle' }, turns: [] }, model: 'bench-model' });
let servers = null;
const toolServers = () => {
  if (servers !== null) return servers;
  servers = [];
  try {
    const toml = readFileSync((process.env.CODEX_HOME ?? '') + '/config.toml', 'utf8');
    servers = [...toml.matchAll(/^\\[mcp_servers\\.([A-Za-z0-9_-]+)\\]$/gm)]
      .map((m) => m[1])
      .filter((name) => !args.includes('mcp_servers.' + name + '.enabled=false'));
  } catch {}
  return servers;
};
const usage = (n) => ({
  totalTokens: n * 2,
  inputTokens: n,
  cachedInputTokens: 0,
  cacheWriteInputTokens: 0,
  outputTokens: n,
  reasoningOutputTokens: 0,
});
let turns = 0;

const handle = (text) => {
  let m;
  try { m = JSON.parse(text); } catch { return; }
  if (typeof m.method !== 'string') return;
  switch (m.method) {
    case 'initialize':
      return out({ id: m.id, result: { userAgent: 'bench-fake-app-server', codexHome: process.env.CODEX_HOME ?? '', platformFamily: 'unix', platformOs: 'linux' } });
    case 'initialized':
      return;
    case 'thread/start':
      return out(
        { id: m.id, result: threadOf(thread) },
        ...toolServers().map((name) => ({ method: 'mcpServer/startupStatus/updated', params: { threadId: thread, name, status: 'ready', error: null } })),
      );
    case 'thread/resume':
      return out({ id: m.id, result: threadOf(m.params?.threadId ?? thread) });
    case 'turn/start': {
      turns += 1;
      const threadId = m.params?.threadId ?? thread;
      const turnId = 'bench-turn-' + turns;
      return out(
        { id: m.id, result: { turn: { id: turnId, items: [], status: 'inProgress', error: null } } },
        { method: 'turn/started', params: { threadId, turn: { id: turnId, status: 'inProgress' } } },
        { method: 'item/completed', params: { threadId, turnId, item: { type: 'agentMessage', id: 'msg-' + turns, text: 'done' } } },
        { method: 'thread/tokenUsage/updated', params: { threadId, turnId, tokenUsage: { total: usage(10 * turns), last: usage(10), modelContextWindow: 100000 } } },
        { method: 'turn/completed', params: { threadId, turn: { id: turnId, items: [], status: 'completed', error: null } } },
      );
    }
    case 'turn/interrupt':
      return out({ id: m.id, result: {} });
    default:
      if (m.id !== undefined) out({ id: m.id, error: { code: -32601, message: 'unknown method ' + m.method } });
  }
};

let buffered = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  let nl = buffered.indexOf('\\n');
  while (nl >= 0) {
    const text = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    if (text.trim() !== '') handle(text);
    nl = buffered.indexOf('\\n');
  }
});
process.stdin.on('end', () => process.exit(0));
`;

/** Writes the fake into `dir` and returns its absolute path (which must hold no blank: it goes in `agent.command`). */
export function writeFakeAppServer(dir: string): string {
  const file = path.resolve(dir, 'fake-codex.mjs');
  if (/\s/.test(file)) throw new Error(`the fake's path ${file} contains whitespace`);
  writeFileSync(file, SCRIPT);
  chmodSync(file, 0o755);
  return file;
}
