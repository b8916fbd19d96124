import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { OWNER_ENV } from '../../src/domain/owner.js';
import { HOOK_OUTPUT_LIMIT_BYTES, HOOK_PIPE_DRAIN_MS, hookEnv, runHook } from '../../src/workspace/hooks.js';
import { baseEnvWithSecrets, isAlive, killQuietly, readPid, removeTempDirs, tempDir } from './support.js';

afterAll(removeTempDirs);

const PATH_ONLY = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
const leftovers: number[] = [];
afterEach(() => {
  for (const pid of leftovers.splice(0)) killQuietly(pid);
});

describe('runHook', () => {
  it('a zero exit is ok and runs in the given working directory', async () => {
    const dir = await tempDir();
    const result = await runHook('pwd', { cwd: dir, env: PATH_ONLY, timeoutMs: 5_000 });
    expect(result).toMatchObject({ ok: true, exitCode: 0, signal: null, timedOut: false });
    expect(result.output.trim()).toBe(dir);
  });

  it('a non-zero exit is a failure carrying the exit code, not a success', async () => {
    const dir = await tempDir();
    const result = await runHook('echo nope; exit 3', { cwd: dir, env: PATH_ONLY, timeoutMs: 5_000 });
    expect(result).toMatchObject({ ok: false, exitCode: 3, timedOut: false });
    expect(result.output).toContain('nope');
  });

  it('stderr is captured and keeps its order relative to stdout', async () => {
    const dir = await tempDir();
    const result = await runHook('echo one; echo two >&2; echo three; echo four >&2', {
      cwd: dir,
      env: PATH_ONLY,
      timeoutMs: 5_000,
    });
    expect(result.output).toBe('one\ntwo\nthree\nfour\n');
  });

  it('the script runs as sh -c: positional parameters and $0 are not leaked from the wrapper', async () => {
    const dir = await tempDir();
    const result = await runHook('echo "[$#][$1][$0]"', { cwd: dir, env: PATH_ONLY, timeoutMs: 5_000 });
    expect(result.output).toBe('[0][][sh]\n');
  });

  it('the orchestrator environment is not inherited: only the given variables exist', async () => {
    const dir = await tempDir();
    vi.stubEnv('WS_TEST_PARENT_ONLY', 'leaked');
    try {
      const result = await runHook('env', {
        cwd: dir,
        env: { ...PATH_ONLY, GIVEN: 'yes' },
        timeoutMs: 5_000,
      });
      expect(result.output).toContain('GIVEN=yes');
      expect(result.output).not.toContain('WS_TEST_PARENT_ONLY');
      const names = result.output
        .trim()
        .split('\n')
        .map((line) => line.slice(0, line.indexOf('=')));
      expect(
        names.filter((name) => !['PATH', 'GIVEN', 'PWD', 'OLDPWD', 'SHLVL', '_'].includes(name)),
      ).toEqual([]);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('a hook reading stdin gets EOF at once instead of hanging', async () => {
    const dir = await tempDir();
    const result = await runHook('cat; echo done', { cwd: dir, env: PATH_ONLY, timeoutMs: 5_000 });
    expect(result).toMatchObject({ ok: true, output: 'done\n' });
  });

  it('a timeout kills the whole process group, grandchildren included, and returns quickly', async () => {
    const dir = await tempDir();
    const pidFile = path.join(dir, 'grandchild.pid');
    const started = Date.now();
    const result = await runHook(`sleep 300 & echo $! > ${pidFile}; echo started; sleep 300`, {
      cwd: dir,
      env: PATH_ONLY,
      timeoutMs: 300,
    });
    const pid = await readPid(pidFile);
    leftovers.push(pid);
    expect(result).toMatchObject({ ok: false, timedOut: true, exitCode: null, signal: 'SIGKILL' });
    expect(result.output).toContain('started');
    expect(result.output).toContain('timed out after 300 ms');
    expect(Date.now() - started).toBeLessThan(300 + HOOK_PIPE_DRAIN_MS);
    await vi.waitFor(() => expect(isAlive(pid)).toBe(false), { timeout: 2_000, interval: 20 });
  });

  it('a grandchild that escaped the group and holds the output pipe cannot hang a timed-out hook', async () => {
    const dir = await tempDir();
    const pidFile = path.join(dir, 'escaped.pid');
    const started = Date.now();
    const result = await runHook(`setsid sleep 300 & echo $! > ${pidFile}; sleep 300`, {
      cwd: dir,
      env: PATH_ONLY,
      timeoutMs: 200,
    });
    leftovers.push(await readPid(pidFile));
    expect(result).toMatchObject({ ok: false, timedOut: true });
    expect(Date.now() - started).toBeLessThan(200 + HOOK_PIPE_DRAIN_MS + 2_000);
    expect(result.output).toContain('stopped reading');
  });

  it('a background child holding the pipe neither delays a hook that exited 0 nor outlives it', async () => {
    const dir = await tempDir();
    const pidFile = path.join(dir, 'bg.pid');
    const started = Date.now();
    const result = await runHook(`sleep 100 & echo $! > ${pidFile}; echo finished; exit 0`, {
      cwd: dir,
      env: PATH_ONLY,
      timeoutMs: 60_000,
    });
    const pid = await readPid(pidFile);
    leftovers.push(pid);
    expect(result).toMatchObject({ ok: true, exitCode: 0, timedOut: false });
    expect(result.output).toBe('finished\n');
    // Killed with the group, so the pipe closed at once instead of being abandoned after the drain bound.
    expect(Date.now() - started).toBeLessThan(HOOK_PIPE_DRAIN_MS);
    // The kernel closes a killed process's pipes before it is a zombie, so on a loaded
    // machine it can still be exiting for a moment after the pipe closed.
    await vi.waitFor(() => expect(isAlive(pid)).toBe(false), { timeout: 1_000, interval: 10 });
  });

  it('a background child that let go of the pipe is not left running under init after a hook exited 0', async () => {
    const dir = await tempDir();
    const pidFile = path.join(dir, 'bg.pid');
    const result = await runHook(`sleep 100 </dev/null >/dev/null 2>&1 & echo $! > ${pidFile}; exit 0`, {
      cwd: dir,
      env: PATH_ONLY,
      timeoutMs: 60_000,
    });
    const pid = await readPid(pidFile);
    leftovers.push(pid);
    expect(result).toMatchObject({ ok: true, exitCode: 0 });
    await vi.waitFor(() => expect(isAlive(pid)).toBe(false), { timeout: 1_000, interval: 10 });
  });

  it('a failed hook does not leave its background children running either', async () => {
    const dir = await tempDir();
    const pidFile = path.join(dir, 'bg.pid');
    const result = await runHook(`sleep 100 </dev/null >/dev/null 2>&1 & echo $! > ${pidFile}; exit 3`, {
      cwd: dir,
      env: PATH_ONLY,
      timeoutMs: 60_000,
    });
    const pid = await readPid(pidFile);
    leftovers.push(pid);
    expect(result).toMatchObject({ ok: false, exitCode: 3, timedOut: false });
    await vi.waitFor(() => expect(isAlive(pid)).toBe(false), { timeout: 1_000, interval: 10 });
  });

  it('an abort kills the group and fails the hook without calling it a timeout', async () => {
    const dir = await tempDir();
    const pidFile = path.join(dir, 'grandchild.pid');
    const controller = new AbortController();
    const pending = runHook(`sleep 300 & echo $! > ${pidFile}; sleep 300`, {
      cwd: dir,
      env: PATH_ONLY,
      timeoutMs: 60_000,
      signal: controller.signal,
    });
    const pid = await readPid(pidFile);
    leftovers.push(pid);
    controller.abort();
    const result = await pending;
    expect(result).toMatchObject({ ok: false, timedOut: false, exitCode: null, signal: 'SIGKILL' });
    expect(result.output).toContain('aborted');
    await vi.waitFor(() => expect(isAlive(pid)).toBe(false), { timeout: 2_000, interval: 20 });
  });

  it('an already-aborted signal does not start the hook at all', async () => {
    const dir = await tempDir();
    const marker = path.join(dir, 'ran');
    const controller = new AbortController();
    controller.abort();
    const result = await runHook(`touch ${marker}`, {
      cwd: dir,
      env: PATH_ONLY,
      timeoutMs: 5_000,
      signal: controller.signal,
    });
    expect(result.ok).toBe(false);
    await expect(fsp.access(marker)).rejects.toThrow();
  });

  it('output over 256 KiB is capped with a note of the dropped bytes instead of growing without bound', async () => {
    const dir = await tempDir();
    const totalBytes = 600_000;
    const result = await runHook(`head -c ${totalBytes} /dev/zero | tr '\\000' a`, {
      cwd: dir,
      env: PATH_ONLY,
      timeoutMs: 10_000,
    });
    expect(result.ok).toBe(true);
    const dropped = totalBytes - HOOK_OUTPUT_LIMIT_BYTES;
    expect(result.output.startsWith('a'.repeat(HOOK_OUTPUT_LIMIT_BYTES))).toBe(true);
    expect(result.output.slice(HOOK_OUTPUT_LIMIT_BYTES)).toBe(
      `\n[output truncated at ${HOOK_OUTPUT_LIMIT_BYTES} bytes: ${dropped} bytes dropped]`,
    );
  });

  it('a missing working directory is a failed result, not a rejection', async () => {
    const dir = await tempDir();
    const result = await runHook('true', {
      cwd: path.join(dir, 'missing'),
      env: PATH_ONLY,
      timeoutMs: 5_000,
    });
    expect(result).toMatchObject({ ok: false, exitCode: null, timedOut: false });
    expect(result.output).toContain('could not start');
  });

  it('an environment value with a NUL byte is a failed result, not a thrown exception', async () => {
    const dir = await tempDir();
    const result = await runHook('true', { cwd: dir, env: { BAD: 'a\0b' }, timeoutMs: 5_000 });
    expect(result.ok).toBe(false);
    expect(result.output).toContain('could not start');
  });
});

describe('hookEnv', () => {
  const vars = { issueId: 'id-1', identifier: 'ABC-1', workspace: '/ws/ABC-1', attempt: 1 };

  it('secrets in the orchestrator environment are never handed to hooks', () => {
    const env = hookEnv(baseEnvWithSecrets(), vars);
    expect(env).not.toHaveProperty('ORCHESTRATOR_TRACKER_API_KEY');
    expect(env).not.toHaveProperty('GITHUB_TOKEN');
    expect(env).not.toHaveProperty('AWS_SECRET_ACCESS_KEY');
    expect(Object.keys(env).sort()).toEqual([
      'HOME',
      'LANG',
      'ORCHESTRATOR_ATTEMPT',
      'ORCHESTRATOR_ISSUE_ID',
      'ORCHESTRATOR_ISSUE_IDENTIFIER',
      'ORCHESTRATOR_WORKSPACE',
      'PATH',
    ]);
  });

  it('the issue variables are set; attempts count from 1, and a hook outside any run reads 0, never an empty value', () => {
    expect(hookEnv({}, vars)).toEqual({
      ORCHESTRATOR_ISSUE_ID: 'id-1',
      ORCHESTRATOR_ISSUE_IDENTIFIER: 'ABC-1',
      ORCHESTRATOR_WORKSPACE: '/ws/ABC-1',
      ORCHESTRATOR_ATTEMPT: '1',
    });
    expect(hookEnv({}, { ...vars, attempt: 3 }).ORCHESTRATOR_ATTEMPT).toBe('3');
    expect(hookEnv({}, { ...vars, attempt: null }).ORCHESTRATOR_ATTEMPT).toBe('0');
  });

  it('a hook carries the owner tag, or a restarted service could not find the hook it left running', () => {
    expect(hookEnv({}, { ...vars, ownerTag: 'tag-1' })[OWNER_ENV]).toBe('tag-1');
    expect(hookEnv({}, vars)).not.toHaveProperty(OWNER_ENV);
  });

  it("an outer service's owner tag in the orchestrator's environment is never passed on (only its own)", () => {
    const base = { PATH: '/bin', [OWNER_ENV]: 'outer-tag' };
    expect(hookEnv(base, vars)).not.toHaveProperty(OWNER_ENV);
    expect(hookEnv(base, { ...vars, ownerTag: 'own-tag' })[OWNER_ENV]).toBe('own-tag');
  });

  it('the SSH host is set only when one is given', () => {
    expect(hookEnv({}, { ...vars, sshHost: 'build-1' }).ORCHESTRATOR_SSH_HOST).toBe('build-1');
    expect(hookEnv({}, { ...vars, sshHost: null })).not.toHaveProperty('ORCHESTRATOR_SSH_HOST');
    expect(hookEnv({}, vars)).not.toHaveProperty('ORCHESTRATOR_SSH_HOST');
  });

  it('every allow-listed variable passes and an unset one is not invented', () => {
    const names = [
      'PATH',
      'HOME',
      'SHELL',
      'TMPDIR',
      'USER',
      'LOGNAME',
      'TERM',
      'LANG',
      'LC_ALL',
      'SSH_AUTH_SOCK',
    ];
    const base = Object.fromEntries(names.map((name) => [name, `v-${name}`]));
    const env = hookEnv({ ...base, TMPDIR: undefined }, vars);
    for (const name of names.filter((n) => n !== 'TMPDIR')) expect(env[name]).toBe(`v-${name}`);
    expect(env).not.toHaveProperty('TMPDIR');
  });

  it('a NUL byte in the identifier cannot make the hook unstartable', async () => {
    const dir = await tempDir();
    const env = hookEnv(PATH_ONLY, { ...vars, identifier: 'a\0b', workspace: dir });
    const result = await runHook('printf %s "$ORCHESTRATOR_ISSUE_IDENTIFIER"', {
      cwd: dir,
      env,
      timeoutMs: 5_000,
    });
    expect(result).toMatchObject({ ok: true, output: 'ab' });
  });
});
