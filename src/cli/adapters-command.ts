/**
 * `orchestrator adapters`: which agent kinds this machine can run. For each kind:
 * whether its command is on PATH, what `--version` says, and the declarations
 * operators need when writing a workflow (usage disposition, tool channel), and
 * whether its sandbox can run commands here with the kind's default settings.
 */
import { execFile } from 'node:child_process';
import { resolveOnPath, splitCommand } from '../agent/core/launch-target.js';
import '../agent/kinds.js';
import { type AgentRuntimeDeclaration, agentKinds } from '../agent/registry.js';
import { type SandboxReport, sandboxReport } from './sandbox-health.js';

/** How long a version probe may take before the kind is reported unhealthy. */
export const HEALTH_TIMEOUT_MS = 2_000;

export interface AdapterReport {
  kind: string;
  runnable: boolean;
  command: string | null;
  commandPath: string | null;
  version: string | null;
  health: 'ok' | 'missing' | 'timeout' | 'error' | 'builtin' | 'not_built';
  detail: string;
  usageArrival: string | null;
  usageAttribution: string | null;
  mcpDialect: string | null;
  /** Null for a kind this build cannot run, or when sandboxes were not probed. */
  sandbox: SandboxReport | null;
}

/** One kind in `adapters --json`: the report under snake_case keys, as the HTTP API spells fields. */
export interface AdapterJson {
  kind: string;
  runnable: boolean;
  command: string | null;
  command_path: string | null;
  version: string | null;
  health: AdapterReport['health'];
  detail: string;
  usage_arrival: string | null;
  usage_attribution: string | null;
  mcp_dialect: string | null;
  sandbox: SandboxReport | null;
}

/** Version of the `adapters --json` shape; 2 since its keys became snake_case. */
export const ADAPTERS_JSON_VERSION = 2;

function adapterJson(report: AdapterReport): AdapterJson {
  return {
    kind: report.kind,
    runnable: report.runnable,
    command: report.command,
    command_path: report.commandPath,
    version: report.version,
    health: report.health,
    detail: report.detail,
    usage_arrival: report.usageArrival,
    usage_attribution: report.usageAttribution,
    mcp_dialect: report.mcpDialect,
    sandbox: report.sandbox,
  };
}

function probeVersion(
  file: string,
  args: readonly string[],
  probe: AgentRuntimeDeclaration['versionProbe'],
): Promise<{ health: AdapterReport['health']; version: string | null; detail: string }> {
  const timeoutMs = probe?.timeoutMs ?? HEALTH_TIMEOUT_MS;
  const env = probe?.env === undefined ? process.env : { ...process.env, ...probe.env };
  return new Promise((resolve) => {
    const child = execFile(
      file,
      [...args, '--version'],
      { timeout: timeoutMs, killSignal: 'SIGKILL', encoding: 'utf8', env },
      (error, stdout, stderr) => {
        const text = `${stdout}`.trim() || `${stderr}`.trim();
        const first = text.split('\n')[0]?.trim() ?? '';
        if (error !== null) {
          const timedOut = (error as { killed?: boolean }).killed === true;
          resolve({
            health: timedOut ? 'timeout' : 'error',
            version: null,
            detail: timedOut ? `no answer within ${timeoutMs} ms` : first || error.message,
          });
          return;
        }
        resolve({ health: 'ok', version: first || null, detail: '' });
      },
    );
    child.stdin?.end();
  });
}

/**
 * Builds the report for every registered kind, probing each command concurrently; with
 * `probeSandboxes` false (the service's background listing) no sandbox is probed.
 */
export async function adapterReports(
  env: NodeJS.ProcessEnv,
  probeSandboxes = true,
): Promise<AdapterReport[]> {
  const sandbox = (kind: string, runtime: AgentRuntimeDeclaration, found: boolean) =>
    probeSandboxes ? sandboxReport(kind, runtime, env, found) : Promise.resolve(null);
  return Promise.all(
    agentKinds().map(async (kind): Promise<AdapterReport> => {
      const runtime = kind.runtime;
      const base = {
        kind: kind.name,
        usageArrival: kind.usageDisposition?.arrival ?? null,
        usageAttribution: kind.usageDisposition?.attribution ?? null,
        mcpDialect: runtime?.mcpDialect ?? null,
      };
      if (runtime === undefined) {
        return {
          ...base,
          runnable: false,
          command: null,
          commandPath: null,
          version: null,
          health: 'not_built',
          detail: 'validated, but this build cannot run it yet',
          sandbox: null,
        };
      }
      if (!runtime.requiresCommand || runtime.defaultCommand === null) {
        return {
          ...base,
          runnable: true,
          command: runtime.defaultCommand,
          commandPath: null,
          version: null,
          health: 'builtin',
          detail: 'runs without an external command',
          sandbox: await sandbox(kind.name, runtime, true),
        };
      }
      // The program alone answers --version: `codex app-server --version` is refused.
      const [program] = splitCommand(runtime.defaultCommand);
      const found = program === undefined ? null : resolveOnPath(program, env.PATH);
      if (found === null) {
        return {
          ...base,
          runnable: false,
          command: runtime.defaultCommand,
          commandPath: null,
          version: null,
          health: 'missing',
          detail: `${program} is not on PATH`,
          sandbox: await sandbox(kind.name, runtime, false),
        };
      }
      const probe = await probeVersion(found, [], runtime.versionProbe);
      return {
        ...base,
        runnable: probe.health === 'ok',
        command: runtime.defaultCommand,
        commandPath: found,
        ...probe,
        sandbox: await sandbox(kind.name, runtime, probe.health === 'ok'),
      };
    }),
  );
}

/** Prints the report; exit 0 always (an absent CLI is information, not failure). */
export async function runAdapters(json: boolean, out: (text: string) => void): Promise<number> {
  const reports = await adapterReports(process.env);
  if (json) {
    const doc = { version: ADAPTERS_JSON_VERSION, adapters: reports.map(adapterJson) };
    out(`${JSON.stringify(doc, null, 2)}\n`);
    return 0;
  }
  const rows = reports.map((r) => [
    r.kind,
    r.health,
    r.version ?? '-',
    r.usageArrival === null ? '-' : `${r.usageArrival}/${r.usageAttribution}`,
    r.mcpDialect ?? '-',
    r.sandbox?.status ?? '-',
    r.detail || r.commandPath || '',
  ]);
  const header = ['KIND', 'HEALTH', 'VERSION', 'USAGE', 'TOOLS', 'SANDBOX', 'DETAIL'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  // What a sandbox status means for the operator: the fix, or what to check by hand.
  const notes = reports.flatMap((r) =>
    r.sandbox !== null && ['unusable', 'unchecked', 'unprobeable'].includes(r.sandbox.status)
      ? [`${r.kind} sandbox ${r.sandbox.status}: ${r.sandbox.detail}`]
      : [],
  );
  const tail = notes.length === 0 ? '' : `\n${notes.join('\n\n')}\n`;
  out(`${[line(header), ...rows.map(line)].join('\n')}\n${tail}`);
  return 0;
}
