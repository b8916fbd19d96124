/**
 * What running on an SSH host costs per command, against a real sshd on 127.0.0.1 (as a
 * non-root test user, like the tests): the first connect, a launch-to-exit of `true` on
 * the warm connection (wrapper, environment over stdin, start line, exit status) against
 * a local spawn of the same, 20 launches at once (past sshd's 10 channels per connection),
 * and a group terminate of a running `sleep` with a child. Target (ours): a warm launch
 * adds at most 100 ms over a local spawn. Needs root and openssh-server.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SshHosts } from '../../src/ssh/index.js';
import { ensureTestUser, startSshd } from '../support/sshd.js';
import { median } from './stats.js';

const ROUNDS = 50;

export async function sshLaunch(): Promise<void> {
  const user = ensureTestUser('orchssh-bench');
  const sshd = await startSshd({ user: user.name });
  const hosts = new SshHosts({
    strictHostKeyChecking: 'accept-new',
    knownHostsFile: path.join(mkdtempSync(path.join(os.tmpdir(), 'bench-kh-')), 'known_hosts'),
    identityFile: sshd.clientKeyPath,
    agentSocket: null,
    defaultUser: user.name,
    connectTimeoutMs: 10_000,
  });
  try {
    const host = hosts.host(sshd.spec);
    let started = performance.now();
    const probe = await host.probe();
    if (!probe.ok) throw new Error(probe.message);
    console.log(`first connect (TCP, key exchange, auth): ${(performance.now() - started).toFixed(0)} ms`);

    const launchOnce = async () => {
      const t0 = performance.now();
      const launched = await host.launch({ cwd: user.home, command: 'true', args: [], env: { A: 'x' } });
      if (!launched.ok) throw new Error(launched.message);
      launched.process.stdout.resume();
      launched.process.stderr.resume();
      await launched.process.exited;
      return performance.now() - t0;
    };
    const remote: number[] = [];
    for (let i = 0; i < ROUNDS; i++) remote.push(await launchOnce());
    const local: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const t0 = performance.now();
      await new Promise<void>((resolve) => {
        spawn('/bin/sh', ['-c', 'true'], { stdio: 'ignore', detached: true }).once('exit', () => resolve());
      });
      local.push(performance.now() - t0);
    }
    const extra = median(remote) - median(local);
    console.log(
      `launch to exit, warm connection: median ${median(remote).toFixed(1)} ms remote vs ${median(local).toFixed(1)} ms local (${ROUNDS} each)`,
    );

    started = performance.now();
    await Promise.all(Array.from({ length: 20 }, () => launchOnce()));
    console.log(
      `20 launches at once: ${(performance.now() - started).toFixed(0)} ms, ${host.connectionCount} connection(s) open after`,
    );

    const kills: number[] = [];
    for (let i = 0; i < 5; i++) {
      const launched = await host.launch({
        cwd: user.home,
        command: 'sh',
        args: ['-c', 'sleep 600 & sleep 600'],
        env: {},
      });
      if (!launched.ok) throw new Error(launched.message);
      launched.process.stdout.resume();
      launched.process.stderr.resume();
      const t0 = performance.now();
      await launched.process.terminateGroup(5_000);
      await launched.process.exited;
      kills.push(performance.now() - t0);
    }
    console.log(
      `terminate a remote group (SIGTERM, children included): median ${median(kills).toFixed(0)} ms`,
    );
    console.log(
      `target: a warm launch adds ≤ 100 ms over a local spawn — ${extra <= 100 ? 'met' : 'MISSED'} (+${extra.toFixed(1)} ms)`,
    );
  } finally {
    await hosts.close();
    await sshd.stop();
  }
}
