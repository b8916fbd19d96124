/**
 * Running a pinned agent CLI headless, straight from a test, before any adapter
 * exists for it: where scripts/install-agent-clis.sh put it, whether a file may
 * skip without it, one run whose stdin is closed at once or after the prompt (some
 * CLIs read stdin to its end and wait forever on an open pipe) in its own process
 * group (so a timeout kills the tools it started too), and the recordings a run
 * leaves for the parsers' tests.
 *
 * Recordings are written only when RECORD_AGENT_CLIS=1 is set, so an ordinary run
 * never rewrites checked-in files.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from './cli.js';
import type { RecordedRequest } from './fake-model/server.js';

/** Where scripts/install-agent-clis.sh installs the CLIs (AGENT_CLIS_DIR overrides it, as in the script). */
export const AGENT_CLIS_DIR = process.env.AGENT_CLIS_DIR ?? path.join(REPO_ROOT, '.cache', 'agent-clis');

/** The executable the install script links for CLI `name` (its folder) and `bin`. */
export function pinnedCliBin(name: string, bin: string): string {
  return path.join(AGENT_CLIS_DIR, name, 'node_modules', '.bin', bin);
}

/**
 * Whether a real-CLI file runs: the CLI is installed → run; absent outside CI →
 * skip with the reason; absent in CI (which runs the install script) → run and fail.
 */
export function pinnedCliPlan(name: string, bin: string): { run: boolean; reason: string | null } {
  const file = pinnedCliBin(name, bin);
  if (existsSync(file)) return { run: true, reason: null };
  const reason = `${file} is not installed (run scripts/install-agent-clis.sh ${name})`;
  return { run: process.env.CI !== undefined && process.env.CI !== '', reason };
}

export interface HeadlessRun {
  /** Exactly what the CLI wrote to stdout. */
  stdout: string;
  stderr: string;
  /** null when a signal ended it. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** True when the run outlived `timeoutMs` and we killed its process group. */
  timedOut: boolean;
  wallMs: number;
}

export interface HeadlessOptions {
  cwd: string;
  /** The whole environment: nothing is inherited. */
  env: Record<string, string>;
  timeoutMs: number;
  /** Written to stdin, which is then closed; without it stdin is closed from the start. */
  stdin?: string;
}

/** Runs `bin args` to its end, stdin closed after `opts.stdin`; never rejects for a failing CLI. */
export function runHeadless(
  bin: string,
  args: readonly string[],
  opts: HeadlessOptions,
): Promise<HeadlessRun> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      cwd: opts.cwd,
      env: opts.env,
      stdio: [opts.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      detached: true,
    });
    child.stdin?.on('error', () => {
      // A CLI that exits without reading its input closes the pipe: its exit says what happened.
    });
    child.stdin?.end(opts.stdin);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (b: Buffer) => out.push(b));
    child.stderr?.on('data', (b: Buffer) => err.push(b));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, opts.timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (exitCode, signal) => {
      clearTimeout(timer);
      // Tools the CLI left behind go with it.
      killGroup(child.pid);
      resolve({
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        exitCode,
        signal,
        timedOut,
        wallMs: Date.now() - started,
      });
    });
  });
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // The group is already gone.
  }
}

/** The JSON objects of a JSON-lines text; lines that are not JSON objects are skipped. */
export function jsonLines(text: string): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const value: unknown = JSON.parse(line);
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
        lines.push(value as Record<string, unknown>);
      }
    } catch {
      // Plain-text lines are the CLI's business; the parsers keep them as raw log lines.
    }
  }
  return lines;
}

/** True when this run should rewrite the checked-in recordings. */
export const RECORDING = process.env.RECORD_AGENT_CLIS === '1';

