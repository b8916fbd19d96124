/**
 * Workspace git against a real bare repository served over HTTP by `git http-backend` that
 * demands the token: the push goes through the askpass helper, and the token stays out of
 * argv, every process environment, the remote URL and `.git/config`.
 */
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WorkspaceGit } from '../../../src/workspace/git/git.js';
import { sanitiseBranchName } from '../../../src/workspace/git/ref-name.js';
import { type GitHttpServer, startGitHttpServer } from '../../support/git-http.js';
import { watchSecret } from '../../support/proc-watch.js';

const TOKEN = 'ghs_pushTokenForTests_4b1d9e';
let server: GitHttpServer;
let workspace: string;

function git(...args: string[]): string {
  const ran = spawnSync('git', args, {
    cwd: workspace,
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH,
      HOME: workspace,
      GIT_AUTHOR_NAME: 'a',
      GIT_AUTHOR_EMAIL: 'a@x',
      GIT_COMMITTER_NAME: 'a',
      GIT_COMMITTER_EMAIL: 'a@x',
    },
  });
  if (ran.status !== 0) throw new Error(`git ${args.join(' ')}: ${ran.stderr}`);
  return ran.stdout.trim();
}

function bareRef(ref: string): string | null {
  const ran = spawnSync('git', ['-C', server.bareDir, 'rev-parse', '--verify', '--quiet', ref], {
    encoding: 'utf8',
  });
  return ran.status === 0 ? ran.stdout.trim() : null;
}

/** Every token-bearing process argv and environment seen while `work` runs. */
async function watchForToken<T>(
  work: () => Promise<T>,
): Promise<{ result: T; leaks: string[]; scans: number }> {
  const watch = watchSecret(TOKEN, { intervalMs: 1 });
  try {
    const result = await work();
    return { result, ...watch.stop() };
  } finally {
    watch.stop();
  }
}

beforeEach(async () => {
  server = await startGitHttpServer(TOKEN);
  workspace = mkdtempSync(path.join(tmpdir(), 'ws-git-'));
  git('init', '--quiet', '--initial-branch=main');
  writeFileSync(path.join(workspace, 'README.md'), 'hello\n');
  git('add', 'README.md');
  git('commit', '--quiet', '-m', 'first');
  git('remote', 'add', 'origin', server.url);
});

afterEach(async () => {
  await server.close();
  rmSync(workspace, { recursive: true, force: true });
});

