/**
 * A busy HTTP port, as the README promises it: the demo's dashboard is skipped with a warning
 * when its port is busy (the example names no port, so the default's rule applies), while a
 * port the operator wrote stops the start with a coded error that says how to pick another.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { kindCatalog } from '../../src/cli/catalog.js';
import { loadWorkflow } from '../../src/workflow/load.js';
import { REPO_ROOT, runCli } from '../support/cli.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A port something else listens on, held until the test ends. */
async function busyPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => server.close());
  return (server.address() as net.AddressInfo).port;
}

describe('a busy HTTP port', () => {
  it('the example names no port, so the demo gets the default port rule: busy is a warning, not a failed start', () => {
    const loaded = loadWorkflow(path.join(REPO_ROOT, 'WORKFLOW.example.md'), {
      env: {},
      kinds: kindCatalog(),
    });
    expect(loaded.ok).toBe(true);
    if (!loaded.ok) return;
    expect(loaded.workflow.config.server).toMatchObject({ port: 7678, portExplicit: false });
  });

  it('a port the workflow names that is busy stops the start with server_port_in_use, naming the address and --port', async () => {
    const port = await busyPort();
    const dir = mkdtempSync(path.join(tmpdir(), 'orch-busy-port-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(path.join(dir, 'issues.json'), '[]');
    writeFileSync(
      path.join(dir, 'WORKFLOW.md'),
      [
        '---',
        'tracker: { kind: file, active_states: [Todo], terminal_states: [Done] }',
        'file: { path: issues.json }',
        'agent: { kind: mock }',
        `db_path: ${path.join(dir, 'state.db')}`,
        `server: { port: ${port} }`,
        '---',
        'Work on {{ issue.identifier }}.',
        '',
      ].join('\n'),
    );
    const result = runCli(['run', path.join(dir, 'WORKFLOW.md'), '--once', '--log-format', 'json'], {
      cwd: dir,
    });
    expect(result.status, result.stderr).toBe(1);
    expect(result.stderr).toContain(
      `orchestrator run: server_port_in_use: cannot listen on 127.0.0.1:${port}: the port is already in use; choose another with --port N, or --port 0 to run without the HTTP server`,
    );
  });
});
