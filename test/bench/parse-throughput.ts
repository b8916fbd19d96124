/**
 * Stdout parse throughput of the built-in stream (mock and echo kinds): ~50 MB of
 * stream lines in the shapes `src/agent/mock/runtime.ts` writes, parsed (a) with a
 * bare `JSON.parse` per line, the floor any JSON-lines reader pays, and (b) through
 * the real parse path, `StreamSession.hooks(...).parseLine`, which decodes the line,
 * feeds the usage ledger and run usage, tracks tools and emits events (into a
 * context that discards them). One turn per 1,000 lines, opened with `beginTurn`
 * and settled with `settleUsage`, so the ledger stays per-turn as in a real run.
 * Target: (b) at least 0.7× the throughput of (a). MB here is 10^6 bytes of line
 * text (UTF-8, newlines excluded).
 */
import type { EventInput, ForkPerTurnHooks } from '../../src/agent/core/fork-per-turn.js';
import { decodeStreamLine } from '../../src/agent/mock/stream.js';
import { StreamSession } from '../../src/agent/mock/stream-session.js';
import { MOCK_USAGE_SOURCES } from '../../src/agent/mock/usage.js';
import { turnContext } from '../support/turn-context.js';
import { median } from './stats.js';

const TARGET_BYTES = 50_000_000;
const LINES_PER_TURN = 1_000;
const RUNS = 5;
const TARGET_RATIO = 0.7;

/** Deterministic PRNG (mulberry32), so every run parses the same corpus. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const WORDS =
  'the test suite fails because the retry path never resets its counter so the second delivery is dropped and we log nothing useful here'.split(
    ' ',
  );

/** ~50 MB of lines, grouped in turns: start, a mix of messages, tools and notices, then a result. */
export function buildCorpus(targetBytes = TARGET_BYTES): { turns: string[][]; bytes: number; lines: number } {
  const rand = prng(42);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)] as T;
  const prose = (maxWords: number) =>
    Array.from({ length: 1 + Math.floor(rand() * maxWords) }, () => pick(WORDS)).join(' ');
  const model = 'mock-model';
  const turns: string[][] = [];
  let bytes = 0;
  let lines = 0;
  let session = 0;
  while (bytes < targetBytes) {
    session += 1;
    const turn: string[] = [];
    const push = (obj: Record<string, unknown>) => {
      const line = JSON.stringify(obj);
      turn.push(line);
      bytes += Buffer.byteLength(line);
    };
    push({ type: 'start', session_id: `mock-${session}-1700000000000`, model });
    // Like the runtime, request ids carry a per-process tag so they never repeat across turns.
    const runTag = `${10_000 + session}-${1_700_000_000_000 + session}`;
    let seq = 0;
    while (turn.length < LINES_PER_TURN - 1) {
      const r = rand();
      if (r < 0.3) {
        seq += 1;
        const usage = {
          input: Math.floor(rand() * 20_000),
          output: Math.floor(rand() * 2_000),
          cache_read: Math.floor(rand() * 50_000),
        };
        push({ type: 'message', id: `req-${runTag}-${seq}`, model, text: prose(40), usage });
      } else if (r < 0.38) {
        // The crash directive's shape: a message without usage.
        push({ type: 'message', id: `req-${runTag}-${++seq}`, model, text: 'working…' });
      } else if (r < 0.88 && turn.length < LINES_PER_TURN - 3) {
        seq += 1;
        const id = `tool-${seq}`;
        push({
          type: 'tool_call',
          id,
          name: pick(['Bash', 'Bash', 'Read', 'Edit']),
          input: { command: `echo step ${seq}` },
        });
        push({ type: 'tool_result', id, ok: rand() < 0.95 });
      } else {
        push({ type: 'notice', text: `unknown directive !${pick(WORDS)}` });
      }
    }
    push({ type: 'result', status: 'success', text: prose(12) });
    lines += turn.length;
    turns.push(turn);
  }
  return { turns, bytes, lines };
}

/** (a): JSON.parse of every line; the type check keeps the result alive. */
function rawParse(turns: readonly string[][]): number {
  let messages = 0;
  for (const turn of turns) {
    for (const line of turn) {
      const value = JSON.parse(line) as { type?: unknown };
      if (value.type === 'message') messages += 1;
    }
  }
  return messages;
}

