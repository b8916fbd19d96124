/**
 * The measured process of `agent-output` for the mock kind (not a bench on its own): one
 * turn of the real mock runtime acting out `!loop <argv[2]>` (two stdout lines per step:
 * a tool call and its result), through the mock adapter, the skeleton and the stream
 * parser, every event delivered to a callback that only counts. Prints one JSON line.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import '../../src/agent/kinds.js';
import { agentKind } from '../../src/agent/registry.js';
import { SAMPLE_ISSUE } from '../../src/prompt/variables.js';
import { sampleMemoryPeaks } from '../support/memory-peaks.js';

const steps = Number(process.argv[2]);
if (!Number.isInteger(steps) || steps < 1) throw new Error('usage: agent-output-mock-child.ts <loop steps>');

const root = mkdtempSync(path.join(tmpdir(), 'agent-output-'));
const workspace = path.join(root, 'ws');
mkdirSync(workspace);
const adapter = agentKind('mock')?.runtime?.factory();
if (adapter === undefined) throw new Error('the mock kind is not registered');
const session = await adapter.startSession({
  workspacePath: workspace,
  workspaceRoot: root,
  agent: { kind: 'mock', command: null, turnTimeoutMs: 0, readTimeoutMs: 5_000, stallTimeoutMs: 0 },
  options: {},
  resumeSessionId: null,
  env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
});

let events = 0;
const memory = sampleMemoryPeaks();
const startedMs = performance.now();
try {
  const outcome = await adapter.runTurn(session, {
    prompt: `!loop ${steps}\n!ok looped`,
    issue: SAMPLE_ISSUE,
    signal: new AbortController().signal,
    onEvent: () => {
      events += 1;
    },
  });
  const elapsedMs = performance.now() - startedMs;
  console.log(
    JSON.stringify({
      exitReason: outcome.result.exitReason,
      finalMessage: outcome.result.finalMessage,
      parsed: steps * 2 + 2,
      events,
      elapsedMs,
      ...memory.stop(),
    }),
  );
} finally {
  memory.stop();
  await adapter.stopSession(session);
  rmSync(root, { recursive: true, force: true });
}
