/**
 * The git operations the orchestrator runs in a workspace: real `git` through execa, each
 * argument its own argv entry (never a shell string), a clean environment (nothing of the
 * service's own, so no tracker token), and failures as values. Credentials reach only a push,
 * through the one-shot askpass helper.
 */
import { realpathSync } from 'node:fs';
import { execa } from 'execa';
import { createAskpass } from './askpass.js';

export type GitFailureCode = 'git_not_a_repository' | 'git_auth_failed' | 'git_failed';

export type GitResult<T> = { ok: true; value: T } | { ok: false; code: GitFailureCode; message: string };

const GIT_TIMEOUT_MS = 120_000;
/** The end of git's stderr kept in a failure message. */
const STDERR_TAIL_CHARS = 2_000;

/** Git in one workspace folder. */
export class WorkspaceGit {
  constructor(
    private readonly cwd: string,
    private readonly baseEnv: Readonly<Record<string, string>> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/',
    },
  ) {}

  /**
   * Whether the folder is the top of a git work tree. A folder merely inside one (a workspace
   * root within the operator's own checkout, with no clone of its own) is not: branching and
   * committing there would change the operator's repository.
   */
  async isRepository(): Promise<boolean> {
    const ran = await this.run(['rev-parse', '--show-toplevel']);
    if (!ran.ok) return false;
    try {
      return realpathSync(ran.value) === realpathSync(this.cwd);
    } catch {
      return false;
    }
  }

  /** The commit HEAD points at. */
  headSha(): Promise<GitResult<string>> {
    return this.run(['rev-parse', '--verify', 'HEAD']);
  }

  /** Whether `ref` names a commit here. */
  async hasRef(ref: string): Promise<boolean> {
    return (await this.run(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])).ok;
  }

  /**
   * Puts the work tree on `branch`: the existing local branch, else a new one from
   * `<remote>/<base>` when the remote has it, else from `base`.
   */
  async checkoutBranch(branch: string, base: string, remote: string): Promise<GitResult<string>> {
    if (await this.hasRef(`refs/heads/${branch}`)) return this.run(['checkout', '--quiet', branch, '--']);
    const start = (await this.hasRef(`refs/remotes/${remote}/${base}`)) ? `${remote}/${base}` : base;
    if (!(await this.hasRef(start)))
      return {
        ok: false,
        code: 'git_failed',
        message: `no base branch ${base} (nor ${remote}/${base}) to start ${branch} from`,
      };
    return this.run(['checkout', '--quiet', '--no-track', '-b', branch, start, '--']);
  }

  /** How many commits HEAD has that `base` does not. */
  async commitsBeyond(base: string): Promise<GitResult<number>> {
    const ran = await this.run(['rev-list', '--count', `${base}..HEAD`, '--']);
    return ran.ok ? { ok: true, value: Number(ran.value) } : ran;
  }

  /** Paths with uncommitted changes (tracked or not, ignored files aside), as `git status` lists them. */
  async changedPaths(): Promise<GitResult<string[]>> {
    const ran = await this.run(['status', '--porcelain=v1', '-z', '--untracked-files=all']);
    if (!ran.ok) return ran;
    return {
      ok: true,
      value: ran.value
        .split('\0')
        .filter((entry) => entry.length > 3)
        .map((entry) => entry.slice(3)),
    };
  }

  /**
   * The work tree's changes against `against` (HEAD unless given), new files included (marked intent-to-add first, so
   * they show as additions; ignored files stay out), cut at `maxBytes`.
   */
  async diff(
    maxBytes: number,
    against = 'HEAD',
  ): Promise<GitResult<{ text: string; bytes: number; truncated: boolean }>> {
    const marked = await this.run(['add', '--intent-to-add', '--all', '--', '.']);
    if (!marked.ok) return marked;
    const hasBase = await this.hasRef(against);
    const ran = await this.run(
      hasBase ? ['diff', '--no-color', against, '--'] : ['diff', '--no-color', '--'],
    );
    if (!ran.ok) return ran;
    const whole = Buffer.from(ran.value);
    const truncated = whole.length > maxBytes;
    // Cut on a character boundary: a partial UTF-8 sequence at the end is dropped.
    const text = truncated
      ? whole
          .subarray(0, maxBytes)
          .toString('utf8')
          .replace(/\uFFFD$/, '')
      : ran.value;
    return { ok: true, value: { text, bytes: whole.length, truncated } };
  }

  /**
   * Commits every change of the work tree (ignored files aside) as the orchestrator; the
   * repository's own identity is used when it has one. Nothing to commit is not a failure.
   */
  async commitAll(message: string): Promise<GitResult<boolean>> {
    const changed = await this.changedPaths();
    if (!changed.ok) return changed;
    if (changed.value.length === 0) return { ok: true, value: false };
    const added = await this.run(['add', '--all', '--', '.']);
    if (!added.ok) return added;
    const named = (await this.run(['config', 'user.email'])).ok;
    const identity = named ? [] : ['-c', 'user.name=orchestrator', '-c', 'user.email=orchestrator@localhost'];
    const committed = await this.run([...identity, 'commit', '--quiet', '--no-verify', '-m', message]);
    return committed.ok ? { ok: true, value: true } : committed;
  }

  /** The ref a branch's new commits are counted from: `<remote>/<base>` when fetched, else `base`. */
  async baseRef(base: string, remote: string): Promise<string> {
    return (await this.hasRef(`refs/remotes/${remote}/${base}`)) ? `${remote}/${base}` : base;
  }

  /** Fetches `branch` of `remote` with `token` as the password (never in argv, URL or config). */
  async fetch(remote: string, branch: string, token: string): Promise<GitResult<string>> {
    const askpass = createAskpass(token);
    try {
      return await this.run(
        ['fetch', '--quiet', remote, `+refs/heads/${branch}:refs/remotes/${remote}/${branch}`],
        askpass.env,
        token,
      );
    } finally {
      askpass.dispose();
    }
  }

  /** Pushes HEAD to `branch` on `remote` with `token` as the password (never in argv, URL or config). */
  async push(remote: string, branch: string, token: string): Promise<GitResult<string>> {
    const askpass = createAskpass(token);
    try {
      return await this.run(['push', '--porcelain', remote, `HEAD:refs/heads/${branch}`], askpass.env, token);
    } finally {
      askpass.dispose();
    }
  }

  private async run(
    args: string[],
    extraEnv: Record<string, string> = {},
    secret = '',
  ): Promise<GitResult<string>> {
    const ran = await execa('git', args, {
      cwd: this.cwd,
      env: { ...this.baseEnv, LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0', ...extraEnv },
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      timeout: GIT_TIMEOUT_MS,
      stripFinalNewline: true,
    });
    if (ran.exitCode === 0) return { ok: true, value: String(ran.stdout) };
    let stderr = String(ran.stderr ?? '').slice(-STDERR_TAIL_CHARS);
    if (secret !== '') stderr = stderr.split(secret).join('***');
    const message = `git ${args[0]} failed${ran.timedOut ? ` (no answer within ${GIT_TIMEOUT_MS} ms)` : ''}: ${stderr.trim() || ran.shortMessage}`;
    if (/not a git repository/i.test(stderr)) return { ok: false, code: 'git_not_a_repository', message };
    if (/authentication failed|could not read (username|password)|403|401/i.test(stderr))
      return { ok: false, code: 'git_auth_failed', message };
    return { ok: false, code: 'git_failed', message };
  }
}
