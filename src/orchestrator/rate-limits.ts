/**
 * The latest provider rate limits per agent kind, as sessions report them. A
 * report replaces the earlier one of the same kind and limit, so the API, the
 * dashboard and the gauges show the account as it stands now rather than
 * whatever the last of several sessions happened to say about another limit.
 *
 * Two traps: limit ids come from the runtime and become metric labels, so only a
 * few are kept per kind (the least recently reported goes first); and a
 * usage-limit refusal that names no reset time can still be timed from the
 * used-up window the same account reported, instead of guessing.
 */
import type { RateLimitWindow } from '../domain/agent.js';

/** Limits kept per agent kind; a new one beyond this evicts the least recently reported. */
export const MAX_LIMITS_PER_KIND = 8;
/** A window at or above this share is used up. */
const EXHAUSTED_PERCENT = 100;

/** One limit of one agent kind as last reported. */
export interface AgentRateLimit {
  /** The agent kind whose session reported it. */
  kind: string;
  limitId: string;
  windows: RateLimitWindow[];
  /** When the report arrived, epoch ms. */
  observedAtMs: number;
}

/** The latest rate limits the sessions reported; the orchestrator owns one. */
export class RateLimitBook {
  private readonly limits = new Map<string, AgentRateLimit>();

  /** Keeps `windows` as the latest state of the kind's limit `limitId`. */
  record(kind: string, limitId: string, windows: readonly RateLimitWindow[], nowMs: number): void {
    const key = JSON.stringify([kind, limitId]);
    if (!this.limits.has(key)) {
      const ofKind = [...this.limits.entries()].filter(([, l]) => l.kind === kind);
      if (ofKind.length >= MAX_LIMITS_PER_KIND) {
        const [oldest] = ofKind.sort(([, a], [, b]) => a.observedAtMs - b.observedAtMs);
        if (oldest !== undefined) this.limits.delete(oldest[0]);
      }
    }
    this.limits.set(key, {
      kind,
      limitId,
      windows: windows.map((w) => ({ ...w })),
      observedAtMs: nowMs,
    });
  }

  /** Every limit, by kind then limit id; copies, so readers cannot change the book. */
  list(): AgentRateLimit[] {
    return [...this.limits.values()]
      .map((l) => ({ ...l, windows: l.windows.map((w) => ({ ...w })) }))
      .sort((a, b) => a.kind.localeCompare(b.kind) || a.limitId.localeCompare(b.limitId));
  }

  /**
   * When the kind's used-up windows have all reset (epoch ms): the latest reset among
   * windows at 100 % whose reset is still ahead of `nowMs`; null when none is known.
   */
  exhaustedResetAtMs(kind: string, nowMs: number): number | null {
    let latest: number | null = null;
    for (const limit of this.limits.values()) {
      if (limit.kind !== kind) continue;
      for (const w of limit.windows) {
        if (w.usedPercent === null || w.usedPercent < EXHAUSTED_PERCENT) continue;
        if (w.resetsAtMs === null || w.resetsAtMs <= nowMs) continue;
        if (latest === null || w.resetsAtMs > latest) latest = w.resetsAtMs;
      }
    }
    return latest;
  }
}
