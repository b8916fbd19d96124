/**
 * `runWorker` with a fake adapter and fake ports: which prompt each turn of a session gets,
 * and how a slow credential check ends. No process, no database.
 */
import { describe, expect, it } from 'vitest';
import { MemoryProofStore, VERIFICATION_PROMPT } from '../../src/agent/core/verify-credential.js';
import type { AgentKind } from '../../src/agent/registry.js';
import {
  type AgentAdapter,
  AgentError,
  type AgentSession,
  type StartSessionParams,
  type TurnOutcome,
  ZERO_TOKENS,
} from '../../src/domain/agent.js';
import type { Issue } from '../../src/domain/issue.js';
import type { TrackerAdapter } from '../../src/domain/tracker.js';
import { planExit } from '../../src/orchestrator/exit-policy.js';
import type { Workspaces } from '../../src/orchestrator/ports.js';
import { advertisedTools } from '../../src/orchestrator/tool-host.js';
import { runWorker, type WorkerDeps } from '../../src/orchestrator/worker.js';
import { DEFAULT_CONTINUATION_PROMPT } from '../../src/prompt/render.js';
import { SAMPLE_ISSUE } from '../../src/prompt/variables.js';
import { TOOL_CATALOG } from '../../src/tools/catalog.js';
import { loadWorkflow, type Workflow } from '../../src/workflow/load.js';
import { notRun } from '../../src/workspace/place.js';

const ISSUE: Issue = { ...SAMPLE_ISSUE, state: 'In Progress' };

function workflow(agent: string, prompt: string): Workflow {
  const text = [
    '---',
    'tracker:',
    '  kind: file',
    '  active_states: [Todo, In Progress]',
    '  terminal_states: [Done]',
    'file:',
    '  path: issues.json',
    'agent:',
    '  kind: fake',
    ...agent.split('\n').map((line) => `  ${line}`),
    '---',
    prompt,
  ].join('\n');
  const loaded = loadWorkflow('/tmp/worker-test/WORKFLOW.md', { env: {}, text });
  if (!loaded.ok) throw new Error(loaded.diagnostics.map((d) => d.message).join('; '));
  return loaded.workflow;
}

function outcome(error?: AgentError): TurnOutcome {
  return {
    result: {
      sessionId: 'fake-session',
      exitReason: error === undefined ? 'turn_completed' : 'turn_failed',
      usage: { ...ZERO_TOKENS },
      usageByModel: {},
      usageMeasured: true,
      spendUnaccounted: false,
      spendCoverable: false,
      coversSession: false,
      usageProvenance: 'local',
      reportedAmounts: [],
      finalMessage: error === undefined ? 'done' : '',
    },
    ...(error === undefined ? {} : { error }),
  };
}

/**
 * A runtime that takes `startMs` before it answers anything (a slow start or handshake), and
 * keeps the session's turn timer and the caller's signal the way the shared core does: the turn
 * timer ends a turn as turn_timeout, an abort as turn_cancelled. Records every working prompt.
 */
function slowStartAdapter(startMs: number) {
  const workingPrompts: string[] = [];
  const turnLimitMs = new WeakMap<AgentSession, number>();
  const adapter: AgentAdapter = {
    startSession: async (params: StartSessionParams) => {
      const session: AgentSession = { sessionId: '', kind: 'fake' };
      turnLimitMs.set(session, params.agent.turnTimeoutMs);
      return session;
    },
    runTurn: async (session, { prompt, signal }) => {
      if (prompt !== VERIFICATION_PROMPT) workingPrompts.push(prompt);
      const limitMs = turnLimitMs.get(session) ?? 0;
      const end = await new Promise<'done' | 'turn_timer' | 'aborted'>((resolve) => {
        const timers: NodeJS.Timeout[] = [];
        const finish = (how: 'done' | 'turn_timer' | 'aborted') => {
          for (const timer of timers) clearTimeout(timer);
          resolve(how);
        };
        timers.push(setTimeout(() => finish('done'), startMs));
        if (limitMs > 0) timers.push(setTimeout(() => finish('turn_timer'), limitMs));
        signal.addEventListener('abort', () => finish('aborted'), { once: true });
      });
      if (end === 'turn_timer')
        return outcome(new AgentError('turn_timeout', `the turn ran longer than ${limitMs} ms`));
      if (end === 'aborted') return outcome(new AgentError('turn_cancelled', 'the turn was cancelled'));
      return outcome();
    },
    stopSession: async () => undefined,
  };
  return { adapter, workingPrompts };
}

