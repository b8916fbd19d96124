/**
 * What the skeleton makes of an agent's output, with real processes: an
 * over-long line, a stderr flood, lines that are not the protocol, a clean exit
 * without a terminal line, and exit 127.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_LINE_BYTES } from '../../../../src/agent/core/process/lines.js';
import { FINAL_MESSAGE_MAX_BYTES } from '../../../../src/agent/core/sanitize.js';
import { peakLiveGrowth } from '../process/child-scripts.js';
import { eventsOf, makeScratch, makeSession } from './harness.js';

const MiB = 1024 * 1024;
const scratch = makeScratch();
const scripts: Record<string, string> = {};

beforeAll(() => {
  scripts.bigLine = scratch.script(
    'big-line.cjs',
    `const say = (o) => JSON.stringify(o) + '\\n';
const big = JSON.stringify({ t: 'big', pad: 'x'.repeat(20 * 1024 * 1024) }) + '\\n';
process.stdout.write(say({ t: 'note', n: 1 }) + big + say({ t: 'after' }) + say({ t: 'done', msg: 'survived' }));`,
  );
  // argv[2]: 'done' writes a terminal and exits 0; 'fail' writes one accepted line and exits 3.
  scripts.flood = scratch.script(
    'stderr-flood.cjs',
    `const mode = process.argv[2];
const line = (i) => ('stderr line ' + i + ' ').padEnd(1023, '.') + '\\n';
const total = 100 * 1024; // 100 MiB of 1 KiB lines
let i = 0;
function pump() {
  while (i < total) {
    let batch = '';
    for (let j = 0; j < 64 && i < total; j++, i++) batch += line(i);
    if (!process.stderr.write(batch)) { process.stderr.once('drain', pump); return; }
  }
  process.stderr.write('the very end\\n', () => {
    if (mode === 'done') process.stdout.write(JSON.stringify({ t: 'done', msg: 'flooded' }) + '\\n');
    else { process.stdout.write(JSON.stringify({ t: 'note' }) + '\\n'); process.exitCode = 3; }
  });
}
pump();`,
  );
  scripts.mixed = scratch.script(
    'mixed.cjs',
    `process.stdout.write([
  'hello, this is plain text',
  JSON.stringify({ t: 'note' }),
  '[1, 2, 3]',
  '{"t": "half an obj',
  JSON.stringify({ t: 'done', msg: 'parsed the rest' }),
].join('\\n') + '\\n');`,
  );
  scripts.noTerminal = scratch.script(
    'no-terminal.cjs',
    `process.stdout.write(JSON.stringify({ t: 'note' }) + '\\n');`,
  );
  scripts.silentExit = scratch.script('silent-exit.cjs', 'process.exitCode = 0;');
  // 30 MiB on stdout with no newline at all, then a clean exit.
  scripts.hugeNoNewline = scratch.script(
    'huge-no-newline.cjs',
    `process.stdout.write('y'.repeat(30 * 1024 * 1024), () => { process.exitCode = 0; });`,
  );
  // A terminal line whose message is 8 MiB (within the 10 MiB line cap, so it is parsed).
  scripts.hugeFinal = scratch.script(
    'huge-final.cjs',
    `const msg = 'Summary first.\\n' + 'w'.repeat(8 * 1024 * 1024);
process.stdout.write(JSON.stringify({ t: 'done', msg }) + '\\n');`,
  );
  scripts.notProtocol = scratch.script(
    'not-protocol.cjs',
    `process.stdout.write('Usage: agent [options]\\n  --help  show this\\n');`,
  );
  scripts.exit127 = scratch.script(
    'exit-127.cjs',
    `if (process.argv[2] === 'after-line') process.stdout.write(JSON.stringify({ t: 'note' }) + '\\n');
process.stderr.write('sh: 1: claude: not found\\n');
process.exitCode = 127;`,
  );
});

afterAll(() => {
  scratch.cleanup();
});

describe('ForkPerTurnSession output handling (real processes)', () => {
  it('a 20 MiB single line neither crashes the turn nor stops later lines: it becomes one malformed event', async () => {
    const h = makeSession({
      script: scripts.bigLine!,
      workspace: scratch.workspace('big'),
      root: scratch.root,
    });
    const { outcome, events } = await h.turn();
    expect(outcome.result.exitReason).toBe('turn_completed');
    expect(outcome.result.finalMessage).toBe('survived');
    const malformed = eventsOf(events, 'malformed');
    expect(malformed).toHaveLength(1);
    expect(malformed[0]?.message).toMatch(/exceeded the line limit/);
    // The report names the size and keeps only a head, cut by the sanitiser.
    expect(malformed[0]?.message).toMatch(/2097\d{4} bytes/);
    expect(malformed[0]?.message.length).toBeLessThan(600);
    expect(h.log.accepted.map((o) => o.t)).toEqual(['note', 'after', 'done']);
  });

  it.each([
    { mode: 'done', exitReason: 'turn_completed', errorKind: null },
    { mode: 'fail', exitReason: 'turn_failed', errorKind: 'port_exit' },
  ])(
    '100 MiB of stderr keeps memory bounded and the turn ends ($mode → $exitReason), warnings at most 5 short lines',
    async ({ mode, exitReason, errorKind }) => {
      const h = makeSession({
        script: scripts.flood!,
        workspace: scratch.workspace(`flood-${mode}`),
        root: scratch.root,
        hooks: { args: [mode] },
        options: { stderrDrainMs: 5_000 },
      });
      let result: Awaited<ReturnType<typeof h.turn>> | undefined;
      const growth = await peakLiveGrowth(async () => {
        result = await h.turn();
      }, 50);
      const { outcome, events } = result!;
      expect(outcome.result.exitReason).toBe(exitReason);
      expect(outcome.error?.kind ?? null).toBe(errorKind);
      const warnings = eventsOf(events, 'warning');
      expect(warnings.length).toBeLessThanOrEqual(5);
      for (const w of warnings) expect(w.message.length).toBeLessThan(600);
      if (mode === 'fail') {
        expect(warnings.length).toBeGreaterThan(0);
        expect(warnings.at(-1)?.message).toBe('the very end');
      }
      // 100 MiB went through; what is kept is capped at 1 MiB plus transient chunks.
      expect(growth).toBeLessThan(32 * MiB);
    },
  );

  it('lines that are not JSON objects become malformed events while the valid lines around them still parse', async () => {
    const h = makeSession({
      script: scripts.mixed!,
      workspace: scratch.workspace('mixed'),
      root: scratch.root,
    });
    const { outcome, events } = await h.turn();
    expect(outcome.result.exitReason).toBe('turn_completed');
    expect(outcome.result.finalMessage).toBe('parsed the rest');
    const malformed = eventsOf(events, 'malformed').map((e) => e.message);
    expect(malformed).toEqual([
      'not JSON: hello, this is plain text',
      'not a JSON object: [1, 2, 3]',
      'not JSON: {"t": "half an obj',
    ]);
    expect(h.log.accepted.map((o) => o.t)).toEqual(['note', 'done']);
  });

  it('a clean exit 0 after output but without a terminal line is turn_failed, never a success', async () => {
    const h = makeSession({
      script: scripts.noTerminal!,
      workspace: scratch.workspace('no-terminal'),
      root: scratch.root,
    });
    const { outcome, events } = await h.turn();
    expect(outcome.result.exitReason).toBe('turn_failed');
    expect(outcome.error?.kind).toBe('turn_failed');
    expect(eventsOf(events, 'turn_failed')).toHaveLength(1);
    expect(eventsOf(events, 'turn_completed')).toHaveLength(0);
  });

  it('a clean exit 0 without writing anything is an early-exit failure naming the missing output', async () => {
    const h = makeSession({
      script: scripts.silentExit!,
      workspace: scratch.workspace('silent-exit'),
      root: scratch.root,
    });
    const { outcome } = await h.turn();
    expect(outcome.result.exitReason).toBe('turn_failed');
    expect(outcome.error?.kind).toBe('port_exit');
    expect(outcome.error?.detail).toMatch(/exit 0 before writing any output/);
  });

  it('an exit 0 whose only output was a 30 MiB line without a newline is reported as an over-long line (size and cap), not as no output', async () => {
    const h = makeSession({
      script: scripts.hugeNoNewline!,
      workspace: scratch.workspace('huge-no-newline'),
      root: scratch.root,
    });
    const { outcome, events } = await h.turn();
    expect(outcome.result.exitReason).toBe('turn_failed');
    expect(outcome.error?.kind).toBe('port_exit');
    const detail = outcome.error?.detail ?? '';
    expect(detail).not.toMatch(/before writing any output/);
    expect(detail).toMatch(/exit 0/);
    expect(detail).toContain(`one stdout line of ${30 * MiB} bytes`);
    expect(detail).toContain(`line limit of ${DEFAULT_MAX_LINE_BYTES} bytes`);
    const malformed = eventsOf(events, 'malformed');
    expect(malformed).toHaveLength(1);
    expect(malformed[0]?.message).toContain(
      `${30 * MiB} bytes exceeded the line limit of ${DEFAULT_MAX_LINE_BYTES} bytes`,
    );
  });

  it('an 8 MiB final message leaves the turn capped: head kept, cut marked, within the cap', async () => {
    const h = makeSession({
      script: scripts.hugeFinal!,
      workspace: scratch.workspace('huge-final'),
      root: scratch.root,
    });
    const { outcome } = await h.turn();
    expect(outcome.result.exitReason).toBe('turn_completed');
    const message = outcome.result.finalMessage;
    expect(Buffer.byteLength(message, 'utf8')).toBeLessThanOrEqual(FINAL_MESSAGE_MAX_BYTES);
    expect(message.startsWith('Summary first.\nwww')).toBe(true);
    expect(message).toMatch(/\[message cut: it had \d+ bytes, over the cap of \d+\]$/);
  });

  it('an exit 0 after lines the adapter did not understand is reported as such, not as no output', async () => {
    const h = makeSession({
      script: scripts.notProtocol!,
      workspace: scratch.workspace('not-protocol'),
      root: scratch.root,
    });
    const { outcome } = await h.turn();
    expect(outcome.result.exitReason).toBe('turn_failed');
    expect(outcome.error?.kind).toBe('port_exit');
    expect(outcome.error?.detail).not.toMatch(/before writing any output/);
    expect(outcome.error?.detail).toMatch(/2 stdout lines it did not understand/);
  });

  it.each(['before-output', 'after-line'])(
    'exit 127 (%s) is agent_not_found, not a retryable crash, with the stderr tail in the message',
    async (variant) => {
      const h = makeSession({
        script: scripts.exit127!,
        workspace: scratch.workspace(`exit127-${variant}`),
        root: scratch.root,
        hooks: { args: [variant] },
      });
      const { outcome, events } = await h.turn();
      expect(outcome.result.exitReason).toBe('turn_failed');
      expect(outcome.error?.kind).toBe('agent_not_found');
      expect(outcome.error?.detail).toMatch(/exit 127/);
      expect(outcome.error?.detail).toMatch(/claude: not found/);
      expect(eventsOf(events, 'turn_failed')[0]?.errorKind).toBe('agent_not_found');
    },
  );
});
