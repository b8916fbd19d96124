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
 *   !printenv <name>        a notice `<name>=<value>` (`(unset)` when it is not set)
 *   !write <path> <text>    writes <text> and a newline to <path> inside the workspace (`\n` in
 *                           the text is a newline); an absolute path, one out of the workspace or
 *                           into `.git` is refused with a notice
 *   !commit <message>       `git add -A` (but `.orchestrator/`) and `git commit -q -m <message>`; a
 *                           missing user identity is mock-agent's; nothing to commit, or a git
 *                           failure, is a notice and the turn goes on
 *   !status <word>          writes <word> to `.orchestrator/status` (a status signal)
 *   !verdict <w1> [w2 …]    review prompts only: the n-th review of this workspace (counted in
 *                           `.orchestrator/mock-verdict-count`) writes verdict w_n (the last word
 *                           once n passes the list), with one issue when it is `iterate`, to the
 *                           file the prompt names (`.orchestrator/review_verdict.json` by default)
 *   !fix <directive>        fix prompts only: runs <directive> (`!fix write a.txt x`, `!fix commit x`)
 * A prompt with no directive at all replays the directives of the session's first
 * prompt that had any, as a real agent's thread still holds its task when a
 * continuation turn says only "continue"; with none remembered it behaves as `!ok`.
 *
 * The self-review loop's prompts are told apart by their first line (see `promptPurpose`). A
 * review prompt runs only its `!verdict` and `!usage` lines, a fix prompt only its `!fix` ones
 * (and `!usage`), each then ending with a success result; either takes the session's remembered
 * directives when it has no `!verdict` (`!fix`) of its own, and neither is remembered. Any other
 * prompt runs everything but `!verdict` and `!fix`.
 */
import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import {
  type Directive,
  type PromptPurpose,
  parseDirectives,
  promptPurpose,
  verdictPathIn,
} from './directives.js';

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

function threadFile(sessionId: string): string {
  return path.join(
    process.cwd(),
    '.orchestrator',
    'mock-threads',
    `${sessionId.replace(/[^A-Za-z0-9._-]/g, '_')}.json`,
  );
}

/**
 * The session's memory, kept in the workspace: the first directives it was given are stored,
 * and a prompt without any gets them back. Only work prompts come here: a review or fix prompt
 * must not become what a later "continue" replays.
 */
function threadDirectives(sessionId: string, given: Directive[]): Directive[] {
  if (given.length === 0) return recallThread(sessionId);
  const file = threadFile(sessionId);
  // The memory is a convenience: a workspace it cannot write to (another user's) or a
  // damaged file must not fail the turn, only lose the replay.
  try {
    if (!existsSync(file)) {
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, JSON.stringify(given));
    }
  } catch {
    // Not remembered.
  }
  return given;
}

function recallThread(sessionId: string): Directive[] {
  try {
    const file = threadFile(sessionId);
    return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Directive[]) : [];
  } catch {
    return [];
  }
}

const OK: Directive = { name: 'ok', args: [], rest: '' };

/**
 * The directives a turn runs, by what its prompt is for. A review (fix) prompt uses its own
 * `!verdict` (`!fix`) lines, or the remembered ones when it has none, and always ends in `!ok`.
 */
function turnDirectives(purpose: PromptPurpose, prompt: string, sessionId: string): Directive[] {
  const given = parseDirectives(prompt);
  if (purpose === 'work') {
    const all = threadDirectives(sessionId, given).filter((d) => d.name !== 'verdict' && d.name !== 'fix');
    return all.length > 0 ? all : [OK];
  }
  const own = purpose === 'review' ? 'verdict' : 'fix';
  const source = given.some((d) => d.name === own) ? given : recallThread(sessionId);
  const picked = source.flatMap((d): Directive[] => {
    if (d.name === 'usage') return [d];
    if (d.name !== own) return [];
    if (own === 'verdict') return [d];
    const inner = parseDirectives(d.rest.startsWith('!') ? d.rest : `!${d.rest}`);
    return inner.length > 0 ? inner : [{ name: 'fix', args: [], rest: '' }];
  });
  return [...picked, OK];
}

/** The last `max` characters of a process's message, on one line. */
function tail(text: string, max = 400): string {
  const one = text.trim().replace(/\s*\n\s*/g, ' | ');
  return one.length > max ? `…${one.slice(-max)}` : one;
}

function lstatOrNull(file: string) {
  try {
    return lstatSync(file);
  } catch {
    return null;
  }
}

/** Why `rel` is no file the runtime may write, or null when it is one (inside the cwd, not in `.git`). */
function refusePath(rel: string): string | null {
  if (rel === '') return 'no path given';
  if (path.isAbsolute(rel)) return `${rel} is an absolute path`;
  const root = process.cwd();
  const outside = (inside: string) =>
    inside === '' || inside === '..' || inside.startsWith(`..${path.sep}`) || path.isAbsolute(inside);
  const inGit = (inside: string) => inside.split(path.sep).some((part) => part.toLowerCase() === '.git');
  const file = path.resolve(root, rel);
  const inside = path.relative(root, file);
  if (outside(inside)) return `${rel} is outside the workspace`;
  if (inGit(inside)) return `${rel} is inside .git`;
  // A symlink on the way must not lead out of the workspace (or into .git) either: the path is
  // judged by where its deepest existing part really is (a broken link is refused).
  let existing = file;
  while (lstatOrNull(existing) === null && existing !== root) existing = path.dirname(existing);
  let real: string;
  try {
    real = path.join(realpathSync(existing), path.relative(existing, file));
  } catch {
    return `${rel} passes a broken symlink`;
  }
  const realRoot = realpathSync(root);
  const realInside = path.relative(realRoot, real);
  if (outside(realInside)) return `${rel} leads outside the workspace`;
  if (inGit(realInside)) return `${rel} leads into .git`;
  return null;
}

