/**
 * The mock agent runtime: a real subprocess that reads its prompt on standard
 * input and acts out the directives it finds there, one per line, writing a
 * JSON-lines stream like a real agent CLI. It exists so the whole pipeline
 * (spawn, parse, usage, disposition, retries) runs end to end with no model
 * and no credentials. Node built-ins only: it starts in milliseconds.
 *
 * Directives (a line starting with `!`; anything else in the prompt is ignored):
 *   !ok [text]              final result, success, with text
 *   !blocked <why>          final result whose message is `BLOCKED: <why>`
 *   !usage <in> <out> [cr]  one model request with these token counts
 *   !toolcall [name]        a tool call that is never answered
 *   !loop <n>               n tool call / tool result pairs
 *   !silent <ms>            no output for <ms>
 *   !slowstart <ms>         wait before the first line
 *   !abort                  hold until killed
 *   !error [text]           fatal: text on stderr, exit 1, no result line
 *   !crash [once]           exit 3 mid-stream (with `once`: only the first time in this workspace)
 *   !exit <code>            exit with <code>, no result line
 * A prompt with no directive at all replays the directives of the session's first
 * prompt that had any, as a real agent's thread still holds its task when a
 * continuation turn says only "continue"; with none remembered it behaves as `!ok`.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Directive, parseDirectives } from './directives.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function write(obj: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(obj)}\n`);
}

function intArg(d: Directive, index: number, fallback: number): number {
  const n = Number(d.args[index]);
  return Number.isFinite(n) && n >= 0 ? Math.floor(n) : fallback;
}

function pidLog(event: 'start' | 'stop'): void {
  const file = process.env.ORCHESTRATOR_MOCK_PID_LOG;
  if (file) appendFileSync(file, `${event} ${process.pid} ${Date.now()}\n`);
}

/**
 * The session's memory, kept in the workspace: the first directives it was given are stored,
 * and a prompt without any gets them back.
 */
function threadDirectives(sessionId: string, given: Directive[]): Directive[] {
  const file = path.join(
    process.cwd(),
    '.orchestrator',
    'mock-threads',
    `${sessionId.replace(/[^A-Za-z0-9._-]/g, '_')}.json`,
  );
  // The memory is a convenience: a workspace it cannot write to (another user's) or a
  // damaged file must not fail the turn, only lose the replay.
  try {
    if (given.length > 0) {
      if (!existsSync(file)) {
        mkdirSync(path.dirname(file), { recursive: true });
        writeFileSync(file, JSON.stringify(given));
      }
      return given;
    }
    return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Directive[]) : [];
  } catch {
    return given;
  }
}

async function main(): Promise<number> {
  const prompt = readFileSync(0, 'utf8');
  const model = process.env.ORCHESTRATOR_MOCK_MODEL || 'mock-model';
  const lineDelayMs = Number(process.env.ORCHESTRATOR_MOCK_LINE_DELAY_MS || 0);
  const sessionId = process.env.ORCHESTRATOR_MOCK_SESSION_ID || `mock-${process.pid}-${Date.now()}`;
  let directives = threadDirectives(sessionId, parseDirectives(prompt));
  if (directives.length === 0) directives = [{ name: 'ok', args: [], rest: '' }];

  const slow = directives.find((d) => d.name === 'slowstart');
  if (slow) await sleep(intArg(slow, 0, 0));
  write({ type: 'start', session_id: sessionId, model });

  let seq = 0;
  // Request ids must be unique across the turns of a session: the ledger counts an id once.
  const runTag = `${process.pid}-${Date.now()}`;
  const emit = async (obj: Record<string, unknown>) => {
    write(obj);
    if (lineDelayMs > 0) await sleep(lineDelayMs);
  };
  for (const d of directives) {
    switch (d.name) {
      case 'slowstart':
        break;
      case 'usage': {
        seq += 1;
        const usage = { input: intArg(d, 0, 0), output: intArg(d, 1, 0), cache_read: intArg(d, 2, 0) };
        await emit({ type: 'message', id: `req-${runTag}-${seq}`, model, text: `request ${seq}`, usage });
        break;
      }
      case 'toolcall':
        seq += 1;
        await emit({
          type: 'tool_call',
          id: `tool-${seq}`,
          name: d.args[0] ?? 'Bash',
          input: { command: 'true' },
        });
        break;
      case 'loop':
        for (let i = 0; i < intArg(d, 0, 1); i++) {
          seq += 1;
          await emit({
            type: 'tool_call',
            id: `tool-${seq}`,
            name: 'Bash',
            input: { command: `echo step ${i + 1}` },
          });
          await emit({ type: 'tool_result', id: `tool-${seq}`, ok: true });
        }
        break;
      case 'silent':
        await sleep(intArg(d, 0, 0));
        break;
      case 'printenv': {
        const name = d.args[0] ?? '';
        await emit({ type: 'notice', text: `${name}=${process.env[name] ?? '(unset)'}` });
        break;
      }
      case 'abort':
        await new Promise<never>(() => setInterval(() => undefined, 60_000));
        break;
      case 'error':
        process.stderr.write(`mock: fatal: ${d.rest || 'error directive'}\n`);
        return 1;
      case 'crash': {
        const marker = path.join(process.cwd(), '.orchestrator', 'mock-crashed');
        if (d.args[0] === 'once' && existsSync(marker)) break;
        mkdirSync(path.dirname(marker), { recursive: true });
        writeFileSync(marker, `${Date.now()}\n`);
        await emit({ type: 'message', id: `req-${runTag}-${++seq}`, model, text: 'working…' });
        process.stderr.write('mock: crashing mid-stream\n');
        return 3;
      }
      case 'exit':
        return intArg(d, 0, 0);
      case 'ok':
        await emit({ type: 'result', status: 'success', text: d.rest || 'done' });
        return 0;
      case 'blocked':
        await emit({
          type: 'result',
          status: 'success',
          text: `BLOCKED: ${d.rest || 'needs a human decision'}`,
        });
        return 0;
      default:
        await emit({ type: 'notice', text: `unknown directive !${d.name}` });
    }
  }
  return 0;
}

pidLog('start');
// A stop the orchestrator asks for (SIGTERM) is recorded too; a SIGKILL cannot be.
process.once('SIGTERM', () => {
  pidLog('stop');
  process.exit(143);
});
main().then(
  (code) => {
    pidLog('stop');
    process.exitCode = code;
  },
  (error: unknown) => {
    pidLog('stop');
    process.stderr.write(`mock: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 70;
  },
);
