import { describe, expect, it } from 'vitest';
import { expectWatchedCli, type SeenProcess, withoutForks } from '../support/ssh-session.js';

// The real-CLI SSH tests read /proc while a CLI runs; this pins how their check treats a
// tool child caught between fork and exec (CI saw one fail the codex test).
const cli: SeenProcess = {
  pid: 100,
  ppid: 1,
  pgid: 100,
  cmdline: '/opt/codex/bin/codex app-server',
  cwd: '/ws/E-1',
  env: { KEY: 'k' },
};
// Codex and Gemini CLI trim their key from a tool's environment before the exec.
const fork: SeenProcess = { ...cli, pid: 101, ppid: 100, pgid: 101, env: {} };
const expected = { cwd: '/ws/E-1', env: { KEY: 'k' }, cmdline: /codex/ };

describe('the watched-CLI check', () => {
  it('leaves out a child still showing its parent command line (a fork before its exec)', () => {
    expect(withoutForks([cli, fork])).toEqual([cli]);
    expect(() => expectWatchedCli({ leaks: [], seen: [cli, fork], scans: 3 }, expected)).not.toThrow();
  });

  it('still checks a child that runs a program of its own, and a CLI without the key', () => {
    const wrapper = { ...cli, pid: 99, cmdline: 'node /opt/codex/bin/codex.js app-server' };
    const native = { ...cli, ppid: 99, env: {} };
    expect(withoutForks([wrapper, native])).toEqual([wrapper, native]);
    expect(() => expectWatchedCli({ leaks: [], seen: [wrapper, native], scans: 3 }, expected)).toThrow();
    expect(() =>
      expectWatchedCli({ leaks: [], seen: [{ ...cli, cwd: '/tmp' }], scans: 3 }, expected),
    ).toThrow();
  });
});
