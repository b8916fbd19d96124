/**
 * What the tests against a real sshd share: a test file's own user and sshd (made
 * before the file, stopped and removed after it, the user's processes killed on both sides), a
 * registry reaching it, a workspace the host's user made, a watch over every
 * command line for a secret, and the check that nothing of the user is left.
 *
 * Usage:
 *   const ssh = useSshHost('orchssh-mine');   // one user per test file: files run in parallel
 *   it('…', async () => {
 *     const { root, workspace } = await makeHostWorkspace(ssh, 'mine-ws-');
 *     const watch = watchCommandLines(SECRET);
 *     // … ssh.host.launch(…) …
 *     expect((await watch.stop()).leaks).toEqual([]);
 *     await expectNothingLeft(ssh.user.name, /mine/);
 *   });
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { type SshHost, SshHosts, type SshOptions } from '../../src/ssh/index.js';
import {
  allCommandLines,
  ensureTestUser,
  killUserProcesses,
  pollUntil,
  releaseTestUser,
  remoteProcesses,
  type Sshd,
  startSshd,
  type TestUser,
} from './sshd.js';

/** Temp directories `sshOptionsFor` made, removed by `removeKnownHostsDirs`. */
const knownHostsDirs: string[] = [];

/** Options that reach `sshd` with its client key; the known_hosts file lives in a fresh temp dir. */
export function sshOptionsFor(sshd: Sshd, over: Partial<SshOptions> = {}): SshOptions {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ssh-known-'));
  knownHostsDirs.push(dir);
  return {
    strictHostKeyChecking: 'accept-new',
    knownHostsFile: path.join(dir, 'nested', 'known_hosts'),
    identityFile: sshd.clientKeyPath,
    agentSocket: null,
    defaultUser: sshd.user,
    connectTimeoutMs: 5_000,
    reconnectBackoff: { baseMs: 200, maxMs: 1_000 },
    ...over,
  };
}

/** Removes the known_hosts directories of every `sshOptionsFor` so far. */
export function removeKnownHostsDirs(): void {
  for (const dir of knownHostsDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** The same server started again after `stop()`: same port, host key and client key. */
export function restartSshd(stopped: Sshd): Promise<Sshd> {
  return startSshd({
    user: stopped.user,
    port: stopped.port,
    hostKeyPath: stopped.hostKeyPath,
    clientKeyPath: stopped.clientKeyPath,
  });
}

export interface SshSession {
  /** The file's own test user. */
  readonly user: TestUser;
  /** Its sshd on 127.0.0.1 (the restarted one after `restart`). */
  readonly sshd: Sshd;
  /** One registry for the file, made on first use with `options.hosts`, closed after the file. */
  readonly hosts: SshHosts;
  /** `hosts.host(sshd.spec)`. */
  readonly host: SshHost;
  /** Removes `dir` after the file, once the user's processes are gone. */
  removeAfter(dir: string): void;
  /** Starts the stopped sshd again (same port and keys); `sshd` is the new one. */
  restart(): Promise<Sshd>;
}

export interface UseSshHostOptions {
  /** Sets nothing up (the file's tests are skipped). */
  skip?: boolean;
  /** Over `sshOptionsFor`'s options, for `hosts`. */
  hosts?: Partial<SshOptions>;
  /** The client key to authorize (default a fresh one), read when the server starts. */
  clientKeyPath?: () => string;
}

/**
 * Registers a `beforeAll` that makes `userName` (killing what it left running) and
 * starts its sshd, and an `afterAll` that closes `hosts`, stops sshd, kills the
 * user's processes, removes what `removeAfter` was given, and removes the user. Call it at the top of
 * the file, before hooks that use it: its `beforeAll` runs first, its `afterAll` last.
 */
export function useSshHost(userName: string, options: UseSshHostOptions = {}): SshSession {
  let user: TestUser | undefined;
  let sshd: Sshd | undefined;
  let hosts: SshHosts | undefined;
  const dirs: string[] = [];
  const ready = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`useSshHost(${userName}): ${what} is used before beforeAll`);
    return value;
  };

  beforeAll(async () => {
    if (options.skip === true) return;
    user = ensureTestUser(userName);
    killUserProcesses(userName);
    const clientKeyPath = options.clientKeyPath?.();
    sshd = await startSshd({ user: userName, ...(clientKeyPath === undefined ? {} : { clientKeyPath }) });
  });

  afterAll(async () => {
    await hosts?.close();
    await sshd?.stop();
    if (user !== undefined) killUserProcesses(userName);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    removeKnownHostsDirs();
    if (user !== undefined) releaseTestUser(userName);
  });

  const session: SshSession = {
    get user() {
      return ready(user, 'the user');
    },
    get sshd() {
      return ready(sshd, 'sshd');
    },
    get hosts() {
      hosts ??= new SshHosts(sshOptionsFor(session.sshd, options.hosts));
      return hosts;
    },
    get host() {
      return session.hosts.host(session.sshd.spec);
    },
    removeAfter(dir) {
      dirs.push(dir);
    },
    async restart() {
      sshd = await restartSshd(session.sshd);
      return sshd;
    },
  };
  return session;
}

/**
 * A workspace root in the host user's home and a workspace `E-1` in it, both made on
 * the host by its user (removed after the file), which owns the workspace; `root` is
 * the real path of the root.
 */
