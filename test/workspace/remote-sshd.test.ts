/**
 * Remote workspaces against a real sshd on this machine, logged in as a test user:
 * the directories and hook output must appear under the remote root as that user,
 * which proves every action went through the host rather than the local filesystem
 * (the test process is root, so anything it made itself would be root's).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshHosts } from '../../src/ssh/index.js';
import type { HookResult } from '../../src/workspace/hooks.js';
import { RemoteWorkspaceManager } from '../../src/workspace/remote.js';
import { ensureTestUser, type Sshd, startSshd, type TestUser, testUserName } from '../support/sshd.js';
import { noHooks } from './support.js';

let user: TestUser;
let sshd: Sshd;
let hosts: SshHosts;
let knownHostsDir: string;
let root: string;

beforeAll(async () => {
  user = ensureTestUser(testUserName('orchssh-ws'));
  sshd = await startSshd({ user: user.name });
  knownHostsDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'remote-ws-known-'));
  const knownHostsFile = path.join(knownHostsDir, 'known_hosts');
  await fsp.writeFile(knownHostsFile, `${sshd.knownHostsLine()}\n`);
  hosts = new SshHosts({
    strictHostKeyChecking: 'yes',
    knownHostsFile,
    identityFile: sshd.clientKeyPath,
    agentSocket: null,
    defaultUser: user.name,
    connectTimeoutMs: 10_000,
  });
  root = path.join(user.home, `workspaces-${randomBytes(6).toString('hex')}`, 'root');
});

afterAll(async () => {
  await hosts?.close();
  await sshd?.stop();
  if (root !== undefined) await fsp.rm(path.dirname(root), { recursive: true, force: true });
  if (knownHostsDir !== undefined) await fsp.rm(knownHostsDir, { recursive: true, force: true });
});

describe('remote workspaces over a real sshd', () => {
  it('prepare creates the workspace and runs after_create on the host, as the login user', async () => {
    expect(fs.existsSync(path.dirname(root))).toBe(false);
    const host = hosts.host(sshd.spec);
    const events: { hook: string; result: HookResult }[] = [];
    const manager = new RemoteWorkspaceManager({
      host,
      root,
      hooks: noHooks({
        afterCreate: [
          'echo "created by $(id -un) on $ORCHESTRATOR_SSH_HOST" > marker.txt',
          'echo "hook says hi from $PWD"',
          'echo "to stderr" >&2',
        ].join('\n'),
        beforeRemove: 'echo bye > ../removed-by-hook.txt',
      }),
      onHook: (event) => events.push({ hook: event.hook, result: event.result }),
    });

    const prepared = await manager.prepare({ id: 'node-1', identifier: 'ISSUE-1' }, 1);
    if (!prepared.ok) throw prepared.error;
    const workspace = path.join(fs.realpathSync(user.home), path.relative(user.home, root), 'ISSUE-1');
    expect(prepared.workspace).toEqual({ path: workspace, createdNow: true });

    // Made on the host by the test user, not by this (root) process.
    expect(fs.statSync(root).uid).toBe(user.uid);
    expect(fs.statSync(workspace).uid).toBe(user.uid);
    const marker = path.join(workspace, 'marker.txt');
    expect(fs.statSync(marker).uid).toBe(user.uid);
    expect(fs.readFileSync(marker, 'utf8')).toBe(`created by ${user.name} on ${sshd.spec}\n`);
    expect(events.map((e) => e.hook)).toEqual(['after_create']);
    expect(events[0]?.result).toMatchObject({ ok: true, exitCode: 0, timedOut: false });
    expect(events[0]?.result.output).toContain(`hook says hi from ${workspace}`);
    expect(events[0]?.result.output).toContain('to stderr');

    const again = await manager.prepare({ id: 'node-1', identifier: 'ISSUE-1' }, 1);
    expect(again.ok && again.workspace.createdNow).toBe(false);
    expect(await manager.existingKeys()).toEqual(['ISSUE-1']);

    expect(await manager.remove('ISSUE-1', 'node-1')).toEqual({ removed: true, error: null });
    expect(fs.existsSync(workspace)).toBe(false);
    expect(fs.readFileSync(path.join(root, 'removed-by-hook.txt'), 'utf8')).toBe('bye\n');
    expect(await manager.existingKeys()).toEqual([]);
  });

  it('a stopped host is host_unreachable, not a failed hook', async () => {
    const stopped = await startSshd({ user: user.name });
    const knownHostsFile = path.join(knownHostsDir, 'known_hosts_stopped');
    await fsp.writeFile(knownHostsFile, `${stopped.knownHostsLine()}\n`);
    const stoppedHosts = new SshHosts({
      strictHostKeyChecking: 'yes',
      knownHostsFile,
      identityFile: stopped.clientKeyPath,
      agentSocket: null,
      defaultUser: user.name,
      connectTimeoutMs: 5_000,
    });
    await stopped.stop();
    try {
      const manager = new RemoteWorkspaceManager({
        host: stoppedHosts.host(stopped.spec),
        root,
        hooks: noHooks({ afterCreate: 'true' }),
      });
      const prepared = await manager.prepare({ id: 'node-2', identifier: 'ISSUE-2' }, 1);
      expect(prepared.ok ? null : prepared.error.kind).toBe('host_unreachable');
    } finally {
      await stoppedHosts.close();
    }
  });
});
