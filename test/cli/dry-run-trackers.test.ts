/**
 * `run --dry-run` on the gitlab and linear kinds, through the real CLI: it reaches the fake,
 * lists what it would dispatch (and nothing else), keeps the token out of its output, and
 * says at once when the server is not there. (The jira kind's are in test/tracker/jira.)
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { runCliAsync } from '../support/cli.js';
import { fakeGitlabTracker, startFakeGitlab } from '../support/fake-gitlab/server.js';
import { fakeLinearTracker, startFakeLinear } from '../support/fake-linear/server.js';

function workflow(front: Record<string, unknown>): string {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'dry-run-')), 'WORKFLOW.md');
  writeFileSync(
    file,
    `---\n${stringify({ agent: { kind: 'mock' }, ...front })}---\nWork on {{ issue.title }}.\n`,
  );
  return file;
}

describe('run --dry-run on the gitlab kind', () => {
  const TOKEN = 'glpat-dryRunSecret-31c7';

  it('lists the open candidate and not the closed issue', async () => {
    const fake = await startFakeGitlab({ token: TOKEN });
    try {
      fake.addIssue({ title: 'first job', labels: ['workflow::Todo'] });
      fake.addIssue({ title: 'finished', labels: ['workflow::Done'], state: 'closed' });
      const r = await runCliAsync(['run', '--dry-run', workflow({ tracker: fakeGitlabTracker(fake) })], {
        env: { GITLAB_TOKEN: TOKEN },
      });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/\b1\s+dispatch\s+\[Todo\] first job/);
      expect(r.stdout).not.toContain('finished');
      expect(r.stdout + r.stderr).not.toContain(TOKEN);
    } finally {
      await fake.close();
    }
  });

  it('an instance that is not there is reported at once', async () => {
    const fake = await startFakeGitlab({ token: TOKEN });
    const tracker = fakeGitlabTracker(fake);
    await fake.close();
    const r = await runCliAsync(['run', '--dry-run', workflow({ tracker })], {
      env: { GITLAB_TOKEN: TOKEN },
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('connection refused');
  });
});

describe('run --dry-run on the linear kind', () => {
  const TOKEN = 'lin_api_dryRunSecret_84be';

  it('lists the candidate in an active state and not the one that is done', async () => {
    const fake = await startFakeLinear({ token: TOKEN });
    try {
      fake.addIssue({ title: 'first job', state: 'Todo', priority: 2 });
      fake.addIssue({ title: 'finished', state: 'Done' });
      const r = await runCliAsync(['run', '--dry-run', workflow({ tracker: fakeLinearTracker(fake) })], {
        env: { LINEAR_API_KEY: TOKEN },
      });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/ENG-1\s+dispatch\s+\[Todo\] first job/);
      expect(r.stdout).not.toContain('finished');
      expect(r.stdout + r.stderr).not.toContain(TOKEN);
    } finally {
      await fake.close();
    }
  });

  it('an endpoint that is not there is reported at once', async () => {
    const fake = await startFakeLinear({ token: TOKEN });
    const tracker = fakeLinearTracker(fake);
    await fake.close();
    const r = await runCliAsync(['run', '--dry-run', workflow({ tracker })], {
      env: { LINEAR_API_KEY: TOKEN },
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('connection refused');
  });
});