/** (c): decoding into typed stream lines only: the format parse, without usage and events. */
function decodeOnly(turns: readonly string[][]): number {
  let decoded = 0;
  for (const turn of turns) for (const line of turn) if (decodeStreamLine(line).ok) decoded += 1;
  return decoded;
}

/** (b): the real parse path of a fresh session, one ledger turn per corpus turn. */
function realParse(turns: readonly string[][]): number {
  const stream = new StreamSession(MOCK_USAGE_SOURCES, 'mock-bench');
  const hooks: ForkPerTurnHooks = stream.hooks({ buildArgs: () => [] });
  let accepted = 0;
  let emitted = 0;
  const emit = (_event: EventInput) => {
    emitted += 1;
  };
  turns.forEach((lines, i) => {
    const ctx = turnContext(emit, i + 1);
    hooks.beginTurn?.(ctx);
    for (const line of lines) if (hooks.parseLine(line, ctx).type === 'accepted') accepted += 1;
    hooks.settleUsage(ctx, { cancelled: false });
  });
  if (emitted === 0) throw new Error('the parse path emitted nothing: the corpus is not being parsed');
  return accepted;
}

/** Wall and CPU time of one call; CPU time is the cross-check on a machine shared with other work. */
function time<T>(fn: () => T): { ms: number; cpuMs: number; result: T } {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  const result = fn();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const used = process.cpuUsage(cpu);
  return { ms, cpuMs: (used.user + used.system) / 1000, result };
}

export function parseThroughput(): void {
  const built = time(() => buildCorpus());
  const { turns, bytes, lines } = built.result;
  const mb = bytes / 1e6;
  console.log(
    `corpus: ${mb.toFixed(1)} MB, ${lines} lines in ${turns.length} turns of ${LINES_PER_TURN} (built in ${built.ms.toFixed(0)} ms)`,
  );
  // One warm-up each; the real path must accept every line, or it is not measuring parsing.
  const accepted = realParse(turns);
  if (accepted !== lines) throw new Error(`the parse path accepted ${accepted} of ${lines} lines`);
  rawParse(turns);
  decodeOnly(turns);
  const raw: { ms: number; cpuMs: number }[] = [];
  const real: { ms: number; cpuMs: number }[] = [];
  const decode: { ms: number; cpuMs: number }[] = [];
  for (let i = 0; i < RUNS; i++) {
    raw.push(time(() => rawParse(turns)));
    decode.push(time(() => decodeOnly(turns)));
    real.push(time(() => realParse(turns)));
  }
  const wall = (runs: { ms: number }[]) => runs.map((r) => r.ms);
  const cpu = (runs: { cpuMs: number }[]) => runs.map((r) => r.cpuMs);
  const rawMbps = mb / (median(wall(raw)) / 1000);
  const realMbps = mb / (median(wall(real)) / 1000);
  const ratio = realMbps / rawMbps;
  const cpuRatio = median(cpu(raw)) / median(cpu(real));
  const range = (ms: number[]) => `${Math.min(...ms).toFixed(0)}-${Math.max(...ms).toFixed(0)} ms`;
  console.log(
    `(a) JSON.parse per line:      median ${median(wall(raw)).toFixed(0)} ms (${range(wall(raw))}), ${rawMbps.toFixed(1)} MB/s over ${RUNS} runs`,
  );
  console.log(
    `(b) StreamSession.parseLine:  median ${median(wall(real)).toFixed(0)} ms (${range(wall(real))}), ${realMbps.toFixed(1)} MB/s over ${RUNS} runs`,
  );
  console.log(
    `    CPU-time medians: (a) ${median(cpu(raw)).toFixed(0)} ms, (b) ${median(cpu(real)).toFixed(0)} ms, ratio ${cpuRatio.toFixed(2)}x`,
  );
  console.log(
    `ratio (b)/(a) ${ratio.toFixed(2)}x (target >= ${TARGET_RATIO}x) ${ratio >= TARGET_RATIO ? 'MET' : 'MISSED'}`,
  );
  const decodeMbps = mb / (median(wall(decode)) / 1000);
  const decodeRatio = decodeMbps / rawMbps;
  console.log(
    `(c) decodeStreamLine only:   median ${median(wall(decode)).toFixed(0)} ms, ${decodeMbps.toFixed(1)} MB/s; ratio (c)/(a) ${decodeRatio.toFixed(2)}x (target >= ${TARGET_RATIO}x) ${decodeRatio >= TARGET_RATIO ? 'MET' : 'MISSED'}`,
  );
}
