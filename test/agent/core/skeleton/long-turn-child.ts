/**
 * The measured process of the long-turn memory test and the `agent-output` bench (not a test
 * on its own): runs one fork-per-turn turn whose agent prints `argv[2]` small JSON lines and
 * then a terminal line, through the real skeleton, with hooks that keep nothing per line.
 * Started with a small heap, it can only finish when the skeleton's per-line work is
 * constant in memory. Prints one JSON line: the outcome, the lines parsed, peak heap and RSS.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ForkPerTurnSession } from '../../../../src/agent/core/fork-per-turn.js';
import { MOCK_USAGE_SOURCES } from '../../../../src/agent/mock/usage.js';
import { ZERO } from '../../../../src/agent/usage/index.js';
import { SAMPLE_ISSUE } from '../../../../src/prompt/variables.js';
import { sampleMemoryPeaks } from '../../../support/memory-peaks.js';

/** Writes `n` lines in batches, honouring backpressure, then the terminal line. */
const FLOOD = `const total = Number(process.argv[2]);
let i = 0;
function pump() {
  while (i < total) {
    let batch = '';
    for (let j = 0; j < 512 && i < total; j++, i++) batch += '{"t":"n","i":' + i + '}\\n';
    if (!process.stdout.write(batch)) { process.stdout.once('drain', pump); return; }
  }
  process.stdout.write('{"t":"done","msg":"flood finished"}\\n');
}
pump();
`;

const lineCount = Number(process.argv[2]);
if (!Number.isInteger(lineCount) || lineCount < 0) throw new Error('usage: long-turn-child.ts <lines>');

const dir = mkdtempSync(path.join(tmpdir(), 'long-turn-'));
const root = path.join(dir, 'root');
const workspace = path.join(root, 'ws');
mkdirSync(workspace, { recursive: true });
const flood = path.join(dir, 'flood.cjs');
writeFileSync(flood, FLOOD);

let parsed = 0;
let finalMessage = '';
const session = new ForkPerTurnSession(
  {
    command: process.execPath,
    args: [flood, String(lineCount)],
    workspacePath: workspace,
    workspaceRoot: root,
    withheldEnv: [],
    location: { type: 'local' },
  },
  {
    promptOnStdin: false,
    buildArgs: () => [],
    parseLine: (line) => {
      parsed += 1;
      const value = JSON.parse(line) as { t: string; msg?: string };
      if (value.t !== 'done') return { type: 'accepted' };
      finalMessage = value.msg ?? '';
      return { type: 'accepted', terminal: value };
    },
    settleUsage: () => undefined,
    getUsage: () => ({ usage: ZERO, byModel: {}, measured: false }),
    getSessionId: () => 'long-turn',
    finalMessage: () => finalMessage,
    onFinalize: (input) => ({
      terminal: input.lastTerminal === undefined ? null : { type: 'success', message: finalMessage },
      work: { work: 'none', detail: 'the flood reports no work signal' },
    }),
  },
  {
    agent: { kind: 'long-turn', command: null, turnTimeoutMs: 0, readTimeoutMs: 0, stallTimeoutMs: 0 },
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    sources: MOCK_USAGE_SOURCES,
  },
);

let events = 0;
const memory = sampleMemoryPeaks();
const startedMs = performance.now();
try {
  const outcome = await session.runTurn({
    prompt: '',
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
      parsed,
      events,
      elapsedMs,
      ...memory.stop(),
    }),
  );
} finally {
  memory.stop();
  rmSync(dir, { recursive: true, force: true });
}
