/**
 * Symphony's and Sortie's WORKFLOW.md keys read as ours: every key moved is an `info` at the
 * line it was written on, every key dropped a `warning` saying why, a reference key never
 * overwrites one of ours, and `agent.kind` comes from the one agent block present.
 */
import { describe, expect, it } from 'vitest';
import { kindCatalog } from '../../src/cli/catalog.js';
import { formatDiagnostics } from '../../src/cli/diagnostics-format.js';
import type { Diagnostic } from '../../src/domain/diagnostic.js';
import { applyKindDefaults } from '../../src/workflow/kind-defaults.js';
import type { KindCatalog } from '../../src/workflow/kinds.js';
import { loadWorkflow } from '../../src/workflow/load.js';
import { mapReferenceFormats } from '../../src/workflow/reference-formats.js';

const ENV = { GITHUB_TOKEN: 'test-token-for-reference-formats' };
const BODY = '---\nWork on {{ issue.identifier }}.\n';

function load(frontMatter: string, options: { env?: Record<string, string>; kinds?: KindCatalog } = {}) {
  return loadWorkflow('/tmp/reference-formats/WORKFLOW.md', {
    env: options.env ?? ENV,
    kinds: options.kinds ?? kindCatalog(),
    text: `---\n${frontMatter}${BODY}`,
  });
}

const diagnosticsOf = (r: ReturnType<typeof load>): Diagnostic[] =>
  r.ok ? r.workflow.diagnostics : r.diagnostics;
const rows = (r: ReturnType<typeof load>) => diagnosticsOf(r).map((d) => [d.severity, d.code, d.line]);
const only = (r: ReturnType<typeof load>, code: string) => diagnosticsOf(r).filter((d) => d.code === code);

function config(r: ReturnType<typeof load>) {
  if (!r.ok) throw new Error(r.diagnostics.map((d) => `${d.line} ${d.code}: ${d.message}`).join('\n'));
  return r.workflow.config;
}

// Lines below count from 2 (line 1 is the opening ---).
const TRACKER = `tracker:
  kind: github
  api_key: $GITHUB_TOKEN
  project: acme/widgets
  active_states: [Todo]
  terminal_states: [Done]
  handoff_state: Review
`;

describe('Symphony format', () => {
  it('reads tracker.project_slug as tracker.project, saying so at its line', () => {
    const r = load(
      `${TRACKER.replace('  project: acme/widgets\n', '  project_slug: acme/widgets\n')}agent:\n  kind: mock\n`,
    );
    expect(config(r).tracker.project).toBe('acme/widgets');
    expect(only(r, 'workflow.key.mapped').map((d) => [d.line, d.message])).toEqual([
      [5, 'tracker.project_slug read as tracker.project (Symphony)'],
    ]);
  });

  it('a lone codex: block names the agent kind, and its command and timeouts become agent.* keys', () => {
    const r = load(`${TRACKER}codex:
  command: codex app-server
  read_timeout_ms: 9000
  turn_timeout_ms: 600000
  stall_timeout_ms: 0
  approval_policy: never
`);
    const c = config(r);
    expect(c.agent).toMatchObject({
      kind: 'codex',
      command: 'codex app-server',
      readTimeoutMs: 9000,
      turnTimeoutMs: 600_000,
      stallTimeoutMs: 0,
    });
    expect(c.agentOptions).toEqual({ approval_policy: 'never' });
    expect(rows(r)).toEqual([
      ['info', 'agent.kind.inferred', 9],
      ['info', 'workflow.key.mapped', 10],
      ['info', 'workflow.key.mapped', 11],
      ['info', 'workflow.key.mapped', 12],
      ['info', 'workflow.key.mapped', 13],
    ]);
    expect(only(r, 'agent.kind.inferred')[0]?.message).toContain(
      'the codex: block names the agent kind "codex"',
    );
  });

  it("an agent.* key written too wins over the block's; a different value is a warning naming both lines", () => {
    const r = load(`${TRACKER}agent:
  read_timeout_ms: 5000
  stall_timeout_ms: 1000
codex:
  read_timeout_ms: 9000
  stall_timeout_ms: 1000
`);
    expect(config(r).agent).toMatchObject({ kind: 'codex', readTimeoutMs: 5000, stallTimeoutMs: 1000 });
    const [shadowed] = only(r, 'workflow.key.shadowed');
    expect(shadowed?.line).toBe(13);
    expect(shadowed?.message).toBe(
      'codex.read_timeout_ms (line 13) differs from agent.read_timeout_ms (line 10); agent.read_timeout_ms is used and codex.read_timeout_ms is ignored (Symphony)',
    );
    expect(only(r, 'workflow.key.mapped').map((d) => d.line)).toEqual([14]);
  });

  it('a bad value moved from the block is reported where it was written', () => {
    const r = load(`${TRACKER}codex:\n  read_timeout_ms: soon\n`);
    expect(r.ok).toBe(false);
    expect(only(r, 'agent.read_timeout_ms.invalid').map((d) => d.line)).toEqual([10]);
  });

  it("tracker.provider: core keys become tracker keys, the rest the kind's block, with no unknown-key warning", () => {
    const r = load(`tracker:
  kind: github
  provider:
    api_key: $GITHUB_TOKEN
    project_slug: acme/widgets
    etag_cache_size: 50
  active_states: [Todo]
  terminal_states: [Done]
  handoff_state: Review
agent:
  kind: mock
`);
    const c = config(r);
    expect(c.tracker).toMatchObject({ apiKey: ENV.GITHUB_TOKEN, project: 'acme/widgets' });
    expect(c.tracker.options).toEqual({ etag_cache_size: 50 });
    expect(rows(r)).toEqual([
      ['info', 'workflow.key.mapped', 5],
      ['info', 'workflow.key.mapped', 6],
      ['info', 'workflow.key.mapped', 7],
    ]);
    expect(only(r, 'workflow.key.mapped')[2]?.message).toBe(
      'tracker.provider.etag_cache_size read as github.etag_cache_size (Symphony)',
    );
  });

  it("tracker.provider never overwrites a key of the kind's block", () => {
    const r = load(`${TRACKER}  provider:
    etag_cache_size: 50
github:
  etag_cache_size: 10
agent:
  kind: mock
`);
    expect(config(r).tracker.options).toEqual({ etag_cache_size: 10 });
    expect(only(r, 'workflow.key.shadowed').map((d) => d.line)).toEqual([10]);
  });

  it('a problem with a provider key moved to the block is reported at the provider key', () => {
    const r = load(`${TRACKER}  provider:\n    etag_cache_size: -1\nagent:\n  kind: mock\n`);
    expect(only(r, 'github.etag_cache_size.invalid').map((d) => d.line)).toEqual([10]);
  });
});

