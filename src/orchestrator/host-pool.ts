/**
 * Which SSH worker host a session runs on. Pure bookkeeping: sessions per host,
 * the per-host cap, and hosts that recently failed and are left alone for a while.
 * The owner configures it every tick (hot reload), so a host removed from the
 * workflow keeps counting its sessions until they end instead of being forgotten
 * while they still run; otherwise a re-added host would be handed more than its cap.
 * A host that failed is not retried on every dispatch: it waits out a doubling
 * backoff and is then on trial, eligible again, until `markUp` clears its record or
 * another `markDown` doubles the wait. The trial is not limited to one session: the
 * owner calls `markUp` only when a session ends well, and a one-session limit until
 * then would leave every host near-idle for a whole run after a short network blip.
 */

/** First wait after a host fails; doubles per consecutive failure. */
export const HOST_DOWN_BASE_DELAY_MS = 5_000;
/** Longest wait before a failed host gets another trial. */
export const HOST_DOWN_MAX_DELAY_MS = 5 * 60_000;

export type NoHostReason = 'ssh_hosts_at_capacity' | 'ssh_hosts_down';

export type HostPick = { ok: true; host: string } | { ok: false; reason: NoHostReason };

export interface HostPoolOptions {
  /** Current time in ms; injected so tests run on fake time. */
  nowMs: () => number;
  /** Wait after the first failure, in ms (default 5 s). */
  downBaseDelayMs?: number;
  /** Cap on the doubling wait, in ms (default 5 min). */
  downMaxDelayMs?: number;
}

/** One host as the API and dashboard show it. */
export interface HostStatus {
  host: string;
  /** Sessions running on it now. */
  running: number;
  /** Sessions allowed at once; 0 = no per-host cap. */
  cap: number;
  /**
   * Set from `markDown` until `markUp`. While `untilMs` is ahead the host is skipped;
   * after it the host is on trial (eligible) and stays listed here until `markUp`.
   */
  down: { reason: string; untilMs: number } | null;
  /** False for a host removed from the workflow whose sessions still run. */
  configured: boolean;
}

interface DownState {
  reason: string;
  untilMs: number;
  /** Consecutive failures since the last `markUp`; sets the next wait. */
  failures: number;
}

export class HostPool {
  private readonly nowMs: () => number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private configured: string[] = [];
  private cap = 0;
  /** Sessions per host; only hosts with at least one session have an entry. */
  private readonly running = new Map<string, number>();
  private readonly downs = new Map<string, DownState>();

  constructor(options: HostPoolOptions) {
    this.nowMs = options.nowMs;
    this.baseDelayMs = Math.max(0, options.downBaseDelayMs ?? HOST_DOWN_BASE_DELAY_MS);
    this.maxDelayMs = Math.max(this.baseDelayMs, options.downMaxDelayMs ?? HOST_DOWN_MAX_DELAY_MS);
  }

  /** Sets the hosts (in preference order for ties) and the per-host cap (0 = none); called every tick. */
  configure(hosts: readonly string[], perHostCap: number): void {
    this.configured = [...new Set(hosts)];
    this.cap = Number.isFinite(perHostCap) ? Math.max(0, Math.floor(perHostCap)) : 0;
    const keep = new Set(this.configured);
    // A removed host's failure record goes with it; its running sessions do not.
    for (const host of this.downs.keys()) if (!keep.has(host)) this.downs.delete(host);
  }

  /** The configured hosts, in configured order; empty means sessions run locally. */
  hosts(): readonly string[] {
    return this.configured;
  }

  /** The per-host cap; 0 = none. */
  perHostCap(): number {
    return this.cap;
  }

