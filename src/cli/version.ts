/** The package's version, read once from package.json beside the build. */
import { readFileSync } from 'node:fs';
import path from 'node:path';

let cached: string | null = null;

/** The version in package.json, "0.0.0" when it cannot be read. */
export function packageVersion(): string {
  if (cached !== null) return cached;
  try {
    const pkg = JSON.parse(
      readFileSync(path.join(import.meta.dirname, '..', '..', 'package.json'), 'utf8'),
    ) as { version?: string };
    cached = pkg.version ?? '0.0.0';
  } catch {
    cached = '0.0.0';
  }
  return cached;
}
