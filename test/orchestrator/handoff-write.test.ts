/**
 * Issue #20: with 32 sessions running on the file tracker, a finished issue's handoff must
 * not lag behind the ticks that follow its run (it once waited 10-24 s in a queue of writes
 * that grew with the handoff rate). Shown by order, not by timing: the real owner ticking
 * on its own (a real clock, the refill tick every exit asks for), the real file tracker on
 * a file on disk, and each tick's candidate read checked against the file at that moment.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import '../../src/agent/kinds.js';
import { agentKind } from '../../src/agent/registry.js';
import type { AgentAdapter, TurnOutcome } from '../../src/domain/agent.js';
import { ZERO_TOKENS } from '../../src/domain/agent.js';
import type { Issue } from '../../src/domain/issue.js';
import { Orchestrator } from '../../src/orchestrator/orchestrator.js';
import { SYSTEM_CLOCK } from '../../src/orchestrator/ports.js';
import { openStore } from '../../src/persistence/index.js';
import { FileTracker } from '../../src/tracker/file/adapter.js';
import { loadWorkflow } from '../../src/workflow/load.js';
import { fixedWorkspaces } from './harness.js';

const AGENTS = 32;
const ISSUES = AGENTS + 1;
const HANDOFF = 'Review';

const WORKFLOW = `---
tracker:
  kind: file
  active_states: [Todo, In Progress]
  terminal_states: [Done]
  in_progress_state: In Progress
  handoff_state: ${HANDOFF}
file:
  path: issues.json
polling:
  interval_ms: 3600000
agent:
  kind: mock
  max_turns: 1
  max_concurrent_agents: ${AGENTS}
---
Work on {{ issue.identifier }}.
`;

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An agent whose every turn waits until the test releases its issue (or the run is cancelled). */
function heldAgent(): AgentAdapter & { held: Map<string, () => void> } {
  const held = new Map<string, () => void>();
  return {
    held,
    startSession: async () => ({ sessionId: '', kind: 'mock' }),
    stopSession: async () => undefined,
    runTurn: async (_session, params): Promise<TurnOutcome> => {
      await new Promise<void>((resolve) => {
        held.set(params.issue.id, resolve);
        params.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      held.delete(params.issue.id);
      return {
        result: {
          sessionId: '',
          exitReason: 'turn_completed',
          usage: { ...ZERO_TOKENS },
          usageByModel: {},
          usageMeasured: false,
          spendUnaccounted: false,
          spendCoverable: false,
          coversSession: false,
          usageProvenance: 'unmeasured',
          reportedAmounts: [],
          finalMessage: '',
        },
      };
    },
  };
}

/** A run recorded: `worker_exited` is observed right after the store has the run, before the handoff is asked for. */
interface Exited {
  type: 'exited';
  seq: number;
  id: string;
}

/** A tick, seen at its first tracker call: every tick starts by reading the candidates. */
interface Tick {
  type: 'tick';
  seq: number;
  /** Issues whose handoff was in the file when the tick asked for candidates. */
  handedOffAtStart: Set<string>;
  /** ... and when the candidates came back: what the tick decides on. */
  handedOffAtRead: Set<string> | null;
  candidates: string[] | null;
}

const WAIT = { timeout: 20_000, interval: 5 };

function setUp() {
  const dir = mkdtempSync(path.join(tmpdir(), 'handoff-write-'));
  const file = path.join(dir, 'issues.json');
  const issues = Array.from({ length: ISSUES }, (_, i) => ({
    id: `id-${i + 1}`,
    identifier: `T-${i + 1}`,
    title: `Issue ${i + 1}`,
    state: 'Todo',
  }));
  writeFileSync(file, `${JSON.stringify(issues, null, 2)}\n`);
  const store = openStore(path.join(dir, 'state.db'));
  const loaded = loadWorkflow(path.join(dir, 'WORKFLOW.md'), { env: {}, text: WORKFLOW });
  if (!loaded.ok) throw new Error(`test workflow does not load: ${JSON.stringify(loaded.diagnostics)}`);
  const { workflow } = loaded;

  const events: (Exited | Tick)[] = [];
  let seq = 0;
  /** Issues in the handoff state in the file right now (read synchronously: nothing lands in between). */
  const handedOff = (): Set<string> =>
    new Set(
      (JSON.parse(readFileSync(file, 'utf8')) as Issue[]).filter((i) => i.state === HANDOFF).map((i) => i.id),
    );
  /** The file tracker; every tick starts with its candidate read, which is recorded against the file. */
  class ObservedTracker extends FileTracker {
    override async fetchCandidateIssues(): Promise<Issue[]> {
      const tick: Tick = {
        type: 'tick',
        seq: ++seq,
        handedOffAtStart: handedOff(),
        handedOffAtRead: null,
        candidates: null,
      };
      events.push(tick);
      const candidates = await super.fetchCandidateIssues();
      tick.handedOffAtRead = handedOff();
      tick.candidates = candidates.map((i) => i.id);
      return candidates;
    }
  }
  const tracker = new ObservedTracker({ path: file }, workflow.config.tracker);
  const kind = agentKind('mock');
  if (kind === undefined) throw new Error('mock is not registered');
  const agent = heldAgent();
  const noop = () => undefined;
  const orchestrator = new Orchestrator({
    workflow: { current: () => workflow, reload: noop },
    tracker,
    agent: { adapter: agent, kind },
    workspaces: fixedWorkspaces(dir),
    store,
    proofs: { get: () => Date.now(), put: noop },
    agentEnv: {},
    credentialValues: [],
    pricing: () => null,
    log: { debug: noop, info: noop, warn: noop, error: noop },
    clock: SYSTEM_CLOCK,
    observe: (o) => {
      if (o.type === 'worker_exited') events.push({ type: 'exited', seq: ++seq, id: o.issue.id });
    },
  });
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => store.close());
  cleanups.push(() => orchestrator.stop());

  const ticks = () => events.filter((e): e is Tick => e.type === 'tick');
  const exits = () => events.filter((e): e is Exited => e.type === 'exited');
  /** The ticks that started after `exit` was recorded, in order. */
  const ticksAfter = (exit: Exited) => ticks().filter((t) => t.seq > exit.seq);
  /** Resolves once `count` sessions are held in their turn, all of them running. */
  const sessionsHeld = async (count: number) =>
    vi.waitFor(() => {
      expect(agent.held.size).toBe(count);
      expect(orchestrator.snapshot().running).toHaveLength(count);
    }, WAIT);
  /** Whether the first tick after `exit` has read its candidates. */
  const readAfter = (exit: Exited) => ticksAfter(exit)[0]?.candidates != null;
  return { orchestrator, tracker, agent, exits, ticksAfter, readAfter, handedOff, sessionsHeld };
}

describe('the handoff write with 32 sessions running', () => {
  it('is in the issues file before the next tick reads the tracker, one exit or 32 at once', async () => {
    const s = setUp();
    s.orchestrator.start();
    await s.sessionsHeld(AGENTS);

    // One session ends while 31 go on running.
    const first = [...s.agent.held.keys()][0] as string;
    s.agent.held.get(first)?.();
    await vi.waitFor(() => expect(s.exits().map((e) => s.readAfter(e))).toEqual([true]), WAIT);
    const [exit] = s.exits() as [Exited];
    expect(exit.id).toBe(first);
    const [next] = s.ticksAfter(exit);
    // What the tick decides on already has the handoff. (When the tick asks, the write is still
    // under way: the owner asks for the refill tick before it asks the tracker for the handoff.)
    expect(next?.handedOffAtRead?.has(first)).toBe(true);
    expect(next?.candidates).not.toContain(first);
    // That tick refilled the slot with the one issue that was waiting.
    await s.sessionsHeld(AGENTS);

    // All 32 end at once.
    for (const release of [...s.agent.held.values()]) release();
    await vi.waitFor(() => {
      expect(s.exits()).toHaveLength(ISSUES);
      expect(s.exits().every((e) => s.readAfter(e))).toBe(true);
      expect(s.orchestrator.settled()).toBe(true);
    }, WAIT);
    // A tick that starts now is at least the second after every run was recorded.
    await s.orchestrator.tick();
    expect(s.handedOff().size).toBe(ISSUES);
    for (const e of s.exits()) {
      const [firstTick, secondTick] = s.ticksAfter(e);
      expect(firstTick?.handedOffAtRead?.has(e.id), `${e.id}: its first tick's read`).toBe(true);
      expect(firstTick?.candidates, `${e.id}: its first tick's candidates`).not.toContain(e.id);
      expect(secondTick?.handedOffAtStart.has(e.id), `${e.id}: at the start of its second tick`).toBe(true);
    }
  }, 60_000);
});
