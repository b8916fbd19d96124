/**
 * Claude Code's argv across block permutations, the default permission posture,
 * the block rules validate applies, and the registration's declarations.
 */
import { describe, expect, it } from 'vitest';
import '../../../src/agent/kinds.js';
import { ClaudeCodeAdapter } from '../../../src/agent/claude-code/adapter.js';
import {
  buildTurnArgs,
  EFFORT_ENV,
  startRefusal,
  VERIFICATION_SYSTEM_PROMPT,
  withheldEnv,
} from '../../../src/agent/claude-code/command.js';
import { type ClaudeCodeConfig, claudeCodeBlock } from '../../../src/agent/claude-code/config.js';
import { agentKind } from '../../../src/agent/registry.js';
import { checkAgentSettings } from '../../../src/agent/validate.js';
import { LocalRemoteHost } from '../../support/local-remote-host.js';
import { startParams, workspaceRoot } from './support.js';

function config(block: Record<string, unknown> = {}): ClaudeCodeConfig {
  const parsed = claudeCodeBlock.parse(block);
  if (!parsed.ok) throw new Error(parsed.issues.map((i) => i.message).join('; '));
  return parsed.config;
}

const SID = '0c9c1a4e-5d0f-4c6e-9a51-6f1b2f0c7d11';
const NEW = { sessionId: SID, resume: false, verification: null, tools: null };

describe('buildTurnArgs', () => {
  it('defaults: -p, stream-json with --verbose, a new session by id, acceptEdits with Bash allowed, no prompt in argv', () => {
    expect(buildTurnArgs(config(), NEW)).toEqual([
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--session-id',
      SID,
      '--permission-mode',
      'acceptEdits',
      '--allowedTools',
      'Bash',
    ]);
  });

  it('a continued session resumes by id instead of naming a new one', () => {
    const args = buildTurnArgs(config(), { ...NEW, resume: true });
    expect(args).toContain('--resume');
    expect(args).not.toContain('--session-id');
    expect(args[args.indexOf('--resume') + 1]).toBe(SID);
  });

  it('every pass-through key reaches its flag', () => {
    const args = buildTurnArgs(
      config({
        permission_mode: 'dontAsk',
        model: 'claude-sonnet-4-5',
        fallback_model: 'claude-haiku-4-5',
        max_turns: 40,
        max_budget_usd: 4.5,
        effort: 'high',
        allowed_tools: ['Bash', 'Edit'],
        disallowed_tools: ['WebFetch', 'WebSearch'],
        append_system_prompt: 'Never push to main.',
        session_persistence: false,
      }),
      NEW,
    );
    const pairs = (flag: string) => args[args.indexOf(flag) + 1];
    expect(pairs('--permission-mode')).toBe('dontAsk');
    expect(pairs('--model')).toBe('claude-sonnet-4-5');
    expect(pairs('--fallback-model')).toBe('claude-haiku-4-5');
    expect(pairs('--max-turns')).toBe('40');
    expect(pairs('--max-budget-usd')).toBe('4.5');
    expect(pairs('--effort')).toBe('high');
    expect(pairs('--allowedTools')).toBe('Bash,Edit');
    expect(pairs('--disallowedTools')).toBe('WebFetch,WebSearch');
    expect(pairs('--append-system-prompt')).toBe('Never push to main.');
    expect(args).toContain('--no-session-persistence');
  });

  it('effort is forwarded on every turn, resumed and verification turns included, and its variable withheld', () => {
    const c = config({ effort: 'max' });
    for (const turn of [
      NEW,
      { ...NEW, resume: true },
      { ...NEW, verification: { fullContext: false } },
      { ...NEW, verification: { fullContext: true } },
    ]) {
      const args = buildTurnArgs(c, turn);
      expect(args[args.indexOf('--effort') + 1]).toBe('max');
    }
    expect(withheldEnv(c)).toEqual([EFFORT_ENV]);
    expect(withheldEnv(config())).toEqual([]);
  });

  it('a reduced verification session drops tools, instructions and the system prompt, and is never persisted', () => {
    const reduced = buildTurnArgs(config({ append_system_prompt: 'x' }), {
      ...NEW,
      verification: { fullContext: false },
    });
    expect(reduced).toEqual(
      expect.arrayContaining(['--safe-mode', '--tools', '', '--system-prompt', VERIFICATION_SYSTEM_PROMPT]),
    );
    expect(reduced).not.toContain('--append-system-prompt');
    expect(reduced).toContain('--no-session-persistence');
    const full = buildTurnArgs(config(), { ...NEW, verification: { fullContext: true } });
    expect(full).not.toContain('--safe-mode');
    expect(full).toContain('--no-session-persistence');
  });
});

