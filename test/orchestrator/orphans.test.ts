/**
 * The start-up reaper against real hook processes: a hook a killed service left running,
 * and a process a hook detached with setsid (which no group kill reaches), must both be
 * found through the owner tag in their environment and killed.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { killOrphans } from '../../src/orchestrator/orphans.js';
import { WorkspaceManager } from '../../src/workspace/manager.js';
import { isAlive, killQuietly, noHooks, readPid, removeTempDirs, tempDir } from '../workspace/support.js';

afterAll(removeTempDirs);

const leftovers: number[] = [];
afterEach(() => {
  for (const pid of leftovers.splice(0)) killQuietly(pid);
});

/** A tag no other test or service on this machine carries. */
const freshTag = () => `test-${randomBytes(8).toString('hex')}`;

const issue = { id: 'id-1', identifier: 'ABC-1' };
const BASE_ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

describe('killOrphans and hooks', () => {
  it('a hook still running when its service died is found by the owner tag and killed with its group', async () => {
    const base = await tempDir();
    const pidFile = path.join(base, 'child.pid');
    const tag = freshTag();
    const manager = new WorkspaceManager({
      root: path.join(base, 'root'),
      hooks: noHooks({ beforeRun: `sleep 300 & echo $! > '${pidFile}'; wait`, timeoutMs: 60_000 }),
      baseEnv: BASE_ENV,
      ownerTag: tag,
    });
    const pending = manager.prepare(issue, 1);
    const child = await readPid(pidFile);
    leftovers.push(child);

    const killed = await killOrphans(tag);

    expect(killed.pids).toContain(child);
    // Gone by the time it returns: a new service prepares the workspace right after.
    expect(killed.survivors).toEqual([]);
    expect(isAlive(child)).toBe(false);
    const prepared = await pending;
    expect(prepared.ok ? null : prepared.error.kind).toBe('hook_failed');
  });

  it('a process a successful hook detached with setsid survives the group kill but not the start-up reaper', async () => {
    const base = await tempDir();
    const pidFile = path.join(base, 'daemon.pid');
    const tag = freshTag();
    const manager = new WorkspaceManager({
      root: path.join(base, 'root'),
      hooks: noHooks({
        // The hook waits for the pid, which is written only once setsid has run (no race with the group kill).
        afterCreate: [
          `setsid sh -c 'echo $$ > "$1"; exec sleep 300' sh '${pidFile}' </dev/null >/dev/null 2>&1 &`,
          `while [ ! -s '${pidFile}' ]; do sleep 0.01; done`,
        ].join('\n'),
      }),
      baseEnv: BASE_ENV,
      ownerTag: tag,
    });
    expect((await manager.prepare(issue, 1)).ok).toBe(true);
    const daemon = await readPid(pidFile);
    leftovers.push(daemon);
    // It left the hook's group, so the kill at the hook's end missed it: that is the reaper's job.
    expect(isAlive(daemon)).toBe(true);

    const killed = await killOrphans(tag);
    expect(killed).toEqual({ pids: [daemon], survivors: [] });
    expect(isAlive(daemon)).toBe(false);
  });
});
