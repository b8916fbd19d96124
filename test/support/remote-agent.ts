/**
 * Installs agents for the SSH tests' "remote" hosts, as an operator installs an
 * agent CLI at the same path on every worker host, so the hosts need nothing of
 * this repository (which may sit where the hosts' users cannot read it):
 * - the mock runtime, bundled into one world-readable file, with a wrapper that
 *   starts a long-lived child before the runtime, to prove a group kill reaches
 *   what the agent started;
 * - a real CLI (a package folder scripts/install-agent-clis.sh installed), copied
 *   into a fresh world-readable directory with a wrapper that exports the CLI's
 *   non-secret settings and `exec`s it.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildSync } from 'esbuild';
import { shellQuote } from '../../src/ssh/index.js';
import { REPO_ROOT } from './cli.js';

export interface RemoteAgent {
  /** `agent.command` for the plain runtime. */
  command: string;
  /** `agent.command` for a wrapper that first starts `sleep 600 &` (a child in the agent's group). */
  withChildCommand: string;
  /** Marker in the command line of the wrapper's child, to find it among the user's processes. */
  childMarker: string;
}

/** Bundles the mock runtime into a fresh directory every user can read and run. */
export function installMockAgent(): RemoteAgent {
  const bin = mkdtempSync(path.join(tmpdir(), 'orch-remote-agent-'));
  mkdirSync(bin, { recursive: true });
  chmodSync(bin, 0o755);
  const runtime = path.join(bin, 'mock-agent.mjs');
  buildSync({
    entryPoints: [path.join(REPO_ROOT, 'src', 'agent', 'mock', 'runtime.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: runtime,
    logLevel: 'silent',
  });
  const childMarker = '600.25';
  const wrapper = path.join(bin, 'mock-agent-with-child.sh');
  writeFileSync(wrapper, `#!/bin/sh\nsleep ${childMarker} &\nexec ${process.execPath} ${runtime}\n`);
  chmodSync(wrapper, 0o755);
  chmodSync(runtime, 0o644);
  return { command: `${process.execPath} ${runtime}`, withChildCommand: wrapper, childMarker };
}

export interface RemoteCli {
  /** The world-readable copy of the package folder. */
  dir: string;
  /** `agent.command`: the wrapper, an absolute path with no spaces. */
  command: string;
  /** The wrapper's text (every user of the host can read it). */
  wrapperText: string;
  /** Removes the copy. */
  remove(): void;
}

/** Names that look like credentials: they belong in the session env (sent over stdin), never in a file. */
const SECRET_NAME = /KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL/i;

/**
 * Copies the installed package folder `source` into a fresh directory every user can
 * read (directories 755, files readable, executables executable) and writes a wrapper
 * there that exports `settings` and `exec`s `bin` (a path inside `source`) with its
 * arguments. The wrapper is world-readable, so a setting whose name looks like a
 * credential is refused: those travel in the session env.
 */
export function installRealCli(
  source: string,
  bin: string,
  settings: Readonly<Record<string, string>>,
): RemoteCli {
  const secret = Object.keys(settings).filter((name) => SECRET_NAME.test(name));
  if (secret.length > 0) throw new Error(`installRealCli: ${secret.join(', ')} must go in the session env`);
  const dir = mkdtempSync(path.join(tmpdir(), 'orch-remote-cli-'));
  // -a keeps the symlinks (node_modules/.bin) and the hardlinks (the native binary is linked twice).
  execFileSync('cp', ['-a', '--', `${source}/.`, dir], { stdio: 'pipe' });
  openUp(dir);
  const wrapper = path.join(dir, 'remote-cli.sh');
  const wrapperText = [
    '#!/bin/sh',
    ...Object.entries(settings).map(([name, value]) => `export ${name}=${shellQuote(value)}`),
    `exec ${shellQuote(path.join(dir, bin))} "$@"`,
    '',
  ].join('\n');
  writeFileSync(wrapper, wrapperText);
  chmodSync(wrapper, 0o755);
  return { dir, command: wrapper, wrapperText, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Directories 755; files readable by all, and executable by all when their owner may run them. */
function openUp(dir: string): void {
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) {
      openUp(full);
      continue;
    }
    const mode = lstatSync(full).mode & 0o7777;
    chmodSync(full, mode | 0o444 | (mode & 0o100 ? 0o111 : 0));
  }
}
