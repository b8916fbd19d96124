/**
 * `GET /metrics` of a real `orchestrator run` while it works: four issues whose mock runs take
 * a few seconds each, two slots, so a scrape taken while the first sessions run sees a service
 * in the middle of its work. That scrape must pass `promtool check metrics`; a later one must
 * show the counters moved (dispatches, exits, tokens, turns, tool calls, tracker calls). A real
 * Prometheus server (Debian package `prometheus`) scrapes the same endpoint on loopback and
 * must report `up == 1` and the dispatch counter through its query API.
 *
 * Skipped only on a developer machine without the package; in CI (CI set) its absence fails.
 * Every wait is on a condition with a deadline.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../support/ports.js';
import {
  createProject,
  makeIssue,
  type ServiceHandle,
  startService,
  useServiceCleanup,
  waitFor,
} from '../support/service.js';

useServiceCleanup();

const PROMTOOL = '/usr/bin/promtool';
const PROMETHEUS = '/usr/bin/prometheus';
const MISSING = !(existsSync(PROMTOOL) && existsSync(PROMETHEUS)) && process.env.CI === undefined;
if (MISSING)
  console.warn(
    `skipping /metrics end-to-end: ${PROMTOOL} or ${PROMETHEUS} is absent (apt-get install prometheus)`,
  );

/** Each run: start, 2 usage lines, 3 tool call/result pairs, result: 10 lines, LINE_DELAY_MS apart. */
const LINE_DELAY_MS = 300;
const RUN = '!usage 100 20 10\n!loop 3\n!usage 40 10\n!ok done';
const ISSUES = 4;

