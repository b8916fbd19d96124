/**
 * Git repositories for end-to-end tests of the `git:` loop: a bare repository with a first
 * commit on `main`, reading a file of a branch, and the HTTP origin whose pushes move the fake
 * GitHub's pull requests (GitHub learns of a push the same way).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FakePull } from './fake-github/pulls.js';
import { type FakeGithub, fakeGithubTracker, startFakeGithub } from './fake-github/server.js';
import { type GitHttpServer, startGitHttpServer } from './git-http.js';
import { waitFor } from './service.js';

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

/** The fake GitHub and its origin, as the loop's end-to-end tests start them. */
export interface LoopWorld {
  fake: FakeGithub;
  origin: GitHttpServer;
  /** The clone `main` was seeded from (push to it by path to move `main`). */
  seedDir: string;
  /** Front matter for a project against them: the github tracker, a clone hook, fast writes. */
  config(extra: Record<string, unknown>): Record<string, unknown>;
  close(): Promise<void>;
}

/** The fake GitHub with the state labels and one Todo issue (#1), and its origin seeded with `main`. */
export async function startLoopWorld(
  token: string,
  issue: { title: string; body: string },
  extraLabels: readonly string[] = [],
): Promise<LoopWorld> {
  const fake = await startFakeGithub({ token });
  for (const label of ['Todo', 'In Progress', 'Review', 'Blocked', 'Done', ...extraLabels])
    fake.addLabel(label);
  const origin = await originFor(fake, token);
  const seedDir = seedMain(origin.bareDir);
  fake.addIssue({ ...issue, labels: ['Todo'] });
  return {
    fake,
    origin,
    seedDir,
    config: (extra) => ({
      tracker: { ...fakeGithubTracker(fake), comments: { on_completion: false } },
      file: null,
      github: { min_write_interval_ms: 0, max_rate_limit_wait_ms: 10_000 },
      hooks: {
        // The clone needs no token here (read from the folder); the push goes over HTTP.
        after_create: `git clone --quiet ${origin.bareDir} . && git remote set-url origin ${origin.url}`,
      },
      ...extra,
    }),
    close: async () => {
      await fake.close();
      await origin.close();
      rmSync(seedDir, { recursive: true, force: true });
    },
  };
}

/** Waits for the pull request of `branch` and the handoff of #1; the pull request and the pushed head. */
export async function firstPullRequest(
  world: LoopWorld,
  branch: string,
  explain: () => string,
): Promise<{ pr: FakePull; head: string }> {
  const { fake, origin } = world;
  const pr = await waitFor('the pull request', () => fake.pulls.all().find((p) => p.head === branch), {
    timeoutMs: 60_000,
    explain,
  });
  await waitFor('#1 in Review', () => fake.issue(1).labels.includes('Review'), {
    timeoutMs: 30_000,
    explain,
  });
  return { pr, head: origin.heads()[branch] as string };
}
