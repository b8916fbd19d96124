/**
 * `orchestrator adapters`: which agent kinds this machine can run. For each kind:
 * whether its command is on PATH, what `--version` says, and the declarations
 * operators need when writing a workflow (usage disposition, tool channel).
 */
import { execFile } from 'node:child_process';
import { resolveOnPath, splitCommand } from '../agent/core/launch-target.js';
import '../agent/kinds.js';
import { agentKinds } from '../agent/registry.js';

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
}

function probeVersion(
  file: string,
  args: readonly string[],
): Promise<{ health: AdapterReport['health']; version: string | null; detail: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      file,
      [...args, '--version'],
      { timeout: HEALTH_TIMEOUT_MS, killSignal: 'SIGKILL', encoding: 'utf8' },
      (error, stdout, stderr) => {
        const text = `${stdout}`.trim() || `${stderr}`.trim();
        const first = text.split('\n')[0]?.trim() ?? '';
        if (error !== null) {
          const timedOut = (error as { killed?: boolean }).killed === true;
          resolve({
            health: timedOut ? 'timeout' : 'error',
            version: null,
            detail: timedOut ? `no answer within ${HEALTH_TIMEOUT_MS} ms` : first || error.message,
          });
          return;
        }
        resolve({ health: 'ok', version: first || null, detail: '' });
      },
    );
    child.stdin?.end();
  });
}

/** Builds the report for every registered kind, probing each command concurrently. */
export async function adapterReports(env: NodeJS.ProcessEnv): Promise<AdapterReport[]> {
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
        };
      }
      const probe = await probeVersion(found, []);
      return {
        ...base,
        runnable: probe.health === 'ok',
        command: runtime.defaultCommand,
        commandPath: found,
        ...probe,
      };
    }),
  );
}

/** Prints the report; exit 0 always (an absent CLI is information, not failure). */
export async function runAdapters(json: boolean, out: (text: string) => void): Promise<number> {
  const reports = await adapterReports(process.env);
  if (json) {
    out(`${JSON.stringify({ version: 1, adapters: reports }, null, 2)}\n`);
    return 0;
  }
  const rows = reports.map((r) => [
    r.kind,
    r.health,
    r.version ?? '-',
    r.usageArrival === null ? '-' : `${r.usageArrival}/${r.usageAttribution}`,
    r.mcpDialect ?? '-',
    r.detail || r.commandPath || '',
  ]);
  const header = ['KIND', 'HEALTH', 'VERSION', 'USAGE', 'TOOLS', 'DETAIL'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  out(`${[line(header), ...rows.map(line)].join('\n')}\n`);
  return 0;
}
