/**
 * What the Codex sandbox tests need of this machine. Codex refuses to create its helper
 * binaries when CODEX_HOME is under the temporary folder; that only breaks the sandbox
 * when the bubblewrap Codex finds on PATH has no `--argv0` (Debian 12's 0.8.0, Ubuntu
 * 22.04's): with none on PATH, or a newer one, Codex runs its own bundled bubblewrap and
 * the refusal is harmless. So the failing cases need such a system bubblewrap
 * (`apt-get install bubblewrap` on Debian 12); the cases with the fix need none.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveOnPath } from '../../../src/agent/core/launch-target.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** Why the cases that need the refusal to bite skip, or null when they run. Absent in CI fails. */
export function oldBwrapSkipReason(): string | null {
  const bwrap = resolveOnPath('bwrap', process.env.PATH);
  let reason: string | null = null;
  if (bwrap === null) {
    reason = 'no bubblewrap on PATH (apt-get install bubblewrap), so Codex uses its bundled one';
  } else {
    let help = '';
    try {
      help = execFileSync(bwrap, ['--help'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (error) {
      help = String((error as { stdout?: unknown }).stdout ?? '');
    }
    if (help.includes('--argv0')) {
      reason = `${bwrap} supports --argv0, so a CODEX_HOME under the temporary folder does not break the sandbox`;
    }
  }
  if (reason !== null && process.env.CI !== undefined && process.env.CI !== '') {
    throw new Error(`${reason}; CI must run the sandbox failure cases (install Debian's bubblewrap)`);
  }
  return reason;
}

function inside(folder: string, parent: string): boolean {
  const rel = path.relative(parent, folder);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * A fresh folder outside the temporary folder, for `codex.home_root` (the fix the error names):
 * under the repository's git-ignored .cache, else under the test user's ~/.cache.
 */
export function homeRootOutsideTemp(name: string): string {
  const tmp = os.tmpdir();
  const candidates = [path.join(ROOT, '.cache'), path.join(os.homedir(), '.cache')];
  const base = candidates.find((c) => !inside(path.resolve(c), path.resolve(tmp)));
  if (base === undefined)
    throw new Error(`no folder outside ${tmp} for codex.home_root (tried ${candidates})`);
  const dir = path.join(base, 'test-codex-homes', `${name}-${process.pid}-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}
