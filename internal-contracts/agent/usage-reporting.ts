/**
 * The usage-reporting contract: the events and result of real turns must agree
 * with the disposition the kind's registered usage sources derive. Nothing in an
 * adapter's own return values shows a kind that declares `incremental` arrival but
 * reports one figure after the work, or a figure that restarts at zero on turn 2;
 * this check does, against turns the adapter really ran.
 *
 * A run is one turn or the consecutive turns of one new session from its first
 * turn on, each with every event `onEvent` received and the outcome `runTurn`
 * returned.
 */
import { AssertionError } from 'node:assert';
import { agentKind } from '../../src/agent/registry.js';
import type { UsageDisposition } from '../../src/agent/usage/index.js';
import type { AgentEvent, TokenCounts, TurnOutcome } from '../../src/domain/agent.js';

export interface UsageRun {
  events: AgentEvent[];
  outcome: TurnOutcome;
}

type TokenUsageEvent = Extract<AgentEvent, { type: 'token_usage' }>;

const CLASSES = [
  'inputTokens',
  'outputTokens',
  'cacheReadTokens',
  'cacheWriteTokens',
  'totalTokens',
] as const;
/** Events that show the turn working; a figure reported during the turn comes before the last of them. */
const WORK_EVENTS: ReadonlySet<AgentEvent['type']> = new Set(['tool_result', 'notification']);
const OUTCOME_EVENTS: ReadonlySet<AgentEvent['type']> = new Set([
  'turn_completed',
  'turn_failed',
  'turn_cancelled',
  'turn_input_required',
]);

const fmt = (c: TokenCounts) =>
  `{in ${c.inputTokens}, out ${c.outputTokens}, cacheRead ${c.cacheReadTokens}, cacheWrite ${c.cacheWriteTokens}, total ${c.totalTokens}}`;

/** Classes in which `a` is below `b`. */
function below(a: TokenCounts, b: TokenCounts): string[] {
  return CLASSES.filter((k) => a[k] < b[k]);
}

function sameCounts(a: TokenCounts, b: TokenCounts): boolean {
  return CLASSES.every((k) => a[k] === b[k]);
}

function isZero(c: TokenCounts): boolean {
  return CLASSES.every((k) => c[k] === 0);
}

function sumOf(byModel: Record<string, TokenCounts>): TokenCounts {
  const sum: TokenCounts = {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    totalTokens: 0,
  };
  for (const counts of Object.values(byModel)) for (const k of CLASSES) sum[k] += counts[k];
  return sum;
}

function sameByModel(a: Record<string, TokenCounts>, b: Record<string, TokenCounts>): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) {
    const x = a[key];
    const y = b[key];
    if (x === undefined || y === undefined || !sameCounts(x, y)) return false;
  }
  return true;
}

/** Problems with one figure on its own: shape, totals, the per-model split. */
function checkFigure(
  where: string,
  usage: TokenCounts,
  byModel: Record<string, TokenCounts>,
  problems: string[],
): void {
  for (const k of CLASSES) {
    if (!Number.isInteger(usage[k]) || usage[k] < 0) {
      problems.push(`${where}: ${k} is ${usage[k]}, not a non-negative integer`);
    }
  }
  if (usage.totalTokens !== usage.inputTokens + usage.outputTokens) {
    problems.push(`${where}: totalTokens ${usage.totalTokens} is not input + output in ${fmt(usage)}`);
  }
  const over = below(usage, sumOf(byModel));
  if (over.length > 0) {
    problems.push(
      `${where}: usageByModel adds up to more than the total in ${over.join(', ')} ` +
        `(models ${fmt(sumOf(byModel))} > total ${fmt(usage)})`,
    );
  }
}

/**
 * Every way the run contradicts `disposition`, as messages; [] when it agrees.
 * Pure, so the rules themselves are tested on synthetic runs.
 */
