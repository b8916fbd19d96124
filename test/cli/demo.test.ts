/**
 * `make demo` (what `make run` runs once it has built) as a person sees it: under a pseudo-
 * terminal made by `script`, so the logs take their terminal form. The transcript must stay
 * short enough to read (it was 425 lines: a field per line and a `tick completed` every poll),
 * end with the table of where each issue ended and why, and then keep the dashboard up until
 * Ctrl-C. Without a terminal (CI, a pipe) the target must end by itself.
 *
 * The demo runs in a copy of the files it reads (Makefile, WORKFLOW.example.md and the issues),
 * with dist/ linked in, so it never touches the checkout's own .orchestrator/demo.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, REPO_ROOT } from '../support/cli.js';
import { freePort } from '../support/ports.js';

const has = (command: string) => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
const skip = !has('make')
  ? 'make is not installed'
  : !has('script')
    ? 'script (util-linux) is not installed'
    : null;
if (skip !== null) process.stderr.write(`demo tests skipped: ${skip}\n`);

/** Lines as a terminal shows them: colours and carriage returns gone. */
function plainLines(text: string): string[] {
  const plain = text.replace(/\u001b\[[0-9;]*m/g, '').replaceAll('\r', '');
  return plain.split('\n').filter((line, i, all) => i < all.length - 1 || line !== '');
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A directory holding what `make demo` reads, with the built CLI linked in. */
function demoDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'orch-demo-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(path.join(dir, 'testdata'));
  for (const file of ['Makefile', 'WORKFLOW.example.md', 'testdata/issues.example.json']) {
    copyFileSync(path.join(REPO_ROOT, file), path.join(dir, file));
  }
  symlinkSync(path.join(REPO_ROOT, 'dist'), path.join(dir, 'dist'));
  return dir;
}

/** Starts `command` in `dir`; `output()` is what it wrote so far, `exited` its exit code. */
function start(command: string, args: string[], dir: string, port: number) {
  const child: ChildProcess = spawn(command, args, {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/root',
      ORCHESTRATOR_SERVER_PORT: String(port),
    },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  cleanups.push(() => {
    if (child.exitCode === null && child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
  });
  return { child, output: () => output, exited };
}

async function waitFor(what: string, check: () => boolean, timeoutMs: number, explain: () => string) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${explain()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The closing table's row of `identifier`, as [state, attempt, why]. */
function row(lines: readonly string[], identifier: string): string[] {
  const line = lines.findLast((l) => l.startsWith(`${identifier} `));
  const match = line === undefined ? null : /^\S+\s+(.+?)\s{2,}(\d+|-)\s{2}(.+)$/.exec(line);
  return match === null ? [] : [match[1] ?? '', match[2] ?? '', match[3] ?? ''];
}

function expectClosingTable(lines: readonly string[]): void {
  expect(row(lines, 'DEMO-1')).toEqual(['Review', '1', 'handed off to Review']);
  expect(row(lines, 'DEMO-2')).toEqual(['Review', '2', 'handed off to Review']);
  expect(row(lines, 'DEMO-3').slice(0, 2)).toEqual(['Blocked', '1']);
  expect(row(lines, 'DEMO-3')[2]).toContain('answer');
  expect(row(lines, 'DEMO-4')).toEqual(['In Progress', '2', 'session budget 2 of 2']);
  expect(row(lines, 'DEMO-5')).toEqual(['In Progress', '1', 'token budget 60,000 of 50,000']);
  expect(row(lines, 'DEMO-6')).toEqual(['Todo', '-', 'waiting on DEMO-1']);
}

describe.skipIf(skip !== null)('make demo', () => {
  beforeAll(() => ensureBuilt(), 240_000);

  it('on a terminal: under 80 lines, one per event, ending with why each issue ended where it did; the dashboard then stays up until Ctrl-C', {
    timeout: 240_000,
  }, async () => {
    const dir = demoDir();
    const port = await freePort();
    const demo = start('script', ['-qec', 'make --no-print-directory demo', '/dev/null'], dir, port);
    const stayLine = 'until Ctrl-C';
    await waitFor(
      'the closing table (or the end of the demo)',
      () => demo.output().includes(stayLine) || demo.child.exitCode !== null,
      180_000,
      demo.output,
    );
    expect(demo.output(), 'the demo ended before it kept the dashboard up').toContain(stayLine);

    const lines = plainLines(demo.output());
    const shown = lines.slice(0, lines.findIndex((l) => l.includes(stayLine)) + 1);
    expect(shown.length, shown.join('\n')).toBeLessThan(80);
    // One line per event: no field on a line of its own, no tick every poll, one validate report.
    expect(shown.filter((l) => /^\s+\w+: /.test(l))).toEqual([]);
    expect(shown.filter((l) => l.includes('tick completed'))).toEqual([]);
    expect(shown.filter((l) => l.endsWith('0 errors, 0 warnings'))).toHaveLength(1);
    expect(shown.some((l) => l.includes('--keep-serving'))).toBe(true);
    // The table closes the transcript: its heading, one row per issue, then where the dashboard is.
    const heading = shown.findIndex((l) => /^Issue\s+State\s+Attempt\s+Why it ended there$/.test(l));
    expect(heading, shown.join('\n')).toBe(shown.length - 8);
    expectClosingTable(shown);
    expect(shown.at(-1)).toBe(`The dashboard stays up at http://127.0.0.1:${port}/ until Ctrl-C.`);

    const page = await fetch(`http://127.0.0.1:${port}/api/v1/state`);
    expect(page.status).toBe(200);
    expect(demo.child.exitCode).toBeNull();

    demo.child.stdin?.write('\u0003');
    const code = await Promise.race([
      demo.exited,
      new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 30_000)),
    ]);
    expect(code, demo.output()).not.toBe('running');
    expect(plainLines(demo.output()).some((l) => l.includes('orchestrator stopped'))).toBe(true);
    await expect(fetch(`http://127.0.0.1:${port}/api/v1/state`)).rejects.toThrow();
  });

  it('the build prints nothing: the validate run that writes the code cache stays quiet, so `make run` shows one validate report', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'orch-bundle-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    cpSync(path.join(REPO_ROOT, 'dist'), path.join(dir, 'dist'), { recursive: true });
    mkdirSync(path.join(dir, 'scripts'));
    copyFileSync(
      path.join(REPO_ROOT, 'scripts', 'bundle-cli.mjs'),
      path.join(dir, 'scripts', 'bundle-cli.mjs'),
    );
    copyFileSync(path.join(REPO_ROOT, 'WORKFLOW.example.md'), path.join(dir, 'WORKFLOW.example.md'));
    symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    const bundle = spawnSync(process.execPath, [path.join(dir, 'scripts', 'bundle-cli.mjs')], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(bundle.status, bundle.stderr).toBe(0);
    expect(bundle.stdout).toBe('');
    expect(bundle.stderr).toBe('');
  });

  it('without a terminal: the same table, then the target ends by itself with the dashboard closed', {
    timeout: 240_000,
  }, async () => {
    const dir = demoDir();
    const port = await freePort();
    const demo = start('make', ['--no-print-directory', 'demo'], dir, port);
    const code = await Promise.race([
      demo.exited,
      new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 180_000)),
    ]);
    expect(code, demo.output()).toBe(0);
    const lines = plainLines(demo.output());
    expect(lines.some((l) => l.includes('--keep-serving'))).toBe(false);
    expect(lines.at(-7)).toMatch(/^Issue\s+State\s+Attempt\s+Why it ended there$/);
    expectClosingTable(lines);
  });
});
