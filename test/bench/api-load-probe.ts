/**
 * The measuring side of the `api-load` benchmark: a poller that asks a running service's HTTP
 * API at a steady rate and records how long each answer took, and a sampler that reads the
 * service's memory and CPU time from /proc. The poller is open-loop (a request leaves on time
 * even while earlier ones are still waiting), so a slow server shows up as latency rather
 * than as a lower request rate; it caps the requests in flight so a stalled server cannot
 * make the bench itself grow without bound.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';

/** Requests the poller keeps waiting at once before it skips a beat (and counts it). */
export const MAX_IN_FLIGHT = 64;
/** A request that takes longer than this is abandoned and counted as an error. */
const REQUEST_TIMEOUT_MS = 10_000;

/** Latencies of one route in one phase, in ms, and what went wrong. */
export interface RouteSamples {
  latenciesMs: number[];
  /** When each request of `latenciesMs` was sent (performance.now(), same order). */
  sentAtMs: number[];
  /** Answers with a status `accepts` refuses, connection failures and timeouts. */
  errors: number;
  /** The first few error descriptions. */
  firstErrors: string[];
}

export interface Target {
  /** A label for the report (`/api/v1/issues/:id`). */
  route: string;
  /** The path of the next request (may change per call: a different issue each time). */
  path(): string;
  /** Whether an answer with this status counts as correct (it is timed either way). */
  accepts(status: number): boolean;
  /** Called with the body of every correct answer (the bench reads figures out of some). */
  onBody?(body: string): void;
}

/** Percentile by nearest rank of a sorted list; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

/** p50/p95/p99/max of a list of latencies, in ms. */
export function summary(latenciesMs: readonly number[]): {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
} {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted.at(-1) ?? Number.NaN,
  };
}

/** Sends requests round-robin over `targets` at `ratePerSecond` until stopped. */
export class Poller {
  readonly #agent = new http.Agent({ keepAlive: true, maxSockets: MAX_IN_FLIGHT });
  readonly #samples = new Map<string, RouteSamples>();
  #timer: NodeJS.Timeout | null = null;
  #inFlight = 0;
  #next = 0;
  #skipped = 0;
  readonly #pending = new Set<Promise<void>>();

  constructor(
    private readonly port: number,
    private readonly targets: readonly Target[],
    private readonly ratePerSecond: number,
  ) {}

  /** Starts sending; samples go to a fresh set for the phase named `phase`. */
  start(phase: string): void {
    this.stop();
    for (const t of this.targets)
      this.#samples.set(key(phase, t.route), { latenciesMs: [], sentAtMs: [], errors: 0, firstErrors: [] });
    const intervalMs = 1000 / this.ratePerSecond;
    const startedMs = performance.now();
    let sent = 0;
    // Paced against the start time, not the previous tick, so timer drift does not lower the rate.
    const beat = () => {
      const due = Math.floor((performance.now() - startedMs) / intervalMs) + 1;
      while (sent < due) {
        sent += 1;
        this.#send(phase);
      }
      this.#timer = setTimeout(beat, Math.max(1, startedMs + sent * intervalMs - performance.now()));
    };
    beat();
  }

  /** Stops sending (answers still on their way are recorded: see `drain`). */
  stop(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  /** Waits for the requests still in flight. */
  async drain(): Promise<void> {
    await Promise.all([...this.#pending]);
  }

  close(): void {
    this.stop();
    this.#agent.destroy();
  }

  /** Beats skipped because MAX_IN_FLIGHT requests were already waiting. */
  get skipped(): number {
    return this.#skipped;
  }

  samples(phase: string, route: string): RouteSamples {
    return (
      this.#samples.get(key(phase, route)) ?? { latenciesMs: [], sentAtMs: [], errors: 0, firstErrors: [] }
    );
  }

  #send(phase: string): void {
    if (this.#inFlight >= MAX_IN_FLIGHT) {
      this.#skipped += 1;
      return;
    }
    const target = this.targets[this.#next % this.targets.length] as Target;
    this.#next += 1;
    const samples = this.samples(phase, target.route);
    this.#inFlight += 1;
    const sentAtMs = performance.now();
    const done = this.#request(target).then(
      (latencyMs) => {
        samples.latenciesMs.push(latencyMs);
        samples.sentAtMs.push(sentAtMs);
      },
      (error: unknown) => {
        samples.errors += 1;
        if (samples.firstErrors.length < 3)
          samples.firstErrors.push(error instanceof Error ? error.message : String(error));
      },
    );
    this.#pending.add(done);
    void done.finally(() => {
      this.#inFlight -= 1;
      this.#pending.delete(done);
    });
  }

  /** One request; resolves with its latency in ms once the whole body is in. */
  #request(target: Target): Promise<number> {
    const path = target.path();
    return new Promise<number>((resolve, reject) => {
      const startedMs = performance.now();
      const req = http.get(
        { host: '127.0.0.1', port: this.port, path, agent: this.#agent, timeout: REQUEST_TIMEOUT_MS },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const latencyMs = performance.now() - startedMs;
            if (!target.accepts(res.statusCode ?? 0)) {
              reject(new Error(`${path}: status ${res.statusCode}`));
              return;
            }
            target.onBody?.(Buffer.concat(chunks).toString('utf8'));
            resolve(latencyMs);
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${path}: no answer in ${REQUEST_TIMEOUT_MS} ms`)));
      req.on('error', reject);
    });
  }
}

function key(phase: string, route: string): string {
  return `${phase}\u0000${route}`;
}

/** CPU time in ms, from /proc: the process itself and its reaped children, and the whole machine. */
export interface CpuReading {
  selfMs: number;
  childrenMs: number;
  /** Busy (non-idle) time of every core together. */
  machineBusyMs: number;
  /** Busy plus idle time of every core together. */
  machineTotalMs: number;
}

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** The CPU reading of `pid` and of the machine; null once the process is gone. */
export function readCpu(pid: number): CpuReading | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // Fields after the command name (which may hold spaces) start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const at = (n: number) => Number(fields[n - 3]);
  const cpuLine = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const jiffies = cpuLine.trim().split(/\s+/).slice(1).map(Number);
  const idle = (jiffies[3] ?? 0) + (jiffies[4] ?? 0);
  const total = jiffies.slice(0, 8).reduce((a, b) => a + b, 0);
  return {
    selfMs: (at(14) + at(15)) * TICK_MS,
    childrenMs: (at(16) + at(17)) * TICK_MS,
    machineBusyMs: (total - idle) * TICK_MS,
    machineTotalMs: total * TICK_MS,
  };
}

/** Resident and peak resident memory of `pid` in MB (VmRSS and VmHWM); null once it is gone. */
export function readMemory(pid: number): { rssMb: number; hwmMb: number } | null {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return null;
  }
  const kb = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
}

/** The value of one unlabelled sample in a Prometheus text exposition; NaN when absent. */
export function metricValue(exposition: string, name: string): number {
  const match = new RegExp(`^${name} ([^\\s]+)`, 'm').exec(exposition);
  return match === null ? Number.NaN : Number(match[1]);
}

/** The sum of every sample of a metric (all label sets) in a Prometheus text exposition. */
export function metricSum(exposition: string, name: string, labelFilter = ''): number {
  let sum = 0;
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (labelFilter !== '' && !line.includes(labelFilter)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}