export async function makeHostWorkspace(
  ssh: SshSession,
  prefix: string,
): Promise<{ root: string; workspace: string }> {
  const root = path.join(ssh.user.home, `${prefix}${randomBytes(6).toString('hex')}`);
  ssh.removeAfter(root);
  const ran = await ssh.host.run({
    script: 'mkdir -p -- "$WS" && cd -- "$WS" && pwd -P',
    cwd: null,
    env: { WS: path.join(root, 'E-1') },
    timeoutMs: 30_000,
  });
  if (!ran.ok) throw new Error(`mkdir on the host failed: ${ran.message}`);
  expect(ran.result, ran.result.output).toMatchObject({ exitCode: 0, timedOut: false });
  const workspace = ran.result.output.trim();
  expect(workspace).toBe(path.join(realpathSync(root), 'E-1'));
  expect(statSync(workspace).uid).toBe(ssh.user.uid);
  return { root: path.dirname(workspace), workspace };
}

/** A process `watchCommandLines` noted, read from /proc while it ran. */
export interface SeenProcess {
  pid: number;
  /** Its parent. */
  ppid: number;
  /** Its process group. */
  pgid: number;
  cmdline: string;
  cwd: string | null;
  /** The values of the watched variables in its environment (absent ones left out). */
  env: Record<string, string>;
}

export interface CommandLineWatch {
  /** Every command line that held the secret. */
  leaks: string[];
  /** Each process `noting` listed, as first seen. */
  seen: SeenProcess[];
  /** How many times every command line was read. */
  scans: number;
}

/**
 * Reads every command line on this machine for `secret` until stopped, and notes each
 * process `noting` lists (its group, working directory and the variables `vars` of its
 * environment), to show the watch looked at the right processes.
 */
export function watchCommandLines(
  secret: string,
  watch: { noting?: () => { pid: number; cmdline: string }[]; vars?: readonly string[] } = {},
): { stop(): Promise<CommandLineWatch> } {
  const leaks: string[] = [];
  const seen = new Map<number, SeenProcess>();
  let scans = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const p of allCommandLines()) if (p.cmdline.includes(secret)) leaks.push(p.cmdline);
      for (const p of watch.noting?.() ?? []) {
        if (seen.has(p.pid)) continue;
        try {
          seen.set(p.pid, readProcess(p, watch.vars ?? []));
        } catch {
          // Gone while reading; the next one is read next time.
        }
      }
      scans += 1;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { leaks, seen: [...seen.values()], scans };
    },
  };
}

function readProcess(p: { pid: number; cmdline: string }, vars: readonly string[]): SeenProcess {
  const raw = readFileSync(`/proc/${p.pid}/environ`, 'utf8');
  // A process in the middle of an exec (a `#!/usr/bin/env node` script starting) reads as
  // having no environment at all; every process these tests start has one, so read it again
  // on the next scan (CI once caught a gemini CLI at that moment).
  if (raw === '') throw new Error(`the environment of ${p.pid} is not readable yet`);
  const environ = raw.split('\0');
  const stat = readFileSync(`/proc/${p.pid}/stat`, 'utf8');
  const env: Record<string, string> = {};
  // Fields after the command name: state, ppid, pgrp, …
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  for (const name of vars) {
    const entry = environ.find((v) => v.startsWith(`${name}=`));
    if (entry !== undefined) env[name] = entry.slice(name.length + 1);
  }
  return {
    pid: p.pid,
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
    cmdline: p.cmdline,
    cwd: readlinkSync(`/proc/${p.pid}/cwd`),
    env,
  };
}

/**
 * The seen processes without forks caught before their exec: a child still showing its
 * parent's command line is a tool the CLI was starting (whose environment the CLI may have
 * trimmed, e.g. of its key), not the CLI.
 */
export function withoutForks(seen: readonly SeenProcess[]): SeenProcess[] {
  const byPid = new Map(seen.map((p) => [p.pid, p]));
  return seen.filter((p) => byPid.get(p.ppid)?.cmdline !== p.cmdline);
}

/**
 * What a watch over a CLI's run must show: no command line held the secret, and it saw
 * the CLI (at least one process), each process (forks before their exec aside) in `cwd`
 * with `env` in its environment and a command line matching `cmdline` (what
 * `expectNothingLeft` then looks for).
 */
export function expectWatchedCli(
  scan: CommandLineWatch,
  expected: { cwd: string; env: Record<string, string>; cmdline: RegExp },
): void {
  expect(scan.leaks, 'the secret appeared in a command line').toEqual([]);
  expect(scan.seen.length, `CLI processes seen in ${scan.scans} scans`).toBeGreaterThan(0);
  for (const p of withoutForks(scan.seen)) {
    expect(p, JSON.stringify(scan.seen)).toMatchObject({ cwd: expected.cwd, env: expected.env });
    expect(p.cmdline).toMatch(expected.cmdline);
  }
}

/** The user's processes (optionally those whose command line matches), except sshd's own session processes. */
export function userProcesses(user: string, match?: RegExp): { pid: number; cmdline: string }[] {
  return remoteProcesses(user).filter(
    (p) => !p.cmdline.startsWith('sshd:') && (match === undefined || match.test(p.cmdline)),
  );
}

/** Waits up to `timeoutMs` for no process of the user matching `match` (sshd's own aside), then asserts it. */
export async function expectNothingLeft(user: string, match: RegExp, timeoutMs = 15_000): Promise<void> {
  const gone = await pollUntil(() => userProcesses(user, match).length === 0, timeoutMs);
  expect(gone, `left on the host: ${JSON.stringify(userProcesses(user, match))}`).toBe(true);
}
