/**
 * `orchestrator run` against a database that cannot be written: a real full disk (a small
 * tmpfs under `db_path`, filled while a run is under way and freed again) and a database made
 * immutable before start. Needs root (mount, chattr): CI runs as root; elsewhere these skip
 * with a printed reason.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fillDisk } from '../support/disk.js';
import { freePort } from '../support/ports.js';
import {
  createProject,
  dbRuns,
  makeIssue,
  startService,
  useServiceCleanup,
  waitFor,
} from '../support/service.js';

useServiceCleanup();

const ROOT = process.getuid?.() === 0;
const SKIP = !ROOT && process.env.CI === undefined;
if (SKIP) console.warn('skipping the database fault e2e tests: they need root (mount, chattr)');

const mounts: string[] = [];
afterEach(() => {
  for (const dir of mounts.splice(0)) spawnSync('umount', ['-l', dir]);
});

describe.skipIf(SKIP)('a database that cannot be written', () => {
  it('a disk that fills mid-run: no crash, no dispatch, not ready, and every result recorded once the space is back', {
    timeout: 120_000,
  }, async () => {
    const project = createProject({
      issues: [makeIssue(1, '!slowstart 4000\n!usage 500 20\n!ok done'), makeIssue(2, '!ok second')],
      config: { agent: { max_concurrent_agents: 1 } },
    });
    const dbDir = path.join(project.dir, 'db');
    mkdirSync(dbDir);
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', dbDir]).status).toBe(0);
    mounts.push(dbDir);
    const port = await freePort();
    project.writeWorkflow({ db_path: 'db/state.db', server: { port } });
    const dbPath = path.join(dbDir, 'state.db');
    const service = startService(project);
    await waitFor(
      'the first run to be under way',
      () => dbRuns(dbPath).some((r) => r.identifier === 'E-1' && r.workspace !== ''),
      { timeoutMs: 30_000, explain: () => service.tail() },
    );
    const filler = fillDisk(dbDir);
    await service.waitForLog('the refused write', (l) => l.code === 'store_unavailable', {
      timeoutMs: 60_000,
    });
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { checks: Record<string, string> }).checks.store_writes).toBe('fail');
    const state = (await (await fetch(`http://127.0.0.1:${port}/api/v1/state`)).json()) as {
      store: { available: boolean; pending_writes: number };
    };
    expect(state.store.available).toBe(false);
    expect(service.exitStatus()).toBeNull();
    // E-2 waits: nothing is dispatched while the database refuses writes.
    expect(dbRuns(dbPath).filter((r) => r.identifier === 'E-2')).toEqual([]);

    rmSync(filler, { force: true });
    expect(existsSync(filler)).toBe(false);
    await service.waitForLog(
      'writes working again',
      (l) => l.msg.startsWith('the database takes writes again'),
      {
        timeoutMs: 30_000,
      },
    );
    await waitFor('both issues handed off', () => project.readIssues().every((i) => i.state === 'Review'), {
      timeoutMs: 60_000,
      explain: () => service.tail(),
    });
    const stopped = await service.stop(30_000);
    expect(stopped.code, service.tail()).toBe(0);
    const runs = dbRuns(dbPath);
    expect(runs.map((r) => [r.identifier, r.exit_kind])).toEqual([
      ['E-1', 'succeeded'],
      ['E-2', 'succeeded'],
    ]);
    expect(runs[0]?.total_tokens).toBe(520);
  });

  it('a database made immutable before start is a coded start-up error and exit 1, not a hang', {
    timeout: 60_000,
  }, async () => {
    const project = createProject({ issues: [makeIssue(1, '!ok')] });
    const first = startService(project, { args: ['--once'] });
    expect((await first.waitExit(30_000))?.code, first.tail()).toBe(0);
    expect(spawnSync('chattr', ['+i', project.dbPath]).status).toBe(0);
    try {
      const second = startService(project);
      const exit = await second.waitExit(30_000);
      expect(exit?.code, second.tail()).toBe(1);
      expect(second.stderr()).toContain('persistence: read_only');
    } finally {
      spawnSync('chattr', ['-i', project.dbPath]);
    }
  });
});
