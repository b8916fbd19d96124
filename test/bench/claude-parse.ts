/**
 * Stdout parse throughput of the claude-code kind on real lines: every public
 * Claude Code transcript in ../shared/fixtures (claude-code/ and the real-CLI
 * recordings) is one turn's worth of lines, and the corpus repeats them, with
 * message and tool ids made unique per copy, until it holds about 100 MB. It is
 * parsed (a) with a bare `JSON.parse` per line, the floor of any JSON-lines reader,
 * (b) through the adapter's real per-line path, `ClaudeCodeSession.hooks().parseLine`
 * (decode, ledger, run usage, tool pairing, events into a context that drops them),
 * in turns of about 1,000 lines as the built-in stream's benchmark uses, each
 * opened with `beginTurn` and settled with `settleUsage` as the skeleton does;
 * (c) with the decoder alone; and (d) as (b) with one turn per transcript copy,
 * the recordings' own short turns, where the per-turn settlement weighs most.
 * Target: (b) at least 0.7× the throughput of (a). MB = 10^6 bytes of line text.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { claudeCodeBlock } from '../../src/agent/claude-code/config.js';
import { decodeClaudeLine } from '../../src/agent/claude-code/parse.js';
import { ClaudeCodeSession } from '../../src/agent/claude-code/session.js';
import type { EventInput } from '../../src/agent/core/fork-per-turn.js';
import { turnContext } from '../support/turn-context.js';
import { median } from './stats.js';

const TARGET_BYTES = 100_000_000;
const RUNS = 5;
const TARGET_RATIO = 0.7;
const FIXTURES = path.resolve(import.meta.dirname, '..', '..', '..', 'shared', 'fixtures');
const FOLDERS = ['claude-code', path.join('real-cli', 'claude')];

/** The real transcripts, one list of lines each (request logs of the fake server excluded). */
function transcripts(): string[][] {
  const out: string[][] = [];
  for (const folder of FOLDERS) {
    const dir = path.join(FIXTURES, folder);
    for (const name of readdirSync(dir).sort()) {
      if (!name.endsWith('.jsonl') || name.endsWith('.requests.jsonl')) continue;
      const lines = readFileSync(path.join(dir, name), 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '');
      if (lines.length > 0) out.push(lines);
    }
  }
  return out;
}

/** Lines per turn, as in the built-in stream's benchmark: one process writing a long turn. */
const LINES_PER_TURN = 1_000;

/**
 * About `targetBytes` of real lines: the transcripts in order, over and over, ids
 * tagged with the copy number. `grouping` cuts them into turns of about 1,000 lines
 * (whole transcripts back to back, as one long process writes them) or one turn per
 * transcript (the short turns of the recordings, where per-turn costs weigh most).
 */
export function buildClaudeCorpus(
  targetBytes = TARGET_BYTES,
  grouping: 'long' | 'per_transcript' = 'long',
): { turns: string[][]; bytes: number; lines: number } {
  const sources = transcripts();
  const turns: string[][] = [];
  let bytes = 0;
  let lines = 0;
  let current: string[] = [];
  for (let copy = 0; bytes < targetBytes; copy++) {
    for (const source of sources) {
      // Unique per copy, as a real session's requests are: the ledger counts each id once.
      const copied = source.map((line) => line.replace(/"(msg_|toolu_)/g, `"$1c${copy}_`));
      for (const line of copied) bytes += Buffer.byteLength(line);
      lines += copied.length;
      current.push(...copied);
      if (grouping === 'per_transcript' || current.length >= LINES_PER_TURN) {
        turns.push(current);
        current = [];
      }
    }
  }
  if (current.length > 0) turns.push(current);
  return { turns, bytes, lines };
}

function rawParse(turns: readonly string[][]): number {
  let results = 0;
  for (const turn of turns) {
    for (const line of turn) if ((JSON.parse(line) as { type?: unknown }).type === 'result') results += 1;
  }
  return results;
}

function decodeOnly(turns: readonly string[][]): number {
  let decoded = 0;
  for (const turn of turns) for (const line of turn) if (decodeClaudeLine(line).ok) decoded += 1;
  return decoded;
}

function realParse(turns: readonly string[][]): { accepted: number; emitted: number } {
  const parsed = claudeCodeBlock.parse({});
  if (!parsed.ok) throw new Error('the default claude-code block was refused');
  const session = new ClaudeCodeSession({
    config: parsed.config,
    sessionId: '6f7d1820-93a6-45f9-b41a-37df31716720',
    resumed: false,
    verification: null,
  });
  const hooks = session.hooks();
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
  return { accepted, emitted };
}

function time<T>(fn: () => T): { ms: number; cpuMs: number; result: T } {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  const result = fn();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const used = process.cpuUsage(cpu);
  return { ms, cpuMs: (used.user + used.system) / 1000, result };
}

export function claudeParse(): void {
  if (!existsSync(path.join(FIXTURES, 'claude-code'))) {
    console.log(`skipped: the real transcripts are not at ${FIXTURES} (../shared is absent)`);
    return;
  }
  const built = time(() => buildClaudeCorpus());
  const { turns, bytes, lines } = built.result;
  const mb = bytes / 1e6;
  console.log(
    `corpus: ${mb.toFixed(1)} MB, ${lines} real lines in ${turns.length} turns of about ${LINES_PER_TURN} (built in ${built.ms.toFixed(0)} ms)`,
  );
  const warm = realParse(turns);
  if (warm.emitted === 0) throw new Error('the parse path emitted nothing: the corpus is not being parsed');
  console.log(`(b) accepted ${warm.accepted} of ${lines} lines, ${warm.emitted} events`);
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
  const mbps = (runs: { ms: number }[]) => mb / (median(wall(runs)) / 1000);
  const range = (runs: { ms: number }[]) =>
    `${Math.min(...wall(runs)).toFixed(0)}-${Math.max(...wall(runs)).toFixed(0)} ms`;
  const line = (label: string, runs: { ms: number }[]) =>
    console.log(
      `${label} median ${median(wall(runs)).toFixed(0)} ms (${range(runs)}), ${mbps(runs).toFixed(1)} MB/s over ${RUNS} runs`,
    );
  line('(a) JSON.parse per line:          ', raw);
  line('(b) ClaudeCodeSession.parseLine:  ', real);
  line('(c) decodeClaudeLine only:        ', decode);
  const ratio = mbps(real) / mbps(raw);
  const cpuRatio = median(cpu(raw)) / median(cpu(real));
  const verdict = (r: number) =>
    `${r.toFixed(2)}x (target >= ${TARGET_RATIO}x) ${r >= TARGET_RATIO ? 'MET' : 'MISSED'}`;
  console.log(`ratio (b)/(a) ${verdict(ratio)}; in CPU time ${cpuRatio.toFixed(2)}x`);
  console.log(`ratio (c)/(a) ${verdict(mbps(decode) / mbps(raw))}`);
  // The same lines cut one turn per transcript (about 9 lines): every turn pays its settlement.
  const short = buildClaudeCorpus(TARGET_BYTES, 'per_transcript').turns;
  realParse(short);
  const shortRuns: { ms: number; cpuMs: number }[] = [];
  const shortRaw: { ms: number; cpuMs: number }[] = [];
  for (let i = 0; i < RUNS; i++) {
    shortRaw.push(time(() => rawParse(short)));
    shortRuns.push(time(() => realParse(short)));
  }
  line(`(d) as (b), ${short.length} short turns:`, shortRuns);
  console.log(
    `ratio (d)/(a) ${(mbps(shortRuns) / mbps(shortRaw)).toFixed(2)}x (one settlement per ~9 lines)`,
  );
}
