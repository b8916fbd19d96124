/**
 * Shared helpers for the SSH tests: the file's user and sshd, registries closed after
 * each test, and stream collection.
 */
import { afterEach } from 'vitest';
import type { RemoteProcess } from '../../src/domain/remote.js';
import { type SshHost, SshHosts, type SshOptions } from '../../src/ssh/index.js';
import { type SshSession, sshOptionsFor, useSshHost } from '../support/ssh-session.js';
import { killUserProcesses, type Sshd } from '../support/sshd.js';

/** A registry that is closed by `closeAll` (call from `afterEach`/`afterAll`). */
const opened: SshHosts[] = [];
export function hostsFor(sshd: Sshd, over: Partial<SshOptions> = {}): SshHosts {
  const hosts = new SshHosts(sshOptionsFor(sshd, over));
  opened.push(hosts);
  return hosts;
}

/** The host at `sshd.spec` through a new registry (see `hostsFor`). */
export function freshHost(sshd: Sshd, over: Partial<SshOptions> = {}): SshHost {
  return hostsFor(sshd, over).host(sshd.spec);
}

export async function closeAll(): Promise<void> {
  await Promise.all(opened.splice(0).map((hosts) => hosts.close()));
}

/**
 * The file's own user and sshd (`useSshHost`); after each test the registries of
 * `hostsFor` are closed and every process of the user is killed.
 */
export function useTestSshd(user: string): SshSession {
  const session = useSshHost(user);
  afterEach(async () => {
    await closeAll();
    killUserProcesses(user);
  });
  return session;
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
