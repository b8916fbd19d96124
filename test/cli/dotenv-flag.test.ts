/**
 * The `.env` flag of the built CLI, started the two ways operators start it: `node
 * dist/cli/main.js …` and the installed `orchestrator` bin (npm links it as a symlink to
 * main.js, run through its `#!/usr/bin/env node` line). Node 20 looks through every
 * argument, the script's own included, for `--env-file` and acts on it before any of our
 * code runs: a missing file stops Node with "node: F: not found" (exit 9). So the flag is
 * `--dotenv`, and `--env-file` is refused with a pointer to it.
 */
import { spawnSync } from 'node:child_process';
import {
  accessSync,
  chmodSync,
  constants,
  mkdirSync,
  mkdtempSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUILT_MAIN, type CliResult, cliEnv, ensureBuilt } from '../support/cli.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'cli-dotenv-'));
const workflow = path.join(dir, 'WORKFLOW.md');
writeFileSync(
  workflow,
  `---
tracker:
  kind: github
  api_key: $GITHUB_TOKEN
  project: acme/api
  active_states: [Todo]
  terminal_states: [Done]
agent:
  kind: mock
---
Work on {{ issue.title }}.
`,
);
const dotenv = path.join(dir, 'tracker.env');
writeFileSync(dotenv, 'GITHUB_TOKEN=token-from-the-dotenv-file\n');
const missing = path.join(dir, 'nope.env');

/** Where npm puts the bin of an installed package: node_modules/.bin/orchestrator → dist/cli/main.js. */
const bin = path.join(dir, 'node_modules', '.bin', 'orchestrator');

type Launch = (args: readonly string[]) => CliResult;

const viaNode: Launch = (args) => {
  const r = spawnSync(process.execPath, [BUILT_MAIN, ...args], { cwd: dir, env: cliEnv(), encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
};

const viaBin: Launch = (args) => {
  // The shebang finds `node` on PATH: put this test's node first.
  const env = cliEnv({ PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}` });
  const r = spawnSync(bin, [...args], { cwd: dir, env, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
};

beforeAll(() => {
  ensureBuilt();
  // npm makes a bin executable when it links it; the build leaves main.js as tsc wrote it.
  try {
    accessSync(BUILT_MAIN, constants.X_OK);
  } catch {
    chmodSync(BUILT_MAIN, 0o755);
  }
  mkdirSync(path.dirname(bin), { recursive: true });
  symlinkSync(BUILT_MAIN, bin);
}, 180_000);

describe.each([
  ['node dist/cli/main.js', viaNode],
  ['the installed orchestrator bin', viaBin],
] as const)('--dotenv through %s', (_how, launch) => {
  it('validate --dotenv F reads the token from F, so the token is not reported missing', () => {
    const r = launch(['validate', workflow, '--dotenv', dotenv]);
    expect(r.stderr).toBe('');
    expect(r.stdout).not.toContain('api_key');
    expect(r.stdout).toContain(': 0 errors');
    expect(r.status).toBe(0);
  });

  it('a missing --dotenv file is our coded env_file.not_found (exit 1), not Node refusing to start', () => {
    const r = launch(['validate', workflow, `--dotenv=${missing}`]);
    expect(r.stderr).not.toContain('node:');
    expect(r.stdout).toContain('error env_file.not_found');
    expect(r.status).toBe(1);
  });

  it('run --dry-run takes --dotenv too', () => {
    const r = launch(['run', '--dry-run', workflow, '--dotenv', missing]);
    expect(r.stderr).toContain('error env_file.not_found');
    expect(r.status).toBe(1);
  });

  it('--env-file is a usage error (exit 2) that names --dotenv instead of reading the file', () => {
    const r = launch(['validate', workflow, '--env-file', dotenv]);
    expect(r.stderr).toContain('--dotenv');
    expect(r.stdout).toBe('');
    expect(r.status).toBe(2);
  });
});