/** One run to record, with what its meta file says about it. */
export interface RecordingInput {
  run: HeadlessRun;
  /** What the fake model server saw. */
  requests: readonly RecordedRequest[];
  /** The npm package and the exact version that produced the output. */
  package: string;
  version: string;
  /** The argv after the executable. */
  args: readonly string[];
  /** What the run wrote to stdin, if anything. */
  stdin?: string;
  /** The environment given to the CLI (its secrets are dummies). */
  env: Record<string, string>;
  /** Run-specific strings (paths, the server URL) and the placeholders that stand for them in args, env and stderr. */
  placeholders: Record<string, string>;
  /** What the fake model server answered, call by call, in words. */
  served: readonly string[];
  /** More files to write beside the output: name → content, written as is. */
  extra?: Record<string, string>;
}

/**
 * Writes `<dir>/<name>.jsonl` (stdout byte for byte), `<name>.stderr.txt` (with
 * this machine's paths replaced) and `<name>.meta.json` (how the CLI was run, what
 * the fake served and saw, the exit).
 */
export function writeRecording(dir: string, name: string, input: RecordingInput): void {
  mkdirSync(dir, { recursive: true });
  const { run } = input;
  const placeholders = { [REPO_ROOT]: '<repo>', ...input.placeholders };
  writeFileSync(path.join(dir, `${name}.jsonl`), run.stdout);
  writeFileSync(path.join(dir, `${name}.stderr.txt`), withPlaceholders(run.stderr, placeholders));
  const meta = {
    package: input.package,
    version: input.version,
    args: input.args.map((a) => withPlaceholders(a, placeholders)),
    ...(input.stdin === undefined ? {} : { stdin: input.stdin }),
    env: JSON.parse(withPlaceholders(JSON.stringify(input.env), placeholders)) as unknown,
    served: input.served,
    requests: input.requests.map((r) => `${r.method} ${r.path}`),
    exitCode: run.exitCode,
    signal: run.signal,
  };
  writeFileSync(path.join(dir, `${name}.meta.json`), `${JSON.stringify(meta, null, 2)}\n`);
  for (const [file, content] of Object.entries(input.extra ?? {})) {
    writeFileSync(path.join(dir, file), content);
  }
}

/** Replaces every occurrence of each key of `placeholders` in `text` with its value. */
export function withPlaceholders(text: string, placeholders: Record<string, string>): string {
  let out = text;
  // Longest first, so a path is replaced before a path it contains.
  for (const key of Object.keys(placeholders).sort((a, b) => b.length - a.length)) {
    out = out.split(key).join(placeholders[key] ?? key);
  }
  return out;
}

/**
 * A scratch folder for one test file, made on the first `dir(name)` (a skipped file
 * leaves nothing behind); `dir(name)` makes a fresh folder inside it.
 */
export function scratchRoot(prefix: string): { dir(name: string): string; cleanup(): void } {
  let root: string | null = null;
  let n = 0;
  return {
    dir(name) {
      root ??= mkdtempSync(path.join(os.tmpdir(), prefix));
      const dir = path.join(root, `${name}-${++n}`);
      mkdirSync(dir, { recursive: true });
      return dir;
    },
    cleanup() {
      if (root !== null) rmSync(root, { recursive: true, force: true });
    },
  };
}

/**
 * The case every real-CLI proof runs: the model asks for one shell call writing
 * `hi` to out.txt in the working directory, then answers with a final text. Each
 * call reports different figures, so a parser that counts one call twice, or
 * keeps only the last, shows in the totals.
 */
export const TOOL_CASE = {
  prompt: 'Write hi to out.txt using the shell.',
  command: 'echo hi > out.txt',
  description: 'Write hi to out.txt',
  file: 'out.txt',
  fileContent: 'hi\n',
  toolText: 'I will write the file.',
  finalText: 'Done: wrote hi to out.txt.',
  /** Per call, in order: input tokens (cached included), output tokens, cached input tokens. */
  usage: [
    { input: 123, output: 45, cached: 7 },
    { input: 190, output: 21, cached: 120 },
  ],
  /** The figures a side request (a title, a check) reports, so they can be told apart. */
  sideUsage: { input: 31, output: 5, cached: 0 },
} as const;
