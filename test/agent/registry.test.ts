import { describe, expect, it } from 'vitest';
import { MOCK_USAGE_SOURCES } from '../../src/agent/mock/usage.js';
import { type AgentRuntimeDeclaration, checkDeclaration, registerAgent } from '../../src/agent/registry.js';
import { checkAgentSettings } from '../../src/agent/validate.js';
import type { AgentAdapter } from '../../src/domain/agent.js';

const adapter = {} as AgentAdapter;
const good: AgentRuntimeDeclaration = {
  factory: () => adapter,
  requiresCommand: true,
  defaultCommand: 'agent-cli',
  mcpDialect: 'mcp-json',
  usageSources: MOCK_USAGE_SOURCES,
  credentialEnv: ['AGENT_API_KEY'],
  effortForwarding: 'forwarded',
  verificationContext: ['project_instructions'],
  usageLimitRecognition: 'recognized',
  sandbox: { kind: 'none', reason: 'runs no commands' },
};

describe('agent kind declarations', () => {
  it('a complete declaration has no problems', () => {
    expect(checkDeclaration('k', good)).toEqual([]);
  });

  it.each<
    [
      string,
      Partial<AgentRuntimeDeclaration> | ((d: AgentRuntimeDeclaration) => AgentRuntimeDeclaration),
      string,
    ]
  >([
    ['a tool channel of none without a reason', { mcpDialect: 'none' }, 'mcpDialectNoneReason'],
    ['no tool calls at all beside a tool channel', { callsNoTools: true }, 'callsNoTools contradicts'],
    [
      'an unrecognised usage limit without a reason',
      { usageLimitRecognition: 'not_recognized' },
      'usageLimitNotRecognizedReason',
    ],
    ['a credential variable that is not a name', { credentialEnv: ['BAD-NAME'] }, 'not a variable name'],
    ['a credential variable the launch owns', { credentialEnv: ['PATH'] }, 'reserved'],
    ['a repeated credential variable', { credentialEnv: ['A_KEY', 'A_KEY'] }, 'repeats'],
    ['both some and all tools kept', { verificationContext: ['some_tools', 'all_tools'] }, 'both'],
    [
      'a default command for a kind that launches none',
      { requiresCommand: false },
      'requiresCommand is false',
    ],
    [
      'usage sources that count neither tokens nor an amount',
      {
        usageSources: {
          live: {
            ...MOCK_USAGE_SOURCES.live,
            spend: {
              ...MOCK_USAGE_SOURCES.live.spend,
              shape: undefined,
              servedModel: false,
              duringTurn: false,
              cacheInInput: false,
              reasoningInOutput: false,
            },
          },
        },
      },
      'usageSources',
    ],
    [
      'an undeclared sandbox (every kind says how tool commands are confined)',
      (d) => {
        const { sandbox: _omit, ...rest } = d;
        return rest as AgentRuntimeDeclaration;
      },
      'sandbox is not declared',
    ],
    ['a sandbox of none without a reason', { sandbox: { kind: 'none', reason: ' ' } }, 'needs a reason'],
    [
      'an unprobeable sandbox without what to check',
      { sandbox: { kind: 'unprobeable', whatToCheck: '' } },
      'needs whatToCheck',
    ],
    [
      'a probed sandbox without a probe',
      { sandbox: { kind: 'probe' } as unknown as AgentRuntimeDeclaration['sandbox'] },
      'needs a probe function',
    ],
    [
      'a sandbox of an unknown kind',
      { sandbox: { kind: 'maybe' } as unknown as AgentRuntimeDeclaration['sandbox'] },
      'is not probe, none or unprobeable',
    ],
    [
      'an undeclared credential list (explicitly empty is a statement, missing is not)',
      (d) => {
        const { credentialEnv: _omit, ...rest } = d;
        return rest as AgentRuntimeDeclaration;
      },
      'credentialEnv is not declared',
    ],
  ])('refuses %s', (_what, change, fragment) => {
    const declaration = typeof change === 'function' ? change(good) : { ...good, ...change };
    const problems = checkDeclaration('k', declaration);
    expect(problems.join('; ')).toContain(fragment);
    expect(() =>
      registerAgent(`bad-${fragment}`, { validateConfig: () => [], runtime: declaration }),
    ).toThrow(fragment);
  });

  it('registering a name twice throws', () => {
    registerAgent('twice', { validateConfig: () => [] });
    expect(() => registerAgent('twice', { validateConfig: () => [] })).toThrow('registered twice');
  });

  it('derives the usage disposition from the sources instead of taking it declared', () => {
    registerAgent('derived', { validateConfig: () => [], runtime: good });
    expect(checkAgentSettings('derived', {}, { command: null, maxTokens: 0 })).toEqual([]);
  });
});

describe('generic rules a declaration implies', () => {
  registerAgent('needs-command', {
    validateConfig: () => [],
    runtime: {
      ...good,
      defaultCommand: null,
      effortForwarding: 'not_forwarded',
      sessionResumeBlockedBy: (o) => (o.keep_history === false ? 'keep_history' : null),
    },
  });

  it('a kind without a default command needs agent.command', () => {
    expect(
      checkAgentSettings('needs-command', {}, { command: null, maxTokens: 0 }).map((i) => i.code),
    ).toEqual(['agent.command.missing']);
    expect(checkAgentSettings('needs-command', {}, { command: 'x', maxTokens: 0 })).toEqual([]);
  });

  it('a block key that breaks session resume is an error naming the key', () => {
    const issues = checkAgentSettings(
      'needs-command',
      { keep_history: false },
      { command: 'x', maxTokens: 0 },
    );
    expect(issues.map((i) => [i.code, i.path.join('.')])).toEqual([
      ['agent.kind.session_resume', 'needs-command.keep_history'],
    ]);
  });

  it('an effort the kind does not forward is a warning, not silence', () => {
    const issues = checkAgentSettings('needs-command', { effort: 'high' }, { command: 'x', maxTokens: 0 });
    expect(issues.map((i) => [i.severity, i.code])).toEqual([['warning', 'agent.effort.not_forwarded']]);
  });

  it('a token budget for a kind that reports no tokens is a warning', () => {
    registerAgent('amounts-only', {
      validateConfig: () => [],
      runtime: {
        ...good,
        usageSources: {
          live: {
            category: 'output',
            strategy: 'live',
            spend: {
              cacheInInput: false,
              reasoningInOutput: false,
              servedModel: false,
              duringTurn: false,
              lowerBound: false,
              amounts: [{ unit: 'credits', shape: 'per_turn' }],
            },
          },
        },
      },
    });
    const issues = checkAgentSettings('amounts-only', {}, { command: null, maxTokens: 1000 });
    expect(issues.map((i) => i.code)).toEqual(['agent.kind.no_usage_reporting']);
  });
});
