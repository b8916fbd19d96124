/**
 * Git repositories for end-to-end tests of the `git:` loop: a bare repository with a first
 * commit on `main`, reading a file of a branch, and the HTTP origin whose pushes move the fake
 * GitHub's pull requests (GitHub learns of a push the same way).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FakeGithub } from './fake-github/server.js';
import { type GitHttpServer, startGitHttpServer } from './git-http.js';

/** Runs git; its trimmed output, or a throw with git's stderr. */
export function git(args: string[], cwd?: string): string {
  const ran = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (ran.status !== 0) throw new Error(`git ${args.join(' ')}: ${ran.stderr}`);
  return ran.stdout.trim();
}

/** Commits `README.md` on `main` in a new folder under `parent` and pushes it to `bareDir` by path; the folder. */
export function seedMain(bareDir: string, parent = tmpdir()): string {
  const dir = mkdtempSync(path.join(parent, 'orch-seed-'));
  git(['init', '--quiet', '--initial-branch=main', dir]);
  writeFileSync(path.join(dir, 'README.md'), '# demo\n');
  git(['add', 'README.md'], dir);
  git(['-c', 'user.name=seed', '-c', 'user.email=seed@localhost', 'commit', '--quiet', '-m', 'init'], dir);
  git(['push', '--quiet', bareDir, 'main'], dir);
  return dir;
}

/** A new bare repository under `root` with a first commit on `main`; its path. */
export function bareRepository(root: string): string {
  const bare = path.join(root, 'origin.git');
  git(['init', '--quiet', '--bare', '--initial-branch=main', bare]);
  seedMain(bare, root);
  return bare;
}

/** A file of `ref` in the bare repository, or null when it has none. */
export function fileAt(bareDir: string, ref: string, file: string): string | null {
  const ran = spawnSync('git', ['-C', bareDir, 'show', `${ref}:${file}`], { encoding: 'utf8' });
  return ran.status === 0 ? ran.stdout : null;
}

/** The origin over HTTP (Basic auth with `token`) whose every push moves the fake's pull requests. */
export function originFor(fake: FakeGithub, token: string): Promise<GitHttpServer> {
  return startGitHttpServer(token, undefined, {
    onPush: (heads) => {
      for (const [branch, sha] of Object.entries(heads)) fake.pulls.setBranch(branch, sha);
    },
  });
}
