/**
 * Codex's rate-limit snapshots, read from either interface into the shared
 * event's shape. The app-server's `account/rateLimits/updated` spells them in
 * camelCase (`usedPercent`, `windowDurationMins`, `resetsAt` in epoch seconds)
 * under a `limitId`; the old exec format's `token_count` spells them in
 * snake_case (`used_percent`, `window_minutes`, and `resets_at` or, in older
 * builds, a relative `resets_in_seconds`) and names no limit. Each snapshot has
 * a primary and a secondary window, null when the plan has none. Pure: a
 * relative reset stays relative until the session resolves it with its clock.
 */
import type { RateLimitWindow } from '../../domain/agent.js';

/** The limit a snapshot belongs to when the build names none. */
export const DEFAULT_LIMIT_ID = 'codex';

/** One window as decoded; the reset is absolute or relative, whichever the build wrote. */
export interface CodexWindow {
  window: 'primary' | 'secondary';
  usedPercent: number | null;
  windowMinutes: number | null;
  /** Epoch ms, null when not given as a time. */
  resetsAtMs: number | null;
  /** Milliseconds from the report, null when not given as a duration. */
  resetsAfterMs: number | null;
}

export interface CodexRateLimits {
  limitId: string;
  /** Only the windows the snapshot carries ([] when both are null). */
  windows: CodexWindow[];
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const nonNegative = (v: unknown): number | null => {
  const n = num(v);
  return n === null || n < 0 ? null : n;
};
const secondsToMs = (v: unknown): number | null => {
  const n = nonNegative(v);
  return n === null ? null : Math.round(n * 1000);
};

function readWindow(name: CodexWindow['window'], value: unknown): CodexWindow | null {
  if (!isObject(value)) return null;
  return {
    window: name,
    usedPercent: nonNegative(value.usedPercent ?? value.used_percent),
    windowMinutes: nonNegative(value.windowDurationMins ?? value.window_minutes),
    resetsAtMs: secondsToMs(value.resetsAt ?? value.resets_at),
    resetsAfterMs: secondsToMs(value.resets_in_seconds),
  };
}

/** A snapshot in either spelling; null when the value is not one. */
export function readRateLimits(value: unknown): CodexRateLimits | null {
  if (!isObject(value)) return null;
  const limitId = value.limitId ?? value.limit_id;
  const windows = [readWindow('primary', value.primary), readWindow('secondary', value.secondary)].filter(
    (w): w is CodexWindow => w !== null,
  );
  return { limitId: typeof limitId === 'string' && limitId !== '' ? limitId : DEFAULT_LIMIT_ID, windows };
}

/** The windows with every reset as a time, a relative one counted from `nowMs`. */
export function rateLimitWindows(limits: CodexRateLimits, nowMs: number): RateLimitWindow[] {
  return limits.windows.map((w) => ({
    window: w.window,
    usedPercent: w.usedPercent,
    windowMinutes: w.windowMinutes,
    resetsAtMs: w.resetsAtMs ?? (w.resetsAfterMs === null ? null : nowMs + w.resetsAfterMs),
  }));
}