describe('agent.kind from the blocks', () => {
  it('blocks of two agent kinds and no agent.kind is one error naming both with their lines', () => {
    const r = load(`${TRACKER}codex:\n  model: gpt-5\nclaude-code:\n  model: sonnet\n`);
    expect(r.ok).toBe(false);
    const errors = diagnosticsOf(r).filter((d) => d.severity === 'error');
    expect(errors.map((d) => [d.code, d.line])).toEqual([['agent.kind.ambiguous', 11]]);
    expect(errors[0]?.message).toContain('claude-code (line 11), codex (line 9)');
  });

  it('no agent block and no agent.kind is still agent.kind.missing', () => {
    const r = load(TRACKER);
    expect(
      diagnosticsOf(r)
        .filter((d) => d.severity === 'error')
        .map((d) => d.code),
    ).toEqual(['agent.kind.missing']);
  });

  it('an explicit agent.kind is not second-guessed by other blocks, and nothing is said about it', () => {
    const r = load(`${TRACKER}agent:\n  kind: mock\ncodex:\n  model: gpt-5\n`);
    expect(config(r).agent.kind).toBe('mock');
    expect(rows(r)).toEqual([]);
  });
});

describe('Sortie format', () => {
  it('logging.format text is read as pretty', () => {
    const r = load(`${TRACKER}agent:\n  kind: mock\nlogging:\n  format: text\n`);
    expect(config(r).logging.format).toBe('pretty');
    expect(rows(r)).toEqual([['info', 'workflow.key.mapped', 12]]);
  });

  it('claude-code.system_prompt is read as append_system_prompt; mcp_config is ignored with why', () => {
    const r = load(
      `${TRACKER}agent:\n  kind: claude-code\nclaude-code:\n  system_prompt: Be brief.\n  mcp_config: ./mcp.json\n`,
    );
    expect(config(r).agentOptions).toMatchObject({ system_prompt: 'Be brief.' });
    expect(rows(r)).toEqual([
      ['info', 'workflow.key.mapped', 12],
      ['warning', 'workflow.key.ignored', 13],
    ]);
    expect(only(r, 'workflow.key.ignored')[0]?.message).toContain('claude-code.mcp_config is ignored: ');
  });

  it("hooks reading Sortie's variables get ours; a variable nothing sets is reported", () => {
    const r = load(`${TRACKER}agent:
  kind: mock
hooks:
  before_run: git checkout -B "sortie/\${SORTIE_ISSUE_IDENTIFIER}" && echo $SORTIE_WORKSPACE
  after_run: echo $SORTIE_SELF_REVIEW_STATUS
`);
    expect(config(r).hooks).toMatchObject({
      beforeRun: 'git checkout -B "sortie/${ORCHESTRATOR_ISSUE_IDENTIFIER}" && echo $ORCHESTRATOR_WORKSPACE',
      afterRun: 'echo $SORTIE_SELF_REVIEW_STATUS',
    });
    expect(rows(r)).toEqual([
      ['info', 'workflow.key.mapped', 12],
      ['info', 'workflow.key.mapped', 12],
      ['warning', 'workflow.key.ignored', 13],
    ]);
  });
});

