/**
 * `run --dry-run` against a tracker that cannot be reached. The listing retries
 * transport failures with backoff, which is right for a service that polls again, but
 * an operator asking for a plan should hear within about two seconds that the tracker
 * does not answer: a refused connection, and a server that accepts and never answers.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILT_MAIN, cliEnv, ensureBuilt } from '../support/cli.js';

/** The promise: a verdict within 2 s of asking. The bound below adds room for a loaded CI machine. */
const VERDICT_BOUND_MS = 6_000;

const dir = mkdtempSync(path.join(os.tmpdir(), 'cli-dry-run-offline-'));

function workflowFor(endpoint: string): string {
  const file = path.join(dir, `w-${Math.random().toString(36).slice(2)}.md`);
  writeFileSync(
    file,
    `---
tracker:
  kind: github
  api_key: $GITHUB_TOKEN
  project: acme/api
  endpoint: ${endpoint}
  active_states: [Todo]
  terminal_states: [Done]
agent:
  kind: mock
---
Work on {{ issue.title }}.
`,
  );
  return file;
}

function dryRun(workflow: string): Promise<{ code: number | null; stderr: string; elapsedMs: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [BUILT_MAIN, 'run', '--dry-run', workflow], {
      cwd: dir,
      env: cliEnv({ GITHUB_TOKEN: 'token-for-an-offline-test' }),
    });
    // Without a verdict the old listing retried for minutes: stop it well before the test times out.
    const guard = setTimeout(() => child.kill('SIGKILL'), 40_000);
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve({ code, stderr, elapsedMs: performance.now() - started });
    });
  });
}

/** A port nothing listens on: bound once to learn a free number, then closed. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Accepts connections and never writes a byte back. */
const blackhole = net.createServer(() => {});
const held = new Set<net.Socket>();
blackhole.on('connection', (socket) => {
  held.add(socket);
  socket.on('close', () => held.delete(socket));
});

beforeAll(async () => {
  ensureBuilt();
  await new Promise<void>((resolve) => blackhole.listen(0, '127.0.0.1', resolve));
}, 180_000);

afterAll(async () => {
  for (const socket of held) socket.destroy();
  await new Promise<void>((resolve) => blackhole.close(() => resolve()));
});

describe.concurrent('run --dry-run with an unreachable tracker', () => {
  it('a refused connection is tracker.unreachable, exit 1, within the bound', async () => {
    const endpoint = `http://127.0.0.1:${await closedPort()}`;
    const r = await dryRun(workflowFor(endpoint));
    expect(r.stderr).toContain('tracker.unreachable');
    expect(r.stderr).toContain(endpoint);
    expect(r.stderr).toContain('connection refused');
    expect(r.code).toBe(1);
    expect(r.elapsedMs).toBeLessThan(VERDICT_BOUND_MS);
  }, 60_000);

  it('a server that accepts and never answers is tracker.unreachable, exit 1, within the bound', async () => {
    const { port } = blackhole.address() as net.AddressInfo;
    const endpoint = `http://127.0.0.1:${port}`;
    const r = await dryRun(workflowFor(endpoint));
    expect(r.stderr).toContain('tracker.unreachable');
    expect(r.stderr).toContain(endpoint);
    expect(r.stderr).toMatch(/no answer within/);
    expect(r.code).toBe(1);
    expect(r.elapsedMs).toBeLessThan(VERDICT_BOUND_MS);
  }, 60_000);
});
