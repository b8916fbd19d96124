/**
 * How the built CLI answers a request for help and a contradictory command line: help
 * is an answer (stdout, exit 0), a contradiction is bad usage (stderr, exit 2) before
 * anything is loaded or started.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runBuilt } from '../support/cli.js';

beforeAll(() => ensureBuilt(), 180_000);

describe('asking for help', () => {
  it.each([[['help']], [[]], [['--help']]])(
    'orchestrator %j prints the command list on stdout, exit 0',
    (args) => {
      const r = runBuilt(args);
      expect(r.stderr).toBe('');
      expect(r.stdout).toContain('Usage: orchestrator');
      expect(r.stdout).toMatch(/validate \[options\] \[path\]/);
      expect(r.status).toBe(0);
    },
  );

  it('orchestrator help run prints the help of run, exit 0', () => {
    const r = runBuilt(['help', 'run']);
    expect(r.stdout).toContain('--until-idle');
    expect(r.status).toBe(0);
  });

  it('help for a command that does not exist is bad usage (exit 2)', () => {
    expect(runBuilt(['help', 'frobnicate']).status).toBe(2);
  });
});

describe('run flags that contradict each other', () => {
  it('--once with --until-idle is bad usage (exit 2) and starts nothing', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cli-usage-'));
    // A workflow that would start: the run must be refused before it is even read.
    writeFileSync(path.join(dir, 'issues.json'), '[]');
    writeFileSync(
      path.join(dir, 'WORKFLOW.md'),
      `---
tracker:
  kind: file
  active_states: [Todo]
  terminal_states: [Done]
file:
  path: issues.json
agent:
  kind: mock
db_path: state.db
server:
  port: 0
---
Work on {{ issue.title }}.
`,
    );
    const r = runBuilt(['run', 'WORKFLOW.md', '--once', '--until-idle'], { cwd: dir });
    expect(r.stderr).toMatch(/--once.*--until-idle|--until-idle.*--once/);
    expect(r.stdout).toBe('');
    expect(r.status).toBe(2);
  });
});
