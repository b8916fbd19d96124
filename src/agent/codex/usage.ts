/**
 * What Codex reports about spend. Both of its machine interfaces report the
 * thread's running total: the app-server's `thread/tokenUsage/updated` carries
 * `total` (the thread so far) beside `last` (the latest request), and `exec
 * --json`'s `turn.completed` usage is the thread total once a thread is resumed.
 * So the live source is declared session-cumulative and the ledger separates
 * this run from the thread's history. The figure settles when the turn ends:
 * exec reports nothing earlier, and the app-server's in-turn readings are fed to
 * the ledger as they arrive but emitted once, at the end, so both modes report
 * the same way. No report names the model or carries a cost.
 */
import { type SpendCounts, type SpendReading, spendReading, type UsageSources } from '../usage/index.js';

export const CODEX_USAGE_SOURCES: UsageSources = {
  live: {
    category: 'protocol',
    strategy: 'live',
    spend: {
      shape: 'session_cumulative',
      // OpenAI's input count includes cached input; its output count includes reasoning.
      cacheInInput: true,
      reasoningInOutput: true,
      servedModel: false,
      duringTurn: false,
      lowerBound: false,
      amounts: [],
    },
  },
};

/** Token counts as Codex names them on either interface; a missing count stays unknown. */
export interface CodexCounts {
  input: number | null;
  cachedInput: number | null;
  cacheWriteInput: number | null;
  output: number | null;
  reasoningOutput: number | null;
}

function spendCounts(c: CodexCounts): SpendCounts {
  return {
    input: c.input,
    output: c.output,
    cacheRead: c.cachedInput,
    // Older builds do not split cache writes out; they sit inside the input count either way,
    // so the input figure is whole and the split is taken as none.
    cacheWrite: c.cacheWriteInput ?? (c.input === null ? null : 0),
    reasoning: c.reasoningOutput,
  };
}

/** A thread-total reading; `last` is the part of the latest request, when the runtime gives it. */
export function threadReading(total: CodexCounts, last: CodexCounts | null): SpendReading {
  return spendReading({
    ...spendCounts(total),
    ...(last === null ? {} : { own: spendCounts(last) }),
  });
}
