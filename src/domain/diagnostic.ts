/**
 * A diagnostic about a workflow: what `validate` prints and what a failed reload
 * reports. Positions are 1-based and always point into the ORIGINAL file bytes.
 */

/**
 * `info` explains what the loader did with a key (read it under another name, inferred a value);
 * it never fails `validate`, not even under `--strict`.
 */
export type Severity = 'error' | 'warning' | 'info';

export interface Diagnostic {
  severity: Severity;
  /** Stable, documented code such as `agent.max_turns.invalid`. */
  code: string;
  message: string;
  /** Path of the file the diagnostic is about (WORKFLOW.md, an issues file, a .env file). */
  file: string;
  /** 1-based line; null when the problem has no place in the file (a missing key, an env var). */
  line: number | null;
  /** 1-based column; null together with line. */
  column: number | null;
  /** Dotted config path (`agent.max_turns`) when the diagnostic is about a key. */
  path?: string;
}

/** True when any diagnostic is a warning (what `validate --strict` refuses besides errors). */
export function hasWarnings(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === 'warning');
}

/** True when any diagnostic is an error. */
export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === 'error');
}

/**
 * A problem found in a config value before positions are known: `path` is the key
 * path inside the front matter (`['agent', 'max_turns']`), turned into a line later.
 */
export interface ConfigIssue {
  severity: Severity;
  code: string;
  message: string;
  path: readonly (string | number)[];
}