function deps(adapter: AgentAdapter): WorkerDeps {
  const tracker = {
    transitionIssue: async () => undefined,
    commentIssue: async () => undefined,
    fetchIssueStatesByIds: async (ids: readonly string[]) => ids.map((id) => ({ id, state: 'In Progress' })),
  } as unknown as TrackerAdapter;
  const workspaces = {
    prepare: async () => ({ ok: true, workspace: { path: '/tmp/worker-test/ENG-42', createdNow: false } }),
    afterRun: async () => null,
    runCommand: async () => notRun('[no commands in this test]'),
  } as unknown as Workspaces;
  const quiet = () => undefined;
  return {
    tracker,
    adapter,
    kind: { name: 'fake' } as AgentKind,
    workspaces,
    host: null,
    proofs: new MemoryProofStore(),
    agentEnv: {},
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
}

async function run(flow: Workflow, adapter: AgentAdapter) {
  return runWorker(
    { issue: ISSUE, attempt: 1, resumeSessionId: null, workflow: flow },
    deps(adapter),
    new AbortController().signal,
  );
}

describe('runWorker: continuation prompts', () => {
  it('a template that does not read run.is_continuation is sent once: later turns of the session get the guidance, not the task again', async () => {
    const fake = slowStartAdapter(0);
    const flow = workflow('max_turns: 3', 'Work on {{ issue.identifier }}.\n\n{{ issue.description }}');
    const outcome = await run(flow, fake.adapter);
    expect(outcome.exit).toMatchObject({ type: 'completed', turns: 3 });
    expect(fake.workingPrompts).toEqual([
      `Work on ENG-42.\n\n${ISSUE.description}`,
      DEFAULT_CONTINUATION_PROMPT,
      DEFAULT_CONTINUATION_PROMPT,
    ]);
  });

  it('a template that branches on run.is_continuation writes its own continuation turns', async () => {
    const fake = slowStartAdapter(0);
    const flow = workflow(
      'max_turns: 2',
      '{% if run.is_continuation %}Keep going on {{ issue.identifier }}.{% else %}Work on {{ issue.title }}.{% endif %}',
    );
    await run(flow, fake.adapter);
    expect(fake.workingPrompts).toEqual([`Work on ${ISSUE.title}.`, 'Keep going on ENG-42.']);
  });
});

describe('runWorker: a slow credential check', () => {
  it('a check slower than turn_timeout_ms is not cut off as turn_cancelled (held): the run ends as a retried turn_timeout', async () => {
    // Like a runtime whose handshake takes 1.5 s under turn_timeout_ms 1000, scaled down.
    const fake = slowStartAdapter(150);
    const flow = workflow('max_turns: 1\nturn_timeout_ms: 100\nread_timeout_ms: 5000', '{{ issue.title }}');
    const outcome = await run(flow, fake.adapter);
    expect(outcome.exit).toMatchObject({ type: 'failed', kind: 'turn_timeout', turns: 1 });
    // The check passed; the working turn, held to turn_timeout_ms, is what timed out.
    expect(fake.workingPrompts).toEqual([ISSUE.title]);
    const plan = planExit(outcome.exit, {
      attempt: 1,
      failuresBefore: 0,
      budgetStop: null,
      issueActive: true,
      handoffState: null,
      blockedState: null,
      comments: { onCompletion: false, onFailure: false, onBlocked: false },
      maxRetryBackoffMs: 300_000,
      nowMs: Date.now(),
    });
    expect(plan.actions).toEqual([expect.objectContaining({ type: 'retry', reason: 'error' })]);
  });
});

describe('runWorker: the tool session', () => {
  /** An adapter that records what each working session was started with. */
  function recordingAdapter() {
    const started: StartSessionParams[] = [];
    const fake = slowStartAdapter(0);
    const adapter: AgentAdapter = {
      ...fake.adapter,
      startSession: async (params) => {
        if (params.credentialVerification === undefined) started.push(params);
        return fake.adapter.startSession(params);
      },
    };
    return { adapter, started, prompts: fake.workingPrompts };
  }
  const flow = () =>
    workflow('max_turns: 1', '{% for t in tools %}[{{ t.name }}]{% endfor %}{{ issue.identifier }}');

  it('opens it once the workspace is ready, and the session and the prompt get what it delivered', async () => {
    const order: string[] = [];
    const fake = recordingAdapter();
    const delivery = {
      servers: { orchestrator: { transport: 'http' as const, url: 'http://127.0.0.1:1/mcp', headers: {} } },
      env: {},
    };
    const d = deps(fake.adapter);
    const prepare = d.workspaces.prepare;
    d.workspaces.prepare = async (...args) => {
      order.push('workspace');
      return prepare(...args);
    };
    d.openTools = async () => {
      order.push('tools');
      return { type: 'delivered', delivery, tools: advertisedTools(delivery) };
    };
    const events: string[] = [];
    d.onEvent = (event) => events.push(event.type);
    await runWorker(
      { issue: ISSUE, attempt: 1, resumeSessionId: null, workflow: flow() },
      d,
      new AbortController().signal,
    );
    expect(order).toEqual(['workspace', 'tools']);
    expect(fake.started.map((p) => p.tools)).toEqual([delivery]);
    expect(fake.prompts[0]).toBe(`${TOOL_CATALOG.map((t) => `[${t.name}]`).join('')}ENG-42`);
    expect(events).not.toContain('tool_channel_gap');
  });

  it('a gap is told once as tool_channel_gap, and the session starts with no tools and no tools in its prompt', async () => {
    const fake = recordingAdapter();
    const d = deps(fake.adapter);
    d.openTools = async () => ({ type: 'gap', reason: 'the tool server cannot be reached from h: refused' });
    const events: { type: string; message?: string }[] = [];
    d.onEvent = (event) => events.push(event as { type: string; message?: string });
    await runWorker(
      { issue: ISSUE, attempt: 1, resumeSessionId: null, workflow: flow() },
      d,
      new AbortController().signal,
    );
    expect(events.filter((e) => e.type === 'tool_channel_gap')).toEqual([
      expect.objectContaining({ message: 'the tool server cannot be reached from h: refused' }),
    ]);
    expect(fake.started.map((p) => p.tools)).toEqual([null]);
    expect(fake.prompts).toEqual(['ENG-42']);
  });
});
