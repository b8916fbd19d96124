import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { kindCatalog } from '../../src/cli/catalog.js';
import type { Diagnostic } from '../../src/domain/diagnostic.js';
import { type LoadOptions, loadWorkflow } from '../../src/workflow/load.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'wf-load-'));
const file = path.join(dir, 'WORKFLOW.md');

const BASE = `---
tracker:
  kind: file
  active_states: [Todo]
  terminal_states: [Done]
  handoff_state: Review
file:
  path: issues.json
agent:
  kind: mock
---
Work on {{ issue.title }}.
`;

function load(text: string, options: Partial<LoadOptions> = {}) {
  return loadWorkflow(file, { env: {}, kinds: kindCatalog(), checkRender: true, text, ...options });
}

function diagnostics(text: string, options: Partial<LoadOptions> = {}): Diagnostic[] {
  const result = load(text, options);
  return result.ok ? result.workflow.diagnostics : result.diagnostics;
}

describe('loading a workflow', () => {
  it('fills every default the operator did not write', () => {
    const result = load(BASE);
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    const { config } = result.workflow;
    expect(config.pollingIntervalMs).toBe(30_000);
    expect(config.agent).toMatchObject({
      maxTurns: 20,
      turnTimeoutMs: 3_600_000,
      readTimeoutMs: 5_000,
      stallTimeoutMs: 300_000,
      maxConcurrentAgents: 10,
      maxRetryBackoffMs: 300_000,
      maxSessions: 0,
      maxTokens: 0,
      maxCostUsd: 0,
      maxUnchangedSessions: 5,
    });
    expect(config.hooks.timeoutMs).toBe(60_000);
    expect(config.dbPath).toBe(path.join(dir, '.orchestrator.db'));
    expect(config.server).toEqual({ port: 7678, host: '127.0.0.1', portExplicit: false, allowedHosts: [] });
    expect(config.worker.sshStrictHostKeyChecking).toBe('accept-new');
    expect(config.tracker.options).toEqual({ path: 'issues.json' });
    expect(config.tracker.comments).toEqual({
      onDispatch: false,
      onCompletion: false,
      onFailure: false,
      onBlocked: true,
    });
  });

  it('accepts integers written as integral floats and strings, and treats 0 as "default" where documented', () => {
    const text = BASE.replace(
      '  kind: mock',
      '  kind: mock\n  max_turns: "7"\n  max_concurrent_agents: 4.0\n  turn_timeout_ms: 0',
    );
    const result = load(text);
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    expect(result.workflow.config.agent).toMatchObject({
      maxTurns: 7,
      maxConcurrentAgents: 4,
      turnTimeoutMs: 3_600_000,
    });
  });

  it('a stall timeout of 0 disables stall detection instead of taking the default', () => {
    const result = load(BASE.replace('  kind: mock', '  kind: mock\n  stall_timeout_ms: 0'));
    expect(result.ok && result.workflow.config.agent.stallTimeoutMs).toBe(0);
  });

  it('YAML 1.2 keeps 012 as twelve, not octal ten', () => {
    const result = load(BASE.replace('  kind: mock', '  kind: mock\n  max_turns: 012'));
    expect(result.ok && result.workflow.config.agent.maxTurns).toBe(12);
  });

  it('resolves $VAR in the api key and reports an empty resolution with the variable name', () => {
    const text = BASE.replace('  kind: file', '  kind: file\n  api_key: $MY_TOKEN');
    const ok = load(text, { env: { MY_TOKEN: 's3cret' } });
    expect(ok.ok && ok.workflow.config.tracker.apiKey).toBe('s3cret');
    const bad = diagnostics(text, { env: {} });
    const d = bad.find((x) => x.code === 'tracker.api_key.empty');
    expect(d?.message).toContain('MY_TOKEN');
    expect(d?.line).toBe(4);
  });

  it('env overrides beat the file, and their values are never $-expanded', () => {
    const result = load(BASE, {
      env: {
        ORCHESTRATOR_AGENT_MAX_TURNS: '3',
        ORCHESTRATOR_TRACKER_PROJECT: '$NOT_EXPANDED',
        NOT_EXPANDED: 'x',
      },
    });
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    expect(result.workflow.config.agent.maxTurns).toBe(3);
    expect(result.workflow.config.tracker.project).toBe('$NOT_EXPANDED');
  });

  it('a bad override is an error naming the variable', () => {
    const d = diagnostics(BASE, { env: { ORCHESTRATOR_POLLING_INTERVAL_MS: 'soon' } });
    expect(d.find((x) => x.code === 'env_override.invalid')?.message).toContain(
      'ORCHESTRATOR_POLLING_INTERVAL_MS',
    );
  });

  it('reads .env only when asked, and the real environment wins over it', () => {
    const envFile = path.join(dir, 'test.env');
    writeFileSync(envFile, 'ORCHESTRATOR_AGENT_MAX_TURNS=9\nMY_TOKEN=from-file\n');
    const text = BASE.replace('  kind: file', '  kind: file\n  api_key: $MY_TOKEN');
    const without = load(text, { env: { MY_TOKEN: 'x' } });
    expect(without.ok && without.workflow.config.agent.maxTurns).toBe(20);
    const withFile = load(text, { env: { MY_TOKEN: 'real' }, envFile });
    if (!withFile.ok) throw new Error(JSON.stringify(withFile.diagnostics));
    expect(withFile.workflow.config.agent.maxTurns).toBe(9);
    expect(withFile.workflow.config.tracker.apiKey).toBe('real');
    const viaVariable = load(text, { env: { ORCHESTRATOR_ENV_FILE: envFile } });
    expect(viaVariable.ok && viaVariable.workflow.config.tracker.apiKey).toBe('from-file');
  });

  it('an env file that was asked for but is missing is an error', () => {
    const d = diagnostics(BASE, { envFile: path.join(dir, 'nope.env') });
    expect(d.map((x) => x.code)).toContain('env_file.not_found');
  });

  it('reports every problem in one pass, not only the first', () => {
    const text = `---
tracker:
  kind: file
  active_states: [Todo]
  terminal_states: [todo]
file:
  path: issues.json
agent:
  kind: mock
  max_turns: lots
  max_retry_backoff_ms: -1
server:
  host: example.org
---
{{ issue.nope }}
`;
    const codes = diagnostics(text).map((d) => `${d.line}:${d.code}`);
    expect(codes).toEqual([
      '3:tracker.handoff_state.unbounded',
      '5:tracker.states.overlap',
      '10:agent.max_turns.invalid',
      '11:agent.max_retry_backoff_ms.out_of_range',
      '13:server.host.invalid',
      '15:template.unknown_variable',
    ]);
  });

  it('a written server.port is explicit, even when it equals the default (a busy one is then fatal)', () => {
    for (const port of [7678, 0, 9000]) {
      const result = load(BASE.replace('agent:', `server:\n  port: ${port}\nagent:`));
      if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
      expect(result.workflow.config.server).toEqual({
        port,
        host: '127.0.0.1',
        portExplicit: true,
        allowedHosts: [],
      });
    }
  });

  it('an unknown key is a warning that suggests the key meant', () => {
    const d = diagnostics(BASE.replace('  kind: mock', '  kind: mock\n  max_turn: 3'));
    expect(d).toEqual([
      expect.objectContaining({
        severity: 'warning',
        code: 'config.unknown_key',
        line: 11,
        column: 3,
        message: expect.stringContaining('agent.max_turns'),
      }),
    ]);
  });

  it('pass-through blocks of known kinds are not unknown keys, but their bad values are errors', () => {
    const d = diagnostics(`${BASE.replace('---\nWork', 'echo:\n  fail_rate: 3\n---\nWork')}`);
    expect(d.map((x) => [x.code, x.line])).toEqual([['echo.fail_rate.out_of_range', 12]]);
  });

  it('positions stay right in a CRLF file with a BOM', () => {
    const text = `\uFEFF${BASE.replace('  kind: mock', '  kind: mock\n  max_turns: x')}`.replace(
      /\n/g,
      '\r\n',
    );
    const d = diagnostics(text);
    expect(d.map((x) => [x.code, x.line, x.column])).toEqual([['agent.max_turns.invalid', 11, 14]]);
  });

  it('a template error is reported at its line in the file, front matter included', () => {
    const d = diagnostics(
      BASE.replace('Work on {{ issue.title }}.', 'Line one\n\nWork on {{ issue.title | nope }}.'),
    );
    expect(d.map((x) => [x.code, x.line])).toEqual([['template.unknown_filter', 14]]);
  });

  it('a missing file is a coded error, not an exception', () => {
    const result = loadWorkflow(path.join(dir, 'missing.md'), { env: {} });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.diagnostics[0]?.code).toBe('workflow.not_found');
  });

  it('relative db_path and workspace.root are anchored to the workflow file, ~ to home', () => {
    const result = load(BASE.replace('agent:', 'db_path: state/o.db\nworkspace:\n  root: ~/ws\nagent:'));
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    expect(result.workflow.config.dbPath).toBe(path.join(dir, 'state/o.db'));
    expect(result.workflow.config.workspaceRoot).toBe(path.join(os.homedir(), 'ws'));
  });
});

