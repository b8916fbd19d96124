/**
 * The disposition contract: every adapter's turns end the way the one shared
 * rule (`decideTurn`) says, whatever its runtime's output format. The suite
 * builds fake runtimes that end a turn in each way the rule distinguishes (a
 * terminal report, the early-exit report, exit 127, a non-zero exit, a signal,
 * the work evidence, a bare exit 0) from lines the adapter supplies in its own
 * format, runs one real turn against each through the adapter, and checks the
 * exit reason, the error kind, the one outcome event, and that no event arrives
 * after `runTurn` resolved.
 */
import { AssertionError } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type {
  AgentAdapter,
  AgentEvent,
  AgentSession,
  ExitReason,
  TurnOutcome,
} from '../../src/domain/agent.js';
import type { AgentErrorKind } from '../../src/domain/errors.js';
import type { Issue } from '../../src/domain/issue.js';
import { SAMPLE_ISSUE } from '../../src/prompt/variables.js';
import { type FakeStep, fakeRuntime } from './fake-runtime.js';

export interface DispositionHarness {
  /** Starts a session of the adapter under test whose runtime is `command` (the absolute path of a fake). */
  startWith(command: string): Promise<{ adapter: AgentAdapter; session: AgentSession }>;
  /** The runtime's terminal success report: one stdout line in its own format. */
  successLine: string;
  /** A terminal failure report, and the error kind the adapter gives it. */
  failure?: { line: string; kind: AgentErrorKind };
  /**
   * Lines the runtime writes first that the adapter accepts but that show no work
   * (a session header). [] when the runtime has none; the bare-output case is then skipped.
   */
  preamble: string[];
  /**
   * Lines that are work evidence under the signals the kind declares, with no
   * terminal report among them; null when the kind observes no work signal (its
   * clean exit after output must then be a failed turn).
   */
  workLines: string[] | null;
  /** The prompt of each turn; default "disposition contract". */
  prompt?: string;
  issue?: Issue;
}

interface Expectation {
  exitReason: ExitReason;
  /** null = no error. */
  kind: AgentErrorKind | null;
  /** Text the error message must contain. */
  messageIncludes?: string;
}

export interface DispositionCase {
  name: string;
  steps: FakeStep[];
  want: Expectation;
}

export interface DispositionCaseResult {
  name: string;
  outcome: TurnOutcome | null;
  events: AgentEvent[];
  problems: string[];
}

const OUTCOME_EVENTS: ReadonlySet<string> = new Set([
  'turn_completed',
  'turn_failed',
  'turn_cancelled',
  'turn_input_required',
]);

const out = (lines: readonly string[]): FakeStep[] => lines.map((stdout) => ({ stdout }));

/** The cases the suite runs for `harness`, each a fake runtime and what the shared rule makes of it. */
export function dispositionCases(harness: DispositionHarness): DispositionCase[] {
  const preamble = out(harness.preamble);
  const work = out(harness.workLines ?? []);
  const cases: DispositionCase[] = [
    {
      name: 'a terminal success report wins over a non-zero exit',
      steps: [...preamble, ...work, { stdout: harness.successLine }, { exit: 1 }],
      want: { exitReason: 'turn_completed', kind: null },
    },
    {
      name: 'exit 0 with no output at all is the early-exit report, not a success',
      steps: [{ exit: 0 }],
      want: { exitReason: 'turn_failed', kind: 'port_exit' },
    },
    {
      name: 'exit 1 before any output is the early-exit report carrying the runtime stderr',
      steps: [{ stderr: 'fake: cannot start: bad flag' }, { exit: 1 }],
      want: { exitReason: 'turn_failed', kind: 'port_exit', messageIncludes: 'fake: cannot start: bad flag' },
    },
    {
      name: 'exit 127 is agent_not_found (released, not retried)',
      steps: [{ stderr: 'fake: command not found' }, { exit: 127 }],
      want: { exitReason: 'turn_failed', kind: 'agent_not_found' },
    },
    {
      name: 'a signal death after output is port_exit naming the signal',
      steps: [...preamble, ...work, { kill: 'SIGKILL' }],
      want: { exitReason: 'turn_failed', kind: 'port_exit', messageIncludes: 'SIGKILL' },
    },
    {
      name: 'a non-zero exit after work without a terminal report is port_exit, whatever the work',
      steps: [...preamble, ...work, { exit: 2 }],
      want: { exitReason: 'turn_failed', kind: 'port_exit' },
    },
  ];
  if (harness.failure !== undefined) {
    cases.push({
      name: 'a terminal failure report wins over work and exit 0',
      steps: [...preamble, ...work, { stdout: harness.failure.line }, { exit: 0 }],
      want: { exitReason: 'turn_failed', kind: harness.failure.kind },
    });
  }
  if (harness.workLines !== null) {
    cases.push({
      name: 'output that shows work, then exit 0 without a terminal report, completes on the work evidence',
      steps: [...preamble, ...work, { exit: 0 }],
      want: { exitReason: 'turn_completed', kind: null },
    });
  }
  const quiet = harness.workLines === null ? [...preamble, ...work] : preamble;
  if (quiet.length > 0) {
    cases.push({
      name: 'accepted output without work or a terminal report, then exit 0, fails (exit 0 alone is never success)',
      steps: [...quiet, { exit: 0 }],
      want: { exitReason: 'turn_failed', kind: 'turn_failed' },
    });
  }
  return cases;
}

