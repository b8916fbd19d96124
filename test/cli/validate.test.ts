import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'cli-validate-'));
const GOOD = `---
tracker:
  kind: file
  active_states: [Todo]
  terminal_states: [Done]
file:
  path: issues.json
agent:
  kind: mock
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
    expect(r.stdout).toContain(`${bad}:13:4 error template.unknown_variable:`);
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

  it.each([[['validate', good, '--format', 'xml']], [['validate', good, '--bogus']], [['frobnicate']], [[]]])(
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
