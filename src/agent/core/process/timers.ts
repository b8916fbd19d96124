/**
 * The three clocks that can end a turn: no first event in time, no output for too
 * long (stall), and the absolute turn limit. They are easy to get subtly wrong
 * together (a stall timer that a chatty agent never lets fire is right; a turn
 * timer that activity postpones is not), so they live in one small object with an
 * injected clock, tested under fake timers. Exactly one reason is ever reported.
 */

/** Why a turn's timers fired. */
export type TurnTimerReason = 'first_event' | 'stall' | 'turn';

/** The clock the timers run on; the default reads the globals at call time, so fake timers apply. */
export interface TimerClock {
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
  /** Milliseconds, monotonic enough for intervals. */
  now(): number;
}

export const SYSTEM_CLOCK: TimerClock = {
  setTimeout: (callback, delayMs) => globalThis.setTimeout(callback, delayMs),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as Parameters<typeof globalThis.clearTimeout>[0]),
  now: () => Date.now(),
};

export interface TurnTimersOptions {
  /** Time from start to `markFirstEvent`; 0 disables. */
  firstEventTimeoutMs: number;
  /**
   * Longest quiet time between `touch` calls; 0 disables. It runs from the first
   * event (from start when the first-event timer is disabled), so a slow start is
   * judged by the first-event timeout alone.
   */
  stallTimeoutMs: number;
  /** Absolute limit from start, whatever the activity; 0 disables. */
  turnTimeoutMs: number;
  /** Called once, with whichever reason fires first; never after `clear`. */
  onFire(reason: TurnTimerReason): void;
  clock?: TimerClock;
}

/** A turn's first-event, stall and turn timers. Starts when constructed. */
export class TurnTimers {
  private readonly clock: TimerClock;
  private readonly options: TurnTimersOptions;
  private readonly startedAt: number;
  private lastActivityAt: number;
  private firstEventSeen = false;
  private done = false;
  private firedReason: TurnTimerReason | null = null;
  private firstEventHandle: unknown = null;
  private stallHandle: unknown = null;
  private turnHandle: unknown = null;

  constructor(options: TurnTimersOptions) {
    this.options = options;
    this.clock = options.clock ?? SYSTEM_CLOCK;
    this.startedAt = this.clock.now();
    this.lastActivityAt = this.startedAt;
    if (options.turnTimeoutMs > 0) {
      this.turnHandle = this.clock.setTimeout(() => this.fire('turn'), options.turnTimeoutMs);
    }
    if (options.firstEventTimeoutMs > 0) {
      this.firstEventHandle = this.clock.setTimeout(
        () => this.fire('first_event'),
        options.firstEventTimeoutMs,
      );
    } else {
      this.armStall(options.stallTimeoutMs);
    }
  }

  /** The reason that fired, null while none has. */
  get fired(): TurnTimerReason | null {
    return this.firedReason;
  }

  /** Milliseconds since the timers started. */
  elapsedMs(): number {
    return this.clock.now() - this.startedAt;
  }

  /** Records activity (an accepted line): restarts the stall interval. */
  touch(): void {
    if (this.done) return;
    this.lastActivityAt = this.clock.now();
  }

  /** Records the first event: cancels the first-event timer and starts the stall timer. Idempotent. */
  markFirstEvent(): void {
    if (this.done || this.firstEventSeen) return;
    this.firstEventSeen = true;
    this.lastActivityAt = this.clock.now();
    if (this.firstEventHandle !== null) {
      this.clock.clearTimeout(this.firstEventHandle);
      this.firstEventHandle = null;
      this.armStall(this.options.stallTimeoutMs);
    }
  }

  /** Cancels every timer; `onFire` will not be called. Idempotent. */
  clear(): void {
    this.done = true;
    for (const handle of [this.firstEventHandle, this.stallHandle, this.turnHandle]) {
      if (handle !== null) this.clock.clearTimeout(handle);
    }
    this.firstEventHandle = null;
    this.stallHandle = null;
    this.turnHandle = null;
  }

  private armStall(delayMs: number): void {
    if (this.options.stallTimeoutMs <= 0) return;
    // Touches only move `lastActivityAt`; the timer checks it when it runs and re-arms for the rest.
    this.stallHandle = this.clock.setTimeout(() => {
      this.stallHandle = null;
      if (this.done) return;
      const quietMs = this.clock.now() - this.lastActivityAt;
      const remainingMs = this.options.stallTimeoutMs - quietMs;
      if (remainingMs <= 0) this.fire('stall');
      else this.armStall(remainingMs);
    }, delayMs);
  }

  private fire(reason: TurnTimerReason): void {
    if (this.done) return;
    this.firedReason = reason;
    this.clear();
    this.options.onFire(reason);
  }
}
