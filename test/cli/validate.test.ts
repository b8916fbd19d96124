import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'cli-validate-'));
writeFileSync(path.join(dir, 'issues.json'), '[]');
const GOOD = `---
tracker:
  kind: file
  active_states: [Todo]
  terminal_states: [Done]
file:
  path: issues.json
agent:
  kind: mock
  max_sessions: 20
---
Work on {{ issue.title }}.
`;
const good = path.join(dir, 'good.md');
writeFileSync(good, GOOD);
const warned = path.join(dir, 'warned.md');
writeFileSync(warned, GOOD.replace('  kind: mock', '  kind: mock\n  max_turnz: 3'));
const bad = path.join(dir, 'bad.md');
writeFileSync(
  bad,
  GOOD.replace('  kind: mock', '  kind: mock\n  max_turns: many').replace(
    'Work on',
    'Work, on\n{{ issue.nope }}',
  ),
);

describe('orchestrator validate', () => {
  it('exits 0 and says so on a clean workflow', () => {
    const r = runCli(['validate', good]);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('0 errors, 0 warnings');
  });

  it('prints errors like a compiler, with file:line:col, severity and code, and exits 1', () => {
    const r = runCli(['validate', bad]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(
      `${bad}:10:14 error agent.max_turns.invalid: agent.max_turns must be a number, got "many"`,
    );
    expect(r.stdout).toContain(`${bad}:14:4 error template.unknown_variable:`);
    expect(r.stderr).toBe('');
  });

  it('prints paths relative to the working directory when the file is below it', () => {
    const r = runCli(['validate', 'bad.md'], { cwd: dir });
    expect(r.stdout).toMatch(/^bad\.md:10:14 error/m);
  });

  it('json output has the documented, stable shape', () => {
    const r = runCli(['validate', bad, '--format', 'json']);
    expect(r.status).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(Object.keys(doc)).toEqual([
      'version',
      'file',
      'valid',
      'errors',
      'warnings',
      'infos',
      'diagnostics',
      'continuation_turns',
    ]);
    expect(doc).toMatchObject({ version: 1, valid: false, errors: 2, warnings: 0, continuation_turns: null });
    expect(doc.diagnostics[0]).toEqual({
      severity: 'error',
      code: 'agent.max_turns.invalid',
      message: 'agent.max_turns must be a number, got "many"',
      file: bad,
      line: 10,
      column: 14,
      path: 'agent.max_turns',
    });
  });

  it('github output is workflow commands that annotate the line', () => {
    const r = runCli(['validate', bad, '--format', 'github']);
    expect(r.status).toBe(1);
    expect(r.stdout.split('\n')[0]).toBe(
      `::error file=${bad},line=10,col=14,title=agent.max_turns.invalid::agent.max_turns must be a number, got "many"`,
    );
  });

  it('says which prompt continuation turns send, as a line and a json field, without making --strict fail', () => {
    const text = runCli(['validate', good, '--strict']);
    expect(text.status).toBe(0);
    expect(text.stdout).toBe(
      `${good}: continuation turns: built-in guidance (the template does not read run.is_continuation)\n` +
        `${good}: 0 errors, 0 warnings\n`,
    );
    const branching = path.join(dir, 'branching.md');
    writeFileSync(
      branching,
      GOOD.replace(
        'Work on {{ issue.title }}.',
        '{% if run.is_continuation %}Go on.{% else %}Work.{% endif %}',
      ),
    );
    expect(runCli(['validate', branching]).stdout).toContain(
      'continuation turns: template (it reads run.is_continuation)',
    );
    const json = JSON.parse(runCli(['validate', branching, '--format', 'json']).stdout);
    expect(json.continuation_turns).toBe('template');
    expect(runCli(['validate', good, '--format', 'github']).stdout).toBe('');
  });

  it('warnings pass unless --strict is given', () => {
    expect(runCli(['validate', warned]).status).toBe(0);
    const strict = runCli(['validate', warned, '--strict']);
    expect(strict.status).toBe(1);
    expect(strict.stdout).toContain('warning config.unknown_key');
  });

  it('a server open to the network without allowed hosts is a warning, so --strict fails it', () => {
    const exposed = path.join(dir, 'exposed.md');
    writeFileSync(exposed, GOOD.replace('agent:', 'server:\n  host: 0.0.0.0\nagent:'));
    const plain = runCli(['validate', exposed]);
    expect(plain.status).toBe(0);
    expect(plain.stdout).toContain(`${exposed}:9:9 warning server.host.exposed:`);
    expect(runCli(['validate', exposed, '--strict']).status).toBe(1);
    const listed = path.join(dir, 'listed.md');
    writeFileSync(
      listed,
      GOOD.replace('agent:', 'server:\n  host: 0.0.0.0\n  allowed_hosts: [orchestrator.internal]\nagent:'),
    );
    expect(runCli(['validate', listed, '--strict']).status).toBe(0);
  });

  it('a missing file is exit 1 with a coded error and no stack trace', () => {
    const r = runCli(['validate', path.join(dir, 'nope.md')]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('error workflow.not_found');
    expect(r.stdout + r.stderr).not.toMatch(/\n\s+at /);
  });

  it.each([[['validate', good, '--format', 'xml']], [['validate', good, '--bogus']], [['frobnicate']]])(
    'bad usage %j exits 2',
    (args) => {
      const r = runCli(args);
      expect(r.status).toBe(2);
      expect(r.stderr).not.toBe('');
    },
  );

  it('--version and --help exit 0', () => {
    const v = runCli(['--version']);
    expect(v.status).toBe(0);
    expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const h = runCli(['validate', '--help']);
    expect(h.status).toBe(0);
    expect(h.stdout).toContain('--format');
  });

  it('defaults to WORKFLOW.md in the working directory', () => {
    writeFileSync(path.join(dir, 'WORKFLOW.md'), GOOD);
    expect(runCli(['validate'], { cwd: dir }).status).toBe(0);
  });
});

interface JsonDiagnostic {
  severity: string;
  code: string;
  message: string;
  line: number | null;
  column: number | null;
}

/** The diagnostics of `validate --format json`, and its exit code. */
function validateJson(file: string, env: Record<string, string> = {}) {
  const r = runCli(['validate', file, '--format', 'json'], { env });
  return {
    status: r.status,
    diagnostics: (JSON.parse(r.stdout) as { diagnostics: JsonDiagnostic[] }).diagnostics,
  };
}

/** Writes a workflow into the test directory under a fresh name. */
function workflowFile(text: string): string {
  const file = path.join(dir, `w-${Math.random().toString(36).slice(2)}.md`);
  writeFileSync(file, text);
  return file;
}

const GITHUB = `---
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
`;

describe('validate: the edges of the command line and the environment', () => {
  it('a bad ORCHESTRATOR_WORKER_SSH_HOSTS entry names the variable, not a line of the file', () => {
    const inFile = workflowFile(GOOD.replace('agent:', 'worker:\n  ssh_hosts: [b1]\nagent:'));
    for (const file of [good, inFile]) {
      const r = validateJson(file, { ORCHESTRATOR_WORKER_SSH_HOSTS: 'x y' });
      expect(r.status).toBe(1);
      const hosts = r.diagnostics.filter((d) => d.code === 'worker.ssh_hosts.invalid');
      expect(hosts).toHaveLength(1);
      expect(hosts[0]?.message).toContain('(from ORCHESTRATOR_WORKER_SSH_HOSTS)');
      expect(hosts[0]?.line).toBeNull();
    }
  });

  it('an issues file that does not exist is reported at file.path (a warning; --strict and run refuse it)', () => {
    const file = workflowFile(GOOD.replace('path: issues.json', 'path: no-such-issues.json'));
    const r = runCli(['validate', file]);
    expect(r.stdout).toContain(`${file}:7:9 warning file.path.not_found:`);
    expect(r.stdout).toContain(path.join(dir, 'no-such-issues.json'));
    expect(r.status).toBe(0);
    expect(runCli(['validate', file, '--strict']).status).toBe(1);
    const dry = runCli(['run', '--dry-run', file]);
    expect(dry.stderr).toContain(`${file}:7:9 error file.path.not_found:`);
    expect(dry.status).toBe(1);
  });

  it('an ssh identity file that is missing or a directory is reported at worker.ssh_identity_file', () => {
    mkdirSync(path.join(dir, 'keys'), { recursive: true });
    for (const [key, code] of [
      ['keys/id_missing', 'worker.ssh_identity_file.not_found'],
      ['keys', 'worker.ssh_identity_file.not_a_file'],
    ] as const) {
      const file = workflowFile(GOOD.replace('agent:', `worker:\n  ssh_identity_file: ${key}\nagent:`));
      const found = validateJson(file).diagnostics.filter((d) => d.code === code);
      expect(found).toEqual([expect.objectContaining({ severity: 'warning', line: 9, column: 22 })]);
      expect(found[0]?.message).toContain(path.join(dir, key));
    }
  });

  it('a token written into WORKFLOW.md is a warning that does not repeat the token', () => {
    const token = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';
    const literal = validateJson(workflowFile(GITHUB.replace('$GITHUB_TOKEN', token)));
    const warned = literal.diagnostics.filter((d) => d.code === 'tracker.api_key.literal');
    expect(warned).toEqual([expect.objectContaining({ severity: 'warning', line: 4, column: 12 })]);
    expect(JSON.stringify(literal.diagnostics)).not.toContain(token);
    // The same token supplied through the variable is how it should be done: no warning.
    const referenced = validateJson(workflowFile(GITHUB), { GITHUB_TOKEN: token });
    expect(referenced.diagnostics.filter((d) => d.code.includes('api_key'))).toEqual([]);
  });

  it('misspelt tracker, github and file keys get a "did you mean"', () => {
    const github = validateJson(
      workflowFile(
        GITHUB.replace('agent:', 'github:\n  max_pagez: 3\nagent:').replace(
          '  project:',
          '  endpont: x\n  project:',
        ),
      ),
      { GITHUB_TOKEN: 'token-for-a-typo-test' },
    );
    const messages = github.diagnostics.filter((d) => d.code === 'config.unknown_key').map((d) => d.message);
    expect(messages).toEqual([
      'unknown key "tracker.endpont" (did you mean "tracker.endpoint"?)',
      'unknown key "github.max_pagez" (did you mean "github.max_pages"?)',
    ]);
    const file = validateJson(
      workflowFile(GOOD.replace('  path: issues.json', '  path: issues.json\n  pth: x')),
    );
    expect(file.diagnostics.map((d) => d.message)).toContain(
      'unknown key "file.pth" (did you mean "file.path"?)',
    );
  });

  it('an unset $GITHUB_TOKEN is one error that names the variable, without a hint to do what is done', () => {
    const r = validateJson(workflowFile(GITHUB));
    expect(r.status).toBe(1);
    const aboutToken = r.diagnostics.filter((d) => d.severity === 'error' || d.code.includes('api_key'));
    expect(aboutToken.map((d) => [d.severity, d.code])).toEqual([['error', 'tracker.api_key.empty']]);
    expect(aboutToken[0]?.message).toContain('GITHUB_TOKEN');
  });

  it('a github tracker without api_key is one error that says what to write', () => {
    const r = validateJson(workflowFile(GITHUB.replace('  api_key: $GITHUB_TOKEN\n', '')));
    const aboutToken = r.diagnostics.filter((d) => d.severity === 'error' || d.code.includes('api_key'));
    expect(aboutToken.map((d) => [d.severity, d.code])).toEqual([['error', 'tracker.api_key.missing']]);
    expect(aboutToken[0]?.message).toContain('$GITHUB_TOKEN');
  });

  it('a workflow path that is a directory is a coded error that suggests the file inside, not EISDIR', () => {
    const project = path.join(dir, 'project');
    mkdirSync(project, { recursive: true });
    writeFileSync(path.join(project, 'WORKFLOW.md'), GOOD);
    const r = runCli(['validate', project]);
    expect(r.stdout).toContain(`${project} error workflow.not_a_file:`);
    expect(r.stdout).toContain(path.join(project, 'WORKFLOW.md'));
    expect(r.stdout + r.stderr).not.toContain('EISDIR');
    expect(r.status).toBe(1);
    const run = runCli(['run', '--dry-run', project]);
    expect(run.stderr).toContain('error workflow.not_a_file:');
    expect(run.status).toBe(1);
  });
});