export function checkUsageReporting(
  disposition: UsageDisposition,
  run: UsageRun | readonly UsageRun[],
): string[] {
  const turns: readonly UsageRun[] = Array.isArray(run) ? run : [run as UsageRun];
  const problems: string[] = [];
  if (turns.length === 0) return ['the run has no turns'];
  const many = turns.length > 1;
  let lastSnapshot: TokenUsageEvent | null = null;
  let previousResult: TokenCounts | null = null;
  let figures = 0;
  let figureDuringWork = false;

  turns.forEach((turn, t) => {
    const label = many ? `turn ${t + 1}: ` : '';
    const { events, outcome } = turn;
    const result = outcome.result;
    const usageEvents = events
      .map((e, i) => ({ e, i }))
      .filter((x): x is { e: TokenUsageEvent; i: number } => x.e.type === 'token_usage');
    figures += usageEvents.length;
    const workIndexes = events.flatMap((e, i) => (WORK_EVENTS.has(e.type) ? [i] : []));
    const lastWork = workIndexes.length > 0 ? (workIndexes[workIndexes.length - 1] as number) : -1;
    const outcomeIndex = events.findIndex((e) => OUTCOME_EVENTS.has(e.type));

    if (disposition.arrival === 'none') {
      if (usageEvents.length > 0) {
        problems.push(
          `${label}a kind whose sources count no tokens emitted ${usageEvents.length} token_usage event(s)`,
        );
      }
      events.forEach((e, i) => {
        const carried = (e as { usage?: TokenCounts }).usage;
        if (carried !== undefined && !isZero(carried)) {
          problems.push(`${label}event ${i} (${e.type}) carries a non-zero usage figure ${fmt(carried)}`);
        }
      });
      if (!isZero(result.usage)) problems.push(`${label}result.usage is ${fmt(result.usage)}, not zero`);
      if (Object.values(result.usageByModel).some((c) => !isZero(c))) {
        problems.push(`${label}result.usageByModel carries a non-zero figure`);
      }
      if (result.usageMeasured) {
        problems.push(
          `${label}result.usageMeasured is true for a kind that counts no tokens (spend is unknown)`,
        );
      }
      return;
    }

    for (const { e, i } of usageEvents) {
      const where = `${label}token_usage event ${i}`;
      checkFigure(where, e.usage, e.usageByModel, problems);
      if (outcomeIndex !== -1 && i > outcomeIndex) {
        problems.push(`${where} came after the turn's outcome event`);
      }
      if (lastSnapshot !== null) {
        const fell = below(e.usage, lastSnapshot.usage);
        if (fell.length > 0) {
          problems.push(
            `${where} decreased in ${fell.join(', ')}: ${fmt(e.usage)} after ${fmt(lastSnapshot.usage)} ` +
              '(token_usage is run-cumulative: it never falls, and turn 2 adds to turn 1)',
          );
        }
      } else if (previousResult !== null && below(e.usage, previousResult).length > 0) {
        problems.push(`${where} ${fmt(e.usage)} is below the previous turn's result ${fmt(previousResult)}`);
      }
      if (
        disposition.attribution === 'per_model' &&
        e.model === null &&
        Object.keys(e.usageByModel).length === 0
      ) {
        problems.push(`${where} names no model, but the kind declares per_model attribution`);
      }
      lastSnapshot = e;
    }

    if (disposition.arrival === 'incremental') {
      const first = usageEvents[0];
      if (first !== undefined && first.i < lastWork) figureDuringWork = true;
    } else {
      if (usageEvents.length > 1) {
        problems.push(
          `${label}a turn_end kind emitted ${usageEvents.length} token_usage events in one turn (at most one)`,
        );
      }
      const early = usageEvents.find((x) => x.i < lastWork);
      if (early !== undefined) {
        problems.push(
          `${label}a turn_end kind emitted token_usage (event ${early.i}) while the turn was still working ` +
            `(last ${events[lastWork]?.type} is event ${lastWork})`,
        );
      }
    }

    const where = `${label}result`;
    checkFigure(where, result.usage, result.usageByModel, problems);
    const snapshot = lastSnapshot as TokenUsageEvent | null;
    if (snapshot !== null) {
      if (!sameCounts(result.usage, snapshot.usage)) {
        problems.push(
          `${where}.usage ${fmt(result.usage)} differs from the last token_usage snapshot ${fmt(snapshot.usage)}`,
        );
      }
      if (!sameByModel(result.usageByModel, snapshot.usageByModel)) {
        problems.push(
          `${where}.usageByModel ${JSON.stringify(result.usageByModel)} differs from the last token_usage ` +
            `snapshot's ${JSON.stringify(snapshot.usageByModel)}`,
        );
      }
      if (!result.usageMeasured) problems.push(`${where}.usageMeasured is false after a token_usage figure`);
    } else if (result.usageMeasured) {
      problems.push(
        `${where}.usageMeasured is true although no figure has arrived in the session yet ` +
          '(measured means the runtime reported a figure; unknown spend must stay unknown)',
      );
    }
    if (previousResult !== null) {
      const fell = below(result.usage, previousResult);
      if (fell.length > 0) {
        problems.push(
          `${where}.usage fell in ${fell.join(', ')} from the previous turn's ${fmt(previousResult)} to ` +
            `${fmt(result.usage)} (usage is run-cumulative per session)`,
        );
      }
    }
    previousResult = result.usage;
  });

  if (disposition.arrival !== 'none' && figures === 0) {
    problems.push(
      `a ${disposition.arrival} kind emitted no token_usage at all: the run proves nothing (drive a turn that reports usage)`,
    );
  }
  if (disposition.arrival === 'incremental' && figures > 0 && !figureDuringWork) {
    problems.push(
      'an incremental kind reported no figure while the turn worked: every token_usage came after the ' +
        "turn's last tool_result/notification (declare turn_end arrival, or emit as each request is served)",
    );
  }
  return problems;
}

/**
 * Fails (AssertionError) when the run contradicts what `kind`'s registered usage
 * sources derive: `agentKind(kind).usageDisposition`.
 */
export function assertUsageReporting(kind: string, run: UsageRun | readonly UsageRun[]): void {
  const registered = agentKind(kind);
  if (registered === undefined) {
    throw new AssertionError({ message: `usage reporting: agent kind ${kind} is not registered` });
  }
  const disposition = registered.usageDisposition;
  if (disposition === null) {
    throw new AssertionError({
      message: `usage reporting: agent kind ${kind} has no runtime declaration, so no usage disposition`,
    });
  }
  const problems = checkUsageReporting(disposition, run);
  if (problems.length > 0) {
    throw new AssertionError({
      message:
        `usage reporting of kind ${kind} (arrival ${disposition.arrival}, attribution ${disposition.attribution}) ` +
        `contradicts its declared sources:\n  - ${problems.join('\n  - ')}`,
    });
  }
}
