/**
 * `orchestrator adapters [--json]` as a real process: every registered agent kind
 * is listed with the declarations an operator reads (health, usage disposition,
 * tool channel, sandbox), and the command exits 0 whatever it finds.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import '../../src/agent/kinds.js';
import { agentKindNames } from '../../src/agent/registry.js';
import type { AdapterJson } from '../../src/cli/adapters-command.js';
import { type CliResult, runCli } from '../support/cli.js';

let json: CliResult;
let text: CliResult;
let reports: AdapterJson[] = [];

const byKind = (kind: string) => reports.find((r) => r.kind === kind);

beforeAll(() => {
  json = runCli(['adapters', '--json']);
  text = runCli(['adapters']);
  if (json.status === 0) reports = (JSON.parse(json.stdout) as { adapters: AdapterJson[] }).adapters;
});

describe('orchestrator adapters', () => {
  it('--json exits 0 and prints one versioned JSON document, nothing on stderr', () => {
    expect(json.stderr).toBe('');
    expect(json.status).toBe(0);
    const doc = JSON.parse(json.stdout) as { version: unknown; adapters: unknown };
    expect(doc.version).toBe(2);
    expect(Array.isArray(doc.adapters)).toBe(true);
  });

  it('--json keys are snake_case like the HTTP API, none camelCase', () => {
    for (const report of reports) {
      expect(Object.keys(report)).toEqual([
        'kind',
        'runnable',
        'command',
        'command_path',
        'version',
        'health',
        'detail',
        'usage_arrival',
        'usage_attribution',
        'mcp_dialect',
        'sandbox',
      ]);
    }
  });

  it('--json lists every registered kind (a kind missing from the list would be invisible to operators)', () => {
    expect(reports.map((r) => r.kind)).toEqual(agentKindNames());
    expect(reports.map((r) => r.kind)).toEqual(
      expect.arrayContaining(['mock', 'echo', 'claude-code', 'codex']),
    );
  });

  it.each(['mock', 'echo'])(
    '%s is a builtin runnable kind with incremental/per_model usage and no tool channel',
    (kind) => {
      expect(byKind(kind)).toMatchObject({
        kind,
        runnable: true,
        health: 'builtin',
        command: null,
        usage_arrival: 'incremental',
        usage_attribution: 'per_model',
        mcp_dialect: 'none',
        sandbox: { status: 'none' },
      });
    },
  );

  it('claude-code is a runnable command kind with incremental/per_model usage, missing when claude is not on PATH', () => {
    expect(byKind('claude-code')).toMatchObject({
      kind: 'claude-code',
      health: 'missing',
      usage_arrival: 'incremental',
      usage_attribution: 'per_model',
      mcp_dialect: 'mcp-json',
      sandbox: { status: 'unprobeable' },
    });
  });

  it('copilot-cli is a command kind whose figures settle at turn end per model, with the mcp-json tool channel', () => {
    expect(byKind('copilot-cli')).toMatchObject({
      kind: 'copilot-cli',
      usage_arrival: 'turn_end',
      usage_attribution: 'per_model',
      mcp_dialect: 'mcp-json',
      sandbox: { status: 'none' },
    });
  });

  it('gemini is a command kind whose figures settle at turn end per model, with the settings-json tool channel', () => {
    expect(byKind('gemini')).toMatchObject({
      kind: 'gemini',
      usage_arrival: 'turn_end',
      usage_attribution: 'per_model',
      mcp_dialect: 'settings-json',
      sandbox: { status: 'unprobeable' },
    });
  });

  it('codex is a runnable command kind whose figure settles at turn end as a session total, with the toml-config tool channel, missing when codex is not on PATH', () => {
    expect(byKind('codex')).toMatchObject({
      kind: 'codex',
      health: 'missing',
      usage_arrival: 'turn_end',
      usage_attribution: 'session_total',
      mcp_dialect: 'toml-config',
      // Its sandbox can be asked, but not without the command.
      sandbox: { status: 'unchecked', detail: 'the command is not runnable' },
    });
  });

  it('opencode is a command kind whose figures arrive per step as a session total, with the inline-config-json tool channel', () => {
    expect(byKind('opencode')).toMatchObject({
      kind: 'opencode',
      usage_arrival: 'incremental',
      usage_attribution: 'session_total',
      mcp_dialect: 'inline-config-json',
    });
  });

  it('the text form exits 0 and starts with its header row', () => {
    expect(text.status).toBe(0);
    expect(text.stderr).toBe('');
    const [header] = text.stdout.split('\n');
    expect(header).toMatch(/^KIND\s+HEALTH\s+VERSION\s+USAGE\s+TOOLS\s+SANDBOX\s+DETAIL$/);
  });

  it('the text form prints one row per registered kind under the header, with its health', () => {
    // The table ends at the first blank line; notes on sandboxes follow it.
    const [table = ''] = text.stdout.split('\n\n');
    const rows = table.trimEnd().split('\n').slice(1);
    expect(rows.map((r) => r.split(/\s+/)[0])).toEqual(agentKindNames());
    expect(rows.find((r) => r.startsWith('mock '))).toMatch(
      /^mock\s+builtin\s+-\s+incremental\/per_model\s+none\s+none\b/,
    );
    expect(rows.find((r) => r.startsWith('codex '))).toMatch(
      /^codex\s+missing\s+-\s+turn_end\/session_total\s+toml-config\s+unchecked\s+codex is not on PATH/,
    );
  });

  it('the text form says under the table what to check for a sandbox that cannot be asked', () => {
    expect(text.stdout).toMatch(/\n\nclaude-code sandbox unprobeable: Claude Code runs Bash unsandboxed/);
  });
});