/** Writes `text` to `rel` in the workspace, making its folders; a notice's text when it cannot. */
function writeWorkspaceFile(rel: string, text: string, directive: string): string | null {
  const refused = refusePath(rel);
  if (refused !== null) return `!${directive} refused: ${refused}`;
  try {
    const file = path.resolve(process.cwd(), rel);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
    return null;
  } catch (error) {
    return `!${directive} failed: ${error instanceof Error ? error.message : String(error)}`;
  }
}

function writeDirective(d: Directive): string | null {
  const rel = d.args[0] ?? '';
  const text = d.rest.slice(rel.length).replace(/^\s+/, '').replace(/\\n/g, '\n');
  return writeWorkspaceFile(rel, `${text}\n`, 'write');
}

function git(args: string[]) {
  const ran = spawnSync('git', args, { cwd: process.cwd(), encoding: 'utf8' });
  return {
    status: ran.status,
    output: ran.error ? ran.error.message : `${ran.stderr ?? ''}\n${ran.stdout ?? ''}`,
  };
}

/** `git add -A` and `git commit`; a notice's text when nothing was committed. */
function commitDirective(d: Directive): string | null {
  const message = d.rest || 'mock-agent commit';
  // The orchestrator's folder is git-ignored in a prepared workspace; the mock keeps its own
  // files (thread memory, counters) out of a commit even where it is not.
  const added = git(['add', '-A', '--', '.', ':(exclude).orchestrator']);
  if (added.status !== 0) return `!commit: git add failed: ${tail(added.output)}`;
  const staged = git(['diff', '--cached', '--quiet']);
  if (staged.status === 0) return '!commit: nothing to commit';
  if (staged.status !== 1) return `!commit: git diff failed: ${tail(staged.output)}`;
  const identity: string[] = [];
  if (git(['config', '--get', 'user.name']).status !== 0) identity.push('-c', 'user.name=mock-agent');
  if (git(['config', '--get', 'user.email']).status !== 0)
    identity.push('-c', 'user.email=mock-agent@localhost');
  const committed = git([...identity, 'commit', '-q', '-m', message]);
  if (committed.status !== 0) return `!commit: git commit failed: ${tail(committed.output)}`;
  return null;
}

function statusDirective(d: Directive): string | null {
  const word = d.args[0];
  if (word === undefined) return '!status: no word given';
  return writeWorkspaceFile(path.join('.orchestrator', 'status'), `${word}\n`, 'status');
}

const DEFAULT_VERDICT_PATH = '.orchestrator/review_verdict.json';

/** Writes this review's verdict: the n-th review of the workspace takes the n-th word (or the last). */
function verdictDirective(d: Directive, prompt: string): string | null {
  if (d.args.length === 0) return '!verdict: no verdict word given';
  const countFile = path.join(process.cwd(), '.orchestrator', 'mock-verdict-count');
  let n = 1;
  try {
    const before = Number.parseInt(readFileSync(countFile, 'utf8'), 10);
    if (Number.isInteger(before) && before >= 0) n = before + 1;
  } catch {
    // No review yet in this workspace.
  }
  const counted = writeWorkspaceFile(path.relative(process.cwd(), countFile), `${n}\n`, 'verdict');
  if (counted !== null) return counted;
  const word = d.args[Math.min(n, d.args.length) - 1] as string;
  const verdict = {
    verdict: word,
    summary: `mock review ${n}`,
    issues:
      word === 'iterate' ? [{ file: null, line: null, severity: 'major', message: `mock issue ${n}` }] : [],
  };
  return writeWorkspaceFile(
    verdictPathIn(prompt) ?? DEFAULT_VERDICT_PATH,
    `${JSON.stringify(verdict, null, 2)}\n`,
    'verdict',
  );
}

async function main(): Promise<number> {
  const prompt = readFileSync(0, 'utf8');
  const model = process.env.ORCHESTRATOR_MOCK_MODEL || 'mock-model';
  const lineDelayMs = Number(process.env.ORCHESTRATOR_MOCK_LINE_DELAY_MS || 0);
  const sessionId = process.env.ORCHESTRATOR_MOCK_SESSION_ID || `mock-${process.pid}-${Date.now()}`;
  const purpose = promptPurpose(prompt);
  const directives = turnDirectives(purpose, prompt, sessionId);

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
      case 'write':
      case 'commit':
      case 'status': {
        const run = { write: writeDirective, commit: commitDirective, status: statusDirective }[d.name];
        const notice = run(d);
        if (notice !== null) await emit({ type: 'notice', text: notice });
        break;
      }
      case 'verdict': {
        const notice =
          purpose === 'review' ? verdictDirective(d, prompt) : '!verdict acts only on a review prompt';
        if (notice !== null) await emit({ type: 'notice', text: notice });
        break;
      }
      case 'fix':
        // Only a `!fix` with nothing (or another `!fix`/`!verdict`) to run gets here.
        await emit({ type: 'notice', text: `!fix ${d.rest}: nothing it can run` });
        break;
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
