/**
 * The real CLI on jira workflows: `validate` reports the jira codes offline, and `run
 * --dry-run` reaches the fake and lists what it would dispatch. The child is spawned
 * asynchronously because the fake answers from this process.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runCliAsync } from '../../support/cli.js';
import { type FakeJira, fakeJiraTracker, startFakeJira } from '../../support/fake-jira/server.js';

const TOKEN = 'jira_cliSecret_token_77';
let fake: FakeJira | null = null;
afterEach(async () => {
  await fake?.close();
  fake = null;
});

async function cli(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const r = await runCliAsync(args, { env });
  return { code: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
}

function workflow(front: Record<string, unknown>): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'jira-cli-')), 'WORKFLOW.md');
  writeFileSync(
    file,
    `---\n${stringify({ agent: { kind: 'mock' }, ...front })}---\nWork on {{ issue.title }}.\n`,
  );
  return file;
}

describe('orchestrator CLI on a jira workflow', () => {
  it('validate names the missing endpoint, the e-mail that resolved empty and a misspelt key', async () => {
    const file = workflow({
      tracker: {
        kind: 'jira',
        api_key: '$JIRA_API_TOKEN',
        project: 'PROJ',
        active_states: ['Todo'],
        terminal_states: ['Done'],
      },
      jira: { email: '$JIRA_EMAIL', page_sise: 10 },
    });
    const r = await cli(['validate', file, '--format', 'json'], { JIRA_API_TOKEN: TOKEN });
    expect(r.code).toBe(1);
    const found = (JSON.parse(r.stdout) as { diagnostics: { code: string; message: string }[] }).diagnostics;
    expect(found.map((d) => d.code)).toEqual(
      expect.arrayContaining(['jira.endpoint.missing', 'jira.email.empty', 'config.unknown_key']),
    );
    expect(found.find((d) => d.code === 'config.unknown_key')?.message).toContain(
      'did you mean "jira.page_size"?',
    );
    expect(r.stdout + r.stderr).not.toContain(TOKEN);
  });

  it('run --dry-run reaches the site and lists the candidates it would dispatch', async () => {
    fake = await startFakeJira({ token: TOKEN });
    fake.addIssue({ summary: 'first job', status: 'Todo', priority: 2 });
    fake.addIssue({ summary: 'finished', status: 'Done' });
    const blocks = fakeJiraTracker(fake);
    const r = await cli(['run', '--dry-run', workflow({ tracker: blocks.tracker, jira: blocks.jira })], {
      JIRA_API_TOKEN: TOKEN,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/PROJ-1\s+dispatch\s+\[Todo\] first job/);
    expect(r.stdout).not.toContain('PROJ-2');
    expect(r.stdout + r.stderr).not.toContain(TOKEN);
  });

  it('run --dry-run against a site that is not there says so at once', async () => {
    fake = await startFakeJira({ token: TOKEN });
    const blocks = fakeJiraTracker(fake);
    await fake.close();
    const started = Date.now();
    const r = await cli(['run', '--dry-run', workflow({ tracker: blocks.tracker, jira: blocks.jira })], {
      JIRA_API_TOKEN: TOKEN,
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr + r.stdout).toContain('connection refused');
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});
