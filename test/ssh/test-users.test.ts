/**
 * The SSH tests make local login users (`orchssh*`). These tests pin that none outlives its
 * test run: a file's user goes when the file is done, a user whose test process died (a
 * crashed file, a killed run) goes at the next sweep, and a user another live run still
 * claims is never taken from under it. Needs root, like every test that makes users.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ensureTestUser,
  releaseTestUser,
  remoteProcesses,
  removeStaleTestUsers,
  testUsers,
} from '../support/sshd.js';

const PREFIX = 'orchssh-probe-';
const names = (): string[] => testUsers(PREFIX).map((u) => u.name);

/** A pid that is certainly not running any more. */
function deadPid(): number {
  const done = spawnSync('sh', ['-c', 'echo $$'], { encoding: 'utf8' });
  return Number(done.stdout.trim());
}

function claim(name: string, pid: number): void {
  execFileSync('usermod', ['-c', `orchestrator test user pid ${pid}`, name], { stdio: 'pipe' });
}

afterAll(() => {
  for (const name of names()) {
    claim(name, deadPid());
    releaseTestUser(name);
  }
});

describe('test users are removed after the tests', () => {
  it('a file releasing its user removes the account and its home, and kills what the user still ran', async () => {
    const user = ensureTestUser(`${PREFIX}release`);
    expect(existsSync(user.home)).toBe(true);
    const sleeper = spawn('sleep', ['60'], { uid: user.uid, gid: user.uid, stdio: 'ignore' });
    const exited = new Promise((resolve) => sleeper.once('exit', resolve));
    expect(remoteProcesses(user.name).length).toBe(1);

    expect(releaseTestUser(user.name)).toBe(true);

    expect(names()).not.toContain(user.name);
    expect(existsSync(user.home)).toBe(false);
    await exited;
  });

  it('a user whose test process died is swept; one a live process still claims is kept until that process is gone', async () => {
    const stale = ensureTestUser(`${PREFIX}stale`);
    claim(stale.name, deadPid());
    const live = ensureTestUser(`${PREFIX}live`);
    const otherRun = spawn('sleep', ['60'], { stdio: 'ignore' });
    const otherExited = new Promise((resolve) => otherRun.once('exit', resolve));
    claim(live.name, otherRun.pid as number);

    expect(removeStaleTestUsers(PREFIX)).toEqual([stale.name]);
    expect(names()).toEqual([live.name]);

    // The other run's own release is what removes it, once that run is over.
    expect(releaseTestUser(live.name)).toBe(false);
    expect(names()).toEqual([live.name]);
    otherRun.kill('SIGKILL');
    await otherExited;
    expect(removeStaleTestUsers(PREFIX)).toEqual([live.name]);
    expect(names()).toEqual([]);
  });

  it("a sweep given a run's suffix leaves another run's stale user alone", () => {
    const mine = ensureTestUser(`${PREFIX}mine-ta`);
    const theirs = ensureTestUser(`${PREFIX}theirs-tb`);
    claim(mine.name, deadPid());
    claim(theirs.name, deadPid());
    expect(removeStaleTestUsers(PREFIX, '-ta')).toEqual([mine.name]);
    expect(names()).toEqual([theirs.name]);
    expect(removeStaleTestUsers(PREFIX)).toEqual([theirs.name]);
  });

  it('a test user outside the orchssh prefix is refused, so no sweep could miss it', () => {
    expect(() => ensureTestUser('someone-else')).toThrow(/must start with orchssh/);
    expect(() => removeStaleTestUsers('root')).toThrow(/must start with orchssh/);
  });
});
