/**
 * How an agent process ended, in words and in the one case the exit code alone
 * decides: a shell that could not find the command exits 127. Everything else
 * about a turn's outcome is judged from its output, never from the exit code.
 */

/** A process's end as Node reports it: a code for a normal exit, a signal name when killed. */
export interface ProcessExit {
  /** Exit status, null when the process was killed by a signal. */
  exitCode: number | null;
  /** Signal name such as `SIGKILL`, null for a normal exit. */
  signal: string | null;
}

/** The exit status of a shell or launcher that found no such command. */
export const COMMAND_NOT_FOUND_EXIT_CODE = 127;

/** True for exit status 127 (command not found). */
export function isCommandNotFoundExit(exitCode: number | null): boolean {
  return exitCode === COMMAND_NOT_FOUND_EXIT_CODE;
}

/** `exit 2`, `signal SIGKILL`, or `exit unknown` when Node reported neither. */
export function describeExit(exit: ProcessExit): string {
  if (exit.signal !== null) return `signal ${exit.signal}`;
  if (exit.exitCode !== null) return `exit ${exit.exitCode}`;
  return 'exit unknown';
}