describe('worker (SSH) keys', () => {
  const withWorker = (block: string) => BASE.replace('agent:', `worker:\n${block}\nagent:`);

  it('fills the SSH defaults: no key file (ssh agent), known hosts beside WORKFLOW.md, local user, 30 s', () => {
    const result = load(BASE);
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    expect(result.workflow.config.worker).toEqual({
      sshHosts: [],
      maxConcurrentAgentsPerHost: 0,
      sshStrictHostKeyChecking: 'accept-new',
      identityFile: null,
      knownHostsFile: path.join(dir, '.orchestrator-known-hosts'),
      user: null,
      connectTimeoutMs: 30_000,
      forwardEnv: [],
    });
  });

  it('key and known-hosts paths resolve ~, $VAR and relative paths like db_path', () => {
    const result = load(
      withWorker(
        '  ssh_hosts: [b1]\n  ssh_identity_file: ~/.ssh/id_ed25519\n  ssh_known_hosts_file: $STATE/known_hosts\n  ssh_user: ci\n  ssh_connect_timeout_ms: "5000"',
      ),
      { env: { STATE: 'state' } },
    );
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    expect(result.workflow.config.worker).toMatchObject({
      identityFile: path.join(os.homedir(), '.ssh/id_ed25519'),
      knownHostsFile: path.join(dir, 'state/known_hosts'),
      user: 'ci',
      connectTimeoutMs: 5_000,
    });
  });

  it('an empty key file or user means the default, not a file named "" or a user ""', () => {
    const result = load(withWorker('  ssh_identity_file: ""\n  ssh_user: "  "'));
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    expect(result.workflow.config.worker).toMatchObject({ identityFile: null, user: null });
  });

  it('host entries are trimmed, blanks and repeats dropped, order kept', () => {
    const result = load(
      withWorker(
        '  ssh_hosts:\n    - " b2 "\n    - ""\n    - b1:2222\n    - b2\n    - "[::1]:22"\n    - u@b3',
      ),
    );
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    expect(result.workflow.config.worker.sshHosts).toEqual(['b2', 'b1:2222', '[::1]:22', 'u@b3']);
  });

  it('every bad host entry is an error at its own line, naming the entry', () => {
    const d = diagnostics(withWorker('  ssh_hosts:\n    - good\n    - "bad host"\n    - good\n    - b:0'));
    expect(d.filter((x) => x.code === 'worker.ssh_hosts.invalid').map((x) => [x.line, x.path])).toEqual([
      [12, 'worker.ssh_hosts.1'],
      [14, 'worker.ssh_hosts.3'],
    ]);
    expect(d.find((x) => x.line === 12)?.message).toContain('"bad host"');
    expect(d.find((x) => x.line === 14)?.message).toContain('port outside 1-65535');
  });

  it('a connect timeout below 1 ms is out of range, not "no timeout"', () => {
    const d = diagnostics(withWorker('  ssh_connect_timeout_ms: 0'));
    expect(d.map((x) => x.code)).toEqual(['worker.ssh_connect_timeout_ms.out_of_range']);
  });

  it('strict host key checking "no" with hosts is a warning (any host key is accepted); without hosts it is not', () => {
    const withHosts = diagnostics(withWorker('  ssh_hosts: [b1]\n  ssh_strict_host_key_checking: "no"'));
    expect(withHosts.map((x) => [x.severity, x.code, x.line])).toEqual([
      ['warning', 'worker.ssh_strict_host_key_checking.no', 11],
    ]);
    expect(diagnostics(withWorker('  ssh_strict_host_key_checking: "no"'))).toEqual([]);
  });

  it('an invalid login name in ssh_user is an error', () => {
    const d = diagnostics(withWorker('  ssh_user: "-oProxyCommand=x"'));
    expect(d.map((x) => [x.code, x.line])).toEqual([['worker.ssh_user.invalid', 10]]);
  });

  it('ORCHESTRATOR_WORKER_* overrides reach the config: hosts checked, the key path ~-expanded', () => {
    const result = load(BASE, {
      env: {
        ORCHESTRATOR_WORKER_SSH_HOSTS: 'ci@b1:2222,b2',
        ORCHESTRATOR_WORKER_SSH_IDENTITY_FILE: '~/.ssh/ci_key',
        ORCHESTRATOR_WORKER_MAX_CONCURRENT_AGENTS_PER_HOST: '3',
      },
    });
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    expect(result.workflow.config.worker).toMatchObject({
      sshHosts: ['ci@b1:2222', 'b2'],
      identityFile: path.join(os.homedir(), '.ssh/ci_key'),
      maxConcurrentAgentsPerHost: 3,
    });
    const bad = load(BASE, { env: { ORCHESTRATOR_WORKER_SSH_HOSTS: 'b1,fe80::1' } });
    expect(bad.ok ? [] : bad.diagnostics.map((d) => d.code)).toEqual(['worker.ssh_hosts.invalid']);
  });

  it('ssh_forward_env names are trimmed and de-duplicated; a name that is not a variable name is an error at its line', () => {
    const good = load(withWorker('  ssh_forward_env: [ANTHROPIC_BASE_URL, " LANG ", LANG]'));
    if (!good.ok) throw new Error(JSON.stringify(good.diagnostics));
    expect(good.workflow.config.worker.forwardEnv).toEqual(['ANTHROPIC_BASE_URL', 'LANG']);
    const d = diagnostics(withWorker('  ssh_forward_env:\n    - OK_NAME\n    - "BAD NAME"\n    - "1X"'));
    expect(d.map((x) => [x.code, x.line])).toEqual([
      ['worker.ssh_forward_env.invalid', 12],
      ['worker.ssh_forward_env.invalid', 13],
    ]);
    expect(d[0]?.message).toContain('"BAD NAME"');
  });
});

