/**
 * The `codex:` block as Symphony and Sortie write it: `thread_sandbox` (kebab or camelCase)
 * is the sandbox, a structured `approval_policy` and `turn_sandbox_policy` reach the
 * app-server exactly as written (the latter on every `turn/start`), and the keys this build
 * does not use are reported, never silently dropped.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeRuntime } from '../../../internal-contracts/agent/fake-runtime.js';
import { execTurnArgs, threadParams, turnParams } from '../../../src/agent/codex/command.js';
import { type CodexConfig, codexBlock } from '../../../src/agent/codex/config.js';
import { relayLog, wire } from './fake-app-server.js';
import { appServerCommand, codexAdapter, codexParams, codexTestRoot, runTurns, verdict } from './support.js';

function config(block: Record<string, unknown>): CodexConfig {
  const parsed = codexBlock.parse(block);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.config;
}

const REJECT = { reject: { sandbox_approval: true, rules: true, mcp_elicitations: true } };
const TURN_POLICY = { type: 'workspaceWrite', writableRoots: ['/ws'], networkAccess: false };

describe('codex block written for Symphony or Sortie', () => {
  it.each([
    ['workspace-write', 'workspace-write'],
    ['workspaceWrite', 'workspace-write'],
    ['readOnly', 'read-only'],
    ['dangerFullAccess', 'danger-full-access'],
  ])('thread_sandbox %s is the sandbox %s, with a note naming the key it was read as', (written, mode) => {
    const parsed = codexBlock.parse({ thread_sandbox: written });
    expect(parsed.ok && parsed.config.sandbox).toBe(mode);
    expect(parsed.ok && parsed.warnings.map((w) => [w.severity, w.code, w.path])).toEqual([
      ['info', 'workflow.key.mapped', ['codex', 'thread_sandbox']],
    ]);
  });

  it('sandbox written too wins over a different thread_sandbox, with a warning', () => {
    const parsed = codexBlock.parse({ sandbox: 'read-only', thread_sandbox: 'workspace-write' });
    expect(parsed.ok && parsed.config.sandbox).toBe('read-only');
    expect(parsed.ok && parsed.warnings.map((w) => w.code)).toEqual(['workflow.key.shadowed']);
  });

  it('a bad thread_sandbox is reported at thread_sandbox, where it was written', () => {
    const parsed = codexBlock.parse({ thread_sandbox: 'sometimes' });
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.issues[0]?.path).toEqual(['codex', 'thread_sandbox']);
  });

  it('a structured approval policy reaches thread/start unchanged and exec as an inline TOML table', () => {
    const c = config({ approval_policy: REJECT });
    expect(threadParams(c, '/ws', null).approvalPolicy).toEqual(REJECT);
    expect(execTurnArgs(c, { threadId: null, verification: null })).toContain(
      'approval_policy={ "reject" = { "sandbox_approval" = true, "rules" = true, "mcp_elicitations" = true } }',
    );
  });

  it('turn_sandbox_policy is sent as sandboxPolicy on turn/start exactly as written; absent, none is sent', () => {
    expect(turnParams(config({ turn_sandbox_policy: TURN_POLICY }), 't1', 'go').sandboxPolicy).toEqual(
      TURN_POLICY,
    );
    expect(turnParams(config({}), 't1', 'go')).not.toHaveProperty('sandboxPolicy');
  });

  it('personality and skip_git_repo_check are reported as ignored, with why', () => {
    const parsed = codexBlock.parse({ personality: 'pragmatic', skip_git_repo_check: true });
    expect(parsed.ok && parsed.warnings.map((w) => [w.severity, w.code, w.path])).toEqual([
      ['warning', 'workflow.key.ignored', ['codex', 'personality']],
      ['warning', 'workflow.key.ignored', ['codex', 'skip_git_repo_check']],
    ]);
  });
});

const t = codexTestRoot('codex-reference-keys-');
afterAll(() => t.cleanup());

describe('codex app-server with a turn sandbox policy', () => {
  it('every turn/start carries the configured sandboxPolicy and thread/start the structured approval policy', async () => {
    const runtime = fakeRuntime(path.join(t.root, 'fakes', 'f1'), 'codex', {
      turns: [
        [{ stdout: wire.message('m1', 'one') }, { stdout: wire.completed('completed') }],
        [{ stdout: wire.message('m2', 'two') }, { stdout: wire.completed('completed') }, { exit: 0 }],
      ],
    });
    const params = codexParams(t, appServerCommand(t, 'relay', runtime), {
      options: { approval_policy: REJECT, turn_sandbox_policy: TURN_POLICY },
    });
    const { turns } = await runTurns(codexAdapter(), params, ['first', 'second']);
    expect(turns.map(verdict)).toEqual(['turn_completed/none', 'turn_completed/none']);
    const log = relayLog(runtime);
    expect(log.find((m) => m.method === 'thread/start')?.params).toMatchObject({ approvalPolicy: REJECT });
    const starts = log.filter((m) => m.method === 'turn/start');
    expect(starts.map((m) => (m.params as Record<string, unknown>).sandboxPolicy)).toEqual([
      TURN_POLICY,
      TURN_POLICY,
    ]);
  }, 30_000);
});
