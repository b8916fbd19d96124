/**
 * Calls the agents made to the tool server, counted per run, tool and outcome: what the API
 * shows beside each run, and what survives a restart when the metric does not.
 */
import type Database from 'better-sqlite3';

/** How often one tool ended one way in one run. */
export interface ToolCallCount {
  tool: string;
  /** `ok` or the tool error code. */
  outcome: string;
  calls: number;
}

/** The table's statements; every call goes through the store's guard. */
export class ToolCallsTable {
  readonly #add: Database.Statement;
  readonly #forRun: Database.Statement<[number], ToolCallCount>;

  constructor(
    db: Database.Database,
    private readonly guard: <T>(operation: string, fn: () => T) => T,
  ) {
    this.#add = db.prepare(
      `INSERT INTO run_tool_calls (run_id, tool, outcome, calls) VALUES (?, ?, ?, 1)
       ON CONFLICT (run_id, tool, outcome) DO UPDATE SET calls = calls + 1`,
    );
    this.#forRun = db.prepare(
      'SELECT tool, outcome, calls FROM run_tool_calls WHERE run_id = ? ORDER BY tool, outcome',
    );
  }

  /** Counts one call of `tool` in `runId` that ended with `outcome`. */
  add(runId: number, tool: string, outcome: string): void {
    this.guard('count tool call', () => this.#add.run(runId, tool, outcome));
  }

  /** The run's counts, by tool then outcome; [] when it made no call. */
  forRun(runId: number): ToolCallCount[] {
    return this.guard('read tool calls', () => this.#forRun.all(runId));
  }
}