describe('tracker kind defaults', () => {
  const withTraits = (traits: ReturnType<NonNullable<KindCatalog['trackerTraits']>>): KindCatalog => ({
    ...kindCatalog(),
    trackerTraits: (kind) => (kind === 'github' ? traits : undefined),
  });
  const NO_STATES = `tracker:\n  kind: github\n  project: acme/widgets\n  handoff_state: Review\nagent:\n  kind: mock\n`;

  it("absent states take the kind's declared defaults, each said once", () => {
    const r = load(NO_STATES.replace('  kind: github\n', '  kind: github\n  api_key: $GITHUB_TOKEN\n'), {
      kinds: withTraits({ defaultStates: { active: ['Todo', 'In Progress'], terminal: ['Done'] } }),
    });
    expect(config(r).tracker).toMatchObject({
      activeStates: ['Todo', 'In Progress'],
      terminalStates: ['Done'],
    });
    expect(rows(r)).toEqual([
      ['info', 'tracker.states.kind_default', 3],
      ['info', 'tracker.states.kind_default', 3],
    ]);
  });

  it("states written are kept; an absent token is read from the kind's variable", () => {
    const r = load(`${TRACKER.replace('  api_key: $GITHUB_TOKEN\n', '')}agent:\n  kind: mock\n`, {
      env: { KIND_TOKEN: 'from-the-kind-variable' },
      kinds: withTraits({
        apiKeyEnv: 'KIND_TOKEN',
        defaultStates: { active: ['Other'], terminal: ['Gone'] },
      }),
    });
    expect(config(r).tracker).toMatchObject({
      apiKey: 'from-the-kind-variable',
      activeStates: ['Todo'],
      terminalStates: ['Done'],
    });
    expect(rows(r)).toEqual([['info', 'tracker.api_key.kind_env', 3]]);
  });

  it('with the variable unset the token stays missing, and a written token is never replaced', () => {
    const traits = { apiKeyEnv: 'KIND_TOKEN' };
    const raw = { tracker: { kind: 'github', api_key: 'written' } };
    expect(applyKindDefaults(raw, () => traits, { KIND_TOKEN: 'x' }).raw).toEqual(raw);
    const missing = { tracker: { kind: 'github' } };
    expect(applyKindDefaults(missing, () => traits, {}).raw).toEqual(missing);
  });
});

describe('core tracker keys', () => {
  it('a blank required label is a warning at its own line', () => {
    const r = load(`${TRACKER}  required_labels: [agent, " "]\nagent:\n  kind: mock\n`);
    expect(config(r).tracker.requiredLabels).toEqual(['agent', '']);
    expect(rows(r)).toEqual([['warning', 'tracker.required_labels.blank', 9]]);
  });

  it('an assignee for a kind that cannot route by assignee is a warning; github routes by it', () => {
    const fileKind = load(`tracker:
  kind: file
  assignee: me
  active_states: [Todo]
  terminal_states: [Done]
  handoff_state: Review
file:
  path: issues.json
agent:
  kind: mock
`);
    expect(rows(fileKind)).toEqual([['warning', 'tracker.assignee.unsupported', 4]]);
    const github = load(`${TRACKER}  assignee: me\nagent:\n  kind: mock\n`);
    expect(rows(github)).toEqual([]);
    expect(config(github).tracker.assignee).toBe('me');
  });
});

describe('the mapping itself', () => {
  it('leaves its input unchanged and reports nothing for a file of our own keys', () => {
    const input = {
      tracker: { kind: 'file', project: 'x' },
      agent: { kind: 'mock' },
      logging: { format: 'json' },
    };
    const copy = structuredClone(input);
    const mapped = mapReferenceFormats(input, { agentKinds: ['mock', 'codex'] });
    expect(input).toEqual(copy);
    expect(mapped.raw).toEqual(copy);
    expect(mapped.issues).toEqual([]);
  });
});

describe('validate output with notes', () => {
  const notes: Diagnostic[] = [
    {
      severity: 'info',
      code: 'workflow.key.mapped',
      message: 'm',
      file: '/w/WORKFLOW.md',
      line: 3,
      column: 3,
    },
  ];

  it('counts notes apart from warnings in text, and as a notice annotation on GitHub', () => {
    expect(formatDiagnostics('text', '/w/WORKFLOW.md', notes, '/w')).toBe(
      'WORKFLOW.md:3:3 info workflow.key.mapped: m\nWORKFLOW.md: 0 errors, 0 warnings, 1 note\n',
    );
    expect(formatDiagnostics('github', '/w/WORKFLOW.md', notes, '/w')).toMatch(
      /^::notice file=WORKFLOW.md,line=3/,
    );
    expect(JSON.parse(formatDiagnostics('json', '/w/WORKFLOW.md', notes, '/w'))).toMatchObject({
      valid: true,
      errors: 0,
      warnings: 0,
      infos: 1,
    });
  });
});