  /**
   * A host for the next session, without taking its slot: `preferred` (a retry's
   * previous host) when it is configured, up and under the cap, otherwise the
   * least-loaded such host, ties in configured order.
   */
  pick(preferred: string | null): HostPick {
    const now = this.nowMs();
    if (preferred !== null && this.configured.includes(preferred) && this.available(preferred, now)) {
      return { ok: true, host: preferred };
    }
    let best: string | null = null;
    let bestRunning = Number.POSITIVE_INFINITY;
    for (const host of this.configured) {
      if (!this.available(host, now)) continue;
      const running = this.runningOn(host);
      if (running < bestRunning) {
        best = host;
        bestRunning = running;
      }
    }
    if (best !== null) return { ok: true, host: best };
    const allDown = this.configured.length > 0 && this.configured.every((h) => this.skippedAsDown(h, now));
    return { ok: false, reason: allDown ? 'ssh_hosts_down' : 'ssh_hosts_at_capacity' };
  }

  /** Counts a session started on `host` (also a removed one). The caller picked it first. */
  take(host: string): void {
    this.running.set(host, this.runningOn(host) + 1);
  }

  /** Counts a session on `host` as ended; never below zero. */
  release(host: string): void {
    const running = this.runningOn(host);
    if (running <= 1) this.running.delete(host);
    else this.running.set(host, running - 1);
  }

  /**
   * Records that `host` failed (unreachable, refused). It is skipped for
   * base · 2^(failures−1), capped; failures reported while it is already waiting
   * belong to the same outage and neither extend nor double the wait.
   */
  markDown(host: string, reason: string): void {
    const now = this.nowMs();
    const previous = this.downs.get(host);
    if (previous !== undefined && now < previous.untilMs) {
      previous.reason = reason;
      return;
    }
    const failures = (previous?.failures ?? 0) + 1;
    const delayMs = Math.min(this.baseDelayMs * 2 ** Math.min(failures - 1, 30), this.maxDelayMs);
    this.downs.set(host, { reason, untilMs: now + delayMs, failures });
  }

  /** Records that `host` works (a probe answered, a session ended well); clears its failure record. */
  markUp(host: string): void {
    this.downs.delete(host);
  }

  /** Sessions per host: every configured host (0 included), then removed hosts still running sessions. */
  usage(): Map<string, number> {
    const usage = new Map<string, number>();
    for (const host of this.configured) usage.set(host, this.runningOn(host));
    for (const [host, running] of this.running) if (!usage.has(host)) usage.set(host, running);
    return usage;
  }

  /** Every host `usage` lists, with its cap and failure record, for the API and dashboard. */
  status(): HostStatus[] {
    const configured = new Set(this.configured);
    return [...this.usage()].map(([host, running]) => {
      const down = this.downs.get(host);
      return {
        host,
        running,
        cap: this.cap,
        down: down === undefined ? null : { reason: down.reason, untilMs: down.untilMs },
        configured: configured.has(host),
      };
    });
  }

  /** True when `pick(null)` would find a host. */
  hasCapacity(): boolean {
    const now = this.nowMs();
    return this.configured.some((host) => this.available(host, now));
  }

  /** An independent copy (same clock and state), for planning without taking real slots. */
  clone(): HostPool {
    const copy = new HostPool({
      nowMs: this.nowMs,
      downBaseDelayMs: this.baseDelayMs,
      downMaxDelayMs: this.maxDelayMs,
    });
    copy.configured = [...this.configured];
    copy.cap = this.cap;
    for (const [host, running] of this.running) copy.running.set(host, running);
    for (const [host, down] of this.downs) copy.downs.set(host, { ...down });
    return copy;
  }

  private runningOn(host: string): number {
    return this.running.get(host) ?? 0;
  }

  /** Waiting out a failure rather than merely full. */
  private skippedAsDown(host: string, now: number): boolean {
    const down = this.downs.get(host);
    return down !== undefined && now < down.untilMs;
  }

  private available(host: string, now: number): boolean {
    if (this.skippedAsDown(host, now)) return false;
    return this.cap === 0 || this.runningOn(host) < this.cap;
  }
}
