/**
 * The opt-in `.env` reader. Loaded only when the operator names a file, because
 * silently reading a stray `.env` from the working directory has leaked the wrong
 * credentials into runs before. No interpolation, no escapes: what you see is the value.
 */
import type { Diagnostic } from '../domain/diagnostic.js';

export interface DotenvResult {
  vars: Record<string, string>;
  diagnostics: Diagnostic[];
}

const KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Parses `.env` text; bad lines become diagnostics naming the file and line, good ones are kept. */
export function parseDotenv(text: string, file: string): DotenvResult {
  const vars: Record<string, string> = {};
  const diagnostics: Diagnostic[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const stripped = line.startsWith('export ') ? line.slice('export '.length).trimStart() : line;
    const eq = stripped.indexOf('=');
    const at = { file, line: index + 1, column: 1 };
    if (eq === -1) {
      diagnostics.push({
        severity: 'error',
        code: 'env_file.syntax',
        message: `missing "=" in ${JSON.stringify(line)}`,
        ...at,
      });
      return;
    }
    const key = stripped.slice(0, eq).trim();
    if (!KEY.test(key)) {
      diagnostics.push({
        severity: 'error',
        code: 'env_file.invalid_key',
        message: `invalid key ${JSON.stringify(key)}`,
        ...at,
      });
      return;
    }
    let value = stripped.slice(eq + 1).trim();
    const quote = value[0];
    if (value.length >= 2 && (quote === '"' || quote === "'") && value.endsWith(quote))
      value = value.slice(1, -1);
    vars[key] = value;
  });
  return { vars, diagnostics };
}