async function runCase(
  harness: DispositionHarness,
  c: DispositionCase,
  dir: string,
  index: number,
): Promise<DispositionCaseResult> {
  const problems: string[] = [];
  const events: AgentEvent[] = [];
  const command = fakeRuntime(path.join(dir, `case-${index}`), 'fake-agent', { steps: c.steps });
  let outcome: TurnOutcome | null = null;
  let started: { adapter: AgentAdapter; session: AgentSession } | null = null;
  let returned = false;
  try {
    started = await harness.startWith(command);
    outcome = await started.adapter.runTurn(started.session, {
      prompt: harness.prompt ?? 'disposition contract',
      issue: harness.issue ?? SAMPLE_ISSUE,
      onEvent: (e) => {
        if (returned) problems.push(`event ${e.type} arrived after runTurn resolved`);
        events.push(e);
      },
      signal: new AbortController().signal,
    });
    returned = true;
  } catch (error) {
    problems.push(`the turn threw instead of returning an outcome: ${String(error)}`);
  } finally {
    if (started !== null) await started.adapter.stopSession(started.session).catch(() => undefined);
  }
  if (outcome === null) return { name: c.name, outcome, events, problems };

  const got = `${outcome.result.exitReason}/${outcome.error?.kind ?? 'no error'}`;
  const want = `${c.want.exitReason}/${c.want.kind ?? 'no error'}`;
  if (got !== want) {
    problems.push(`expected ${want}, got ${got}${outcome.error ? ` (${outcome.error.detail})` : ''}`);
  }
  if (
    c.want.messageIncludes !== undefined &&
    !(outcome.error?.detail ?? '').includes(c.want.messageIncludes)
  ) {
    problems.push(
      `the error message ${JSON.stringify(outcome.error?.detail ?? '')} lacks "${c.want.messageIncludes}"`,
    );
  }
  if ((outcome.error === undefined) !== (outcome.result.exitReason === 'turn_completed')) {
    problems.push(
      `exit reason ${outcome.result.exitReason} paired with ${outcome.error ? 'an' : 'no'} error`,
    );
  }
  const terminal = events.filter((e) => OUTCOME_EVENTS.has(e.type));
  if (terminal.length !== 1) {
    problems.push(
      `expected exactly one outcome event, got ${terminal.map((e) => e.type).join(', ') || 'none'}`,
    );
  } else {
    const [only] = terminal as [AgentEvent];
    if (only.type !== outcome.result.exitReason) {
      problems.push(`the outcome event is ${only.type} but the result says ${outcome.result.exitReason}`);
    }
    if (only.type === 'turn_failed' && only.errorKind !== outcome.error?.kind) {
      problems.push(`the turn_failed event names ${only.errorKind} but the error is ${outcome.error?.kind}`);
    }
  }
  const wroteNothing = !c.steps.some((step) => 'stdout' in step);
  if (wroteNothing && outcome.result.usageMeasured) {
    problems.push(
      'a turn whose runtime wrote nothing reports usageMeasured true: its spend is unknown, and credential ' +
        'verification reads a measured turn as one that reached the model (so it never retries)',
    );
  }
  return { name: c.name, outcome, events, problems };
}

/**
 * Runs every disposition case against the adapter (concurrently, each with its
 * own fake) and throws an AssertionError naming each case the adapter gets wrong.
 * Returns the per-case results for further assertions.
 */
export async function assertDispositionContract(
  harness: DispositionHarness,
): Promise<DispositionCaseResult[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'disposition-contract-'));
  try {
    const cases = dispositionCases(harness);
    const results = await Promise.all(cases.map((c, i) => runCase(harness, c, dir, i)));
    const failed = results.filter((r) => r.problems.length > 0);
    if (failed.length > 0) {
      throw new AssertionError({
        message:
          `disposition contract: ${failed.length} of ${results.length} cases break the shared rule:\n` +
          failed.map((r) => `  - ${r.name}: ${r.problems.join('; ')}`).join('\n'),
      });
    }
    return results;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