describe('tool servers on the claude-code command line', () => {
  const tools = { config: '{"mcpServers":{"orchestrator":{}}}', servers: ['orchestrator'] };

  it('passes the rendered config as one argument and allows the servers’ tools by name', () => {
    const args = buildTurnArgs(config(), { ...NEW, tools });
    expect(args[args.indexOf('--mcp-config') + 1]).toBe(tools.config);
    // Followed by an option: the variadic --mcp-config cannot swallow it.
    expect(args[args.indexOf('--mcp-config') + 2]).toMatch(/^--/);
    expect(args[args.indexOf('--allowedTools') + 1]).toBe('Bash,mcp__orchestrator');
  });

  it('never gives a verification session the servers', () => {
    for (const fullContext of [true, false]) {
      const args = buildTurnArgs(config(), { ...NEW, tools, verification: { fullContext } });
      expect(args).not.toContain('--mcp-config');
      expect(args.join(' ')).not.toContain('mcp__');
    }
  });
});

describe('the claude-code block', () => {
  it.each(['default', 'plan'])('permission_mode %s, which asks a person, is refused', (mode) => {
    expect(claudeCodeBlock.validate({ permission_mode: mode })).toMatchObject([
      { severity: 'error', code: 'claude-code.permission_mode.interactive' },
    ]);
  });

  it('the default Bash allowance gives way to a disallowed Bash instead of reporting an overlap', () => {
    expect(claudeCodeBlock.validate({ disallowed_tools: ['Bash'] })).toEqual([]);
    expect(config({ disallowed_tools: ['Bash'] }).allowedTools).toEqual([]);
    expect(claudeCodeBlock.validate({ allowed_tools: ['Bash'], disallowed_tools: ['Bash'] })).toMatchObject([
      { code: 'claude-code.tools.overlap' },
    ]);
  });

  it('session_persistence false is refused for a workflow, because continuation turns resume the session', () => {
    expect(
      checkAgentSettings('claude-code', { session_persistence: false }, { command: null, maxTokens: 0 }),
    ).toMatchObject([
      { severity: 'error', code: 'agent.kind.session_resume', path: ['claude-code', 'session_persistence'] },
    ]);
  });

  it('effort raises no not-forwarded warning: the kind forwards it', () => {
    expect(checkAgentSettings('claude-code', { effort: 'high' }, { command: null, maxTokens: 0 })).toEqual(
      [],
    );
  });
});

describe('bypassPermissions as root', () => {
  it('is refused before any process starts unless the environment declares a sandbox', () => {
    const bypass = config({ permission_mode: 'bypassPermissions' });
    expect(startRefusal(bypass, {}, 0)).toMatch(/refused by Claude Code when it runs as root/);
    expect(startRefusal(bypass, { IS_SANDBOX: '1' }, 0)).toBeNull();
    expect(startRefusal(bypass, {}, 1000)).toBeNull();
    expect(startRefusal(config(), {}, 0)).toBeNull();
  });

  it('fails the session start as agent_not_found (released: retrying cannot help)', async () => {
    const ws = workspaceRoot('claude-root-');
    try {
      const adapter = new ClaudeCodeAdapter({ uid: 0 });
      await expect(
        adapter.startSession(
          startParams({ ws, command: '/bin/true', options: { permission_mode: 'bypassPermissions' } }),
        ),
      ).rejects.toMatchObject({ kind: 'agent_not_found' });
    } finally {
      ws.cleanup();
    }
  });
});

describe('bypassPermissions on an SSH host', () => {
  it("is not judged by this machine's user id: the session starts, the host's CLI decides", async () => {
    const ws = workspaceRoot('claude-remote-');
    try {
      const adapter = new ClaudeCodeAdapter({ uid: 0 });
      const session = await adapter.startSession({
        ...startParams({ ws, command: '/bin/true', options: { permission_mode: 'bypassPermissions' } }),
        remote: new LocalRemoteHost({ name: 'ci@build-1:22' }),
      });
      expect(session.kind).toBe('claude-code');
      await adapter.stopSession(session);
    } finally {
      ws.cleanup();
    }
  });
});

describe('registration', () => {
  it('declares a command-launched, effort-forwarding, usage-limit-recognising kind with incremental per-model usage', () => {
    const kind = agentKind('claude-code');
    expect(kind?.runtime).toMatchObject({
      requiresCommand: true,
      defaultCommand: 'claude',
      effortForwarding: 'forwarded',
      usageLimitRecognition: 'recognized',
      verificationContext: [],
    });
    expect(kind?.usageDisposition).toEqual({ arrival: 'incremental', attribution: 'per_model' });
    expect(kind?.runtime?.sessionResumeBlockedBy?.({ session_persistence: false })).toBe(
      'session_persistence',
    );
  });
});
