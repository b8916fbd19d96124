/**
 * A real OpenSSH server for tests, on 127.0.0.1 and a free high port, run as root
 * (the test process) with its own config, keys and log in a fresh temp directory.
 *
 * Usage:
 *   const user = ensureTestUser('orchssh-mine');   // one user per test file that counts processes
 *   const sshd = await startSshd({ user: user.name });
 *   // connect to sshd.spec (`user@127.0.0.1:port`) with the key at sshd.clientKeyPath,
 *   // trusting sshd.hostPublicKey (or write sshd.knownHostsLine() to a known_hosts file)
 *   afterAll(() => sshd.stop());
 *
 * - `startSshd({ port, hostKeyPath, clientKeyPath })` with the keys of a stopped server is
 *   the same server restarted; with `port` only, a different server (new host key) on the
 *   same port, which is how "host key changed" is tested.
 * - `remoteProcesses(user)` lists the user's processes through /proc (same machine): a test
 *   that asserts "nothing of the user is left" must use a user no other test file uses,
 *   since test files run in parallel.
 * - Both the user and root may log in with the client key (root for the cases that differ,
 *   such as channel signals being refused for root).
 * - A missing sshd is a failure with a clear message, never a skip: CI installs it.
 * - Test users are not left behind: each carries, in its comment field, the pid of the test
 *   process that last claimed it; `releaseTestUser` removes a file's user (home included) when
 *   the file is done, and `removeStaleTestUsers` (run by the global setup before and after every
 *   vitest run) removes those whose process is gone, such as the user of a file that crashed.
 *
 * Traps handled here: sshd must be started by absolute path and needs /run/sshd; keys
 * under /tmp fail `StrictModes yes`; a `useradd` account is locked until `usermod -p '*'`;
 * a non-root user reads its authorized keys through a 711 directory. `stop()` also ends
 * the per-connection sshd processes, as a host going down would: stopping only the
 * listener would leave accepted connections working.
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './ports.js';

/** Absolute path of the OpenSSH server binary. */
export const SSHD_PATH = '/usr/sbin/sshd';
const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 5_000;
const POLL_MS = 25;

export interface TestUser {
  name: string;
  uid: number;
  home: string;
}

export interface StartSshdOptions {
  /** Login name put into `spec`; default `orchssh` (created if missing). */
  user?: string;
  /** Private host key to reuse (a restart); default a freshly generated ed25519 key. */
  hostKeyPath?: string;
  /** Private client key to authorize (a restart keeps the old one); default a fresh ed25519 key. */
  clientKeyPath?: string;
  /** TCP port; default a free one. */
  port?: number;
  /** More sshd_config lines (e.g. `AllowTcpForwarding no`). */
  extraConfig?: readonly string[];
}

export interface Sshd {
  host: '127.0.0.1';
  port: number;
  user: string;
  /** `user@127.0.0.1:port`, the form `worker.ssh_hosts` takes. */
  spec: string;
  /** Private client key (OpenSSH format, no passphrase), authorized for `user` and root. */
  clientKeyPath: string;
  /** Private host key of this server. */
  hostKeyPath: string;
  /** `ssh-ed25519 AAAA…` (type and base64, no comment). */
  hostPublicKey: string;
  /** Temp directory holding config, keys and log. */
  dir: string;
  /** Pid of the listening sshd. */
  pid: number;
  /** sshd's own log (`-e`, LogLevel VERBOSE): one "Accepted publickey" line per login. */
  logPath: string;
  /** This server's line for a known_hosts file (`[127.0.0.1]:port ssh-ed25519 AAAA…`). */
  knownHostsLine(): string;
  /** Kills the listener and its connections by pid and waits until they are gone. */
  stop(): Promise<void>;
}

/** Every test user's name starts with this; the sweep touches no other account. */
export const TEST_USER_PREFIX = 'orchssh';

