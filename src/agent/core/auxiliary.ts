/**
 * One-off commands beside an agent (a `--help` or version probe), run where the agent
 * runs: here through `execFile`, on an SSH host through its `run`. The program and its
 * arguments reach the host's script as variables, so the script text names none of them
 * and nothing needs quoting.
 */
import { execFile } from 'node:child_process';
import { auxiliaryCommand, type LaunchTarget } from './launch-target.js';

/** Output kept of a probe, in bytes. */
const MAX_OUTPUT_BYTES = 1024 * 1024;

/** Runs the target's program with its leading arguments plus `args`; its stdout, or null when it failed or timed out. */
export function runAuxiliary(
  target: LaunchTarget,
  args: readonly string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<string | null> {
  return target.location.type === 'remote'
    ? runOnHost(target, args, env, timeoutMs)
    : runHere(target, args, env, timeoutMs);
}

function runHere(
  target: LaunchTarget,
  args: readonly string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<string | null> {
  const command = auxiliaryCommand(target, args);
  if (!command.ok) return Promise.resolve(null);
  return new Promise((resolve) => {
    execFile(
      command.command,
      command.args,
      { cwd: command.cwd, env, timeout: timeoutMs, maxBuffer: MAX_OUTPUT_BYTES },
      (error, stdout) => resolve(error === null ? String(stdout) : null),
    );
  });
}

async function runOnHost(
  target: LaunchTarget,
  args: readonly string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<string | null> {
  if (target.location.type !== 'remote') return null;
  const words = [...target.args, ...args];
  const vars: Record<string, string> = { ...env, ORCH_AUX_PROGRAM: target.command };
  words.forEach((word, i) => {
    vars[`ORCH_AUX_ARG_${i}`] = word;
  });
  const argRefs = words.map((_, i) => `"$ORCH_AUX_ARG_${i}"`);
  try {
    const ran = await target.location.host.run({
      script: [
        // A leading ~/ is expanded as the launch's shell expands the program.
        'case $ORCH_AUX_PROGRAM in "~/"*) ORCH_AUX_PROGRAM=$HOME/${ORCH_AUX_PROGRAM#"~/"};; esac',
        // Stdout only, as locally.
        `exec "$ORCH_AUX_PROGRAM" ${argRefs.join(' ')} 2>/dev/null`,
      ].join('\n'),
      cwd: target.workspacePath,
      env: vars,
      timeoutMs,
      maxOutputBytes: MAX_OUTPUT_BYTES,
    });
    if (!ran.ok || ran.result.exitCode !== 0 || ran.result.timedOut) return null;
    return ran.result.output;
  } catch {
    return null;
  }
}