describe('workspace git', () => {
  it('checks out a new branch from the base, counts its commits and pushes them with the token from askpass only', async () => {
    const ws = new WorkspaceGit(workspace, { PATH: process.env.PATH ?? '', HOME: workspace });
    expect(await ws.isRepository()).toBe(true);
    expect(await ws.checkoutBranch('agent/E-1', 'main', 'origin')).toMatchObject({ ok: true });
    expect(git('rev-parse', '--abbrev-ref', 'HEAD')).toBe('agent/E-1');
    expect(await ws.commitsBeyond('main')).toEqual({ ok: true, value: 0 });
    writeFileSync(path.join(workspace, 'out.txt'), 'work\n');
    expect(await ws.changedPaths()).toEqual({ ok: true, value: ['out.txt'] });
    git('add', 'out.txt');
    git('commit', '--quiet', '-m', 'work');
    expect(await ws.commitsBeyond('main')).toEqual({ ok: true, value: 1 });

    // A private temp folder: other suites on the machine push at the same time, each with a helper folder of its own.
    const privateTmp = mkdtempSync(path.join(tmpdir(), 'git-test-tmp-'));
    const outerTmp = process.env.TMPDIR;
    process.env.TMPDIR = privateTmp;
    const { result, leaks, scans } = await watchForToken(() => ws.push('origin', 'agent/E-1', TOKEN)).finally(
      () => {
        if (outerTmp === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = outerTmp;
      },
    );
    expect(result, result.ok ? '' : result.message).toMatchObject({ ok: true });
    expect(bareRef('refs/heads/agent/E-1')).toBe(git('rev-parse', 'HEAD'));
    // The server saw the credentials, and only after it asked for them.
    expect(server.requests.some((r) => r.authorised)).toBe(true);
    expect(scans).toBeGreaterThan(0);
    expect(leaks).toEqual([]);
    expect(readFileSync(path.join(workspace, '.git', 'config'), 'utf8')).not.toContain(TOKEN);
    expect(git('remote', 'get-url', 'origin')).toBe(server.url);
    // The helper's folder is gone.
    expect(readdirSync(privateTmp)).toEqual([]);
    rmSync(privateTmp, { recursive: true, force: true });
  });

  it('an existing branch is checked out as it is, its commits kept', async () => {
    git('checkout', '--quiet', '-b', 'agent/E-2');
    writeFileSync(path.join(workspace, 'a.txt'), 'a\n');
    git('add', 'a.txt');
    git('commit', '--quiet', '-m', 'a');
    git('checkout', '--quiet', 'main');
    const ws = new WorkspaceGit(workspace);
    expect(await ws.checkoutBranch('agent/E-2', 'main', 'origin')).toMatchObject({ ok: true });
    expect(await ws.commitsBeyond('main')).toEqual({ ok: true, value: 1 });
  });

  it('the review diff shows changed and new files against HEAD, and is cut at the cap', async () => {
    const ws = new WorkspaceGit(workspace);
    writeFileSync(path.join(workspace, 'README.md'), 'hello\nworld\n');
    writeFileSync(path.join(workspace, 'new.txt'), 'fresh\n');
    const whole = await ws.diff(1_000_000);
    if (!whole.ok) throw new Error(whole.message);
    expect(whole.value.truncated).toBe(false);
    expect(whole.value.text).toContain('+world');
    expect(whole.value.text).toContain('+++ b/new.txt');
    const cut = await ws.diff(40);
    if (!cut.ok) throw new Error(cut.message);
    expect(cut.value).toMatchObject({ truncated: true, bytes: whole.value.bytes });
    expect(Buffer.byteLength(cut.value.text)).toBeLessThanOrEqual(40);
  });

  it('leftovers are committed as the orchestrator (the repository has no identity), nothing to commit is no commit, and .orchestrator/ stays out', async () => {
    const ws = new WorkspaceGit(workspace, { PATH: process.env.PATH ?? '', HOME: workspace });
    expect(await ws.commitAll('nothing yet')).toEqual({ ok: true, value: false });
    writeFileSync(path.join(workspace, 'left.txt'), 'left over\n');
    mkdirSync(path.join(workspace, '.orchestrator'));
    writeFileSync(path.join(workspace, '.orchestrator', '.gitignore'), '*\n');
    writeFileSync(path.join(workspace, '.orchestrator', 'status'), 'blocked\n');
    expect(await ws.commitAll('E-1: leftovers')).toEqual({ ok: true, value: true });
    expect(git('log', '-1', '--format=%an <%ae> %s')).toBe(
      'orchestrator <orchestrator@localhost> E-1: leftovers',
    );
    expect(git('show', '--name-only', '--format=', 'HEAD')).toBe('left.txt');
    expect(await ws.changedPaths()).toEqual({ ok: true, value: [] });
  });

  it('the base ref is the remote branch once fetched (with the token, by askpass), else the local one; the diff against it includes committed work', async () => {
    const ws = new WorkspaceGit(workspace, { PATH: process.env.PATH ?? '', HOME: workspace });
    expect(await ws.baseRef('main', 'origin')).toBe('main');
    expect(await ws.fetch('origin', 'main', TOKEN)).toMatchObject({ ok: false });
    expect((await ws.push('origin', 'main', TOKEN)).ok).toBe(true);
    const { result, leaks } = await watchForToken(() => ws.fetch('origin', 'main', TOKEN));
    expect(result, result.ok ? '' : result.message).toMatchObject({ ok: true });
    expect(leaks).toEqual([]);
    expect(await ws.baseRef('main', 'origin')).toBe('origin/main');
    git('checkout', '--quiet', '-b', 'agent/E-3');
    writeFileSync(path.join(workspace, 'done.txt'), 'committed\n');
    git('add', 'done.txt');
    git('commit', '--quiet', '-m', 'done');
    const againstHead = await ws.diff(10_000);
    const againstBase = await ws.diff(10_000, 'origin/main');
    expect(againstHead.ok && againstHead.value.text).toBe('');
    expect(againstBase.ok && againstBase.value.text).toContain('+committed');
  });

  it('a folder inside another repository, with no clone of its own, is not a repository (its branch would be the outer one)', async () => {
    const inner = path.join(workspace, 'workspaces', 'E-7');
    mkdirSync(inner, { recursive: true });
    expect(await new WorkspaceGit(inner).isRepository()).toBe(false);
    expect(await new WorkspaceGit(workspace).isRepository()).toBe(true);
  });

  it('a wrong token is git_auth_failed, and the message does not carry it', async () => {
    const ws = new WorkspaceGit(workspace);
    const wrong = `${TOKEN}-wrong`;
    const pushed = await ws.push('origin', 'main', wrong);
    expect(pushed.ok).toBe(false);
    if (pushed.ok) return;
    expect(pushed.code).toBe('git_auth_failed');
    expect(pushed.message).not.toContain(wrong);
    expect(bareRef('refs/heads/main')).toBeNull();
  });

  it('a folder that is no repository says so; a missing base is a coded failure', async () => {
    const plain = mkdtempSync(path.join(tmpdir(), 'ws-plain-'));
    try {
      const ws = new WorkspaceGit(plain);
      expect(await ws.isRepository()).toBe(false);
      expect(await ws.headSha()).toMatchObject({ ok: false, code: 'git_not_a_repository' });
    } finally {
      rmSync(plain, { recursive: true, force: true });
    }
    const ws = new WorkspaceGit(workspace);
    expect(await ws.checkoutBranch('agent/E-3', 'develop', 'origin')).toMatchObject({
      ok: false,
      code: 'git_failed',
    });
    expect(existsSync(path.join(workspace, '.git', 'refs', 'heads', 'agent', 'E-3'))).toBe(false);
  });
});

describe('branch names', () => {
  it.each([
    ['agent/ENG-12', 'agent/ENG-12'],
    ['agent/fix the bug: now?', 'agent/fix-the-bug-now'],
    ['-f', 'f'],
    ['a..b', 'a.b'],
    ['x/.hidden/y.lock', 'x/hidden/y'],
    ['a//b/', 'a/b'],
    ['feat@{1}', 'feat-1}'],
    ['@', ''],
    ['~^:?*[\\', ''],
  ])('%j becomes %j', (wanted, expected) => {
    expect(sanitiseBranchName(wanted)).toBe(expected);
    if (expected !== '') {
      const check = spawnSync('git', ['check-ref-format', `refs/heads/${expected}`]);
      expect(check.status).toBe(0);
    }
  });
});