describe('server exposure', () => {
  const withServer = (lines: string) => BASE.replace('agent:', `server:\n${lines}\nagent:`);

  it('a non-loopback server.host without allowed hosts is the warning server.host.exposed at its line', () => {
    const d = diagnostics(withServer('  host: 0.0.0.0'));
    expect(d).toEqual([
      expect.objectContaining({ severity: 'warning', code: 'server.host.exposed', line: 10 }),
    ]);
    expect(d[0]?.message).toContain('server.allowed_hosts');
  });

  it('no exposure warning on loopback, with allowed hosts, or with the server off (port 0)', () => {
    for (const lines of [
      '  host: 127.0.0.1',
      '  host: "::1"',
      '  host: 0.0.0.0\n  allowed_hosts: [orchestrator.internal]',
      '  host: 0.0.0.0\n  port: 0',
    ]) {
      expect(diagnostics(withServer(lines)), lines).toEqual([]);
    }
  });

  it('an ORCHESTRATOR_SERVER_HOST that exposes the server is warned about too, naming the variable', () => {
    const d = diagnostics(BASE, { env: { ORCHESTRATOR_SERVER_HOST: '0.0.0.0' } });
    expect(d).toEqual([expect.objectContaining({ code: 'server.host.exposed', line: null })]);
    expect(d[0]?.message).toContain('ORCHESTRATOR_SERVER_HOST');
  });

  it('allowed hosts are compared as the server sees them: lower case, no trailing dot or brackets, once each', () => {
    const result = load(
      withServer(
        '  host: 0.0.0.0\n  allowed_hosts: [Orchestrator.Internal., "[::1]", orchestrator.internal, " ", 10.0.0.5]',
      ),
    );
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    expect(result.workflow.config.server.allowedHosts).toEqual(['orchestrator.internal', '::1', '10.0.0.5']);
  });

  it('an allowed host with a port, a wildcard or a space is an error at its own line, naming it', () => {
    const d = diagnostics(
      withServer('  allowed_hosts:\n    - ok.example\n    - ok.example:8080\n    - "*.example"\n    - a b'),
    );
    expect(d.map((x) => [x.code, x.line])).toEqual([
      ['server.allowed_hosts.invalid', 12],
      ['server.allowed_hosts.invalid', 13],
      ['server.allowed_hosts.invalid', 14],
    ]);
    expect(d[0]?.message).toContain('"ok.example:8080"');
    expect(d[0]?.message).toContain('without a port');
  });

  it('ORCHESTRATOR_SERVER_ALLOWED_HOSTS replaces the list, comma-separated', () => {
    const result = load(withServer('  host: 0.0.0.0'), {
      env: { ORCHESTRATOR_SERVER_ALLOWED_HOSTS: 'a.example, B.example' },
    });
    if (!result.ok) throw new Error(JSON.stringify(result.diagnostics));
    expect(result.workflow.config.server.allowedHosts).toEqual(['a.example', 'b.example']);
    expect(result.workflow.diagnostics).toEqual([]);
  });
});