// ---------------------------------------------------------------- the exposition, parsed

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseExposition(body: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of body.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m === null) throw new Error(`unparsable exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

/** The sum of every sample of `name` whose labels include `labels`. */
function total(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

interface Scrape {
  contentType: string;
  body: string;
  samples: Sample[];
}

async function scrape(port: number): Promise<Scrape | null> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5_000) });
    if (response.status !== 200) return null;
    const body = await response.text();
    return { contentType: response.headers.get('content-type') ?? '', body, samples: parseExposition(body) };
  } catch {
    return null; // not listening yet
  }
}

function promtool(exposition: string): { status: number | null; output: string } {
  const run = spawnSync(PROMTOOL, ['check', 'metrics'], {
    input: exposition,
    encoding: 'utf8',
    timeout: 20_000,
  });
  if (run.error !== undefined) throw run.error;
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

// ---------------------------------------------------------------- a real Prometheus

interface PrometheusServer {
  port: number;
  child: ChildProcess;
  log(): string;
  /** The instant vector of `query`, or null while the server does not answer. */
  query(query: string): Promise<{ metric: Record<string, string>; value: [number, string] }[] | null>;
  stop(): Promise<void>;
}

const prometheusServers: PrometheusServer[] = [];
afterEach(async () => {
  await Promise.all(prometheusServers.splice(0).map((p) => p.stop()));
});

async function startPrometheus(targetPort: number): Promise<PrometheusServer> {
  const dir = mkdtempSync(path.join(tmpdir(), 'orch-prometheus-'));
  const port = await freePort();
  const configPath = path.join(dir, 'prometheus.yml');
  writeFileSync(
    configPath,
    [
      'global:',
      '  scrape_interval: 1s',
      '  scrape_timeout: 1s',
      'scrape_configs:',
      '  - job_name: orchestrator',
      '    metrics_path: /metrics',
      '    static_configs:',
      `      - targets: ['127.0.0.1:${targetPort}']`,
      '',
    ].join('\n'),
  );
  const child = spawn(
    PROMETHEUS,
    [
      `--config.file=${configPath}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    log += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    log += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const server: PrometheusServer = {
    port,
    child,
    log: () => log.slice(-4_000),
    async query(query) {
      try {
        const url = `http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(query)}`;
        const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
        if (response.status !== 200) return null;
        const json = (await response.json()) as {
          status: string;
          data: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
        };
        return json.status === 'success' ? json.data.result : null;
      } catch {
        return null;
      }
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  prometheusServers.push(server);
  return server;
}

// ---------------------------------------------------------------- the test

const M = 'orchestrator_';

/** The counters that must have moved between a mid-run scrape and the end of the run. */
function progress(samples: Sample[]) {
  return {
    dispatches: total(samples, `${M}dispatches_total`),
    exits: total(samples, `${M}worker_exits_total`),
    succeeded: total(samples, `${M}worker_exits_total`, { exit_kind: 'succeeded' }),
    outputTokens: total(samples, `${M}tokens_total`, { type: 'output' }),
    turns: total(samples, `${M}turns_total`),
    toolCalls: total(samples, `${M}tool_calls_total`),
    polls: total(samples, `${M}poll_cycles_total`, { result: 'success' }),
    candidateFetches: total(samples, `${M}tracker_requests_total`, {
      operation: 'fetch_candidate_issues',
      result: 'success',
    }),
    handoffs: total(samples, `${M}handoff_transitions_total`, { result: 'success' }),
  };
}

describe.skipIf(MISSING)('GET /metrics of a running service', () => {
  it('a mid-run scrape passes promtool, later scrapes show the counters moved, and a real Prometheus scrapes it (up == 1, dispatches)', {
    timeout: 180_000,
  }, async () => {
    const project = createProject({
      issues: Array.from({ length: ISSUES }, (_, i) => makeIssue(i + 1, RUN)),
      config: { agent: { max_concurrent_agents: 2 }, mock: { line_delay_ms: LINE_DELAY_MS } },
    });
    const port = await freePort();
    const service: ServiceHandle = startService(project, { args: ['--port', String(port)] });
    const prometheus = await startPrometheus(port);
    const explain = () => `${service.tail()}\n--- prometheus ---\n${prometheus.log()}`;

    // Mid-run: sessions are running and not every issue has finished.
    const mid = await waitFor(
      'a scrape while sessions run',
      async () => {
        const s = await scrape(port);
        return s !== null && total(s.samples, `${M}sessions_running`) >= 1 ? s : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100, explain },
    );
    expect(mid.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    const checked = promtool(mid.body);
    expect(checked, checked.output).toEqual({ status: 0, output: '' });
    const before = progress(mid.samples);
    expect(before.dispatches).toBeGreaterThanOrEqual(1);
    expect(before.exits, 'the mid-run scrape came after every run had ended').toBeLessThan(ISSUES);
    expect(total(mid.samples, `${M}slots_available`)).toBe(2 - total(mid.samples, `${M}sessions_running`));
    expect(total(mid.samples, `${M}build_info`)).toBe(1);
    expect(total(mid.samples, `${M}process_resident_memory_bytes`)).toBeGreaterThan(0);

    // The end of the run: every issue handed off, every run counted.
    const end = await waitFor(
      'every run counted as succeeded',
      async () => {
        const s = await scrape(port);
        return s !== null && total(s.samples, `${M}worker_exits_total`, { exit_kind: 'succeeded' }) >= ISSUES
          ? s
          : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 200, explain },
    );
    const after = progress(end.samples);
    expect(after.dispatches).toBe(ISSUES);
    expect(total(end.samples, `${M}dispatches_total`, { attempt: 'first' })).toBe(ISSUES);
    expect(after.succeeded).toBe(ISSUES);
    expect(after.exits).toBe(ISSUES);
    expect(after.outputTokens).toBe(ISSUES * 30);
    expect(after.turns).toBe(ISSUES);
    expect(after.toolCalls).toBe(ISSUES * 3);
    expect(total(end.samples, `${M}tool_calls_total`, { tool_kind: 'shell', result: 'success' })).toBe(
      ISSUES * 3,
    );
    expect(total(end.samples, `${M}worker_duration_seconds_count`, { exit_kind: 'succeeded' })).toBe(ISSUES);
    expect(total(end.samples, `${M}worker_duration_seconds_sum`)).toBeGreaterThan(ISSUES * 2);
    for (const key of Object.keys(before) as (keyof typeof before)[]) {
      expect(after[key], `${key} did not move between the mid-run scrape and the end`).toBeGreaterThan(
        before[key],
      );
    }
    // The models are the runtime's names, and no label value names an issue.
    const models = new Set(
      end.samples.filter((s) => s.name === `${M}tokens_total`).map((s) => s.labels.model ?? ''),
    );
    expect([...models]).toEqual(['mock-model']);
    const labelValues = end.samples.flatMap((s) => Object.values(s.labels));
    for (let n = 1; n <= ISSUES; n += 1) expect(labelValues).not.toContain(`E-${n}`);
    expect(promtool(end.body)).toEqual({ status: 0, output: '' });

    // The real Prometheus saw the target up and reads the dispatch counter's final value.
    await waitFor(
      'Prometheus to report up == 1',
      async () => {
        const up = await prometheus.query('up{job="orchestrator"}');
        return up?.length === 1 && up[0]?.value[1] === '1';
      },
      { timeoutMs: 60_000, intervalMs: 250, explain },
    );
    const dispatched = await waitFor(
      `Prometheus to read ${ISSUES} dispatches`,
      async () => {
        const result = await prometheus.query(`sum(${M}dispatches_total)`);
        const value = Number(result?.[0]?.value[1]);
        return value === ISSUES ? result : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250, explain },
    );
    expect(Number(dispatched[0]?.value[1])).toBeGreaterThan(0);
    const series = await prometheus.query(`${M}dispatches_total{attempt="first"}`);
    expect(series?.[0]?.metric).toMatchObject({ job: 'orchestrator', instance: `127.0.0.1:${port}` });

    await prometheus.stop();
    const stopped = await service.stop(30_000);
    expect(stopped, service.tail()).toMatchObject({ code: 0, killed: false });
  });
});
