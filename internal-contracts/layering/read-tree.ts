/** Reads the source tree for the layering check: every TypeScript file under a folder. */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { SourceFile } from './check.js';

const SOURCE_EXTENSIONS = ['.ts', '.mts', '.cts', '.tsx'];

/** Every TypeScript file under `root/folder`, with repository-relative `/` paths. */
export function readSourceTree(root: string, folder = 'src'): SourceFile[] {
  const files: SourceFile[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && SOURCE_EXTENSIONS.some((ext) => entry.name.endsWith(ext))) {
        files.push({
          path: path.relative(root, full).split(path.sep).join('/'),
          text: readFileSync(full, 'utf8'),
        });
      }
    }
  };
  walk(path.join(root, folder));
  return files.sort((a, b) => a.path.localeCompare(b.path));
}
