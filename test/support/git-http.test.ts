/**
 * The test git server's push hook: after each push that went through, `onPush` sees every
 * branch of the bare repository with its commit, before the pushing git returns.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WorkspaceGit } from '../../src/workspace/git/git.js';
import { type GitHttpServer, startGitHttpServer } from './git-http.js';

const TOKEN = 'ghs_pushHookTokenForTests_7c2a';
let server: GitHttpServer;
let dir: string;
let pushes: Record<string, string>[];

const gitEnv = () => ({
  PATH: process.env.PATH ?? '',
  HOME: dir,
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'a',
  GIT_AUTHOR_EMAIL: 'a@x',
  GIT_COMMITTER_NAME: 'a',
  GIT_COMMITTER_EMAIL: 'a@x',
});

/** Local git only: it blocks the event loop the server answers on. */
function git(cwd: string, ...args: string[]): string {
  const ran = spawnSync('git', args, { cwd, encoding: 'utf8', env: gitEnv() });
  if (ran.status !== 0) throw new Error(`git ${args.join(' ')}: ${ran.stderr}`);
  return ran.stdout.trim();
}

/** Git that talks to the server, run without blocking it. */
async function gitRemote(cwd: string, ...args: string[]): Promise<string> {
  const ran = await execa('git', args, { cwd, env: gitEnv(), extendEnv: false, reject: false });
  if (ran.exitCode !== 0) throw new Error(`git ${args.join(' ')}: ${ran.stderr}`);
  return String(ran.stdout).trim();
}

function commit(cwd: string, file: string, text: string): string {
  writeFileSync(path.join(cwd, file), text);
  git(cwd, 'add', file);
  git(cwd, 'commit', '--quiet', '-m', file);
  return git(cwd, 'rev-parse', 'HEAD');
}

beforeEach(async () => {
  pushes = [];
  server = await startGitHttpServer(TOKEN, undefined, { onPush: (heads) => pushes.push(heads) });
  dir = mkdtempSync(path.join(tmpdir(), 'git-http-hook-'));
});

afterEach(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the test git server push hook', () => {
  it('reports every branch and its commit after each push, and only after pushes that went through', async () => {
    // Seed the empty bare repository with main.
    const seed = path.join(dir, 'seed');
    git(dir, 'init', '--quiet', '--initial-branch=main', seed);
    const first = commit(seed, 'README.md', 'hello\n');
    git(seed, 'remote', 'add', 'origin', server.url);
    expect(await new WorkspaceGit(seed).push('origin', 'main', TOKEN)).toMatchObject({ ok: true });
    expect(pushes).toEqual([{ main: first }]);

    // Clone it (the credentials only for the clone), commit on a branch, push with the token.
    const clone = path.join(dir, 'clone');
    const withCredentials = server.url.replace('http://', `http://x-access-token:${TOKEN}@`);
    await gitRemote(dir, 'clone', '--quiet', withCredentials, clone);
    git(clone, 'remote', 'set-url', 'origin', server.url);
    git(clone, 'checkout', '--quiet', '-b', 'agent/E-9');
    const work = commit(clone, 'work.txt', 'work\n');
    expect(await new WorkspaceGit(clone).push('origin', 'agent/E-9', TOKEN)).toMatchObject({ ok: true });
    expect(pushes).toEqual([{ main: first }, { main: first, 'agent/E-9': work }]);
    expect(server.heads()).toEqual({ main: first, 'agent/E-9': work });

    // A push the server refuses (wrong token) reaches no hook, nor does a fetch.
    commit(clone, 'more.txt', 'more\n');
    expect(await new WorkspaceGit(clone).push('origin', 'agent/E-9', 'wrong-token')).toMatchObject({
      ok: false,
    });
    await gitRemote(dir, 'ls-remote', withCredentials);
    expect(pushes).toHaveLength(2);
    expect(server.heads()).toEqual({ main: first, 'agent/E-9': work });
  });
});
