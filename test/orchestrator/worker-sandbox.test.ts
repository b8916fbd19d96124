/**
 * `runWorker` and the sandbox check at credential-verification time: start-up proved the
 * setup it started with, but a reloaded workflow is another setup, so the worker asks before
 * its first session. An unusable sandbox ends the attempt as `sandbox_unusable` (released,
 * held until the issue or the workflow changes) before any session or credential request;
 * a proof of the setup is reused, so the runtime is asked once, not once per issue; a
 * session on an SSH host is not probed here.
 */
import { describe, expect, it } from 'vitest';
import { MemoryProofStore } from '../../src/agent/core/verify-credential.js';
import type { AgentKind, SandboxProbeResult } from '../../src/agent/registry.js';
import { type AgentAdapter, type AgentSession, ZERO_TOKENS } from '../../src/domain/agent.js';
import { holdRelease, retryDecision } from '../../src/domain/errors.js';
import type { RemoteHost } from '../../src/domain/remote.js';
import type { TrackerAdapter } from '../../src/domain/tracker.js';
import type { Workspaces } from '../../src/orchestrator/ports.js';
import { runWorker, type WorkerDeps } from '../../src/orchestrator/worker.js';
import { SAMPLE_ISSUE } from '../../src/prompt/variables.js';
import { loadWorkflow } from '../../src/workflow/load.js';
import { notRun } from '../../src/workspace/place.js';

const loaded = loadWorkflow('/tmp/worker-sandbox-test/WORKFLOW.md', {
  env: {},
  text: [
    '---',
    'tracker:',
    '  kind: file',
    '  active_states: [Todo, In Progress]',
    '  terminal_states: [Done]',
    'file:',
    '  path: issues.json',
    'agent:',
    '  kind: fake',
    '  max_turns: 1',
    '---',
    '{{ issue.title }}',
  ].join('\n'),
});
if (!loaded.ok) throw new Error(loaded.diagnostics.map((d) => d.message).join('; '));
const flow = loaded.workflow;

/** An adapter that counts the sessions it was asked for and completes every turn. */
function countingAdapter() {
  const counts = { sessions: 0 };
  const adapter: AgentAdapter = {
    startSession: async () => {
      counts.sessions += 1;
      return { sessionId: 's', kind: 'fake' } as AgentSession;
    },
    runTurn: async () => ({
      result: {
        sessionId: 's',
        exitReason: 'turn_completed',
        usage: { ...ZERO_TOKENS },
        usageByModel: {},
        usageMeasured: true,
        spendUnaccounted: false,
        spendCoverable: false,
        coversSession: false,
        usageProvenance: 'local',
        reportedAmounts: [],
        finalMessage: 'done',
      },
    }),
    stopSession: async () => undefined,
  };
  return { adapter, counts };
}

function deps(
  adapter: AgentAdapter,
  found: SandboxProbeResult,
  o: { proofs?: MemoryProofStore; host?: RemoteHost | null } = {},
) {
  const probed: string[] = [];
  const kind = {
    name: 'fake',
    runtime: {
      sandbox: {
        kind: 'probe',
        probe: async (input: { workspacePath: string }) => {
          probed.push(input.workspacePath);
          return found;
        },
      },
    },
  } as unknown as AgentKind;
  const quiet = () => undefined;
  const d: WorkerDeps = {
    tracker: {
      transitionIssue: async () => undefined,
      commentIssue: async () => undefined,
      fetchIssueStatesByIds: async (ids: readonly string[]) => ids.map((id) => ({ id, state: 'Done' })),
    } as unknown as TrackerAdapter,
    adapter,
    kind,
    workspaces: {
      prepare: async () => ({
        ok: true,
        workspace: { path: '/tmp/worker-sandbox-test/ENG-42', createdNow: false },
      }),
      afterRun: async () => null,
      runCommand: async () => notRun('[no commands in this test]'),
    } as unknown as Workspaces,
    host: o.host ?? null,
    proofs: o.proofs ?? new MemoryProofStore(),
    agentEnv: { HOME: '/tmp/h' },
    credentialValues: [],
    log: { debug: quiet, info: quiet, warn: quiet, error: quiet },
    nowMs: () => Date.now(),
    observe: quiet,
    onEvent: quiet,
    onWorkspace: quiet,
    onTurnStart: quiet,
    onTurn: quiet,
    budgetAfterTurn: () => ({ exhausted: false }),
  };
  return { deps: d, probed };
}

const run = (d: WorkerDeps) =>
  runWorker(
    { issue: { ...SAMPLE_ISSUE, state: 'In Progress' }, attempt: 1, resumeSessionId: null, workflow: flow },
    d,
    new AbortController().signal,
  );

const UNUSABLE: SandboxProbeResult = {
  status: 'unusable',
  summary: 'mode m cannot write',
  cause: 'Refusing to create helper binaries',
  fixes: ['set fake.home_root'],
};

describe('runWorker: the sandbox of a setup start-up did not prove', () => {
  it('an unusable sandbox ends the attempt as sandbox_unusable before any session, released and held for a workflow change', async () => {
    const { adapter, counts } = countingAdapter();
    const { deps: d, probed } = deps(adapter, UNUSABLE);
    const outcome = await run(d);
    expect(outcome.exit).toMatchObject({ type: 'failed', kind: 'sandbox_unusable', turns: 0 });
    if (outcome.exit.type === 'failed') {
      expect(outcome.exit.message).toContain('Refusing to create helper binaries');
      expect(outcome.exit.message).toContain('set fake.home_root');
    }
    expect(probed).toEqual(['/tmp/worker-sandbox-test/ENG-42']);
    expect(counts.sessions).toBe(0);
    expect(retryDecision('sandbox_unusable')).toBe('release');
    expect(holdRelease('sandbox_unusable')).toBe('issue_or_workflow_change');
  });

  it('a proved setup is not asked again by the next worker', async () => {
    const proofs = new MemoryProofStore();
    const { adapter, counts } = countingAdapter();
    const first = deps(adapter, { status: 'usable', detail: 'wrote' }, { proofs });
    const second = deps(adapter, { status: 'usable', detail: 'wrote' }, { proofs });
    expect((await run(first.deps)).exit).toMatchObject({ type: 'completed' });
    expect((await run(second.deps)).exit).toMatchObject({ type: 'completed' });
    expect(first.probed).toHaveLength(1);
    expect(second.probed).toHaveLength(0);
    // One verification session (its proof reused too), then each worker's working session.
    expect(counts.sessions).toBe(3);
  });

  it('a session on an SSH host is not probed here', async () => {
    const { adapter } = countingAdapter();
    const { deps: d, probed } = deps(adapter, UNUSABLE, { host: { name: 'ci@h:22' } as RemoteHost });
    await run(d);
    expect(probed).toEqual([]);
  });
});
