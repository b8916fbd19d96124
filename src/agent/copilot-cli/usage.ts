/**
 * What Copilot CLI reports about spend, and its reports as ledger readings.
 *
 * Its JSON stdout carries no token count in bring-your-own-key mode (and at most a
 * per-message output count otherwise), so the figures come from two files the CLI
 * writes itself. The live report is the usage summary it writes at exit when asked
 * (`--usage-output-file`): token counts per model, cumulative over the whole session,
 * earlier processes included, read once the turn's process has exited. The records
 * are the session's own journal (`session-state/<id>/events.jsonl`), one
 * `session.usage_record` per model call: read for a turn that ended without its
 * summary (stopped, killed), and at the start of a resumed session to learn what the
 * session had already spent. Premium requests come from the `result` line, also
 * cumulative over the session. Input counts include cached input; output counts
 * include reasoning (the CLI also reports reasoning apart, inside the output).
 */
import {
  type RecordsRead,
  type SpendCounts,
  type SpendReading,
  spendReading,
  sumRequests,
  type UsageSources,
} from '../usage/index.js';

/** The unit of Copilot's billing count, as an amount. */
export const PREMIUM_REQUESTS = 'premium requests';

const SPEND = {
  cacheInInput: true,
  reasoningInOutput: true,
  servedModel: true,
  duringTurn: false,
  lowerBound: false,
} as const;

export const COPILOT_CLI_USAGE_SOURCES: UsageSources = {
  live: {
    category: 'output',
    strategy: 'live',
    spend: {
      ...SPEND,
      shape: 'session_cumulative',
      amounts: [{ unit: PREMIUM_REQUESTS, shape: 'session_cumulative' }],
    },
  },
  records: {
    category: 'journal',
    strategy: 'records',
    // The journal's last shutdown event holds the session's premium requests so far.
    spend: {
      ...SPEND,
      shape: 'per_request',
      amounts: [{ unit: PREMIUM_REQUESTS, shape: 'session_cumulative' }],
    },
  },
};

type Obj = Record<string, unknown>;

const obj = (v: unknown): Obj | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : null;
const count = (v: unknown): number | null =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null;
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** Counts in Copilot's spelling (`inputTokens`, …); a missing count stays unknown. */
function counts(v: unknown): SpendCounts {
  const u = obj(v) ?? {};
  return {
    input: count(u.inputTokens),
    output: count(u.outputTokens),
    cacheRead: count(u.cacheReadTokens),
    cacheWrite: count(u.cacheWriteTokens),
  };
}

/** Premium requests as an amount in millionths. */
function premiumAmount(premiumRequests: number): { unit: string; micros: number } {
  return { unit: PREMIUM_REQUESTS, micros: Math.round(premiumRequests * 1_000_000) };
}

/**
 * The usage summary's reading: the session's counts so far, named by model when one
 * model served the whole session (several are summed, with no model named), with the
 * last call as the part this report adds and the session's premium requests. Null
 * when the text is not a usage summary.
 */
export function reportReading(text: string, premiumRequests: number | null): SpendReading | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const report = obj(value);
  const metrics = obj(report?.modelMetrics);
  if (report === null || metrics === null) return null;
  const perModel = Object.entries(metrics).map(([model, m]) => ({ model, counts: counts(obj(m)?.usage) }));
  let total: SpendCounts;
  let model: string | null = null;
  const [only] = perModel;
  if (only === undefined) {
    // A session no model call has served yet: the CLI reports nothing spent.
    total = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  } else if (perModel.length === 1) {
    total = only.counts;
    model = only.model;
  } else {
    const sum = sumRequests(
      perModel.map((p) => spendReading({ ...p.counts, identity: p.model })),
      COPILOT_CLI_USAGE_SOURCES.live.spend,
    );
    total = {
      input: sum.inputTokens,
      output: sum.outputTokens,
      cacheRead: sum.cacheReadTokens,
      cacheWrite: sum.cacheWriteTokens,
    };
  }
  return spendReading({
    ...total,
    model,
    own: {
      input: count(report.lastCallInputTokens),
      output: count(report.lastCallOutputTokens),
      cacheRead: null,
      cacheWrite: null,
    },
    ...(premiumRequests === null ? {} : { amounts: [premiumAmount(premiumRequests)] }),
  });
}

/**
 * The journal's readings: one per `session.usage_record` (identified by its API call),
 * and the session's premium requests as of its last `session.shutdown`, as an amount
 * with no tokens. Lines that are not JSON (a line cut by a crash) are skipped.
 */
export function journalReadings(text: string): RecordsRead {
  const readings: SpendReading[] = [];
  let premium: number | null = null;
  let seq = 0;
  for (const line of text.split('\n')) {
    if (!line.includes('"session.usage_record"') && !line.includes('"session.shutdown"')) continue;
    let event: Obj | null;
    try {
      event = obj(JSON.parse(line));
    } catch {
      continue;
    }
    const data = obj(event?.data);
    if (event === null || data === null) continue;
    if (event.type === 'session.shutdown') {
      premium = count(data.totalPremiumRequests) ?? premium;
      continue;
    }
    if (event.type !== 'session.usage_record') continue;
    const usage = obj(data.usage) ?? {};
    const accounting = obj(usage.accounting) ?? {};
    seq += 1;
    readings.push(
      spendReading({
        ...counts(usage),
        model: str(usage.model),
        identity: str(usage.apiCallId) ?? str(accounting.usageId) ?? str(event.id) ?? `record-${seq}`,
      }),
    );
  }
  if (premium !== null) {
    readings.push(spendReading({ identity: 'session.shutdown', amounts: [premiumAmount(premium)] }));
  }
  return { readings };
}
