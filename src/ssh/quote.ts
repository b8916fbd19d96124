/**
 * Quoting for the host's POSIX shell. Everything the orchestrator sends to a host is
 * either a literal quoted here or data read from standard input; nothing is pasted
 * into a command line unquoted, so a value with quotes, `$`, backquotes or newlines
 * reaches the host exactly as it was.
 */

/** Names a shell can export; anything else is refused before it is sent. */
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** `value` as one single-quoted shell word (`'` becomes `'\''`); the empty string becomes `''`. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/**
 * The `export NAME='value'` lines that carry `env` over standard input, ending with
 * `endLine`. A value may span lines (the quotes hold it together); a name that is not a
 * shell name, or a value with NUL (which no environment can hold), is refused by name.
 */
export function envPreamble(
  env: Readonly<Record<string, string>>,
  endLine: string,
): { ok: true; text: string } | { ok: false; message: string } {
  const lines: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!ENV_NAME_PATTERN.test(name)) {
      return { ok: false, message: `environment variable name ${JSON.stringify(name)} is not a shell name` };
    }
    if (value.includes('\0')) {
      return { ok: false, message: `environment variable ${name} contains a NUL character` };
    }
    // Unreachable in practice (the end line carries a fresh random nonce), but a value holding it would cut the preamble.
    if (value.includes(endLine)) {
      return { ok: false, message: `environment variable ${name} contains the preamble's end line` };
    }
    lines.push(`export ${name}=${shellQuote(value)}`);
  }
  lines.push(endLine);
  return { ok: true, text: `${lines.join('\n')}\n` };
}