describe('a workflow that nothing bounds', () => {
  const unbounded = BASE.replace('  handoff_state: Review\n', '');

  it('no handoff state and no budget is the warning tracker.handoff_state.unbounded, in the tracker block, naming the cap that still stops it', () => {
    const d = diagnostics(unbounded);
    expect(d.map((x) => [x.severity, x.code, x.line, x.path])).toEqual([
      ['warning', 'tracker.handoff_state.unbounded', 3, 'tracker.handoff_state'],
    ]);
    expect(d[0]?.message).toContain('after 5 sessions in a row');
    const uncapped = diagnostics(
      unbounded.replace('  kind: mock', '  kind: mock\n  max_unchanged_sessions: 0'),
    );
    expect(uncapped[0]?.message).toContain('nothing stops it');
  });

  it.each([
    ['a handoff state', BASE],
    ['agent.max_sessions', unbounded.replace('  kind: mock', '  kind: mock\n  max_sessions: 10')],
    ['agent.max_tokens', unbounded.replace('  kind: mock', '  kind: mock\n  max_tokens: 200000')],
    ['agent.max_cost_usd', unbounded.replace('  kind: mock', '  kind: mock\n  max_cost_usd: 5')],
  ])('%s bounds it: no warning', (_what, text) => {
    expect(diagnostics(text)).toEqual([]);
  });

  it('a handoff state or a budget set from the environment counts too', () => {
    expect(diagnostics(unbounded, { env: { ORCHESTRATOR_TRACKER_HANDOFF_STATE: 'Review' } })).toEqual([]);
    expect(diagnostics(unbounded, { env: { ORCHESTRATOR_AGENT_MAX_SESSIONS: '3' } })).toEqual([]);
  });

  it('agent.max_unchanged_sessions is a count: negative is out of range at its line, also from the environment', () => {
    const d = diagnostics(BASE.replace('  kind: mock', '  kind: mock\n  max_unchanged_sessions: -1'));
    expect(d.map((x) => [x.code, x.line])).toEqual([['agent.max_unchanged_sessions.out_of_range', 11]]);
    const fromEnv = diagnostics(BASE, { env: { ORCHESTRATOR_AGENT_MAX_UNCHANGED_SESSIONS: '-2' } });
    expect(fromEnv).toEqual([
      expect.objectContaining({ code: 'agent.max_unchanged_sessions.out_of_range', line: null }),
    ]);
    expect(fromEnv[0]?.message).toContain('ORCHESTRATOR_AGENT_MAX_UNCHANGED_SESSIONS');
    const result = load(BASE, { env: { ORCHESTRATOR_AGENT_MAX_UNCHANGED_SESSIONS: '9' } });
    expect(result.ok && result.workflow.config.agent.maxUnchangedSessions).toBe(9);
  });
});
