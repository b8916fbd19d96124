/**
 * Memory of a long turn, with a real process: a turn of a million lines runs through the
 * real skeleton in a child node whose heap is capped at 64 MB. Whatever the skeleton keeps
 * per line (a promise, a closure, the line itself) adds up to hundreds of megabytes over a
 * million lines, and the child dies of heap exhaustion instead of finishing the turn.
 * Speed and peak figures belong to `npm run bench agent-output`, not here.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const CHILD = path.join(import.meta.dirname, 'long-turn-child.ts');
const LINES = 1_000_000;
const HEAP_LIMIT_MB = 64;

function runChild(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [`--max-old-space-size=${HEAP_LIMIT_MB}`, '--import', import.meta.resolve('tsx'), CHILD, String(LINES)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      // Only the end matters (the out-of-memory report); keep it bounded.
      stderr = (stderr + chunk).slice(-4_000);
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('ForkPerTurnSession memory over a long turn (real processes)', () => {
  it(`a turn of ${LINES} lines finishes in a ${HEAP_LIMIT_MB} MB heap: nothing is retained per line`, async () => {
    const { code, stdout, stderr } = await runChild();
    expect(stderr).not.toMatch(/heap out of memory/);
    expect(code).toBe(0);
    const result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
    expect(result).toMatchObject({
      exitReason: 'turn_completed',
      finalMessage: 'flood finished',
      parsed: LINES + 1,
    });
  }, 120_000);
});
