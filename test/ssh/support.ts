/** Shared helpers for the SSH tests: options for a test sshd and stream collection. */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RemoteProcess } from '../../src/domain/remote.js';
import { SshHosts, type SshOptions } from '../../src/ssh/index.js';
import type { Sshd } from '../support/sshd.js';

/** Options that reach `sshd` with its client key; the known_hosts file lives in a fresh temp dir. */
export function optionsFor(sshd: Sshd, over: Partial<SshOptions> = {}): SshOptions {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ssh-known-'));
  return {
    strictHostKeyChecking: 'accept-new',
    knownHostsFile: path.join(dir, 'nested', 'known_hosts'),
    identityFile: sshd.clientKeyPath,
    agentSocket: null,
    defaultUser: sshd.user,
    connectTimeoutMs: 5_000,
    reconnectBackoff: { baseMs: 200, maxMs: 1_000 },
    ...over,
  };
}

/** A registry that is closed by `closeAll` (call from `afterEach`/`afterAll`). */
const opened: SshHosts[] = [];
export function hostsFor(sshd: Sshd, over: Partial<SshOptions> = {}): SshHosts {
  const hosts = new SshHosts(optionsFor(sshd, over));
  opened.push(hosts);
  return hosts;
}

export async function closeAll(): Promise<void> {
  await Promise.all(opened.splice(0).map((hosts) => hosts.close()));
}

/** Everything a stream yields until it ends. */
export function collect(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer | string) => chunks.push(Buffer.from(chunk)));
    stream.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

/** Stdout, stderr and the exit of a process that is left to finish. */
export async function finish(
  process: RemoteProcess,
): Promise<{ stdout: string; stderr: string; exit: Awaited<RemoteProcess['exited']> }> {
  const [stdout, stderr, exit] = await Promise.all([
    collect(process.stdout),
    collect(process.stderr),
    process.exited,
  ]);
  return { stdout, stderr, exit };
}

/** Resolves with the first `count` bytes of stdout as text once they arrived. */
export function firstOutput(process: RemoteProcess, marker: string): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (chunk: Buffer | string) => {
      text += chunk.toString();
      if (text.includes(marker)) {
        process.stdout.removeListener('data', onData);
        resolve(text);
      }
    };
    process.stdout.on('data', onData);
  });
}
