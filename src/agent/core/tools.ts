/**
 * Tool calls: each adapter maps its runtime's tool names to a small set of kinds
 * and the input member that holds the main argument; the tracker pairs starts
 * with ends and times them. Nothing here cleans text: the sanitiser does that once.
 */
import type { ToolKind } from '../../domain/agent.js';

/** A runtime tool name's kind and the input member holding its main argument. */
export interface ToolMapping {
  kind: ToolKind;
  key: string;
}

export interface ToolCall {
  name: string;
  kind: ToolKind | null;
  /** The raw main argument; null when the tool has none or is unmapped. */
  argument: string | null;
}

/** Builds a call from a mapping table; unmapped names keep only their name. */
export function mapToolCall(
  table: Readonly<Record<string, ToolMapping>>,
  name: string,
  input: unknown,
): ToolCall {
  const mapping = Object.hasOwn(table, name) ? table[name] : undefined;
  if (mapping === undefined) return { name, kind: null, argument: null };
  const value =
    input !== null && typeof input === 'object' ? (input as Record<string, unknown>)[mapping.key] : undefined;
  if (typeof value === 'string') return { name, kind: mapping.kind, argument: value };
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) {
    return { name, kind: mapping.kind, argument: value.join(', ') };
  }
  return { name, kind: mapping.kind, argument: null };
}

/** The name of a tool served by an MCP server (or another namespace): `server.tool`. */
export function qualifiedToolName(server: string, tool: string): string {
  return `${server}.${tool}`;
}

/**
 * Calls a tracker keeps open at most. A runtime can start calls and never report their
 * ends (or print a million starts); past this many the oldest is forgotten, and its end,
 * should it come, is treated like one that never began.
 */
export const MAX_IN_FLIGHT_TOOL_CALLS = 1_024;

/** The `tool_result` event of a call that ended after `durationMs`, failed or not. */
export function toolResultEvent(ended: { call: ToolCall; durationMs: number }, failed: boolean) {
  return {
    type: 'tool_result' as const,
    toolName: ended.call.name,
    toolKind: ended.call.kind,
    toolArgument: ended.call.argument,
    toolDurationMs: ended.durationMs,
    toolError: failed,
  };
}

/** Pairs tool starts with their ends and measures durations on an injected clock. */
export class ToolTracker {
  private readonly inFlight = new Map<string, { call: ToolCall; startedMs: number }>();
  constructor(private readonly nowMs: () => number = Date.now) {}

  begin(id: string, call: ToolCall): void {
    // A restarted id moves to the newest end, so eviction takes the truly oldest call.
    this.inFlight.delete(id);
    this.inFlight.set(id, { call, startedMs: this.nowMs() });
    if (this.inFlight.size > MAX_IN_FLIGHT_TOOL_CALLS) {
      const oldest = this.inFlight.keys().next();
      if (oldest.done !== true) this.inFlight.delete(oldest.value);
    }
  }

  /** Ends a call; undefined when `id` never began (a result without its start). */
  end(id: string): { call: ToolCall; durationMs: number } | undefined {
    const entry = this.inFlight.get(id);
    if (entry === undefined) return undefined;
    this.inFlight.delete(id);
    return { call: entry.call, durationMs: Math.max(0, this.nowMs() - entry.startedMs) };
  }

  /** Calls begun and never ended (a turn that stopped mid-tool), at most `MAX_IN_FLIGHT_TOOL_CALLS`. */
  pending(): ToolCall[] {
    return [...this.inFlight.values()].map((e) => e.call);
  }

  reset(): void {
    this.inFlight.clear();
  }
}
