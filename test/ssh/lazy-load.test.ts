/**
 * ssh2 loads on the first SSH connection, not with the service: it holds 16 MB of resident
 * memory from the moment it loads (docs/performance.md, codex-workload), and a service without
 * SSH hosts never needs it. Checked in a fresh Node process, where nothing else loaded it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const scratch = mkdtempSync(path.join(tmpdir(), 'ssh2-lazy-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const REPO = path.resolve(import.meta.dirname, '../..');

/** Runs `body` (ES module code) in a fresh Node with the sources; returns its stdout. */
function fresh(body: string): string {
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', body], {
    cwd: REPO,
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (run.status !== 0) throw new Error(`exit ${run.status}: ${run.stderr}`);
  return run.stdout;
}

const SSH2_LOADED = `
  const { createRequire } = await import('node:module');
  const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((f) => f.includes('/node_modules/ssh2/'));`;

describe('ssh2 is loaded lazily', () => {
  it('the service modules and SSH workers without a connection leave it unloaded; the first connection loads it', () => {
    const key = path.join(scratch, 'id_ed25519');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
    const out = fresh(`${SSH2_LOADED}
      await import(${JSON.stringify(path.join(REPO, 'src/cli/service.ts'))});
      const { SshHosts } = await import(${JSON.stringify(path.join(REPO, 'src/ssh/index.ts'))});
      const hosts = new SshHosts({ strictHostKeyChecking: 'no', knownHostsFile: '/nonexistent/known_hosts',
        identityFile: ${JSON.stringify(key)}, agentSocket: null, defaultUser: 'nobody', connectTimeoutMs: 2000 });
      const host = hosts.host('127.0.0.1:1');
      console.log('before', loaded());
      // Nothing listens on port 1: the connect fails, after ssh2 was needed to try it.
      console.log('probe', JSON.stringify(await host.probe()));
      console.log('after', loaded());
      await hosts.close();`);
    expect(out).toContain('before false');
    expect(out).toMatch(/probe .*"ok":false/);
    expect(out).toContain('after true');
  });
});