/**
 * A test file's user name: `base`, plus the run's tag when another test run shares the machine
 * (ORCHESTRATOR_TEST_USER_TAG; CI runs the Node 22/24 tests beside the main run), so that two
 * runs of the same file never share, and remove under each other, one account.
 */
export function testUserName(base: string): string {
  const tag = testRunTag();
  return tag === '' ? base : `${base}-${tag}`;
}

/** This run's ORCHESTRATOR_TEST_USER_TAG, checked; '' when the run carries none. */
export function testRunTag(): string {
  const tag = process.env.ORCHESTRATOR_TEST_USER_TAG ?? '';
  if (tag !== '' && !/^[a-z0-9]{1,6}$/.test(tag))
    throw new Error(`ORCHESTRATOR_TEST_USER_TAG must be 1-6 of a-z0-9, not ${tag}`);
  return tag;
}
/** The comment-field mark of a test user: this text, then the pid of the process that claimed it. */
const CLAIM_MARK = 'orchestrator test user pid ';

/**
 * Makes sure a local login user exists and is unlocked (no password, key login only), and
 * marks it as claimed by this process.
 */
export function ensureTestUser(name = 'orchssh'): TestUser {
  if (!name.startsWith(TEST_USER_PREFIX)) {
    throw new Error(`test user ${name} must start with ${TEST_USER_PREFIX}, or no sweep will ever remove it`);
  }
  if (!userExists(name)) {
    try {
      withPasswdLock(() => execFileSync('useradd', ['-m', '-s', '/bin/sh', name], { stdio: 'pipe' }));
    } catch (error) {
      // Another test file may have made it meanwhile.
      if (!userExists(name)) throw error;
    }
  }
  // useradd leaves the account locked ("!"), and sshd refuses locked accounts without PAM.
  withPasswdLock(() =>
    execFileSync('usermod', ['-p', '*', '-c', `${CLAIM_MARK}${process.pid}`, name], { stdio: 'pipe' }),
  );
  const entry = passwdEntry(name);
  if (entry === null) throw new Error(`test user ${name} is missing from /etc/passwd after useradd`);
  return entry;
}

/**
 * Removes a test user this process is done with: its processes killed, then the account, its
 * group and its home. A user another live process has claimed since is left to that one.
 * Returns whether the user is gone.
 */
export function releaseTestUser(name: string): boolean {
  const owner = claimOf(name);
  if (owner === undefined) return true;
  if (owner !== null && owner !== process.pid && isAlive(owner)) return false;
  removeUser(name);
  return true;
}

/**
 * Removes every test user (name starting with `prefix`, and ending with `suffix` when given)
 * whose claiming process is gone, or that carries no claim and runs nothing: what a crashed or
 * killed test run left. Returns their names.
 */
export function removeStaleTestUsers(prefix: string = TEST_USER_PREFIX, suffix = ''): string[] {
  if (!prefix.startsWith(TEST_USER_PREFIX)) throw new Error(`the prefix must start with ${TEST_USER_PREFIX}`);
  const removed: string[] = [];
  for (const { name } of testUsers(prefix)) {
    if (!name.endsWith(suffix)) continue;
    const owner = claimOf(name);
    if (owner === undefined) continue;
    const stale = owner === null ? remoteProcesses(name).length === 0 : !isAlive(owner);
    if (!stale) continue;
    removeUser(name);
    removed.push(name);
  }
  return removed;
}

/** The test users on this machine whose name starts with `prefix`. */
export function testUsers(prefix: string = TEST_USER_PREFIX): TestUser[] {
  return passwdLines()
    .filter((fields) => fields[0]?.startsWith(prefix) === true)
    .map((fields) => passwdEntry(fields[0] as string))
    .filter((entry): entry is TestUser => entry !== null);
}

/** The pid that claimed `name`; null when it carries no claim; undefined when there is no such user. */
function claimOf(name: string): number | null | undefined {
  const fields = passwdLines().find((f) => f[0] === name);
  if (fields === undefined) return undefined;
  const comment = fields[4] ?? '';
  return comment.startsWith(CLAIM_MARK) ? Number(comment.slice(CLAIM_MARK.length)) || null : null;
}

