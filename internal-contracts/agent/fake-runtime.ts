/**
 * Fake agent runtimes for adapter and skeleton tests, built from a scenario
 * written in TypeScript rather than as a shell script. `fakeRuntime` writes the
 * scenario as JSON beside a small executable node launcher (plain JS, no
 * dependencies) that plays it: lines on stdout and stderr, pauses, a hang, an
 * exit status, a signal, a leftover grandchild. Each invocation is recorded
 * (argv, cwd, env, stdin) so a test can see what the adapter launched and how
 * often, and a scenario can answer its n-th invocation differently.
 *
 * The executable's path works as `agent.command` for any kind whose launch
 * takes a command: the mock and echo kinds give it the prompt on stdin, and a
 * scenario writes their built-in stream (`src/agent/mock/stream.ts`) itself.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** One thing the fake does, in order. */
export type FakeStep =
  /** Writes the text to stdout as one line (a newline is added unless it ends with one). */
  | { stdout: string }
  /** Writes the text to stderr as one line. */
  | { stderr: string }
  | { sleepMs: number }
  /** Stays alive, silent, until killed. */
  | { hang: true }
  /** Exits with this status; the steps after it never run. */
  | { exit: number }
  /** Kills itself with this signal (a crash the orchestrator did not cause). */
  | { kill: NodeJS.Signals }
  /**
   * Starts a sleeping child in the fake's own process group and appends its pid to
   * `pidFile` (default `<executable>.grandchildren`, read with `fakeGrandchildPids`).
   * With `holdOutput` the child inherits stdout and stderr, so they stay open after
   * the fake exits.
   */
  | { spawnGrandchild: true; pidFile?: string; holdOutput?: boolean }
  /** Writes everything the fake read on stdin to this file. */
  | { readStdinTo: string };

export interface FakeScenario {
  /** Played on every invocation. Give this or `turns`. */
  steps?: FakeStep[];
  /** Invocation n (0-based, across the fake's life) plays `turns[n]`; later invocations repeat the last list. */
  turns?: FakeStep[][];
  /** Where each invocation is appended as a JSON line; default `<executable>.log.jsonl`. */
  recordTo?: string;
}

/** What one invocation of a fake saw. */
export interface FakeInvocation {
  /** 0-based, in start order. */
  invocation: number;
  pid: number;
  /** The arguments after the executable. */
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  stdin: string;
}

/** What the launcher reads: the scenario with every path resolved. */
interface ScenarioFile {
  turns: FakeStep[][];
  recordTo: string;
  counterFile: string;
  grandchildFile: string;
}

/** The launcher every fake runs; it reads `<itself>.scenario.json`. */
const LAUNCHER = `#!/usr/bin/env node
// A fake agent runtime written by internal-contracts/agent/fake-runtime.ts.
// It plays the scenario in the JSON file beside it; see FakeStep there.
import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const self = fileURLToPath(import.meta.url);
const scenario = JSON.parse(readFileSync(self + '.scenario.json', 'utf8'));
appendFileSync(scenario.counterFile, '.');
const invocation = statSync(scenario.counterFile).size - 1;
const steps = scenario.turns[Math.min(invocation, scenario.turns.length - 1)] ?? [];
const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const stdin = Buffer.concat(chunks).toString('utf8');
const record = { invocation, pid: process.pid, argv: process.argv.slice(2), cwd: process.cwd(), env: process.env, stdin };
appendFileSync(scenario.recordTo, JSON.stringify(record) + '\\n');

const line = (text) => (text.endsWith('\\n') ? text : text + '\\n');
const write = (stream, text) => new Promise((resolve) => stream.write(line(text), resolve));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const forever = () => new Promise(() => setInterval(() => undefined, 60_000));

for (const step of steps) {
  if ('stdout' in step) await write(process.stdout, step.stdout);
  else if ('stderr' in step) await write(process.stderr, step.stderr);
  else if ('sleepMs' in step) await sleep(step.sleepMs);
  else if ('hang' in step) await forever();
  else if ('exit' in step) process.exit(step.exit);
  else if ('kill' in step) {
    process.kill(process.pid, step.kill);
    await forever();
  } else if ('spawnGrandchild' in step) {
    const stdio = step.holdOutput ? ['ignore', 'inherit', 'inherit'] : 'ignore';
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => undefined, 600000)'], { stdio });
    appendFileSync(step.pidFile ?? scenario.grandchildFile, child.pid + '\\n');
    child.unref();
  } else if ('readStdinTo' in step) writeFileSync(step.readStdinTo, stdin);
  else throw new Error('fake runtime: unknown step ' + JSON.stringify(step));
}
process.exit(0);
`;

/**
 * Builds the fake executable `dir/name` for `scenario` and returns its absolute
 * path. Building it again with the same name replaces the scenario and starts the
 * invocation count and the log afresh.
 */
export function fakeRuntime(dir: string, name: string, scenario: FakeScenario): string {
  if ((scenario.steps === undefined) === (scenario.turns === undefined)) {
    throw new Error('fakeRuntime: give exactly one of steps and turns');
  }
  const turns = scenario.turns ?? [scenario.steps ?? []];
  if (turns.length === 0) throw new Error('fakeRuntime: turns is empty');
  mkdirSync(dir, { recursive: true });
  const executable = path.resolve(dir, name);
  // agent.command is split on whitespace, so a fake whose path has a space could not be launched.
  if (/\s/.test(executable)) throw new Error(`fakeRuntime: the path ${executable} contains whitespace`);
  const file: ScenarioFile = {
    turns,
    recordTo: path.resolve(scenario.recordTo ?? `${executable}.log.jsonl`),
    counterFile: `${executable}.invocations`,
    grandchildFile: `${executable}.grandchildren`,
  };
  writeFileSync(`${executable}.scenario.json`, `${JSON.stringify(file, null, 2)}\n`);
  writeFileSync(file.recordTo, '');
  writeFileSync(file.counterFile, '');
  writeFileSync(file.grandchildFile, '');
  writeFileSync(executable, LAUNCHER);
  chmodSync(executable, 0o755);
  return executable;
}

function scenarioOf(executable: string): ScenarioFile {
  return JSON.parse(readFileSync(`${executable}.scenario.json`, 'utf8')) as ScenarioFile;
}

/** Every recorded invocation of the fake at `executable`, in start order. */
export function fakeInvocations(executable: string): FakeInvocation[] {
  const log = scenarioOf(executable).recordTo;
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as FakeInvocation)
    .sort((a, b) => a.invocation - b.invocation);
}

/** Pids of the grandchildren the fake started with the default pid file. */
export function fakeGrandchildPids(executable: string): number[] {
  const file = scenarioOf(executable).grandchildFile;
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map(Number);
}
