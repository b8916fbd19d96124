/**
 * Installs the mock runtime for the SSH tests' "remote" hosts: bundled into one
 * world-readable file, as an operator installs an agent CLI at the same path on
 * every worker host, so the hosts need nothing of this repository. Also writes a
 * wrapper that starts a long-lived child before the runtime, to prove a group
 * kill reaches what the agent started.
 */
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildSync } from 'esbuild';
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