function removeUser(name: string): void {
  const home = passwdEntry(name)?.home ?? null;
  // userdel refuses a user that still runs something; -f alone would leave those running.
  killUserProcesses(name);
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (remoteProcesses(name).length > 0 && Date.now() < deadline) sleepSync(POLL_MS);
  try {
    withPasswdLock(() => execFileSync('userdel', ['-f', '-r', name], { stdio: 'pipe' }));
  } catch (error) {
    // Exit 12: the account is gone but its home or mail spool was not removed (no spool, usually).
    if (userExists(name)) throw error;
  }
  if (home !== null && path.basename(home) === name) rmSync(home, { recursive: true, force: true });
}

/** Starts sshd and resolves once its port accepts connections and sends a banner. */
export async function startSshd(options: StartSshdOptions = {}): Promise<Sshd> {
  if (!existsSync(SSHD_PATH)) {
    throw new Error(
      `${SSHD_PATH} is missing: install openssh-server (apt-get install openssh-server); the SSH tests need a real sshd`,
    );
  }
  const user = options.user ?? 'orchssh';
  if (user !== 'root') ensureTestUser(user);
  const port = options.port ?? (await freePort());
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sshd-test-'));
  // sshd reads authorized keys as the logging-in user: the directory must be searchable.
  chmodSync(dir, 0o711);

  const hostKeyPath = path.join(dir, 'host_ed25519');
  if (options.hostKeyPath === undefined) generateKey(hostKeyPath, 'test-host');
  else copyKey(options.hostKeyPath, hostKeyPath);
  const clientKeyPath = path.join(dir, 'client_ed25519');
  if (options.clientKeyPath === undefined) generateKey(clientKeyPath, 'test-client');
  else copyKey(options.clientKeyPath, clientKeyPath);

  const clientPublic = publicKeyOf(clientKeyPath);
  for (const name of new Set([user, 'root'])) {
    const file = path.join(dir, `authorized_keys_${name}`);
    writeFileSync(file, `${clientPublic}\n`);
    chmodSync(file, 0o644);
  }
  const hostPublicKey = publicKeyOf(hostKeyPath);

  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const configPath = path.join(dir, 'sshd_config');
  writeFileSync(
    configPath,
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${hostKeyPath}`,
      `PidFile ${path.join(dir, 'sshd.pid')}`,
      `AuthorizedKeysFile ${dir}/authorized_keys_%u`,
      'PubkeyAuthentication yes',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'PermitRootLogin prohibit-password',
      'UsePAM no',
      'StrictModes no',
      'LogLevel VERBOSE',
      ...(options.extraConfig ?? []),
      '',
    ].join('\n'),
  );
  execFileSync(SSHD_PATH, ['-t', '-f', configPath], { stdio: 'pipe' });

  const logPath = path.join(dir, 'sshd.log');
  const logFd = openSync(logPath, 'a');
  const child = spawn(SSHD_PATH, ['-D', '-e', '-f', configPath], { stdio: ['ignore', logFd, logFd] });
  closeSync(logFd);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`sshd did not start (see ${logPath})`);
  let exited: string | null = null;
  const exitedPromise = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = `exit code ${code}, signal ${signal}`;
      resolve();
    });
  });
  child.on('error', () => {});

  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!(await sendsBanner(port))) {
    if (exited !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      const log = readFileSync(logPath, 'utf8');
      throw new Error(`sshd on port ${port} did not come up (${exited ?? 'timed out'}); log:\n${log}`);
    }
    await delay(POLL_MS);
  }

  return {
    host: '127.0.0.1',
    port,
    user,
    spec: `${user}@127.0.0.1:${port}`,
    clientKeyPath,
    hostKeyPath,
    hostPublicKey,
    dir,
    pid,
    logPath,
    knownHostsLine: () => `[127.0.0.1]:${port} ${hostPublicKey}`,
    stop: async () => {
      const connections = descendants(pid).filter((p) => commOf(p) === 'sshd');
      for (const target of [pid, ...connections]) signal(target, 'SIGTERM');
      const stopDeadline = Date.now() + STOP_TIMEOUT_MS;
      while (exited === null || connections.some(isAlive)) {
        if (Date.now() > stopDeadline) {
          for (const target of [pid, ...connections]) signal(target, 'SIGKILL');
          break;
        }
        await delay(POLL_MS);
      }
      await exitedPromise;
    },
  };
}

/** The user's processes on this machine (from /proc), with their command lines (NULs as spaces). */
export function remoteProcesses(user: string): { pid: number; cmdline: string }[] {
  const entry = passwdEntry(user);
  if (entry === null) return [];
  const found: { pid: number; cmdline: string }[] = [];
  for (const pid of listPids()) {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const uidLine = /^Uid:\s+(\d+)/m.exec(status);
      if (uidLine === null || Number(uidLine[1]) !== entry.uid) continue;
      if (/^State:\s+Z/m.test(status)) continue;
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
      found.push({ pid, cmdline });
    } catch {
      // Gone while reading.
    }
  }
  return found;
}

/** Every process's command line on this machine (NULs as spaces), for secret-leak checks. */
export function allCommandLines(): { pid: number; cmdline: string }[] {
  const found: { pid: number; cmdline: string }[] = [];
  for (const pid of listPids()) {
    try {
      found.push({ pid, cmdline: readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ') });
    } catch {
      // Gone while reading.
    }
  }
  return found;
}

/** SIGKILLs every process of the user (cleanup between tests). */
export function killUserProcesses(user: string): void {
  for (const { pid } of remoteProcesses(user)) signal(pid, 'SIGKILL');
}

/** Polls `check` until it returns true or `timeoutMs` passes; true when it held. */
export async function pollUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await delay(POLL_MS);
  }
  return true;
}

/**
 * Runs a passwd-changing command, retrying while another test file holds the
 * /etc/passwd lock (test files run in parallel and each makes its own user).
 */
function withPasswdLock(command: () => void): void {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      command();
      return;
    } catch (error) {
      const stderr = String((error as { stderr?: unknown }).stderr ?? '');
      if (!/lock|try again/i.test(stderr) || Date.now() > deadline) throw error;
      sleepSync(100);
    }
  }
}

function userExists(name: string): boolean {
  return passwdEntry(name) !== null;
}

/** /etc/passwd split into fields, one array per account. */
function passwdLines(): string[][] {
  return readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.split(':'));
}

function passwdEntry(name: string): TestUser | null {
  for (const fields of passwdLines()) {
    if (fields[0] === name && fields[2] !== undefined && fields[5] !== undefined) {
      return { name, uid: Number(fields[2]), home: fields[5] };
    }
  }
  return null;
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function generateKey(file: string, comment: string): void {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', file], { stdio: 'pipe' });
}

function copyKey(from: string, to: string): void {
  copyFileSync(from, to);
  chmodSync(to, 0o600);
  copyFileSync(`${from}.pub`, `${to}.pub`);
}

/** `type base64` of a private key's public half. */
function publicKeyOf(privateKeyPath: string): string {
  const text = readFileSync(`${privateKeyPath}.pub`, 'utf8').trim().split(/\s+/);
  return `${text[0]} ${text[1]}`;
}

function sendsBanner(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('data', (chunk) => done(chunk.toString('latin1').startsWith('SSH-')));
    socket.once('error', () => done(false));
    socket.once('close', () => done(false));
  });
}

function listPids(): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

function ppidOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[1]);
  } catch {
    return null;
  }
}

function commOf(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return null;
  }
}

function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const pid of listPids()) {
    const ppid = ppidOf(pid);
    if (ppid === null) continue;
    const list = children.get(ppid) ?? [];
    list.push(pid);
    children.set(ppid, list);
  }
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const next = queue.shift()!;
    for (const child of children.get(next) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
