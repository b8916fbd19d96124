/**
 * What the installed CLI loads must be installed with it: every package the sources import at
 * run time (not `import type`) is a production dependency, since `npm install --omit=dev`
 * leaves devDependencies out (`graphql`, needed by the Linear tracker's query tool, was one).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';

/** Every .ts file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sources(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`). */
const packageOf = (specifier: string) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');

/** Packages imported for their values: static imports that are not `import type`, and dynamic imports. */
function runtimeImports(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/^import\s+(?!type\s)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm))
    found.push(m[1] as string);
  for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push(m[1] as string);
  return found.filter((s) => !s.startsWith('.') && !s.startsWith('node:') && !builtinModules.includes(s));
}

describe('production dependencies', () => {
  it('every package src/ imports at run time is in dependencies, not only devDependencies', () => {
    const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const used = new Map<string, string>();
    for (const file of sources(path.join(REPO_ROOT, 'src'))) {
      for (const specifier of runtimeImports(readFileSync(file, 'utf8'))) {
        used.set(packageOf(specifier), path.relative(REPO_ROOT, file));
      }
    }
    // The scan found the imports it is meant to find.
    expect(used.get('better-sqlite3')).toBeDefined();
    expect(used.get('graphql')).toBe('src/tracker/linear/query-tool.ts');
    const missing = [...used].filter(([name]) => !Object.hasOwn(pkg.dependencies, name));
    expect(missing).toEqual([]);
  });
});
