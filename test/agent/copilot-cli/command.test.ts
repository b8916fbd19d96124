/**
 * Copilot CLI's argv across block permutations, the unattended posture, the managed
 * environment, the block rules validate applies, the registration's declarations,
 * and where a session's files live. Fake runtimes record what the adapter launched.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { fakeInvocations, fakeRuntime } from '../../../internal-contracts/agent/fake-runtime.js';
import '../../../src/agent/kinds.js';
import {
  buildTurnArgs,
  CREDENTIAL_ENV,
  NO_TOOLS,
  turnEnv,
  WITHHELD_ENV,
} from '../../../src/agent/copilot-cli/command.js';
import { type CopilotCliConfig, copilotCliBlock } from '../../../src/agent/copilot-cli/config.js';
import { copilotHome, journalPath } from '../../../src/agent/copilot-cli/session-files.js';
import { agentKind } from '../../../src/agent/registry.js';
import { checkAgentSettings } from '../../../src/agent/validate.js';
import { LocalRemoteHost } from '../../support/local-remote-host.js';
import {
  adapterOf,
  copilotHomeDir,
  copilotLines,
  FAKE_SESSION_ID,
  runTurn,
  startParams,
  workspaceRoot,
} from './support.js';

function config(block: Record<string, unknown> = {}): CopilotCliConfig {
  const parsed = copilotCliBlock.parse(block);
  if (!parsed.ok) throw new Error(parsed.issues.map((i) => i.message).join('; '));
  return parsed.config;
}

const SID = '0c9c1a4e-5d0f-4c6e-9a51-6f1b2f0c7d11';
const NEW = {
  prompt: 'do it',
  sessionId: SID,
  resume: false,
  verification: null,
  usageReport: null,
  tools: null,
};
const TOOLS = { config: '{"mcpServers":{"orchestrator":{}}}', servers: ['orchestrator'] };
const flagValue = (args: string[], flag: string) => args[args.indexOf(flag) + 1];

const ws = workspaceRoot('copilot-command-');
afterAll(() => ws.cleanup());

describe('buildTurnArgs', () => {
  it('defaults: the prompt attached, JSON output, no updates, no telemetry, nobody asked, autopilot, every tool allowed, a new session by id', () => {
    expect(buildTurnArgs(config(), NEW)).toEqual([
      '--prompt=do it',
      '--output-format',
      'json',
      '--no-auto-update',
      '--disable-client-telemetry',
      '--no-ask-user',
      '--mode',
      'autopilot',
      '--allow-all-tools',
      `--session-id=${SID}`,
    ]);
  });

  it('a prompt that starts with a dash stays one attached value, never an option', () => {
    const args = buildTurnArgs(config(), { ...NEW, prompt: '--help me\nwith -p' });
    expect(args[0]).toBe('--prompt=--help me\nwith -p');
    expect(args).not.toContain('--help');
  });

  it('a continued session resumes by id instead of naming a new one', () => {
    const args = buildTurnArgs(config(), { ...NEW, resume: true });
    expect(args).toContain(`--resume=${SID}`);
    expect(args.some((a) => a.startsWith('--session-id'))).toBe(false);
  });

  it('every pass-through key reaches its flag', () => {
    const args = buildTurnArgs(
      config({
        mode: 'autopilot',
        max_autopilot_continues: 12,
        model: 'gpt-5.4',
        agent: 'reviewer',
        effort: 'high',
        allow_all_tools: false,
        allowed_tools: ['shell(git:*)', 'write'],
        denied_tools: ['shell(git push)'],
        available_tools: ['bash', 'view'],
        excluded_tools: ['task'],
        allow_all_paths: true,
        allow_all_urls: true,
      }),
      { ...NEW, usageReport: '/tmp/report.json' },
    );
    expect(flagValue(args, '--max-autopilot-continues')).toBe('12');
    expect(flagValue(args, '--model')).toBe('gpt-5.4');
    expect(flagValue(args, '--agent')).toBe('reviewer');
    expect(flagValue(args, '--reasoning-effort')).toBe('high');
    expect(args).not.toContain('--allow-all-tools');
    expect(args.filter((a) => a.startsWith('--allow-tool='))).toEqual([
      '--allow-tool=shell(git:*)',
      '--allow-tool=write',
    ]);
    expect(args).toContain('--deny-tool=shell(git push)');
    expect(args.filter((a) => a.startsWith('--available-tools='))).toEqual([
      '--available-tools=bash',
      '--available-tools=view',
    ]);
    expect(args).toContain('--excluded-tools=task');
    expect(args).toEqual(expect.arrayContaining(['--allow-all-paths', '--allow-all-urls']));
    expect(flagValue(args, '--usage-output-file')).toBe('/tmp/report.json');
  });

  it('tool servers: the config attached as one value, each server allowed by name (also beside --allow-all-tools)', () => {
    const args = buildTurnArgs(config(), { ...NEW, tools: TOOLS });
    expect(args.filter((a) => a.startsWith('--additional-mcp-config'))).toEqual([
      `--additional-mcp-config=${TOOLS.config}`,
    ]);
    expect(args).toContain('--allow-all-tools');
    expect(args.filter((a) => a.startsWith('--allow-tool='))).toEqual(['--allow-tool=orchestrator']);
    // No list of available tools: every tool is seen already, ours included.
    expect(args.some((a) => a.startsWith('--available-tools'))).toBe(false);
  });

  it('tool servers stay allowed and seen when the block narrows the tools it allows and shows', () => {
    const c = config({ allow_all_tools: false, allowed_tools: ['write'], available_tools: ['bash'] });
    const args = buildTurnArgs(c, { ...NEW, tools: TOOLS });
    expect(args).not.toContain('--allow-all-tools');
    expect(args.filter((a) => a.startsWith('--allow-tool='))).toEqual([
      '--allow-tool=write',
      '--allow-tool=orchestrator',
    ]);
    expect(args.filter((a) => a.startsWith('--available-tools='))).toEqual([
      '--available-tools=bash',
      '--available-tools=orchestrator',
    ]);
  });

  it('a verification session gets no tool server, even if handed one', () => {
    for (const fullContext of [true, false]) {
      const args = buildTurnArgs(config({ available_tools: ['bash'] }), {
        ...NEW,
        tools: TOOLS,
        verification: { fullContext },
      });
      expect(args.some((a) => a.startsWith('--additional-mcp-config'))).toBe(false);
      expect(args).not.toContain('--allow-tool=orchestrator');
      expect(args).not.toContain('--available-tools=orchestrator');
    }
  });

  it('interactive mode is passed as such, and a continuation cap only in autopilot', () => {
    const args = buildTurnArgs(config({ mode: 'interactive', max_autopilot_continues: 3 }), NEW);
    expect(flagValue(args, '--mode')).toBe('interactive');
    expect(args).not.toContain('--max-autopilot-continues');
  });

  it('effort is forwarded on every turn: resumed and verification turns included', () => {
    const c = config({ effort: 'max' });
    for (const turn of [
      NEW,
      { ...NEW, resume: true },
      { ...NEW, verification: { fullContext: false } },
      { ...NEW, verification: { fullContext: true } },
    ]) {
      expect(flagValue(buildTurnArgs(c, turn), '--reasoning-effort')).toBe('max');
    }
  });

  it('a reduced verification session asks one question with no tools, no custom instructions and no built-in MCP servers', () => {
    const c = config({ available_tools: ['bash'], excluded_tools: ['task'], mode: 'autopilot' });
    const reduced = buildTurnArgs(c, { ...NEW, verification: { fullContext: false } });
    expect(reduced).toEqual(
      expect.arrayContaining([
        `--available-tools=${NO_TOOLS}`,
        '--no-custom-instructions',
        '--disable-builtin-mcps',
      ]),
    );
    expect(reduced).not.toContain('--available-tools=bash');
    expect(flagValue(reduced, '--mode')).toBe('interactive');
    const full = buildTurnArgs(c, { ...NEW, verification: { fullContext: true } });
    expect(full).not.toContain('--no-custom-instructions');
    expect(full).toContain('--available-tools=bash');
    // Full context still asks one question: no autopilot continuations after the answer.
    expect(flagValue(full, '--mode')).toBe('interactive');
  });
});

describe('the managed environment', () => {
  it('forces auto-update off whatever the operator exported, and withholds the all-tools variable', () => {
    expect(turnEnv({ PATH: '/bin', COPILOT_AUTO_UPDATE: 'true' })).toEqual({
      PATH: '/bin',
      COPILOT_AUTO_UPDATE: 'false',
    });
    expect(WITHHELD_ENV).toEqual(['COPILOT_ALLOW_ALL']);
  });

  it('a launched turn gets auto-update off, no COPILOT_ALLOW_ALL, its usage report path and its credential', async () => {
    const command = fakeRuntime(`${ws.root}/env-fake`, 'copilot', {
      steps: [{ stdout: copilotLines.result({ exitCode: 0 }) }, { exit: 0 }],
    });
    const home = copilotHomeDir();
    const adapter = adapterOf();
    const session = await adapter.startSession(
      startParams({
        ws,
        command,
        env: {
          PATH: process.env.PATH ?? '',
          COPILOT_HOME: home,
          COPILOT_ALLOW_ALL: 'true',
          COPILOT_AUTO_UPDATE: 'true',
          COPILOT_GITHUB_TOKEN: 'gho_fake_token_value',
        },
      }),
    );
    try {
      await runTurn(adapter, session, 'hello');
    } finally {
      await adapter.stopSession(session);
    }
    const [run] = fakeInvocations(command);
    expect(run?.env.COPILOT_AUTO_UPDATE).toBe('false');
    expect(run?.env.COPILOT_ALLOW_ALL).toBeUndefined();
    expect(run?.env.COPILOT_GITHUB_TOKEN).toBe('gho_fake_token_value');
    expect(run?.stdin).toBe('');
    expect(flagValue(run?.argv ?? [], '--usage-output-file')).toMatch(
      /orchestrator-copilot-.*\/turn-1\.json$/,
    );
  });
});

describe('session files', () => {
  it('COPILOT_HOME wins, else ~/.copilot as the CLI itself defaults; the journal sits under session-state/<id>', () => {
    expect(copilotHome({ COPILOT_HOME: '/srv/copilot', HOME: '/home/a' })).toBe('/srv/copilot');
    expect(copilotHome({ HOME: '/home/a' })).toBe('/home/a/.copilot');
    expect(journalPath('/home/a/.copilot', SID)).toBe(`/home/a/.copilot/session-state/${SID}/events.jsonl`);
  });

  it('a session on an SSH host asks for no usage report (it would be written on the host) and stays honestly unmeasured', async () => {
    const command = fakeRuntime(`${ws.root}/remote-fake`, 'copilot', {
      steps: [
        { stdout: copilotLines.message('m1', 'done remotely') },
        { stdout: copilotLines.result({ sessionId: FAKE_SESSION_ID }) },
        { exit: 0 },
      ],
    });
    const adapter = adapterOf();
    const session = await adapter.startSession({
      ...startParams({ ws, command }),
      remote: new LocalRemoteHost({ name: 'ci@build-1:22' }),
    });
    try {
      const turn = await runTurn(adapter, session, 'hello');
      expect(turn.outcome.result).toMatchObject({
        exitReason: 'turn_completed',
        usageMeasured: false,
        usageProvenance: 'unmeasured',
        // Output was served and no figure covers it: unknown spend, not zero.
        spendUnaccounted: true,
      });
    } finally {
      await adapter.stopSession(session);
    }
    expect(fakeInvocations(command)[0]?.argv).not.toContain('--usage-output-file');
  });

  it('a resumed session continues under the id it was given from its first turn', async () => {
    const command = fakeRuntime(`${ws.root}/resume-fake`, 'copilot', {
      steps: [{ stdout: copilotLines.result({ sessionId: FAKE_SESSION_ID }) }, { exit: 0 }],
    });
    const adapter = adapterOf();
    const session = await adapter.startSession(
      startParams({ ws, command, resumeSessionId: FAKE_SESSION_ID }),
    );
    try {
      const turn = await runTurn(adapter, session, 'again');
      expect(turn.outcome.result.sessionId).toBe(FAKE_SESSION_ID);
    } finally {
      await adapter.stopSession(session);
    }
    expect(fakeInvocations(command)[0]?.argv).toContain(`--resume=${FAKE_SESSION_ID}`);
  });

  it('a block the kind refuses fails the session start as agent_not_found, before any process', async () => {
    await expect(
      adapterOf().startSession(startParams({ ws, command: '/bin/true', options: { mode: 'plan' } })),
    ).rejects.toMatchObject({ kind: 'agent_not_found', detail: expect.stringContaining('plan') });
  });
});

describe('the copilot-cli block', () => {
  it('plan mode, which waits for a person to approve the plan, is refused with a coded diagnostic', () => {
    expect(copilotCliBlock.validate({ mode: 'plan' })).toMatchObject([
      { severity: 'error', code: 'copilot-cli.mode.needs_approval', path: ['copilot-cli', 'mode'] },
    ]);
  });

  it('an unknown mode is unsupported; the modes that never ask are accepted', () => {
    expect(copilotCliBlock.validate({ mode: 'yolo' })).toMatchObject([
      { severity: 'error', code: 'copilot-cli.mode.unsupported' },
    ]);
    expect(copilotCliBlock.validate({ mode: 'autopilot' })).toEqual([]);
    expect(copilotCliBlock.validate({ mode: 'interactive' })).toEqual([]);
  });

  it('a tool both allowed and denied, or both available and excluded, is refused', () => {
    expect(copilotCliBlock.validate({ allowed_tools: ['write'], denied_tools: ['write'] })).toMatchObject([
      { code: 'copilot-cli.tools.overlap', path: ['copilot-cli', 'denied_tools'] },
    ]);
    expect(copilotCliBlock.validate({ available_tools: ['bash'], excluded_tools: ['bash'] })).toMatchObject([
      { code: 'copilot-cli.tools.overlap', path: ['copilot-cli', 'excluded_tools'] },
    ]);
  });

  it('a continuation cap outside autopilot is a warning, and unknown keys warn too', () => {
    expect(copilotCliBlock.validate({ mode: 'interactive', max_autopilot_continues: 3 })).toMatchObject([
      { severity: 'warning', code: 'copilot-cli.max_autopilot_continues.unused' },
    ]);
    expect(copilotCliBlock.validate({ permission_mode: 'x' })).toMatchObject([
      { severity: 'warning', code: 'config.unknown_key' },
    ]);
  });

  it('wrong types are coded by key', () => {
    expect(copilotCliBlock.validate({ allowed_tools: 'write' })).toMatchObject([
      { code: 'copilot-cli.allowed_tools.invalid' },
    ]);
    expect(copilotCliBlock.validate({ allow_all_tools: 'yes' })).toMatchObject([
      { code: 'copilot-cli.allow_all_tools.invalid' },
    ]);
    expect(copilotCliBlock.validate({ effort: 'huge' })).toMatchObject([
      { code: 'copilot-cli.effort.unsupported' },
    ]);
  });

  it('effort raises no not-forwarded warning (the kind forwards it), and nothing blocks session resume', () => {
    expect(
      checkAgentSettings('copilot-cli', { effort: 'high' }, { command: null, maxTokens: 1_000 }),
    ).toEqual([]);
  });

  it('a tracker token shared with a variable the CLI reads as its credential is refused', () => {
    expect(
      checkAgentSettings(
        'copilot-cli',
        {},
        { command: null, maxTokens: 0, trackerToken: 'ghp_shared', env: { GITHUB_TOKEN: 'ghp_shared' } },
      ),
    ).toMatchObject([{ code: 'agent.credential.tracker_token' }]);
  });
});

describe('registration', () => {
  it('declares a command-launched, effort-forwarding kind with turn-end per-model usage, a journal and the mcp-json tool channel', () => {
    const kind = agentKind('copilot-cli');
    expect(kind?.runtime).toMatchObject({
      requiresCommand: true,
      defaultCommand: 'copilot',
      mcpDialect: 'mcp-json',
      effortForwarding: 'forwarded',
      usageLimitRecognition: 'not_recognized',
      verificationContext: ['system_prompt'],
      credentialEnv: [...CREDENTIAL_ENV],
    });
    expect(kind?.usageDisposition).toEqual({ arrival: 'turn_end', attribution: 'per_model' });
    expect(kind?.runtime?.usageSources.records).toMatchObject({ category: 'journal', strategy: 'records' });
    expect(kind?.runtime?.sessionResumeBlockedBy).toBeUndefined();
  });
});
