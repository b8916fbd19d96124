/**
 * `orchestrator run`: the long-running service (service.ts), or with
 * `--dry-run` a plan of one tick: the tracker's candidates, what would be
 * dispatched (and on which SSH host) and why not the rest. A dry run claims,
 * writes, connects to and starts nothing.
 */
import type { Diagnostic } from '../domain/diagnostic.js';
import { HostPool } from '../orchestrator/host-pool.js';
import { type PlanRow, planDispatch } from '../orchestrator/plan.js';
import { trackerKind } from '../tracker/registry.js';
import type { ServiceConfig } from '../workflow/config.js';
import { loadWorkflow } from '../workflow/load.js';
import { kindCatalog } from './catalog.js';
import { formatDiagnostics } from './diagnostics-format.js';

export interface RunOptions {
  dryRun: boolean;
  once: boolean;
  untilIdle?: boolean;
  /** With `untilIdle`: keep serving the dashboard once idle, until a signal. */
  keepServing?: boolean;
  envFile?: string;
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  logFormat?: 'auto' | 'json' | 'pretty';
  port?: number;
  host?: string;
}

/**
 * How long a dry run waits for the tracker's first answer before saying it cannot reach it, so
 * the verdict comes within two seconds of start-up. A reachable API answers a HEAD well within it.
 */
export const TRACKER_REACH_TIMEOUT_MS = 1_000;

/** Runs the command and returns its exit code. */
export async function runRun(
  workflowPath: string,
  options: RunOptions,
  out: (text: string) => void,
  err: (text: string) => void,
): Promise<number> {
  if (!options.dryRun) {
    const { runService } = await import('./service.js');
    return runService(
      workflowPath,
      {
        once: options.once,
        untilIdle: options.untilIdle === true,
        keepServing: options.keepServing === true,
        ...(options.logLevel !== undefined ? { logLevel: options.logLevel } : {}),
        ...(options.logFormat !== undefined ? { logFormat: options.logFormat } : {}),
        ...(options.envFile !== undefined ? { envFile: options.envFile } : {}),
        ...(options.port !== undefined ? { port: options.port } : {}),
        ...(options.host !== undefined ? { host: options.host } : {}),
      },
      err,
      out,
    );
  }
  const loaded = loadWorkflow(workflowPath, {
    env: process.env,
    kinds: kindCatalog(),
    checkRender: true,
    localFiles: 'error',
    ...(options.envFile !== undefined ? { envFile: options.envFile } : {}),
  });
  const report = (diagnostics: Diagnostic[]) => {
    if (diagnostics.length > 0) err(formatDiagnostics('text', workflowPath, diagnostics, process.cwd()));
  };
  if (!loaded.ok) {
    report(loaded.diagnostics);
    return 1;
  }
  report(loaded.workflow.diagnostics);
  const { config } = loaded.workflow;
  const kind = trackerKind(config.tracker.kind);
  const create = kind?.create;
  if (create === undefined) {
    err(
      `orchestrator run: tracker kind "${config.tracker.kind}" can be validated but not run by this build\n`,
    );
    return 1;
  }
  const reached = (await kind?.reach?.(config.tracker, TRACKER_REACH_TIMEOUT_MS)) ?? { ok: true };
  if (!reached.ok) {
    const code = 'tracker.unreachable';
    err(
      `orchestrator run: error ${code}: cannot reach the ${config.tracker.kind} tracker at ${reached.address}: ${reached.reason}; nothing was planned\n`,
    );
    return 1;
  }
  let candidates: Awaited<ReturnType<Awaited<ReturnType<typeof create>>['fetchCandidateIssues']>>;
  try {
    candidates = await (await create(config.tracker)).fetchCandidateIssues();
  } catch (error) {
    err(
      `orchestrator run: fetching candidates failed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
    return 1;
  }
  // A dry run connects to nothing, so every configured host counts as up and idle.
  const hosts = new HostPool({ nowMs: () => Date.now() });
  hosts.configure(config.worker.sshHosts, config.worker.maxConcurrentAgentsPerHost);
  const rows = planDispatch(
    candidates,
    {
      activeStates: config.tracker.activeStates,
      terminalStates: config.tracker.terminalStates,
      busyIds: new Set(),
      exhaustedIds: new Set(),
      requiredLabels: config.tracker.requiredLabels,
    },
    {
      maxConcurrentAgents: config.agent.maxConcurrentAgents,
      maxConcurrentAgentsByState: config.agent.maxConcurrentAgentsByState,
    },
    hosts,
  );
  out(formatPlan(rows, config));
  return 0;
}

/**
 * The dry-run report: one line per candidate in dispatch order, then a summary.
 * With SSH hosts a dispatch line ends with the host it would run on, and a
 * candidate left without one says why (`ssh_hosts_at_capacity`).
 */
export function formatPlan(
  rows: readonly PlanRow[],
  config: Pick<ServiceConfig, 'agent' | 'worker'>,
): string {
  const width = Math.max(10, ...rows.map((r) => r.issue.identifier.length));
  const lines = rows.map((row) => {
    const head = `${row.issue.identifier.padEnd(width)}  ${row.dispatch ? 'dispatch' : 'skip    '}`;
    const tail = row.dispatch
      ? `${row.issue.title}${row.host !== null ? `  (ssh_host ${row.host})` : ''}`
      : `${row.reason}: ${row.detail}`;
    return `${head}  [${row.issue.state}] ${tail}`;
  });
  const dispatched = rows.filter((r) => r.dispatch).length;
  const { sshHosts, maxConcurrentAgentsPerHost } = config.worker;
  const where =
    sshHosts.length === 0
      ? ''
      : ` on ${sshHosts.length} ssh host${sshHosts.length === 1 ? '' : 's'} (${
          maxConcurrentAgentsPerHost > 0
            ? `max_concurrent_agents_per_host ${maxConcurrentAgentsPerHost}`
            : 'no per-host cap'
        })`;
  lines.push(
    `${rows.length} candidates, ${dispatched} would be dispatched to agent "${config.agent.kind}" (max_concurrent_agents ${config.agent.maxConcurrentAgents})${where}`,
  );
  return `${lines.join('\n')}\n`;
}
